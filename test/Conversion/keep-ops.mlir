// RUN: oflow-opt %s --oflow-lower-to-linalg=keep=oflow.softmax | FileCheck %s
// RUN: not oflow-opt %s --oflow-lower-to-linalg=keep=oflow.no_such_op 2>&1 | FileCheck %s --check-prefix=BAD

// Ops named in `keep` stay for a later pass; the others are lowered.
// CHECK-LABEL: func.func @keep
// CHECK: linalg.generic
// CHECK: oflow.softmax
// BAD: cannot keep 'oflow.no_such_op': not an op of the oflow dialect
func.func @keep(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = oflow.exp %x : tensor<4xf32>
  %1 = oflow.softmax %0 {axis = 0 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
