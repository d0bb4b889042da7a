// RUN: oflow-opt %s -split-input-file -oflow-append-loss="loss=cross-entropy label=target" | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-append-loss="loss=cross-entropy" | FileCheck %s --check-prefix=DEFAULT

// Logits [N, C]: labels [N] of i64 become the last argument; the mean loss
// is the first result, the logits stay after it.
// CHECK-LABEL: func.func @main(%arg0: tensor<8x16xf32> {oflow.name = "x"}, %arg1: tensor<8xi64> {oflow.name = "target"})
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<8x10xf32> {oflow.name = "logits"})
// CHECK: %[[Y:.*]] = oflow.gemm
// CHECK-NEXT: %[[L:.*]] = oflow.softmax_cross_entropy mean %[[Y]], %arg1 : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
// CHECK-NEXT: return %[[L]], %[[Y]] : tensor<f32>, tensor<8x10xf32>
// DEFAULT-LABEL: func.func @main(%arg0: tensor<8x16xf32> {oflow.name = "x"}, %arg1: tensor<8xi64> {oflow.name = "label"})
func.func @main(%x: tensor<8x16xf32> {oflow.name = "x"}) -> (tensor<8x10xf32> {oflow.name = "logits"}) {
  %w = oflow.weight "w", dense<0.1> : tensor<10x16xf32>
  %y = oflow.gemm %x, %w {transpose_b} : (tensor<8x16xf32>, tensor<10x16xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

// Logits [N, C, T] (a sequence model): labels [N, T].
// CHECK-LABEL: func.func @main(%arg0: tensor<2x5x7xf32>, %arg1: tensor<2x7xi64> {oflow.name = "target"})
// CHECK-SAME: -> (tensor<f32> {oflow.name = "loss"}, tensor<2x5x7xf32>, tensor<2x7xf32>)
// CHECK: %[[L:.*]] = oflow.softmax_cross_entropy mean %arg0, %arg1 : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> tensor<f32>
// CHECK-NEXT: return %[[L]], %arg0, %{{.*}} : tensor<f32>, tensor<2x5x7xf32>, tensor<2x7xf32>
func.func @main(%x: tensor<2x5x7xf32>) -> (tensor<2x5x7xf32>, tensor<2x7xf32>) {
  %s = oflow.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x5x7xf32>) -> tensor<2x7xf32>
  return %x, %s : tensor<2x5x7xf32>, tensor<2x7xf32>
}
