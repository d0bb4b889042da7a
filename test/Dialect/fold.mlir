// RUN: oflow-opt %s -split-input-file --canonicalize | FileCheck %s

// trilu of a constant is the constant triangle; compare of constants (one a
// scalar) a constant mask. Together they make the causal mask of the native
// GPTs (examples/gpt-config) a constant, which oflow-fuse-attention reads.
// CHECK-LABEL: func.func @causal_mask
// CHECK-NOT: oflow.trilu
// CHECK-NOT: oflow.compare
// CHECK: %[[M:.*]] = oflow.constant dense<[
// CHECK-SAME: [false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
// CHECK: return %[[M]]
func.func @causal_mask() -> tensor<3x3xi1> {
  %ones = oflow.constant dense<1.0> : tensor<3x3xf32>
  %upper = oflow.trilu %ones {upper = true, k = 1 : i64} : tensor<3x3xf32>
  %zero = oflow.constant dense<0.0> : tensor<f32>
  %m = oflow.compare gt %upper, %zero : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xi1>
  return %m : tensor<3x3xi1>
}

// -----

// The lower triangle with k = -1 (below the diagonal), batched; integers.
// CHECK-LABEL: func.func @lower_batched
// CHECK: oflow.constant dense<{{\[}}{{\[}}[0, 0], [5, 0]], {{\[}}[0, 0], [5, 0]]]> : tensor<2x2x2xi32>
func.func @lower_batched() -> tensor<2x2x2xi32> {
  %c = oflow.constant dense<5> : tensor<2x2x2xi32>
  %t = oflow.trilu %c {upper = false, k = -1 : i64} : tensor<2x2x2xi32>
  return %t : tensor<2x2x2xi32>
}

// -----

// NaN: ordered predicates are false, ne is true (as the lowering's).
// CHECK-LABEL: func.func @nan
// CHECK-DAG: oflow.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: oflow.constant dense<[true, false]> : tensor<2xi1>
func.func @nan() -> (tensor<2xi1>, tensor<2xi1>) {
  %a = oflow.constant dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %b = oflow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %lt = oflow.compare lt %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %ne = oflow.compare ne %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %lt, %ne : tensor<2xi1>, tensor<2xi1>
}

// -----

// Not folded: an operand that is not a constant, and a broadcast other than
// a scalar's.
// CHECK-LABEL: func.func @not_folded
// CHECK: oflow.trilu %arg0
// CHECK: oflow.compare gt
func.func @not_folded(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2x3xi1>) {
  %t = oflow.trilu %x {upper = true, k = 0 : i64} : tensor<3x3xf32>
  %row = oflow.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %full = oflow.constant dense<2.0> : tensor<2x3xf32>
  %full2 = oflow.add %full, %full : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = oflow.compare gt %full2, %row : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %t, %m : tensor<3x3xf32>, tensor<2x3xi1>
}
