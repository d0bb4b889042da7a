// Diagnostics of the SBP signature test pass.
//
// RUN: not oflow-opt %s -oflow-test-sbp-signatures=mesh=2,0 -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MESH
// RUN: oflow-opt %s -split-input-file -verify-diagnostics \
// RUN:   -oflow-test-sbp-signatures=mesh=1 -mlir-print-op-on-diagnostic=false -o /dev/null

// MESH: error: mesh axis sizes must be positive
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{axis 0 (size 1): B -> B | S(0) -> S(0) | P(sum) -> P(sum)}}
  %0 = oflow.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An op on tensors without SBP signatures stops the pass.
func.func @foreign(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no SBP signatures}}
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
