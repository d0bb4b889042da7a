// Options that cannot work are errors before anything changes.
// RUN: not oflow-opt %s -oflow-build-train-step="optimizer=rmsprop" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: oflow-build-train-step: unknown optimizer 'rmsprop' (expected sgd, adam or adamw)
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=step" 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: error: oflow-build-train-step: unknown schedule 'step' (expected constant, linear-warmup, cosine or warmup-cosine)
// RUN: not oflow-opt %s -oflow-build-train-step="momentum=-0.5" 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: error: oflow-build-train-step: --momentum must not be negative
// RUN: not oflow-opt %s -oflow-build-train-step="optimizer=adam eps=-1" 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: oflow-build-train-step: --eps must not be negative
// RUN: not oflow-opt %s -oflow-build-train-step="optimizer=adam beta2=1" 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: error: oflow-build-train-step: --beta1 and --beta2 must be in [0, 1)
// RUN: not oflow-opt %s -oflow-build-train-step="clip-grad-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: oflow-build-train-step: --clip-grad-norm must not be negative (0 turns it off)
// RUN: not oflow-opt %s -oflow-build-train-step="nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not oflow-opt %s -oflow-build-train-step="nesterov=true momentum=0.9 dampening=0.1" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// NESTEROV: error: oflow-build-train-step: Nesterov momentum needs --momentum > 0 and --dampening 0
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=linear-warmup" 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: error: oflow-build-train-step: linear-warmup needs --warmup-steps > 0
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=cosine" 2>&1 | FileCheck %s --check-prefix=COS
// COS: error: oflow-build-train-step: cosine needs --total-steps > 0
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=warmup-cosine warmup-steps=10 total-steps=10" 2>&1 | FileCheck %s --check-prefix=WCOS
// WCOS: error: oflow-build-train-step: warmup-cosine needs --total-steps > --warmup-steps
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=cosine total-steps=10 min-lr=-1" 2>&1 | FileCheck %s --check-prefix=MINLR
// MINLR: error: oflow-build-train-step: --min-lr must not be negative
// RUN: not oflow-opt %s -oflow-build-train-step="schedule=cosine total-steps=-3" 2>&1 | FileCheck %s --check-prefix=NEGSTEPS
// NEGSTEPS: error: oflow-build-train-step: --warmup-steps and --total-steps must not be negative

// Unset lr / weight decay take torch.optim's defaults: lr 1e-3 (SGD's since
// torch 2).
// RUN: oflow-opt %s -oflow-build-train-step | FileCheck %s --check-prefix=SGD
// SGD: kind = "sgd", lr = 1.000000e-03 : f64, {{.*}} weight_decay = 0.000000e+00 : f64
// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adam" | FileCheck %s --check-prefix=ADAM
// ADAM: kind = "adam", lr = 1.000000e-03 : f64, schedule = "constant", weight_decay = 0.000000e+00 : f64

func.func @main(%g: tensor<3xf32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<3xf32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  oflow.gradient "w", %g : tensor<3xf32>
  return %l : tensor<f32>
}
