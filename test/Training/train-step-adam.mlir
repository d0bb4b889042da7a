// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adam weight-decay=0.01" | FileCheck %s --check-prefix=ADAM
// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adamw weight-decay=0.1 beta1=0.8 eps=1e-6" | FileCheck %s --check-prefix=ADAMW
// RUN: oflow-opt %s -oflow-build-train-step="optimizer=adamw" | FileCheck %s --check-prefix=DEFAULTS

// torch.optim.Adam / AdamW. Two zero-initialised moments per parameter.
// ADAM: oflow.variable @w param
// ADAM-NEXT: oflow.variable @w.exp_avg optimizer : tensor<3x4xf32> {model_name = "w.exp_avg", of = @w}
// ADAM-NEXT: oflow.variable @w.exp_avg_sq optimizer : tensor<3x4xf32> {model_name = "w.exp_avg_sq", of = @w}
// ADAM-LABEL: func.func @oflow_train_step(
// ADAM-SAME: %[[G:.*]]: tensor<3x4xf32> {oflow.name = "g"}, %[[LR:.*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:.*]]: tensor<i64> {oflow.scalar = "step"})
// ADAM-SAME: beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, clip_grad_norm = 0.000000e+00 : f64, eps = 1.000000e-08 : f64, kind = "adam", lr = 1.000000e-03 : f64
// Bias corrections in f64 with t = step + 1: bc1 = 1 - beta1^t, bc2 = 1 - beta2^t.
// ADAM: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// ADAM: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// ADAM: %[[S:.*]] = oflow.cast %[[STEP]] to f64 : tensor<i64>
// ADAM: %[[T:.*]] = oflow.add %[[S]], %[[ONE]]
// ADAM: %[[B1:.*]] = oflow.constant dense<9.000000e-01> : tensor<f64>
// ADAM: %[[B1T:.*]] = oflow.pow %[[B1]], %[[T]]
// ADAM: %[[BC1:.*]] = oflow.sub %[[ONE]], %[[B1T]]
// ADAM: %[[B2:.*]] = oflow.constant dense<0.99899999999999999> : tensor<f64>
// ADAM: %[[B2T:.*]] = oflow.pow %[[B2]], %[[T]]
// ADAM: %[[BC2:.*]] = oflow.sub %[[ONE]], %[[B2T]]
// step_size = lr / bc1; sqrt(bc2)
// ADAM: %[[SS:.*]] = oflow.div %[[LR64]], %[[BC1]]
// ADAM: %[[BC2S:.*]] = oflow.sqrt %[[BC2]] : tensor<f64>
// Adam's weight decay is L2: g + wd * p.
// ADAM: %[[P:.*]] = oflow.read_variable @w :
// ADAM: %[[WD:.*]] = oflow.constant dense<0.00999999977> : tensor<f32>
// ADAM: %[[WDP:.*]] = oflow.mul %[[P]], %[[WD]]
// ADAM: %[[GD:.*]] = oflow.add %[[G]], %[[WDP]]
// m = beta1 * m + (1 - beta1) * g
// ADAM: %[[M:.*]] = oflow.read_variable @w.exp_avg :
// ADAM: %[[V:.*]] = oflow.read_variable @w.exp_avg_sq :
// ADAM: %[[MD:.*]] = oflow.mul %[[M]], %{{.*}}
// ADAM: %[[GM:.*]] = oflow.mul %[[GD]], %{{.*}}
// ADAM: %[[MNEW:.*]] = oflow.add %[[MD]], %[[GM]]
// v = beta2 * v + ((1 - beta2) * g) * g  (ATen's addcmul order)
// ADAM: %[[VD:.*]] = oflow.mul %[[V]], %{{.*}}
// ADAM: %[[C2:.*]] = oflow.constant dense<1.000000e-03> : tensor<f32>
// ADAM: %[[GS:.*]] = oflow.mul %[[GD]], %[[C2]]
// ADAM: %[[GG:.*]] = oflow.mul %[[GS]], %[[GD]]
// ADAM: %[[VNEW:.*]] = oflow.add %[[VD]], %[[GG]]
// denom = sqrt(v) / sqrt(bc2) + eps
// ADAM: %[[ROOT:.*]] = oflow.sqrt %[[VNEW]] : tensor<3x4xf32>
// ADAM: %[[BC2F:.*]] = oflow.cast %[[BC2S]] to f32
// ADAM: %[[RMS:.*]] = oflow.div %[[ROOT]], %[[BC2F]]
// ADAM: %[[EPS:.*]] = oflow.constant dense<9.99999993E-9> : tensor<f32>
// ADAM: %[[DEN:.*]] = oflow.add %[[RMS]], %[[EPS]]
// p - (step_size * m) / denom  (ATen's addcdiv order)
// ADAM: %[[SSF:.*]] = oflow.cast %[[SS]] to f32
// ADAM: %[[NUM:.*]] = oflow.mul %[[MNEW]], %[[SSF]]
// ADAM: %[[UPD:.*]] = oflow.div %[[NUM]], %[[DEN]]
// ADAM: %[[PNEW:.*]] = oflow.sub %[[P]], %[[UPD]]
// ADAM: oflow.write_variable @w.exp_avg, %[[MNEW]]
// ADAM-NEXT: oflow.write_variable @w.exp_avg_sq, %[[VNEW]]
// ADAM-NEXT: oflow.write_variable @w, %[[PNEW]]
// ADAM-NEXT: return

// AdamW decays the parameter first, p * (1 - lr * wd) with the product in
// f64, and the gradient is used as is.
// ADAMW-LABEL: func.func @oflow_train_step(
// ADAMW-SAME: %[[G:.*]]: tensor<3x4xf32> {oflow.name = "g"}, %[[LR:.*]]: tensor<f32> {oflow.scalar = "lr"}
// ADAMW-SAME: beta1 = 8.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, clip_grad_norm = 0.000000e+00 : f64, eps = 9.9999999999999995E-7 : f64, kind = "adamw", lr = 1.000000e-03 : f64, schedule = "constant", weight_decay = 1.000000e-01 : f64
// ADAMW: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// ADAMW: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f64>
// ADAMW: %[[WD:.*]] = oflow.constant dense<1.000000e-01> : tensor<f64>
// ADAMW: %[[LRWD:.*]] = oflow.mul %[[LR64]], %[[WD]]
// ADAMW: %[[KEEP:.*]] = oflow.sub %[[ONE]], %[[LRWD]]
// ADAMW: %[[P:.*]] = oflow.read_variable @w :
// ADAMW: %[[KEEPF:.*]] = oflow.cast %[[KEEP]] to f32
// ADAMW: %[[PD:.*]] = oflow.mul %[[P]], %[[KEEPF]]
// ADAMW: %[[M:.*]] = oflow.read_variable @w.exp_avg :
// ADAMW: %[[B1:.*]] = oflow.constant dense<8.000000e-01> : tensor<f32>
// ADAMW: oflow.mul %[[M]], %[[B1]]
// ADAMW: %[[C1:.*]] = oflow.constant dense<2.000000e-01> : tensor<f32>
// ADAMW: oflow.mul %[[G]], %[[C1]]
// ADAMW: oflow.constant dense<9.99999997E-7> : tensor<f32>
// ADAMW: %[[UPD:.*]] = oflow.div
// ADAMW: %[[PNEW:.*]] = oflow.sub %[[PD]], %[[UPD]]
// ADAMW: oflow.write_variable @w, %[[PNEW]]

// Negative (unset) lr and weight decay take torch's AdamW defaults.
// DEFAULTS: kind = "adamw", lr = 1.000000e-03 : f64, schedule = "constant", weight_decay = 1.000000e-02 : f64

func.func @main(%g: tensor<3x4xf32> {oflow.name = "g"}) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<3x4xf32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  oflow.gradient "w", %g : tensor<3x4xf32>
  return %l : tensor<f32>
}
