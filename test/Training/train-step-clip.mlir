// RUN: oflow-opt %s -oflow-build-train-step="optimizer=sgd weight-decay=0.5 clip-grad-norm=1.5" | FileCheck %s
// RUN: oflow-opt %s -oflow-build-train-step | FileCheck %s --check-prefix=OFF

// clip_grad_norm_: the global norm over every trained gradient (a 0-d one
// included), coef = min(max_norm / (norm + 1e-6), 1) applied to each
// gradient before the weight decay.
// CHECK-LABEL: func.func @oflow_train_step(
// CHECK-SAME: %[[GW:[^:]*]]: tensor<3x4xf32> {oflow.name = "gw"}, %[[GS:[^:]*]]: tensor<f32> {oflow.name = "gs"}
// CHECK-SAME: clip_grad_norm = 1.500000e+00 : f64
// CHECK: %[[SQW:.*]] = oflow.mul %[[GW]], %[[GW]] : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[SUMW:.*]] = oflow.reduce_sum %[[SQW]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[SQS:.*]] = oflow.mul %[[GS]], %[[GS]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[TOTAL2:.*]] = oflow.add %[[SUMW]], %[[SQS]]
// CHECK-NEXT: %[[TOTAL:.*]] = oflow.sqrt %[[TOTAL2]] : tensor<f32>
// CHECK-NEXT: %[[MAX:.*]] = oflow.constant dense<1.500000e+00> : tensor<f32>
// CHECK-NEXT: %[[TINY:.*]] = oflow.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT: %[[GUARD:.*]] = oflow.add %[[TOTAL]], %[[TINY]]
// CHECK-NEXT: %[[RATIO:.*]] = oflow.div %[[MAX]], %[[GUARD]]
// CHECK-NEXT: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[COEF:.*]] = oflow.min %[[RATIO]], %[[ONE]]
// CHECK-NEXT: %[[CW:.*]] = oflow.mul %[[GW]], %[[COEF]] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[CS:.*]] = oflow.mul %[[GS]], %[[COEF]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// The clipped gradients feed the decayed update.
// CHECK: %[[PW:.*]] = oflow.read_variable @w :
// CHECK: %[[DW:.*]] = oflow.mul %[[PW]], %{{.*}}
// CHECK-NEXT: oflow.add %[[CW]], %[[DW]]
// CHECK: %[[PS:.*]] = oflow.read_variable @s :
// CHECK: %[[DS:.*]] = oflow.mul %[[PS]], %{{.*}}
// CHECK-NEXT: oflow.add %[[CS]], %[[DS]]

// OFF-LABEL: func.func @oflow_train_step(
// OFF-NOT: oflow.sqrt
// OFF: return

func.func @main(%gw: tensor<3x4xf32> {oflow.name = "gw"}, %gs: tensor<f32> {oflow.name = "gs"}) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<3x4xf32> {oflow.trainable}
  %s = oflow.weight "s", dense<2.0> : tensor<f32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  %m = oflow.mul %l, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  oflow.gradient "w", %gw : tensor<3x4xf32>
  oflow.gradient "s", %gs : tensor<f32>
  return %m : tensor<f32>
}
