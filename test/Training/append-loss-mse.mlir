// RUN: oflow-opt %s -oflow-append-loss="loss=mse label=y entry=model" | FileCheck %s

// The target has the output's type; --entry picks the function.
// CHECK-LABEL: func.func @model(%arg0: tensor<8x4xf32> {oflow.name = "x"}, %arg1: tensor<8x1xf32> {oflow.name = "y"})
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<8x1xf32> {oflow.name = "pred"})
// CHECK: %[[P:.*]] = oflow.reduce_sum
// CHECK-NEXT: %[[L:.*]] = oflow.mse_loss mean %[[P]], %arg1 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]], %[[P]]
// Other functions are left alone.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tensor<8x4xf32>
func.func @model(%x: tensor<8x4xf32> {oflow.name = "x"}) -> (tensor<8x1xf32> {oflow.name = "pred"}) {
  %p = oflow.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  return %p : tensor<8x1xf32>
}
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}
