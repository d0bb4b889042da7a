// RUN: oflow-opt %s -oflow-build-train-step | FileCheck %s

// Batch-norm running statistics held in buffers are written by the train
// step (after every read), never by the grads step. The scale and bias are
// trained as usual.
// CHECK: oflow.variable @bn.scale param
// CHECK-NEXT: oflow.variable @bn.bias param
// CHECK-NEXT: oflow.variable @bn.running_mean buffer
// CHECK-NEXT: oflow.variable @bn.running_var buffer
// CHECK-LABEL: func.func @oflow_train_step(
// CHECK: %[[M:.*]] = oflow.read_variable @bn.running_mean
// CHECK: %[[V:.*]] = oflow.read_variable @bn.running_var
// CHECK: %{{.*}}, %[[NM:.*]], %[[NV:.*]] = oflow.batch_norm_training %{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[V]]
// CHECK: oflow.write_variable @bn.scale,
// CHECK-NOT: oflow.read_variable
// CHECK: oflow.write_variable @bn.bias,
// CHECK-NEXT: oflow.write_variable @bn.running_mean, %[[NM]] : tensor<2xf32>
// CHECK-NEXT: oflow.write_variable @bn.running_var, %[[NV]] : tensor<2xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @oflow_grad_step(
// CHECK-NOT: oflow.write_variable
// CHECK: return

func.func @main(%x: tensor<4x2x3x3xf32>, %gs: tensor<2xf32>, %gb: tensor<2xf32>) -> tensor<f32> {
  %s = oflow.weight "bn.scale", dense<1.0> : tensor<2xf32> {oflow.trainable}
  %b = oflow.weight "bn.bias", dense<0.0> : tensor<2xf32> {oflow.trainable}
  %m = oflow.weight "bn.running_mean", dense<0.0> : tensor<2xf32>
  %v = oflow.weight "bn.running_var", dense<1.0> : tensor<2xf32>
  %y, %nm, %nv = oflow.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %l = oflow.reduce_mean %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<4x2x3x3xf32>) -> tensor<f32>
  oflow.gradient "bn.scale", %gs : tensor<2xf32>
  oflow.gradient "bn.bias", %gb : tensor<2xf32>
  return %l : tensor<f32>
}
