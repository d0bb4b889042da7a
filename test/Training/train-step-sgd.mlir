// RUN: oflow-opt %s -oflow-build-train-step="optimizer=sgd lr=0.1 momentum=0.9 dampening=0.25 weight-decay=0.01" | FileCheck %s --check-prefix=DAMP
// RUN: oflow-opt %s -oflow-build-train-step="momentum=0.9 nesterov=true" | FileCheck %s --check-prefix=NESTEROV
// RUN: oflow-opt %s -oflow-build-train-step="momentum=0.5" | FileCheck %s --check-prefix=MOMENTUM

// torch.optim.SGD. The gradient comes straight from an argument here.

// Momentum keeps a zero-initialised buffer per parameter.
// DAMP: oflow.variable @w param
// DAMP-NEXT: oflow.variable @w.momentum_buffer optimizer : tensor<3x4xf32> {model_name = "w.momentum_buffer", of = @w}
// DAMP-LABEL: func.func @oflow_train_step(
// DAMP-SAME: %[[G:.*]]: tensor<3x4xf32> {oflow.name = "g"}, %[[LR:.*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:.*]]: tensor<i64> {oflow.scalar = "step"})
// DAMP-SAME: dampening = 2.500000e-01 : f64, kind = "sgd", lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false
// DAMP: %[[LR64:.*]] = oflow.cast %[[LR]] to f64
// DAMP-NEXT: %[[LRF:.*]] = oflow.cast %[[LR64]] to f32
// With dampening the first step copies d into the buffer, as torch does.
// DAMP: %[[ZERO:.*]] = oflow.constant dense<0> : tensor<i64>
// DAMP: %[[FIRST:.*]] = oflow.compare eq %[[STEP]], %[[ZERO]] : (tensor<i64>, tensor<i64>) -> tensor<i1>
// d = g + wd * p
// DAMP: %[[P:.*]] = oflow.read_variable @w : tensor<3x4xf32>
// DAMP: %[[WD:.*]] = oflow.constant dense<0.00999999977> : tensor<f32>
// DAMP: %[[WDP:.*]] = oflow.mul %[[P]], %[[WD]]
// DAMP: %[[D:.*]] = oflow.add %[[G]], %[[WDP]]
// buf = mu * buf + (1 - dampening) * d, or d at step 0
// DAMP: %[[MU:.*]] = oflow.constant dense<0.899999976> : tensor<f32>
// DAMP: %[[BUF:.*]] = oflow.read_variable @w.momentum_buffer
// DAMP: %[[ONEMD:.*]] = oflow.constant dense<7.500000e-01> : tensor<f32>
// DAMP: %[[FRESH:.*]] = oflow.mul %[[D]], %[[ONEMD]]
// DAMP: %[[DECAYED:.*]] = oflow.mul %[[BUF]], %[[MU]]
// DAMP: %[[SUM:.*]] = oflow.add %[[DECAYED]], %[[FRESH]]
// DAMP: %[[NEWBUF:.*]] = oflow.where %[[FIRST]], %[[D]], %[[SUM]]
// p - lr * buf
// DAMP: %[[STEPP:.*]] = oflow.mul %[[NEWBUF]], %[[LRF]]
// DAMP: %[[NEWP:.*]] = oflow.sub %[[P]], %[[STEPP]]
// DAMP: oflow.write_variable @w.momentum_buffer, %[[NEWBUF]]
// DAMP-NEXT: oflow.write_variable @w, %[[NEWP]]
// DAMP-NEXT: return

// Without dampening mu * 0 + d is exactly d: no step-0 case. Nesterov
// steps along d + mu * buf.
// NESTEROV-LABEL: func.func @oflow_train_step(
// NESTEROV-SAME: %[[G:.*]]: tensor<3x4xf32> {oflow.name = "g"}
// NESTEROV-SAME: lr = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, nesterov = true
// NESTEROV-NOT: oflow.compare
// NESTEROV-NOT: oflow.where
// NESTEROV: oflow.cast %{{.*}} to f64
// NESTEROV: %[[P:.*]] = oflow.read_variable @w :
// NESTEROV: %[[MU:.*]] = oflow.constant dense<0.899999976> : tensor<f32>
// NESTEROV: %[[BUF:.*]] = oflow.read_variable @w.momentum_buffer
// NESTEROV: %[[DECAYED:.*]] = oflow.mul %[[BUF]], %[[MU]]
// NESTEROV: %[[NEWBUF:.*]] = oflow.add %[[DECAYED]], %[[G]]
// NESTEROV: %[[LOOK:.*]] = oflow.mul %[[NEWBUF]], %[[MU]]
// NESTEROV: %[[D:.*]] = oflow.add %[[G]], %[[LOOK]]
// NESTEROV: %[[STEPP:.*]] = oflow.mul %[[D]], %{{.*}}
// NESTEROV: %[[NEWP:.*]] = oflow.sub %[[P]], %[[STEPP]]
// NESTEROV: oflow.write_variable @w.momentum_buffer, %[[NEWBUF]]
// NESTEROV-NEXT: oflow.write_variable @w, %[[NEWP]]

// Plain momentum steps along the buffer.
// MOMENTUM-LABEL: func.func @oflow_train_step(
// MOMENTUM-SAME: %[[G:.*]]: tensor<3x4xf32> {oflow.name = "g"}
// MOMENTUM: %[[LRF:.*]] = oflow.cast %{{.*}} to f32
// MOMENTUM: %[[NEWBUF:.*]] = oflow.add %{{.*}}, %[[G]]
// MOMENTUM-NEXT: %[[STEPP:.*]] = oflow.mul %[[NEWBUF]], %[[LRF]]
// MOMENTUM-NEXT: oflow.sub %{{.*}}, %[[STEPP]]

func.func @main(%g: tensor<3x4xf32> {oflow.name = "g"}) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<3x4xf32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  oflow.gradient "w", %g : tensor<3x4xf32>
  return %l : tensor<f32>
}
