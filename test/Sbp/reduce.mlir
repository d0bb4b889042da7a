// SBP signatures of reductions, normalizations and losses on a 2x3 mesh: a
// reduced split axis gives P (P(max) for max), normalized axes never split,
// means and losses name the global count they need.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @reduce(%x: tensor<4x6x8xf32>) -> (tensor<4x1x8xf32>, tensor<6xf32>, tensor<4x6x1xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> P(sum) | S(2) -> S(2) | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> P(sum) | P(sum) -> P(sum)
  %0 = oflow.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x6x8xf32>) -> tensor<4x1x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> P(sum) [needs division by the global count] | S(1) -> S(0) | S(2) -> P(sum) [needs division by the global count] | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(0) | P(sum) -> P(sum)
  %1 = oflow.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<4x6x8xf32>) -> tensor<6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | S(2) -> P(max) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(max) -> P(max)
  %2 = oflow.reduce_max %x {axes = array<i64: 2>} : (tensor<4x6x8xf32>) -> tensor<4x6x1xf32>
  return %0, %1, %2 : tensor<4x1x8xf32>, tensor<6xf32>, tensor<4x6x1xf32>
}

// -----

func.func @norms(%x: tensor<4x6x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1)
  %0 = oflow.softmax %x {axis = 2 : i64} : tensor<4x6x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(2) -> S(2)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B
  %1 = oflow.log_softmax %x {axis = 1 : i64} : tensor<4x6x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | S(0), B, B -> S(0) | S(1), B, B -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | S(1), B, B -> S(1)
  %2 = oflow.layer_norm %x, %g, %b {axis = 2 : i64} : (tensor<4x6x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x6x8xf32>
  return %0, %2 : tensor<4x6x8xf32>, tensor<4x6x8xf32>
}

// -----

func.func @losses(%x: tensor<8x6xf32>, %l: tensor<8xi64>, %t: tensor<8x6xf32>, %g: tensor<f32>, %gn: tensor<8xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> P(sum) [needs division by the global count] | S(1), B -> B [needs all-reduce of the per-sample max, sum of exponentials and target logit]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), B -> B [needs all-reduce of the per-sample max, sum of exponentials and target logit]
  %0 = oflow.softmax_cross_entropy mean %x, %l : (tensor<8x6xf32>, tensor<8xi64>) -> tensor<f32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | S(1), B -> P(sum) [needs labels outside the local classes masked, offset by rank]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), B -> P(sum) [needs labels outside the local classes masked, offset by rank]
  %1 = oflow.nll_loss none %x, %l {ignore_index = -1 : i64} : (tensor<8x6xf32>, tensor<8xi64>) -> tensor<8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> P(sum) | S(1), S(1) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> P(sum)
  %2 = oflow.mse_loss sum %x, %t : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<f32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | B, B, P(sum) -> P(sum) | S(0), S(0), B -> S(0) [needs all-reduce of the count of labels not ignored] | S(1), B, B -> S(1) [needs all-reduce of the per-sample max and sum of exponentials]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | B, B, P(sum) -> P(sum) | S(1), B, B -> S(1) [needs all-reduce of the per-sample max and sum of exponentials]
  %3 = oflow.softmax_cross_entropy_backward mean %x, %l, %g {ignore_index = -100 : i64} : (tensor<8x6xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | B, B, P(sum) -> P(sum) | S(0), S(0), S(0) -> S(0) | S(1), B, B -> S(1) [needs labels outside the local classes masked, offset by rank]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | B, B, P(sum) -> P(sum) | S(1), B, B -> S(1) [needs labels outside the local classes masked, offset by rank]
  %4 = oflow.nll_loss_backward none %x, %l, %gn : (tensor<8x6xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x6xf32>
  return
}
