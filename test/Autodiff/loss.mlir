// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s

// softmax_cross_entropy: its backward op, with the reduction and
// ignore_index; the labels get no gradient.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = oflow.weight "x"
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[G:.*]] = oflow.softmax_cross_entropy_backward mean %[[X]], %arg0, %[[ONE]] {ignore_index = -100 : i64} : (tensor<4x5x3xf32>, tensor<4x3xi64>, tensor<f32>) -> tensor<4x5x3xf32>
// CHECK-NEXT: oflow.gradient "x", %[[G]] : tensor<4x5x3xf32>
func.func @main(%y: tensor<4x3xi64>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<4x5x3xf32>
  %l = oflow.softmax_cross_entropy mean %x, %y {ignore_index = -100 : i64} : (tensor<4x5x3xf32>, tensor<4x3xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// nll_loss with reduction none takes a per-sample gradient.
// CHECK-LABEL: func.func @main
// CHECK: %[[LP:.*]] = oflow.log_softmax
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[GN:.*]] = oflow.mul %{{.*}}, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[GLP:.*]] = oflow.nll_loss_backward none %[[LP]], %arg0, %[[GN]] : (tensor<4x5xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x5xf32>
// CHECK: oflow.sub %[[GLP]], %{{.*}}
func.func @main(%y: tensor<4xi64>, %r: tensor<4xf32>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<4x5xf32>
  %lp = oflow.log_softmax %x {axis = 1 : i64} : tensor<4x5xf32>
  %n = oflow.nll_loss none %lp, %y : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4xf32>
  %m = oflow.mul %n, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// mse_loss (mean): 2 (x - t) / numel * g. The target is data here.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = oflow.weight "x"
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00>
// CHECK: %[[D:.*]] = oflow.sub %[[X]], %arg0
// CHECK: %[[K:.*]] = oflow.constant dense<2.500000e-01>
// CHECK: %[[DK:.*]] = oflow.mul %[[D]], %[[K]]
// CHECK: %[[G:.*]] = oflow.mul %[[DK]], %[[ONE]]
// CHECK: oflow.gradient "x", %[[G]] : tensor<4x2xf32>
func.func @main(%t: tensor<4x2xf32>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<4x2xf32>
  %l = oflow.mse_loss mean %x, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
