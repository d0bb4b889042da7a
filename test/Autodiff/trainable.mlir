// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s
// RUN: oflow-opt %s -split-input-file --oflow-autodiff='freeze=emb.*,head.bias' | FileCheck %s --check-prefix=FROZEN

// Which weights are trained: a causal-mask table that only feeds a where's
// condition and BN running statistics are buffers; integer weights never
// train; weights off the loss's path are left alone.

// CHECK-LABEL: func.func @main
// CHECK: oflow.weight "emb.weight", {{.*}} {oflow.trainable}
// CHECK: oflow.weight "mask", {{.*}} : tensor<4x4xf32>{{$}}
// CHECK: oflow.weight "bn.scale", {{.*}} {oflow.trainable}
// CHECK: oflow.weight "bn.bias", {{.*}} {oflow.trainable}
// CHECK: oflow.weight "bn.running_mean", {{.*}} : tensor<4xf32>{{$}}
// CHECK: oflow.weight "bn.running_var", {{.*}} : tensor<4xf32>{{$}}
// CHECK: oflow.weight "tokens", {{.*}} : tensor<4xi64>{{$}}
// CHECK: oflow.weight "unused", {{.*}} : tensor<4xf32>{{$}}
// CHECK: oflow.weight "head.bias", {{.*}} {oflow.trainable}
// Gradients in the order of first appearance, just before the return.
// CHECK: oflow.gradient "emb.weight", %{{.*}} : tensor<8x4xf32>
// CHECK-NEXT: oflow.gradient "bn.scale", %{{.*}} : tensor<4xf32>
// CHECK-NEXT: oflow.gradient "bn.bias", %{{.*}} : tensor<4xf32>
// CHECK-NEXT: oflow.gradient "head.bias", %{{.*}} : tensor<4xf32>
// CHECK-NEXT: return
// FROZEN-LABEL: func.func @main
// FROZEN-NOT: oflow.gradient "emb.weight"
// FROZEN-NOT: oflow.gradient "head.bias"
// FROZEN: oflow.gradient "bn.scale"
// FROZEN-NEXT: oflow.gradient "bn.bias"
// FROZEN-NEXT: return
func.func @main(%labels: tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %emb = oflow.weight "emb.weight", dense<0.5> : tensor<8x4xf32>
  %mask = oflow.weight "mask", dense<1.0> : tensor<4x4xf32>
  %s = oflow.weight "bn.scale", dense<1.0> : tensor<4xf32>
  %b = oflow.weight "bn.bias", dense<0.0> : tensor<4xf32>
  %rm = oflow.weight "bn.running_mean", dense<0.0> : tensor<4xf32>
  %rv = oflow.weight "bn.running_var", dense<1.0> : tensor<4xf32>
  %tok = oflow.weight "tokens", dense<[1, 2, 3, 4]> : tensor<4xi64>
  %unused = oflow.weight "unused", dense<2.0> : tensor<4xf32>
  %hb = oflow.weight "head.bias", dense<0.0> : tensor<4xf32>
  %x = oflow.gather %emb, %tok {axis = 0 : i64} : (tensor<8x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %zero = oflow.constant dense<0.0> : tensor<f32>
  %keep = oflow.compare gt %mask, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  %ninf = oflow.constant dense<-1.0e9> : tensor<f32>
  %masked = oflow.where %keep, %x, %ninf : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %y, %nrm, %nrv = oflow.batch_norm_training %masked, %s, %b, %rm, %rv : (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %u = oflow.exp %unused : tensor<4xf32>
  %z = oflow.add %y, %hb : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %loss = oflow.softmax_cross_entropy mean %z, %labels : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss, %nrm, %nrv, %u : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A weight used twice (tied embedding and output head): one gradient, the
// sum of both uses.
// CHECK-LABEL: func.func @main
// CHECK: %[[W1:.*]] = oflow.weight "wte", {{.*}} : tensor<6x4xf32> {oflow.trainable}
// CHECK: %[[W2:.*]] = oflow.weight "wte", {{.*}} : tensor<6x4xf32> {oflow.trainable}
// CHECK: %[[GHEAD:.*]] = oflow.matmul {{.*}} {transpose_a}
// CHECK: %[[GEMB:.*]] = oflow.gather_backward
// CHECK: %[[SUM:.*]] = oflow.add %[[GEMB]], %[[GHEAD]]
// CHECK: oflow.gradient "wte", %[[SUM]] : tensor<6x4xf32>
// CHECK-NOT: oflow.gradient
// CHECK: return
func.func @main(%tok: tensor<3xi64>, %labels: tensor<3xi64>) -> tensor<f32> {
  %w1 = oflow.weight "wte", dense<0.1> : tensor<6x4xf32>
  %w2 = oflow.weight "wte", dense<0.1> : tensor<6x4xf32>
  %h = oflow.gather %w1, %tok {axis = 0 : i64} : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %logits = oflow.matmul %h, %w2 {transpose_b} : (tensor<3x4xf32>, tensor<6x4xf32>) -> tensor<3x6xf32>
  %loss = oflow.softmax_cross_entropy mean %logits, %labels : (tensor<3x6xf32>, tensor<3xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The loss is the weight itself: its gradient is 1.
// CHECK-LABEL: func.func @main
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: oflow.gradient "scalar", %[[ONE]] : tensor<f32>
func.func @main() -> tensor<f32> {
  %w = oflow.weight "scalar", dense<3.0> : tensor<f32>
  return %w : tensor<f32>
}

// -----

// A value used twice accumulates with oflow.add: d(w * w) = g*w + g*w.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = oflow.weight "w"
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[A:.*]] = oflow.mul %[[ONE]], %[[W]]
// CHECK-NEXT: %[[B:.*]] = oflow.mul %[[ONE]], %[[W]]
// CHECK-NEXT: %[[S:.*]] = oflow.add %[[A]], %[[B]]
// CHECK-NEXT: oflow.gradient "w", %[[S]] : tensor<f32>
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<3.0> : tensor<f32>
  %sq = oflow.mul %w, %w : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %sq : tensor<f32>
}
