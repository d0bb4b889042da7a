// RUN: oflow-opt %s -oflow-build-train-step | FileCheck %s --check-prefix=CONST
// RUN: oflow-opt %s -oflow-build-train-step="schedule=linear-warmup warmup-steps=10" | FileCheck %s --check-prefix=WARM
// RUN: oflow-opt %s -oflow-build-train-step="schedule=cosine total-steps=100 min-lr=0.001" | FileCheck %s --check-prefix=COS
// RUN: oflow-opt %s -oflow-build-train-step="schedule=warmup-cosine warmup-steps=10 total-steps=100" | FileCheck %s --check-prefix=WCOS

// The rate is computed in the program from the run-time lr and step, in
// f64 (as torch's schedulers compute in Python floats), and returned as
// lr_used in f32.

// constant: lr itself.
// CONST-LABEL: func.func @oflow_train_step(
// CONST-SAME: %[[LR:[^:]*]]: tensor<f32> {oflow.scalar = "lr"}
// CONST-SAME: schedule = "constant"
// CONST: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// CONST-NEXT: %[[USED:.*]] = oflow.cast %[[LR64]] to f32
// CONST: return %{{.*}}, %[[USED]]

// linear-warmup: lr * min((step + 1) / W, 1).
// WARM-LABEL: func.func @oflow_train_step(
// WARM-SAME: %[[LR:[^:]*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:[^:]*]]: tensor<i64> {oflow.scalar = "step"}
// WARM-SAME: min_lr = 0.000000e+00 : f64, {{.*}} schedule = "linear-warmup", total_steps = 0 : i64, warmup_steps = 10 : i64
// WARM: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// WARM-NEXT: %[[S:.*]] = oflow.cast %[[STEP]] to f64
// WARM-NEXT: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// WARM-NEXT: %[[S1:.*]] = oflow.add %[[S]], %[[ONE]]
// WARM-NEXT: %[[W:.*]] = oflow.constant dense<1.000000e+01> : tensor<f64>
// WARM-NEXT: %[[F:.*]] = oflow.div %[[S1]], %[[W]]
// WARM-NEXT: %[[ONE2:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// WARM-NEXT: %[[FC:.*]] = oflow.min %[[F]], %[[ONE2]]
// WARM-NEXT: %[[RATE:.*]] = oflow.mul %[[LR64]], %[[FC]]
// WARM-NEXT: %[[USED:.*]] = oflow.cast %[[RATE]] to f32
// WARM: return %{{.*}}, %[[USED]]

// cosine: eta_min + (lr - eta_min) * (1 + cos(pi * s / T)) / 2, with s
// folded into [0, T] in integers (period 2T, symmetric about T) and the
// cosine a polynomial in the angle's square.
// COS-LABEL: func.func @oflow_train_step(
// COS-SAME: %[[LR:[^:]*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:[^:]*]]: tensor<i64> {oflow.scalar = "step"}
// COS-SAME: min_lr = 1.000000e-03 : f64, {{.*}} schedule = "cosine", total_steps = 100 : i64
// COS: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// COS-NEXT: %[[ETA:.*]] = oflow.constant dense<1.000000e-03> : tensor<f64>
// COS-NEXT: %[[TWOT:.*]] = oflow.constant dense<200> : tensor<i64>
// COS-NEXT: %[[Q:.*]] = oflow.div %[[STEP]], %[[TWOT]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// COS-NEXT: %[[QT:.*]] = oflow.mul %[[Q]], %[[TWOT]]
// COS-NEXT: %[[R:.*]] = oflow.sub %[[STEP]], %[[QT]]
// COS-NEXT: %[[T:.*]] = oflow.constant dense<100> : tensor<i64>
// COS-NEXT: %[[PAST:.*]] = oflow.compare gt %[[R]], %[[T]]
// COS-NEXT: %[[MIRROR:.*]] = oflow.sub %[[TWOT]], %[[R]]
// COS-NEXT: %[[FOLDED:.*]] = oflow.where %[[PAST]], %[[MIRROR]], %[[R]]
// COS-NEXT: %[[PI:.*]] = oflow.constant dense<3.1415926535897931> : tensor<f64>
// COS-NEXT: %[[RF:.*]] = oflow.cast %[[FOLDED]] to f64
// COS-NEXT: %[[PIR:.*]] = oflow.mul %[[PI]], %[[RF]]
// COS-NEXT: %[[TF:.*]] = oflow.constant dense<1.000000e+02> : tensor<f64>
// COS-NEXT: %[[X:.*]] = oflow.div %[[PIR]], %[[TF]]
// COS-NEXT: %[[X2:.*]] = oflow.mul %[[X]], %[[X]]
// The last Horner steps: ... * x^2 + 1/24, * x^2 - 1/2, * x^2 + 1.
// COS: oflow.constant dense<0.041666666666666664> : tensor<f64>
// COS: oflow.constant dense<-5.000000e-01> : tensor<f64>
// COS: %[[H:.*]] = oflow.mul %{{.*}}, %[[X2]]
// COS-NEXT: %[[C1:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// COS-NEXT: %[[COSV:.*]] = oflow.add %[[H]], %[[C1]]
// COS-NEXT: %[[SPAN:.*]] = oflow.sub %[[LR64]], %[[ETA]]
// COS-NEXT: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// COS-NEXT: %[[ONEC:.*]] = oflow.add %[[ONE]], %[[COSV]]
// COS-NEXT: %[[SC:.*]] = oflow.mul %[[SPAN]], %[[ONEC]]
// COS-NEXT: %[[TWO:.*]] = oflow.constant dense<2.000000e+00> : tensor<f64>
// COS-NEXT: %[[HALF:.*]] = oflow.div %[[SC]], %[[TWO]]
// COS-NEXT: %[[RATE:.*]] = oflow.add %[[ETA]], %[[HALF]]
// COS-NEXT: %[[USED:.*]] = oflow.cast %[[RATE]] to f32
// COS: return %{{.*}}, %[[USED]]

// warmup-cosine: the warm-up below W, then the cosine over T - W steps of
// max(step - W, 0).
// WCOS-LABEL: func.func @oflow_train_step(
// WCOS-SAME: %[[LR:[^:]*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:[^:]*]]: tensor<i64> {oflow.scalar = "step"}
// WCOS-SAME: schedule = "warmup-cosine", total_steps = 100 : i64, warmup_steps = 10 : i64
// WCOS: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// WCOS-NEXT: %[[W:.*]] = oflow.constant dense<10> : tensor<i64>
// WCOS-NEXT: %[[SH:.*]] = oflow.sub %[[STEP]], %[[W]]
// WCOS-NEXT: %[[Z:.*]] = oflow.constant dense<0> : tensor<i64>
// WCOS-NEXT: %[[SINCE:.*]] = oflow.max %[[SH]], %[[Z]]
// WCOS: %[[TWOT:.*]] = oflow.constant dense<180> : tensor<i64>
// WCOS-NEXT: oflow.div %[[SINCE]], %[[TWOT]]
// WCOS: %[[TWO:.*]] = oflow.constant dense<2.000000e+00> : tensor<f64>
// WCOS-NEXT: oflow.div
// WCOS-NEXT: %[[COSRATE:.*]] = oflow.add
// WCOS-NEXT: %[[IN:.*]] = oflow.compare lt %[[STEP]], %[[W]]
// WCOS-NEXT: %[[S:.*]] = oflow.cast %[[STEP]] to f64
// WCOS: %[[F:.*]] = oflow.div
// WCOS-NEXT: %[[RAMP:.*]] = oflow.mul %[[LR64]], %[[F]]
// WCOS-NEXT: %[[RATE:.*]] = oflow.where %[[IN]], %[[RAMP]], %[[COSRATE]]
// WCOS-NEXT: %[[USED:.*]] = oflow.cast %[[RATE]] to f32
// WCOS: return %{{.*}}, %[[USED]]

func.func @main(%g: tensor<3x4xf32> {oflow.name = "g"}) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<3x4xf32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  oflow.gradient "w", %g : tensor<3x4xf32>
  return %l : tensor<f32>
}
