// oflow-pad-gemm-extents on right operands stored [K, N]: zero columns.
//
// RUN: oflow-opt %s --oflow-pad-gemm-extents="min-macs=1" | FileCheck %s


// A [K, N] weight gets zero columns; an extent already a multiple of 8, and
// a batched right operand, stay as they are.
// CHECK-LABEL: func.func @columns
// CHECK: %[[BP:.*]] = oflow.concat %arg1, %{{.*}} {axis = 1 : i64} : (tensor<16x13xf32>, tensor<16x51xf32>) -> tensor<16x64xf32>
// CHECK: oflow.matmul %arg0, %[[BP]] : (tensor<4x8x16xf32>, tensor<16x64xf32>) -> tensor<4x8x64xf32>
// CHECK: oflow.slice {{.*}} sizes = array<i64: 4, 8, 13>
// CHECK: oflow.matmul %arg0, %arg2 : (tensor<4x8x16xf32>, tensor<16x24xf32>)
// CHECK: oflow.matmul %arg0, %arg3 : (tensor<4x8x16xf32>, tensor<4x16x13xf32>)
func.func @columns(%x: tensor<4x8x16xf32>, %b: tensor<16x13xf32>, %even: tensor<16x24xf32>, %batched: tensor<4x16x13xf32>) -> (tensor<4x8x13xf32>, tensor<4x8x24xf32>, tensor<4x8x13xf32>) {
  %y = oflow.matmul %x, %b : (tensor<4x8x16xf32>, tensor<16x13xf32>) -> tensor<4x8x13xf32>
  %z = oflow.matmul %x, %even : (tensor<4x8x16xf32>, tensor<16x24xf32>) -> tensor<4x8x24xf32>
  %u = oflow.matmul %x, %batched : (tensor<4x8x16xf32>, tensor<4x16x13xf32>) -> tensor<4x8x13xf32>
  return %y, %z, %u : tensor<4x8x13xf32>, tensor<4x8x24xf32>, tensor<4x8x13xf32>
}
