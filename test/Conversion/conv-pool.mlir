// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// The direct lowerings, which element types other than f32 take (f32 goes
// through im2col and GEMMs, conv-im2col.mlir).

// groups = 1: tensor.pad, the bias as the accumulator, linalg.conv_2d_nchw_fchw.
// CHECK-LABEL: func.func @conv
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[XP:.*]] = tensor.pad %arg0 low[0, 0, 1, 0] high[0, 0, 2, 1]
// CHECK: tensor.yield %[[ZERO]]
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<8xf64>)
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XP]], %arg1 : tensor<2x3x11x9xf64>, tensor<8x3x3x3xf64>) outs(%[[INIT]] : tensor<2x8x5x3xf64>)
func.func @conv(%x: tensor<2x3x8x8xf64>, %w: tensor<8x3x3x3xf64>, %b: tensor<8xf64>) -> tensor<2x8x5x3xf64> {
  %0 = oflow.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 2, 1>, dilations = array<i64: 1, 2>, groups = 1 : i64} : (tensor<2x3x8x8xf64>, tensor<8x3x3x3xf64>, tensor<8xf64>) -> tensor<2x8x5x3xf64>
  return %0 : tensor<2x8x5x3xf64>
}

// -----

// groups = 2: NGCHW x GFCHW on expanded views.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 10, 10]
// CHECK: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK: %[[Y:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[X]], %[[W]] : tensor<2x2x2x10x10xf64>, tensor<2x3x2x3x3xf64>) outs(%{{.*}} : tensor<2x2x3x4x4xf64>)
// CHECK: tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x3x4x4xf64> into tensor<2x6x4x4xf64>
func.func @grouped(%x: tensor<2x4x8x8xf64>, %w: tensor<6x2x3x3xf64>) -> tensor<2x6x4x4xf64> {
  %0 = oflow.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf64>, tensor<6x2x3x3xf64>) -> tensor<2x6x4x4xf64>
  return %0 : tensor<2x6x4x4xf64>
}

// -----

// The gradient dilated by the stride (strided insert into zeros), cropped
// by the pads, convolved with the flipped weight whose channels swap.
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, -d3 + 2, -d4 + 2)>
// CHECK-LABEL: func.func @conv_backward_input
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x6x11x11xf64>
// CHECK: %[[D:.*]] = tensor.insert_slice %arg0 into %[[Z]][0, 0, 2, 2] [2, 6, 4, 4] [1, 1, 2, 2]
// CHECK: %[[G:.*]] = tensor.extract_slice %[[D]][0, 0, 1, 1] [2, 6, 10, 10] [1, 1, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}]
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} {{.*}} -> tensor<2x2x2x8x8xf64>
func.func @conv_backward_input(%dy: tensor<2x6x4x4xf64>, %w: tensor<6x2x3x3xf64>) -> tensor<2x4x8x8xf64> {
  %0 = oflow.conv2d_backward_input %dy, %w {input_shape = array<i64: 2, 4, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x6x4x4xf64>, tensor<6x2x3x3xf64>) -> tensor<2x4x8x8xf64>
  return %0 : tensor<2x4x8x8xf64>
}

// -----

// Loops (g, m, c, kh, kw | n, oh, ow): the input read at oh*s + kh*d.
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 * 2 + d3, d7 * 2 + d4)>
// CHECK-LABEL: func.func @conv_backward_filter
// CHECK: linalg.generic {indexing_maps = [#[[DY]], #[[X]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x8x3x3x3xf64> into tensor<8x3x3x3xf64>
func.func @conv_backward_filter(%dy: tensor<2x8x4x4xf64>, %x: tensor<2x3x8x8xf64>) -> tensor<8x3x3x3xf64> {
  %0 = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 8, 3, 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x4x4xf64>, tensor<2x3x8x8xf64>) -> tensor<8x3x3x3xf64>
  return %0 : tensor<8x3x3x3xf64>
}

// -----

// ceil_mode: one more window, covered by -inf padding at the end.
// The window loops run (n, c, kh, kw, y, x), as in the gradient below.
// CHECK-DAG: #[[WMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[XP:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]]
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[WMAP]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]} ins(%[[XP]], %[[WIN]] : tensor<1x2x6x6xf32>, tensor<2x2xf32>)
// CHECK: arith.maximumf
func.func @max_pool_ceil(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// A sum pool divided by each window's static divisor: without
// count_include_pad, the windows at the border count fewer elements.
// CHECK-LABEL: func.func @avg_pool
// CHECK: %[[SUM:.*]] = linalg.pooling_nchw_sum
// CHECK: %[[DIV:.*]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00]]> : tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[DIV]] : tensor<1x1x2x2xf32>, tensor<2x2xf32>)
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = oflow.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Max-pool gradient: the arg-max of each window (two results, positions in
// i32), then each input element gathers the gradients of the windows that
// chose it, visiting only the windows that can read it (here 1 x 1: the
// windows do not overlap). Both loop nests run (n, c, window dims, y, x):
// the window dims outside the spatial ones, so no select chain is carried
// from one iteration to the next.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[KER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-LABEL: func.func @max_pool_backward
// CHECK: %[[ARG:.*]]:2 = linalg.generic {indexing_maps = [#[[WIN]], #[[KER]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: } -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>)
// CHECK: %[[CAND:.*]] = tensor.empty() : tensor<1x1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]} ins(%[[CAND]] : tensor<1x1xf32>)
// CHECK: tensor.extract %arg0
// CHECK: tensor.extract %[[ARG]]#1
// CHECK-SAME: tensor<1x2x2x2xi32>
func.func @max_pool_backward(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = oflow.max_pool2d_backward %dy, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// ResNet's stem pool (3x3, stride 2, pad 1): an input element lies in at
// most 2 x 2 windows. Candidate j along a dim is window (y + 1) / 2 - j,
// offset (y + 1) - 2 * that, valid from 0 to 2.
// CHECK-LABEL: func.func @max_pool_backward_overlapping
// CHECK: %[[CAND:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[CAND]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<1x1x6x6xf32>)
// CHECK: %[[Y:.*]] = linalg.index 4 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[P:.*]] = arith.addi %[[Y]], %c1 : index
// CHECK: %[[Q:.*]] = arith.divui %[[P]], %c2 : index
// CHECK: %[[O:.*]] = arith.subi %[[Q]], %[[J]] : index
// CHECK: %[[S:.*]] = arith.muli %[[O]], %c2 : index
// CHECK: %[[OFF:.*]] = arith.subi %[[P]], %[[S]] : index
// CHECK: arith.cmpi sle, %[[OFF]], %c2{{.*}} : index
func.func @max_pool_backward_overlapping(%dy: tensor<1x1x3x3xf32>, %x: tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32> {
  %0 = oflow.max_pool2d_backward %dy, %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  return %0 : tensor<1x1x6x6xf32>
}
