// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg=conv-library=dnnl --canonicalize --cse | FileCheck %s
// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg --canonicalize | FileCheck %s --check-prefix=GEMM
// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg="conv-library=cudnn conv-workspace-bytes=1024" --canonicalize --cse | FileCheck %s --check-prefix=CUDNN
// RUN: not oflow-opt %s --oflow-lower-to-linalg=conv-library=mkl 2>&1 | FileCheck %s --check-prefix=BAD

// With conv-library=dnnl (the CPU target) an f32 convolution is one call of
// the runtime's oneDNN primitive: the geometry (n c h w m kh kw oh ow,
// strides, dilations, pads top left bottom right, groups, workspace bytes),
// the operands' own buffers, a fresh result buffer the memory plan will
// place and the workspace (at least one byte; the call's second result).
// Groups 2, stride 2, dilation (1, 2), pads (1, 0, 1, 0), a bias.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x8xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only {library_call_site = 0 : i64}
// CHECK: %[[XC:.*]] = memref.cast %[[XB]] : memref<2x4x8x8xf32> to memref<?x?x?x?xf32>
// CHECK: %[[WB:.*]] = bufferization.to_buffer %[[W]] read_only
// CHECK: %[[WC:.*]] = memref.cast %[[WB]]
// CHECK: %[[BB:.*]] = bufferization.to_buffer %[[B]] read_only
// CHECK: %[[BC:.*]] = memref.cast %[[BB]] : memref<6xf32> to memref<?xf32>
// CHECK: %[[Y:.*]] = memref.alloc() : memref<2x6x4x2xf32>
// CHECK: %[[YC:.*]] = memref.cast %[[Y]]
// CHECK: %[[WS:.*]] = memref.alloc() : memref<1xi8>
// CHECK: %[[WSC:.*]] = memref.cast %[[WS]] : memref<1xi8> to memref<?xi8>
// CHECK: call @__oflow_rt_conv2d_fwd_bias_f32(%c2_i64, %c4_i64, %c8_i64, %c8_i64, %c6_i64, %c3_i64, %c3_i64, %c4_i64, %c2_i64, %c2_i64, %c2_i64, %c1_i64, %c2_i64, %c1_i64, %c0_i64, %c1_i64, %c0_i64, %c2_i64, %c0_i64, %[[XC]], %[[WC]], %[[BC]], %[[YC]], %[[WSC]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: linalg.
// GEMM-LABEL: func.func @conv
// GEMM: linalg.batch_matmul
// GEMM-NOT: call
// CUDNN-LABEL: func.func @conv
// CUDNN: call @__oflow_rt_conv2d_fwd_bias_f32(%c2_i64, %c4_i64, %c8_i64, %c8_i64, %c6_i64, %c3_i64, %c3_i64, %c4_i64, %c2_i64, %c2_i64, %c2_i64, %c1_i64, %c2_i64, %c1_i64, %c0_i64, %c1_i64, %c0_i64, %c2_i64, %c1024_i64,
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4x2xf32> {
  %0 = oflow.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
  return %0 : tensor<2x6x4x2xf32>
}

// -----

// cuDNN's descriptor has one pad per spatial dimension: pads top 1, left 1,
// bottom 0, right 0 keep the im2col kernels there (oneDNN takes them).
// CHECK-LABEL: func.func @asymmetric
// CHECK: call @__oflow_rt_conv2d_fwd_f32(
// CUDNN-LABEL: func.func @asymmetric
// CUDNN-NOT: call
// CUDNN: linalg.batch_matmul
func.func @asymmetric(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = oflow.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// A forward convolution and both gradients on the same activation: each
// call gets its own to_buffer (numbered per placeholder), which CSE must
// not merge. The backward call reads the activation's buffer where it
// stands, and bufferization keeps it intact only up to its own to_buffer.
// Depthwise (groups 4), no bias: the plain fwd entry point.
// CHECK-LABEL: func.func @forward_and_gradients
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x8xf32>, %[[W:.*]]: tensor<4x1x3x3xf32>, %[[DY:.*]]: tensor<2x4x8x8xf32>)
// CHECK: bufferization.to_buffer %[[X]] read_only {library_call_site = 0 : i64}
// CHECK: call @__oflow_rt_conv2d_fwd_f32(%c2_i64, %c4_i64, %c8_i64, %c8_i64, %c4_i64, %c3_i64, %c3_i64, %c8_i64, %c8_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c4_i64, %c0_i64,
// CHECK: bufferization.to_buffer %[[DY]] read_only {library_call_site = 1 : i64}
// CHECK: bufferization.to_buffer %[[W]] read_only {library_call_site = 1 : i64}
// CHECK: memref.alloc() : memref<2x4x8x8xf32>
// CHECK: call @__oflow_rt_conv2d_bwd_data_f32(
// CHECK: bufferization.to_buffer %[[DY]] read_only {library_call_site = 2 : i64}
// CHECK: bufferization.to_buffer %[[X]] read_only {library_call_site = 2 : i64}
// CHECK: memref.alloc() : memref<4x1x3x3xf32>
// CHECK: call @__oflow_rt_conv2d_bwd_filter_f32(
// CHECK: bufferization.to_buffer %[[X]] read_only {library_call_site = 3 : i64}
// CHECK: call @__oflow_rt_conv2d_fwd_f32(
// CHECK-DAG: func.func private @__oflow_rt_conv2d_fwd_f32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?xi8>)

// CHECK-DAG: func.func private @__oflow_rt_conv2d_bwd_data_f32(
// CHECK-DAG: func.func private @__oflow_rt_conv2d_bwd_filter_f32(
// With cuDNN (symmetric pads) the same calls, each with its own workspace
// of the bytes asked for.
// CUDNN-LABEL: func.func @forward_and_gradients
// CUDNN: %[[WS:.*]] = memref.alloc() : memref<1024xi8>
// CUDNN: call @__oflow_rt_conv2d_fwd_f32(%c2_i64, %c4_i64, %c8_i64, %c8_i64, %c4_i64, %c3_i64, %c3_i64, %c8_i64, %c8_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c4_i64, %c1024_i64,
// CUDNN: memref.alloc() : memref<1024xi8>
// CUDNN: call @__oflow_rt_conv2d_bwd_data_f32(
// CUDNN: memref.alloc() : memref<1024xi8>
// CUDNN: call @__oflow_rt_conv2d_bwd_filter_f32(
// CUDNN: call @__oflow_rt_conv2d_fwd_f32(
func.func @forward_and_gradients(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>, %dy: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<2x4x8x8xf32>) {
  %y = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dx = oflow.conv2d_backward_input %dy, %w {input_shape = array<i64: 2, 4, 8, 8>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dw = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 4, 1, 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x1x3x3xf32>
  %y2 = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %y, %dx, %dw, %y2 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<2x4x8x8xf32>
}

// -----

// Convolutions of other element types keep the loops (oneDNN's primitives
// here are f32).
// CHECK-LABEL: func.func @f64
// CHECK-NOT: call
// CHECK: linalg.conv_2d_nchw_fchw
// CUDNN-LABEL: func.func @f64
// CUDNN-NOT: call
// CUDNN: linalg.conv_2d_nchw_fchw
func.func @f64(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64>
  return %0 : tensor<1x3x3x3xf64>
}

// -----

// A dilated depthwise convolution keeps oflow's loops on the CPU in all
// three directions: oneDNN 2.6 runs its backward passes through a GEMM per
// channel, slower than the loops. cuDNN takes it (undilated ones go to
// oneDNN: @forward_and_gradients).
// CHECK-LABEL: func.func @dilated_depthwise
// CHECK-NOT: call
// CHECK: linalg.generic
// CHECK-NOT: call
// CHECK: return
// CUDNN-LABEL: func.func @dilated_depthwise
// CUDNN-COUNT-3: call @__oflow_rt_conv2d_
func.func @dilated_depthwise(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>, %dy: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) {
  %y = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dx = oflow.conv2d_backward_input %dy, %w {input_shape = array<i64: 1, 4, 6, 6>, strides = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dw = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 4, 1, 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<4x1x3x3xf32>
  return %y, %dx, %dw : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>
}

// BAD: error: oflow-lower-to-linalg: conv-library must be empty, 'dnnl' or 'cudnn', not 'mkl'
