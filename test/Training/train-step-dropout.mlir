// RUN: oflow-opt %s -oflow-build-train-step="optimizer=sgd lr=0.5" | FileCheck %s

// Both entries draw dropout masks per step: every training dropout (the
// forward one and the gradient's) takes the entry's step scalar; a ratio-0
// dropout is left alone (the identity).
// CHECK-LABEL: func.func @oflow_train_step(
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {oflow.scalar = "step"})
// CHECK: oflow.dropout %{{.*}} step %[[STEP]] {ratio = 2.500000e-01 : f64, seed = 3 : i64} : tensor<4xf32>
// CHECK: oflow.dropout %{{.*}} {ratio = 0.000000e+00 : f64} : tensor<4xf32>
// CHECK: oflow.dropout %{{.*}} step %[[STEP]] {ratio = 2.500000e-01 : f64, seed = 3 : i64} : tensor<4xf32>
// CHECK-LABEL: func.func @oflow_grad_step(
// CHECK-SAME: %[[GSTEP:[a-z0-9]+]]: tensor<i64> {oflow.scalar = "step"})
// CHECK: oflow.dropout %{{.*}} step %[[GSTEP]] {ratio = 2.500000e-01 : f64, seed = 3 : i64} : tensor<4xf32>
// CHECK: oflow.dropout %{{.*}} step %[[GSTEP]] {ratio = 2.500000e-01 : f64, seed = 3 : i64} : tensor<4xf32>
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32> {oflow.trainable}
  %d = oflow.dropout %w {ratio = 0.25 : f64, seed = 3 : i64} : tensor<4xf32>
  %e = oflow.dropout %d {ratio = 0.0 : f64} : tensor<4xf32>
  %l = oflow.reduce_sum %e {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %g1 = oflow.expand %l [4] : (tensor<f32>) -> tensor<4xf32>
  %g = oflow.dropout %g1 {ratio = 0.25 : f64, seed = 3 : i64} : tensor<4xf32>
  oflow.gradient "w", %g : tensor<4xf32>
  return %l : tensor<f32>
}
