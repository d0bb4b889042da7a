// RUN: oflow-opt %s --oflow-lower-to-linalg | mlir-opt --linalg-fuse-elementwise-ops | FileCheck %s

// The broadcasting generics of an elementwise chain fuse into one.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<8x16xf32>, %b: tensor<16xf32>, %s: tensor<8x1xf32>) -> tensor<8x16xf32> {
  %0 = oflow.add %x, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %1 = oflow.mul %0, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %2 = oflow.relu %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
