// RUN: oflow-opt %s -split-input-file -oflow-append-loss | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-append-loss="loss=none" | FileCheck %s

// A scalar result already first is the loss: unchanged.
// CHECK-LABEL: func.func @main(%arg0: tensor<4x3xf32>)
// CHECK-SAME: -> (tensor<f32> {oflow.name = "l"}, tensor<4x3xf32> {oflow.name = "y"})
// CHECK: return %{{.*}}, %arg0 : tensor<f32>, tensor<4x3xf32>
func.func @main(%x: tensor<4x3xf32>) -> (tensor<f32> {oflow.name = "l"}, tensor<4x3xf32> {oflow.name = "y"}) {
  %l = oflow.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<4x3xf32>
}

// -----

// A scalar result elsewhere moves to the front with its attributes; the
// others keep their order after it.
// CHECK-LABEL: func.func @main(%arg0: tensor<4x3xf32>)
// CHECK-SAME: -> (tensor<f32> {oflow.name = "l"}, tensor<4x3xf32> {oflow.name = "y"}, tensor<4xf32> {oflow.name = "z"})
// CHECK: %[[L:.*]] = oflow.reduce_mean
// CHECK: %[[Z:.*]] = oflow.reduce_sum
// CHECK: return %[[L]], %arg0, %[[Z]] : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>
func.func @main(%x: tensor<4x3xf32>) -> (tensor<4x3xf32> {oflow.name = "y"}, tensor<f32> {oflow.name = "l"}, tensor<4xf32> {oflow.name = "z"}) {
  %l = oflow.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  %z = oflow.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  return %x, %l, %z : tensor<4x3xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// An unnamed scalar loss is named "loss"; an integer scalar is no loss.
// CHECK-LABEL: func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<i64>)
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<i64>)
// CHECK: return %{{.*}}, %arg1 : tensor<f32>, tensor<i64>
func.func @main(%x: tensor<4x3xf32>, %n: tensor<i64>) -> (tensor<i64>, tensor<f32>) {
  %l = oflow.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %n, %l : tensor<i64>, tensor<f32>
}
