// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adam loss-scaling=true loss-scale=1024" | FileCheck %s
// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adam" | FileCheck %s --check-prefix=OFF

// Dynamic loss scaling (fp16), GradScaler's semantics: the backward starts
// from the scale S instead of 1 (autodiff names that seed
// "oflow.loss_seed"), the gradients are multiplied by 1/S, a step whose
// gradients hold an inf or NaN keeps every variable (sum(g * 0) is NaN
// exactly then), and S halves on overflow, doubles after 2000 good steps.
// CHECK-DAG: oflow.variable @loss_scale optimizer : tensor<f32> = dense<1.024000e+03> : tensor<f32> {model_name = "loss_scale", of = @w}
// CHECK-DAG: oflow.variable @loss_scale.good_steps optimizer : tensor<i64> = dense<0> : tensor<i64> {model_name = "loss_scale.good_steps", of = @w}
// CHECK-DAG: oflow.variable @loss_scale.applied_steps optimizer : tensor<i64> = dense<0> : tensor<i64> {model_name = "loss_scale.applied_steps", of = @w}

// CHECK-LABEL: func.func @oflow_train_step(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32> {oflow.name = "x"}
// CHECK: %[[SEED:.*]] = oflow.read_variable @loss_scale : tensor<f32>
// CHECK: %[[G:.*]] = oflow.mul %[[X]], %[[SEED]]
// CHECK: %[[GOOD:.*]] = oflow.read_variable @loss_scale.good_steps
// CHECK: %[[APPLIED:.*]] = oflow.read_variable @loss_scale.applied_steps
// CHECK: %[[S:.*]] = oflow.read_variable @loss_scale : tensor<f32>
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.*]] = oflow.div %[[ONE]], %[[S]]
// CHECK: %[[ZERO:.*]] = oflow.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[Z:.*]] = oflow.mul %[[G]], %{{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[ZS:.*]] = oflow.reduce_sum %[[Z]]
// CHECK: %[[PROBE:.*]] = oflow.add %[[ZERO]], %[[ZS]]
// CHECK: %[[GU:.*]] = oflow.mul %[[G]], %[[INV]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[OVF:.*]] = oflow.compare ne %[[PROBE]], %[[PROBE]]
// Adam's bias correction counts applied steps, not the runtime's step.
// CHECK: %[[T:.*]] = oflow.cast %[[APPLIED]] to f64
// CHECK: oflow.pow %{{.*}}, %{{.*}}
// CHECK: oflow.mul %[[GU]], %{{.*}}
// Every write keeps the old value on overflow.
// CHECK: %[[OLDM:.*]] = oflow.read_variable @w.exp_avg : tensor<4xf32>
// CHECK: %[[NEWM:.*]] = oflow.where %[[OVF]], %[[OLDM]], %{{.*}}
// CHECK: %[[OLDV:.*]] = oflow.read_variable @w.exp_avg_sq : tensor<4xf32>
// CHECK: %[[NEWV:.*]] = oflow.where %[[OVF]], %[[OLDV]], %{{.*}}
// CHECK: %[[OLDW:.*]] = oflow.read_variable @w : tensor<4xf32>
// CHECK: %[[NEWW:.*]] = oflow.where %[[OVF]], %[[OLDW]], %{{.*}}
// S doubles after 2000 good steps, halves on overflow.
// CHECK: %[[GOOD1:.*]] = oflow.add %[[GOOD]], %{{.*}} : (tensor<i64>, tensor<i64>)
// CHECK: %[[N:.*]] = oflow.constant dense<2000> : tensor<i64>
// CHECK: %[[GROW:.*]] = oflow.compare ge %[[GOOD1]], %[[N]]
// CHECK: %[[TWO:.*]] = oflow.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[UP:.*]] = oflow.mul %[[S]], %[[TWO]]
// CHECK: %[[KEEP:.*]] = oflow.where %[[GROW]], %[[UP]], %[[S]]
// CHECK: %[[HALF:.*]] = oflow.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[DOWN:.*]] = oflow.mul %[[S]], %[[HALF]]
// CHECK: %[[NEWS:.*]] = oflow.where %[[OVF]], %[[DOWN]], %[[KEEP]]
// CHECK: oflow.write_variable @w.exp_avg, %[[NEWM]]
// CHECK: oflow.write_variable @w.exp_avg_sq, %[[NEWV]]
// CHECK: oflow.write_variable @w, %[[NEWW]]
// CHECK: oflow.write_variable @loss_scale, %[[NEWS]]
// CHECK: oflow.write_variable @loss_scale.good_steps
// CHECK: oflow.write_variable @loss_scale.applied_steps

// The grads entry scales and unscales the same way (and writes nothing).
// CHECK-LABEL: func.func @oflow_grad_step(
// CHECK: oflow.read_variable @loss_scale
// CHECK: oflow.div
// CHECK-NOT: oflow.write_variable
// CHECK: return

// OFF-NOT: loss_scale
func.func @main(%x: tensor<4xf32> {oflow.name = "x"}) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32> {oflow.trainable}
  %p = oflow.mul %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %seed = oflow.constant dense<1.0> : tensor<f32> loc("oflow.loss_seed")
  %gw = oflow.mul %x, %seed : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  oflow.gradient "w", %gw : tensor<4xf32>
  return %l : tensor<f32>
}
