// oflow-recompute: a forward value that backward reads is computed again
// right before its first backward use, from operands live there anyway,
// through barriers that CSE does not merge; backward then reads the copy
// and the original dies in the forward part.
//
// RUN: oflow-opt %s -oflow-recompute | FileCheck %s --check-prefix=SELECTIVE
// RUN: oflow-opt %s -oflow-recompute=mode=all | FileCheck %s --check-prefix=ALL
// RUN: oflow-opt %s -oflow-recompute="names=fc1/Relu" | FileCheck %s --check-prefix=NAMED
// RUN: oflow-opt %s -oflow-recompute -cse | FileCheck %s --check-prefix=CSE
// RUN: oflow-opt %s -oflow-recompute -oflow-drop-recompute-barriers | FileCheck %s --check-prefix=DROPPED

// Selective: the ReLU (elementwise) from h, which backward reads anyway
// (the ReLU's mask); not the GEMMs, 256 FLOPs per byte they would free.
// What was copied, per entry: [ops, FLOPs, bytes written].
// SELECTIVE: module attributes {oflow.recompute = {train = array<i64: 1, 32768, 16384>}}
// SELECTIVE-LABEL: func.func @oflow_train_step(
// SELECTIVE: %[[H:.*]] = oflow.matmul %arg0, %arg2
// SELECTIVE-NEXT: %[[A:.*]] = oflow.relu %[[H]]
// SELECTIVE-NEXT: %[[Z:.*]] = oflow.matmul %[[A]], %arg3
// SELECTIVE-NEXT: %[[L:.*]] = oflow.softmax_cross_entropy mean %[[Z]]
// SELECTIVE-NEXT: %[[DZ:.*]] = oflow.softmax_cross_entropy_backward mean %[[Z]]
// SELECTIVE-NEXT: %[[B:.*]] = bufferization.alloc_tensor() copy(%[[H]]) {oflow_recompute_barrier} : tensor<8x512xf32>
// SELECTIVE-NEXT: %[[A2:.*]] = oflow.relu %[[B]]
// SELECTIVE-NEXT: oflow.matmul %[[DZ]], %[[A2]] {transpose_a}
// SELECTIVE-NOT: alloc_tensor
// SELECTIVE: return

// All: the GEMMs too, each copy before its first backward use (which, for
// the ReLU and h, is now the copy that needs them).
// ALL-LABEL: func.func @oflow_train_step(
// ALL: oflow.softmax_cross_entropy mean
// ALL-NEXT: %[[BX:.*]] = bufferization.alloc_tensor() copy(%arg0) {oflow_recompute_barrier}
// ALL-NEXT: %[[BW1:.*]] = bufferization.alloc_tensor() copy(%arg2) {oflow_recompute_barrier}
// ALL-NEXT: %[[H2:.*]] = oflow.matmul %[[BX]], %[[BW1]]
// ALL-NEXT: %[[BH:.*]] = bufferization.alloc_tensor() copy(%[[H2]]) {oflow_recompute_barrier}
// ALL-NEXT: %[[A2:.*]] = oflow.relu %[[BH]]
// ALL-NEXT: %[[BA:.*]] = bufferization.alloc_tensor() copy(%[[A2]]) {oflow_recompute_barrier}
// ALL-NEXT: %[[BW2:.*]] = bufferization.alloc_tensor() copy(%arg3) {oflow_recompute_barrier}
// ALL-NEXT: %[[Z2:.*]] = oflow.matmul %[[BA]], %[[BW2]]
// ALL-NEXT: %[[DZ:.*]] = oflow.softmax_cross_entropy_backward mean %[[Z2]]
// ALL-NEXT: oflow.matmul %[[DZ]], %[[A2]] {transpose_a}
// ALL: oflow.compare gt %[[H2]]

// A node-name expression picks the roots: only the ReLU here.
// NAMED-LABEL: func.func @oflow_train_step(
// NAMED: oflow.softmax_cross_entropy_backward
// NAMED-NEXT: bufferization.alloc_tensor() copy(
// NAMED-NEXT: oflow.relu
// NAMED-NOT: alloc_tensor

// CSE keeps the copy apart from the original.
// CSE-LABEL: func.func @oflow_train_step(
// CSE-COUNT-2: oflow.relu

// After the last CSE the barriers go: the copy reads h itself.
// DROPPED-LABEL: func.func @oflow_train_step(
// DROPPED: %[[H:.*]] = oflow.matmul %arg0, %arg2
// DROPPED: oflow.softmax_cross_entropy_backward
// DROPPED-NEXT: oflow.relu %[[H]]
// DROPPED-NOT: alloc_tensor
func.func @oflow_train_step(%x: tensor<8x512xf32>, %y: tensor<8xi64>, %w1: tensor<512x512xf32>,
                            %w2: tensor<10x512xf32>)
    -> (tensor<f32> {oflow.name = "loss"}, tensor<512x512xf32>, tensor<10x512xf32>)
    attributes {oflow.entry = "train"} {
  %zero = oflow.constant dense<0.0> : tensor<f32>
  %one = oflow.constant dense<1.0> : tensor<f32>
  %h = oflow.matmul %x, %w1 {transpose_b} : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32> loc("fc1/Gemm")
  %a = oflow.relu %h : tensor<8x512xf32> loc("fc1/Relu")
  %z = oflow.matmul %a, %w2 {transpose_b} : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32> loc("fc2/Gemm")
  %l = oflow.softmax_cross_entropy mean %z, %y {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %dz = oflow.softmax_cross_entropy_backward mean %z, %y, %one {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x10xf32>
  %dw2 = oflow.matmul %dz, %a {transpose_a} : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
  %da = oflow.matmul %dz, %w2 : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
  %m = oflow.compare gt %h, %zero : (tensor<8x512xf32>, tensor<f32>) -> tensor<8x512xi1>
  %dh = oflow.where %m, %da, %zero : (tensor<8x512xi1>, tensor<8x512xf32>, tensor<f32>) -> tensor<8x512xf32>
  %dw1 = oflow.matmul %dh, %x {transpose_a} : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
  return %l, %dw1, %dw2 : tensor<f32>, tensor<512x512xf32>, tensor<10x512xf32>
}
