// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg --oflow-fuse-elementwise | FileCheck %s
// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=UPSTREAM

// The elementwise chain before the product fuses into one generic; the
// product stays a linalg.matmul on the collapsed rows (for BLAS), where
// upstream's fusion turns it into a generic.
// CHECK-LABEL: func.func @chain_then_matmul
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[E]]
// CHECK: linalg.matmul ins(%[[R]], %arg2 : tensor<32x4xf32>, tensor<4x8xf32>)
// UPSTREAM-LABEL: func.func @chain_then_matmul
// UPSTREAM-NOT: linalg.matmul
// UPSTREAM: return
func.func @chain_then_matmul(%x: tensor<2x16x4xf32>, %b: tensor<4xf32>, %w: tensor<4x8xf32>) -> tensor<2x16x8xf32> {
  %0 = oflow.add %x, %b : (tensor<2x16x4xf32>, tensor<4xf32>) -> tensor<2x16x4xf32>
  %1 = oflow.relu %0 : tensor<2x16x4xf32>
  %2 = oflow.matmul %1, %w : (tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x8xf32>
  return %2 : tensor<2x16x8xf32>
}

// -----

// The convolution's GEMM stays a linalg.batch_matmul; the ReLU after it
// stays a separate generic.
// CHECK-LABEL: func.func @conv_then_relu
// CHECK: %[[Y:.*]] = linalg.batch_matmul
// CHECK: %[[YE:.*]] = tensor.expand_shape %[[Y]]
// CHECK: linalg.generic {{.*}} ins(%[[YE]]
// CHECK: arith.maximumf
func.func @conv_then_relu(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = oflow.relu %0 : tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}
