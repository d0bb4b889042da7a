// SBP signatures of matmul, gemm, conv and conv gradients on a 2x3 mesh: S(M)·B
// -> S(M), B·S(N) -> S(N), S(K)·S(K) -> P, P·B -> P, B·P -> P, batch axes like
// elementwise; a split batch gives a partial weight gradient.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @matmul(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>) -> tensor<8x4xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | B, S(1) -> S(1) | S(1), S(0) -> P(sum) | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(0) -> P(sum) | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
  %0 = oflow.matmul %a, %b : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x1x6x4xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x3x6x8xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(2), B -> S(2) | B, S(1) -> S(3) | S(3), S(2) -> P(sum) | P(sum), B -> P(sum) | B, P(sum) -> P(sum) | S(0), B -> S(0)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(2), B -> S(2) | P(sum), B -> P(sum) | B, P(sum) -> P(sum) | B, S(0) -> S(1)
  %0 = oflow.matmul %a, %b {transpose_b} : (tensor<2x1x6x4xf32>, tensor<3x8x4xf32>) -> tensor<2x3x6x8xf32>
  return %0 : tensor<2x3x6x8xf32>
}

// -----

func.func @gemm(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %b: tensor<6xf32>) -> tensor<8x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | S(0), B, B -> S(0) | B, S(0), S(0) -> S(1) | S(1), S(1), P(sum) -> P(sum) | P(sum), B, P(sum) -> P(sum) | B, P(sum), P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | B, S(0), S(0) -> S(1) | P(sum), B, P(sum) -> P(sum) | B, P(sum), P(sum) -> P(sum)
  %0 = oflow.gemm %x, %w, %b {transpose_b} : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @conv(%x: tensor<4x2x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<4x6x8x8xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | S(0), B, B -> S(0) | P(sum), B, P(sum) -> P(sum) | B, P(sum), P(sum) -> P(sum) | B, S(0), S(0) -> S(1) | S(1), S(1), P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | P(sum), B, P(sum) -> P(sum) | B, P(sum), P(sum) -> P(sum) | B, S(0), S(0) -> S(1)
  %0 = oflow.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<4x2x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<4x6x8x8xf32>
  return %0 : tensor<4x6x8x8xf32>
}

// -----

func.func @conv_backward(%dy: tensor<2x8x4x4xf32>, %x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> (tensor<8x4x3x3xf32>, tensor<2x4x8x8xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> P(sum) | P(sum), B -> P(sum) | B, P(sum) -> P(sum) | S(1), B -> S(0) | B, S(1) -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
  %0 = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 8, 4, 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x4x4xf32>, tensor<2x4x8x8xf32>) -> tensor<8x4x3x3xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | P(sum), B -> P(sum) | B, P(sum) -> P(sum) | S(1), S(0) -> P(sum) | B, S(1) -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
  %1 = oflow.conv2d_backward_input %dy, %w {input_shape = array<i64: 2, 4, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0, %1 : tensor<8x4x3x3xf32>, tensor<2x4x8x8xf32>
}
