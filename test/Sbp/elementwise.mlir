// SBP signatures of elementwise ops on a 2x3 mesh: splits follow numpy
// broadcasting, P only where linear (P(max) where nondecreasing), and a dim
// that 3 does not divide is never S on axis 1.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @add_bcast(%a: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | S(1), S(0) -> S(1) | P(sum), P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(0) -> S(1) | P(sum), P(sum) -> P(sum)
  %0 = oflow.add %a, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @mul_div_sub(%a: tensor<4x1xf32>, %b: tensor<1x6xf32>) -> tensor<4x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | B, S(1) -> S(1) | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | B, S(1) -> S(1) | P(sum), B -> P(sum) | B, P(sum) -> P(sum)
  %0 = oflow.mul %a, %b : (tensor<4x1xf32>, tensor<1x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | S(1), S(1) -> S(1) | P(sum), B -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> S(1) | P(sum), B -> P(sum)
  %1 = oflow.div %0, %b : (tensor<4x6xf32>, tensor<1x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | S(1), B -> S(1) | P(sum), P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), B -> S(1) | P(sum), P(sum) -> P(sum)
  %2 = oflow.sub %1, %a : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | S(1), S(1) -> S(1) | P(max), P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> S(1) | P(max), P(max) -> P(max)
  %3 = oflow.max %2, %1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | S(1), S(1) -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> S(1)
  %4 = oflow.pow %3, %1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %4 : tensor<4x6xf32>
}

// -----

func.func @unary(%a: tensor<4x6xf32>, %step: tensor<i64>) -> tensor<4x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum)
  %0 = oflow.neg %a : tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(max) -> P(max)
  %1 = oflow.relu %0 : tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1)
  %2 = oflow.rsqrt %1 : tensor<4x6xf32>
// Dropout's mask is keyed by the global element index: split like any
// elementwise op (oflow-partition gives a piece its offsets), the step is B.
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | S(1), B -> S(1) | P(sum), B -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), B -> S(1) | P(sum), B -> P(sum)
  %3 = oflow.dropout %2 step %step {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}

// -----

func.func @where_expand(%c: tensor<4x6xi1>, %a: tensor<4x6xf32>, %b: tensor<1x6xf32>) -> tensor<4x6xf32> {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | B -> S(0) | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
  %e = oflow.expand %b [4, 6] : (tensor<1x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B | S(0), S(0), S(0) -> S(0) | S(1), S(1), S(1) -> S(1) | B, P(sum), P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B | S(1), S(1), S(1) -> S(1) | B, P(sum), P(sum) -> P(sum)
  %0 = oflow.where %c, %a, %e : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
