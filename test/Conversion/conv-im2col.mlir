// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// f32 convolutions go through im2col and a batched GEMM over (image,
// group) with linalg's default maps (what oflow-linalg-to-blas turns into
// sgemm calls). groups = 2, stride 2, dilation (1, 2), a bias.
// The gather reads the padded input at (oh*s + kh*d, ow*s + kw*d) into
// columns [n, g, c, kh, kw, oh, ow].
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d5 * 2 + d3, d6 * 2 + d4 * 2)>
// CHECK-DAG: #[[ID7:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
// CHECK-DAG: #[[PERIMAGE:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[XP:.*]] = tensor.pad %arg0 low[0, 0, 1, 0] high[0, 0, 1, 0]
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[XP]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 10, 8]
// CHECK: %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[WIN]], #[[ID7]]], {{.*}} ins(%[[XG]] : tensor<2x2x2x10x8xf32>) outs(%{{.*}} : tensor<2x2x2x3x3x4x2xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COLS]] {{\[\[}}0, 1], [2, 3, 4], [5, 6]] : tensor<2x2x2x3x3x4x2xf32> into tensor<4x18x8xf32>
// The weight, one copy per image: [N, G, M/G, C/G*kH*kW].
// CHECK: %[[WB:.*]] = linalg.generic {indexing_maps = [#[[PERIMAGE]], {{.*}}} ins(%{{.*}} : tensor<2x3x18xf32>) outs(%{{.*}} : tensor<2x2x3x18xf32>)
// CHECK: %[[W:.*]] = tensor.collapse_shape %[[WB]] {{.*}} into tensor<4x3x18xf32>
// The bias is the accumulator's initial value.
// CHECK: %[[BIAS:.*]] = linalg.generic {indexing_maps = [#[[CHANNEL]], {{.*}}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x3x8xf32>)
// CHECK: %[[INIT:.*]] = tensor.collapse_shape %[[BIAS]] {{.*}} into tensor<4x3x8xf32>
// CHECK: %[[Y:.*]] = linalg.batch_matmul ins(%[[W]], %[[COL]] : tensor<4x3x18xf32>, tensor<4x18x8xf32>) outs(%[[INIT]] : tensor<4x3x8xf32>)
// CHECK: %[[YG:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2], [3, 4]] output_shape [2, 2, 3, 4, 2]
// CHECK: tensor.collapse_shape %[[YG]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x3x4x2xf32> into tensor<2x6x4x2xf32>
// CHECK-NOT: linalg.conv
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4x2xf32> {
  %0 = oflow.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
  return %0 : tensor<2x6x4x2xf32>
}

// -----

// A depthwise convolution (one output channel per group) would be one
// matrix-vector product per image and channel: it stays a direct loop nest.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @depthwise(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %0 = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

// The filter gradient: rows [n, g, oh, ow | c, kh, kw] gathered from the
// padded input, one GEMM dy[n] [M, P] x rows[n] [P, K] per image, then the
// images summed (n outermost, so the inner loop streams over [M*K]).
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[SUMMED:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @conv_backward_filter
// CHECK: %[[XP:.*]] = tensor.pad %arg1 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[XP]]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], {{.*}}} ins(%[[XG]] : tensor<2x1x3x10x10xf32>) outs(%{{.*}} : tensor<2x1x4x4x3x3x3xf32>)
// CHECK: %[[RT:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2, 3], [4, 5, 6]] : tensor<2x1x4x4x3x3x3xf32> into tensor<2x16x27xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x8x27xf32>
// CHECK: %[[DY:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3, 4]] : tensor<2x1x8x4x4xf32> into tensor<2x8x16xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[DY]], %[[RT]] : tensor<2x8x16xf32>, tensor<2x16x27xf32>) outs(%[[Z]] : tensor<2x8x27xf32>)
// CHECK: %[[PF:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<2x8x27xf32> into tensor<2x216xf32>
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[SUMMED]]], iterator_types = ["reduction", "parallel"]} ins(%[[PF]] : tensor<2x216xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[DW]] {{\[\[}}0, 1, 2, 3]] output_shape [8, 3, 3, 3]
func.func @conv_backward_filter(%dy: tensor<2x8x4x4xf32>, %x: tensor<2x3x8x8xf32>) -> tensor<8x3x3x3xf32> {
  %0 = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 8, 3, 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
}

// -----

// The input gradient: columns = W[g]^T x dy[n, g] (the weight transposed per
// group and copied per image), then col2im as a gather: each input pixel
// (n, c, h, w) sums the column entries of the windows that read it: window
// oh = (h + pad) / s - j for the candidates j (2 x 2 for a 3x3 kernel of
// stride 2), at kernel offset (h + pad) - oh*s when in range; loops
// (n, c, jh, jw, h, w).
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// CHECK-DAG: #[[KERNEL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3)>
// CHECK-LABEL: func.func @conv_backward_input
// CHECK: %[[WB:.*]] = linalg.generic {indexing_maps = [#[[WT]], {{.*}}} ins(%{{.*}} : tensor<2x3x18xf32>) outs(%{{.*}} : tensor<2x2x18x3xf32>)
// CHECK: %[[W:.*]] = tensor.collapse_shape %[[WB]] {{\[\[}}0, 1], [2], [3]] : tensor<2x2x18x3xf32> into tensor<4x18x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<4x18x16xf32>
// CHECK: %[[DY:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3, 4]] : tensor<2x2x3x4x4xf32> into tensor<4x3x16xf32>
// CHECK: %[[COL:.*]] = linalg.batch_matmul ins(%[[W]], %[[DY]] : tensor<4x18x3xf32>, tensor<4x3x16xf32>) outs(%[[Z]] : tensor<4x18x16xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[COL]]
// CHECK: %[[COLS:.*]] = tensor.expand_shape %[[FLAT]] {{.*}} output_shape [2, 4, 3, 3, 4, 4]
// CHECK: linalg.generic {indexing_maps = [#[[KERNEL]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK: arith.divui
// CHECK-NOT: arith.remui
// CHECK: %[[E:.*]] = tensor.extract %[[COLS]]
// CHECK: %[[ADD:.*]] = arith.addf %[[ACC:.*]], %[[E]]
// CHECK: arith.select %{{.*}}, %[[ADD]], %[[ACC]] : f32
func.func @conv_backward_input(%dy: tensor<2x6x4x4xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = oflow.conv2d_backward_input %dy, %w {input_shape = array<i64: 2, 4, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
