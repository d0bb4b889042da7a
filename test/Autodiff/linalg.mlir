// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s

// matmul with both transposes and a broadcast batch dim: each gradient is one
// matmul with transpose flags; b's gradient is summed over the batch.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = oflow.weight "a"
// CHECK: %[[B:.*]] = oflow.weight "b"
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<2x3x5xf32>
// CHECK: %[[GA:.*]] = oflow.matmul %[[B]], %[[G]] {transpose_a, transpose_b} : (tensor<5x4xf32>, tensor<2x3x5xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[GB3:.*]] = oflow.matmul %[[G]], %[[A]] {transpose_a, transpose_b} : (tensor<2x3x5xf32>, tensor<2x4x3xf32>) -> tensor<2x5x4xf32>
// CHECK: %[[GBS:.*]] = oflow.reduce_sum %[[GB3]] {axes = array<i64: 0>} : (tensor<2x5x4xf32>) -> tensor<1x5x4xf32>
// CHECK: %[[GB:.*]] = oflow.reshape %[[GBS]] [5, 4]
// CHECK: oflow.gradient "a", %[[GA]] : tensor<2x4x3xf32>
// CHECK: oflow.gradient "b", %[[GB]] : tensor<5x4xf32>
func.func @main() -> tensor<f32> {
  %a = oflow.weight "a", dense<1.0> : tensor<2x4x3xf32>
  %b = oflow.weight "b", dense<1.0> : tensor<5x4xf32>
  %m = oflow.matmul %a, %b {transpose_a, transpose_b} : (tensor<2x4x3xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// gemm (torch Linear): alpha scales the product's gradients, beta the bias's,
// which is summed over the rows it was broadcast to. No gradient for the
// data operand.
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<3x5xf32>
// CHECK: %[[ALPHA:.*]] = oflow.constant dense<5.000000e-01>
// CHECK: %[[GA:.*]] = oflow.mul %[[G]], %[[ALPHA]]
// CHECK: %[[GW:.*]] = oflow.matmul %[[GA]], %arg0 {transpose_a} : (tensor<3x5xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
// CHECK: %[[BETA:.*]] = oflow.constant dense<2.000000e+00>
// CHECK: %[[GB:.*]] = oflow.mul %[[G]], %[[BETA]]
// CHECK: %[[GC:.*]] = oflow.reduce_sum %[[GB]] {axes = array<i64: 0>} : (tensor<3x5xf32>) -> tensor<1x5xf32>
// CHECK: oflow.gradient "w", %[[GW]] : tensor<5x4xf32>
// CHECK: oflow.gradient "c", %[[GC]] : tensor<1x5xf32>
// CHECK-NOT: oflow.matmul
func.func @main(%x: tensor<3x4xf32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<5x4xf32>
  %c = oflow.weight "c", dense<1.0> : tensor<1x5xf32>
  %y = oflow.gemm %x, %w, %c {transpose_b, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %l = oflow.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// conv2d, max/avg pooling and global average pooling use the backward ops
// with the forward attributes; the bias gradient sums over N, H, W. The data
// input gets no gradient (no conv2d_backward_input).
// CHECK-LABEL: func.func @main
// CHECK: %[[Y:.*]] = oflow.conv2d
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<2x6x1x1xf32>
// CHECK: %[[N:.*]] = oflow.constant dense<0.111111112> : tensor<f32>
// CHECK: %[[GN:.*]] = oflow.mul %[[G]], %[[N]]
// CHECK: %[[GG:.*]] = oflow.expand %[[GN]] [2, 6, 3, 3]
// CHECK: %[[GQ:.*]] = oflow.avg_pool2d_backward %[[GG]] {count_include_pad, input_shape = array<i64: 2, 6, 2, 2>, kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[GP:.*]] = oflow.max_pool2d_backward %[[GQ]], %[[Y]] {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK-NOT: conv2d_backward_input
// CHECK: %[[GW:.*]] = oflow.conv2d_backward_filter %[[GP]], %arg0 {dilations = array<i64: 1, 1>, filter_shape = array<i64: 6, 2, 3, 3>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
// CHECK: %[[GB:.*]] = oflow.reduce_sum %[[GP]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<2x6x4x4xf32>) -> tensor<6xf32>
// CHECK: oflow.gradient "w", %[[GW]]
// CHECK: oflow.gradient "b", %[[GB]]
func.func @main(%x: tensor<2x4x8x8xf32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<6x2x3x3xf32>
  %b = oflow.weight "b", dense<1.0> : tensor<6xf32>
  %y = oflow.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  %p = oflow.max_pool2d %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x6x4x4xf32>) -> tensor<2x6x2x2xf32>
  %q = oflow.avg_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<2x6x2x2xf32>) -> tensor<2x6x3x3xf32>
  %g = oflow.global_avg_pool %q : (tensor<2x6x3x3xf32>) -> tensor<2x6x1x1xf32>
  %l = oflow.reduce_sum %g {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x6x1x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A trained conv input (e.g. after another layer) gets conv2d_backward_input.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = oflow.weight "x"
// CHECK: %[[W:.*]] = oflow.weight "w"
// CHECK: %[[GX:.*]] = oflow.conv2d_backward_input %{{.*}}, %[[W]] {dilations = array<i64: 2, 2>, input_shape = array<i64: 1, 2, 7, 7>, pads = array<i64: 0, 1, 2, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[GW:.*]] = oflow.conv2d_backward_filter %{{.*}}, %[[X]]
// CHECK: oflow.gradient "x", %[[GX]] : tensor<1x2x7x7xf32>
// CHECK: oflow.gradient "w", %[[GW]] : tensor<3x2x2x2xf32>
func.func @main() -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<1x2x7x7xf32>
  %w = oflow.weight "w", dense<1.0> : tensor<3x2x2x2xf32>
  %y = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 1, 2, 1>, dilations = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x7x7xf32>
  %l = oflow.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x7x7xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// conv2d_backward_input as a forward op (ONNX ConvTranspose): its incoming
// operand's gradient is the convolution of the output gradient, its
// weight's the filter gradient with the incoming operand as the output
// gradient and the output gradient as the input.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = oflow.weight "x"
// CHECK: %[[W:.*]] = oflow.weight "w"
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<1x2x7x7xf32>
// CHECK: %[[GX:.*]] = oflow.conv2d %[[G]], %[[W]] {dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK: %[[GW:.*]] = oflow.conv2d_backward_filter %[[X]], %[[G]] {dilations = array<i64: 1, 1>, filter_shape = array<i64: 3, 2, 3, 3>, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>}
// CHECK: oflow.gradient "x", %[[GX]] : tensor<1x3x3x3xf32>
// CHECK: oflow.gradient "w", %[[GW]] : tensor<3x2x3x3xf32>
func.func @main() -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<1x3x3x3xf32>
  %w = oflow.weight "w", dense<1.0> : tensor<3x2x3x3xf32>
  %y = oflow.conv2d_backward_input %x, %w {input_shape = array<i64: 1, 2, 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x3x3xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  %l = oflow.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x7x7xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Fused attention: one backward op gives all three gradients, reading the
// forward op's output and logsumexp (which itself gets no gradient).
// CHECK: %[[Q:.*]] = oflow.weight "q"
// CHECK: %[[K:.*]] = oflow.weight "k"
// CHECK: %[[V:.*]] = oflow.weight "v"
// CHECK: %[[O:.*]], %[[L:.*]] = oflow.attention %[[Q]], %[[K]], %[[V]]
// CHECK: %[[G:.*]] = oflow.expand
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = oflow.attention_backward %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[G]] {causal, operand_type = bf16, scale = 2.500000e-01 : f32}
// CHECK-DAG: oflow.gradient "q", %[[DQ]]
// CHECK-DAG: oflow.gradient "k", %[[DK]]
// CHECK-DAG: oflow.gradient "v", %[[DV]]
func.func @main() -> tensor<f32> {
  %q = oflow.weight "q", dense<1.0> : tensor<2x4x16xf32>
  %k = oflow.weight "k", dense<0.5> : tensor<2x4x16xf32>
  %v = oflow.weight "v", dense<2.0> : tensor<2x4x16xf32>
  %o, %lse = oflow.attention %q, %k, %v {causal, operand_type = bf16, scale = 0.25 : f32} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4xf32>)
  %l = oflow.reduce_sum %o {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x4x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
