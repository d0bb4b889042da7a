// RUN: oflow-opt %s -oflow-build-train-step="optimizer=sgd lr=0.5" | FileCheck %s

// The structure of the generated program, with plain SGD.

// Weights become variables in order of first appearance: trained ones are
// params, the rest buffers (an integer table too). Ops sharing a name are
// one weight. A name taken by another symbol is uniqued; model_name keeps
// the ONNX name. No optimizer state for plain SGD.
// CHECK: module {
// CHECK-NEXT: oflow.variable @fc.weight param : tensor<2x3xf32> = dense<5.000000e-01> : tensor<2x3xf32> {model_name = "fc.weight"}
// CHECK-NEXT: oflow.variable @[[SCALE:scale_[0-9]+]] buffer : tensor<f32> = dense<2.000000e+00> : tensor<f32> {model_name = "scale"}
// CHECK-NEXT: oflow.variable @table buffer : tensor<3xi64> = dense<[0, 1, 2]> : tensor<3xi64> {model_name = "table"}
// CHECK-NEXT: oflow.variable @fc.bias param : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32> {model_name = "fc.bias"}
// CHECK-NOT: oflow.variable
// CHECK-NEXT: func.func @scale(

// The train entry: @main's arguments with their attributes, then lr and
// step; returns the loss and the rate used. Results other than the loss are
// dropped and their computation with them.
// CHECK-LABEL: func.func @oflow_train_step(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {oflow.name = "x"}, %[[Y:.*]]: tensor<4xi64> {oflow.name = "y"},
// CHECK-SAME: %[[LR:.*]]: tensor<f32> {oflow.scalar = "lr"}, %[[STEP:.*]]: tensor<i64> {oflow.scalar = "step"})
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<f32> {oflow.scalar = "lr_used"})
// CHECK-SAME: attributes {oflow.entry = "train", oflow.optimizer = {clip_grad_norm = 0.000000e+00 : f64, dampening = 0.000000e+00 : f64, kind = "sgd", lr = 5.000000e-01 : f64, momentum = 0.000000e+00 : f64, nesterov = false, schedule = "constant", weight_decay = 0.000000e+00 : f64}}
// The reads replace the weight ops (an unused one is erased).
// CHECK-NEXT: oflow.read_variable @[[SCALE]] : tensor<f32>
// CHECK: oflow.read_variable @fc.weight : tensor<2x3xf32>
// CHECK-NEXT: oflow.read_variable @fc.bias : tensor<2xf32>
// CHECK: %[[LOSS:.*]] = oflow.softmax_cross_entropy mean
// CHECK-NOT: oflow.reduce_max
// CHECK-NOT: oflow.gradient
// CHECK: %[[GW:.*]] = oflow.gemm %{{.*}}, %{{.*}} {transpose_a}
// CHECK: %[[GB:.*]] = oflow.reduce_sum
// SGD: p - lr * g, the rate computed in f64 and rounded to f32 once.
// CHECK: %[[LR64:.*]] = oflow.cast %[[LR]] to f64 : tensor<f32>
// CHECK: %[[LRUSED:.*]] = oflow.cast %[[LR64]] to f32 : tensor<f64>
// CHECK: %[[P:.*]] = oflow.read_variable @fc.weight
// CHECK: %[[D:.*]] = oflow.mul %[[GW]], %[[LRUSED]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[PNEW:.*]] = oflow.sub %[[P]], %[[D]]
// CHECK: %[[Q:.*]] = oflow.read_variable @fc.bias
// CHECK: %[[E:.*]] = oflow.mul %[[GB]], %[[LRUSED]]
// CHECK: %[[QNEW:.*]] = oflow.sub %[[Q]], %[[E]]
// Every write after every read.
// CHECK: oflow.write_variable @fc.weight, %[[PNEW]] : tensor<2x3xf32>
// CHECK-NOT: oflow.read_variable
// CHECK: oflow.write_variable @fc.bias, %[[QNEW]] : tensor<2xf32>
// CHECK-NOT: oflow.read_variable
// CHECK: return %[[LOSS]], %[[LRUSED]] : tensor<f32>, tensor<f32>

// The grads entry: same arguments, the loss and one gradient per param in
// variable order, and no writes.
// CHECK-LABEL: func.func @oflow_grad_step(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32> {oflow.name = "x"}, %{{.*}}: tensor<4xi64> {oflow.name = "y"},
// CHECK-SAME: %{{.*}}: tensor<f32> {oflow.scalar = "lr"}, %{{.*}}: tensor<i64> {oflow.scalar = "step"})
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<2x3xf32> {oflow.grad_of = "fc.weight"}, tensor<2xf32> {oflow.grad_of = "fc.bias"})
// CHECK-SAME: attributes {oflow.entry = "grads"}
// CHECK-NOT: oflow.write_variable
// CHECK-NOT: oflow.gradient
// CHECK-NOT: oflow.reduce_max
// CHECK: %[[GL:.*]] = oflow.softmax_cross_entropy mean
// CHECK: %[[GGW:.*]] = oflow.gemm %{{.*}}, %{{.*}} {transpose_a}
// CHECK: %[[GGB:.*]] = oflow.reduce_sum
// CHECK-NOT: oflow.write_variable
// CHECK: return %[[GL]], %[[GGW]], %[[GGB]] : tensor<f32>, tensor<2x3xf32>, tensor<2xf32>

// @main is gone.
// CHECK-NOT: @main

func.func @scale(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

func.func @main(%x: tensor<4x3xf32> {oflow.name = "x"}, %y: tensor<4xi64> {oflow.name = "y"}) -> (tensor<f32> {oflow.name = "loss"}, tensor<4xf32> {oflow.name = "peak"}, tensor<3xi64>) {
  %w = oflow.weight "fc.weight", dense<0.5> : tensor<2x3xf32> {oflow.trainable}
  %s = oflow.weight "scale", dense<2.0> : tensor<f32>
  %t = oflow.weight "table", dense<[0, 1, 2]> : tensor<3xi64>
  %xs = oflow.mul %x, %s : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  // The same weight again (no trainable marker on this op: still trained).
  %w2 = oflow.weight "fc.weight", dense<0.5> : tensor<2x3xf32>
  %b = oflow.weight "fc.bias", dense<0.0> : tensor<2xf32> {oflow.trainable}
  %z = oflow.gemm %xs, %w2, %b {transpose_b} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = oflow.softmax_cross_entropy mean %z, %y : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  %peak = oflow.reduce_max %xs {axes = array<i64: 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  %one = oflow.constant dense<1.0> : tensor<f32>
  %gz = oflow.softmax_cross_entropy_backward mean %z, %y, %one : (tensor<4x2xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x2xf32>
  %gw = oflow.gemm %gz, %xs {transpose_a} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %gb = oflow.reduce_sum %gz {axes = array<i64: 0>, keepdims = false} : (tensor<4x2xf32>) -> tensor<2xf32>
  oflow.gradient "fc.weight", %gw : tensor<2x3xf32>
  oflow.gradient "fc.bias", %gb : tensor<2xf32>
  return %l, %peak, %t : tensor<f32>, tensor<4xf32>, tensor<3xi64>
}
