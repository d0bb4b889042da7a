// SBP signatures of shape ops and gather on a 2x3 mesh: a split survives a
// reshape when its axis stays a contiguous block per device; a row-split table
// gives a partial lookup.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @reshape(%x: tensor<4x6x2xf32>) -> tensor<24x2xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(2) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | P(sum) -> P(sum) | P(max) -> P(max)
  %0 = oflow.reshape %x [24, 2] : (tensor<4x6x2xf32>) -> tensor<24x2xf32>
  return %0 : tensor<24x2xf32>
}

// -----

func.func @reshape_split(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | P(sum) -> P(sum) | P(max) -> P(max)
  %0 = oflow.reshape %x [2, 12] : (tensor<4x6xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

func.func @flatten_squeeze(%x: tensor<4x1x6xf32>) -> (tensor<4x6xf32>, tensor<4x6x1xf32>, tensor<4x6xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(2) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(2) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
  %0 = oflow.flatten %x : (tensor<4x1x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(2) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(2) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
  %1 = oflow.squeeze %x [1] : (tensor<4x1x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
  %2 = oflow.unsqueeze %1 [2] : (tensor<4x6xf32>) -> tensor<4x6x1xf32>
  return %0, %2, %1 : tensor<4x6xf32>, tensor<4x6x1xf32>, tensor<4x6xf32>
}

// -----

func.func @transpose(%x: tensor<4x6x2xf32>) -> tensor<2x4x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(2) -> S(0) | S(0) -> S(1) | S(1) -> S(2) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(2) | P(sum) -> P(sum) | P(max) -> P(max)
  %0 = oflow.transpose %x [2, 0, 1] : (tensor<4x6x2xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// -----

func.func @gather(%wte: tensor<10x8xf32>, %tok: tensor<2x6xi64>) -> tensor<2x6x8xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> P(sum) [needs indices outside the local rows masked, offset by rank] | S(1), B -> S(2) | B, S(0) -> S(0) | B, S(1) -> S(1) | P(sum), B -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | B, S(1) -> S(1) | P(sum), B -> P(sum)
  %0 = oflow.gather %wte, %tok {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2x6xi64>) -> tensor<2x6x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | B, B -> S(0) [needs indices outside the local rows masked, offset by rank] | S(2), B -> S(1) | S(0), S(0) -> P(sum) | S(1), S(1) -> P(sum) | P(sum), B -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> P(sum) | P(sum), B -> P(sum)
  %1 = oflow.gather_backward %0, %tok {axis = 0 : i64, data_shape = array<i64: 10, 8>} : (tensor<2x6x8xf32>, tensor<2x6xi64>) -> tensor<10x8xf32>
  return %0 : tensor<2x6x8xf32>
}
