// SBP signatures of stored values on a 2x3 mesh: constants, weights and
// variables are whole (B) or split on any axis that divides, never partial;
// gradients are handed over whole or split.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

oflow.variable @w param : tensor<6x4xf32>
func.func @state() {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): () -> B | () -> S(0) | () -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): () -> B | () -> S(1)
  %c = oflow.constant dense<1.0> : tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): () -> B | () -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): () -> B | () -> S(0)
  %w = oflow.weight "w0", dense<1.0> : tensor<3x4xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): () -> B | () -> S(0) | () -> S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): () -> B | () -> S(0)
  %r = oflow.read_variable @w : tensor<6x4xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> () | S(0) -> () | S(1) -> ()
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> () | S(0) -> ()
  oflow.write_variable @w, %r : tensor<6x4xf32>
  return
}

// -----

func.func private @grads(%g: tensor<6x4xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> () | S(0) -> () | S(1) -> ()
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> () | S(0) -> ()
  oflow.gradient "w", %g : tensor<6x4xf32>
  return
}
