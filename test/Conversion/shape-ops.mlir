// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// Reshapes that regroup dims are one collapse or expand; others go through
// the flat vector.
// CHECK-LABEL: func.func @reshapes
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [8, 64, 4, 16]
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<8x64x64xf32> into tensor<512x64xf32>
// CHECK: linalg.transpose ins(%arg0 : tensor<8x64x64xf32>) outs(%{{.*}} : tensor<64x8x64xf32>) permutation = [1, 0, 2]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<8x64x64xf32> into tensor<32768xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4096, 8]
func.func @reshapes(%x: tensor<8x64x64xf32>) -> (tensor<8x64x4x16xf32>, tensor<512x64xf32>, tensor<64x8x64xf32>, tensor<4096x8xf32>) {
  %0 = oflow.reshape %x [8, 64, 4, 16] : (tensor<8x64x64xf32>) -> tensor<8x64x4x16xf32>
  %1 = oflow.flatten %x {axis = 2 : i64} : (tensor<8x64x64xf32>) -> tensor<512x64xf32>
  %2 = oflow.transpose %x [1, 0, 2] : (tensor<8x64x64xf32>) -> tensor<64x8x64xf32>
  %3 = oflow.reshape %x [4096, 8] : (tensor<8x64x64xf32>) -> tensor<4096x8xf32>
  return %0, %1, %2, %3 : tensor<8x64x4x16xf32>, tensor<512x64xf32>, tensor<64x8x64xf32>, tensor<4096x8xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<8x1x64xf32> into tensor<8x64xf32>
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 64, 64] : tensor<64x64xi1> into tensor<1x1x64x64xi1>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @squeeze(%x: tensor<8x1x64xf32>, %m: tensor<64x64xi1>, %s: tensor<1x1xf32>) -> (tensor<8x64xf32>, tensor<1x1x64x64xi1>, tensor<f32>) {
  %0 = oflow.squeeze %x [1] : (tensor<8x1x64xf32>) -> tensor<8x64xf32>
  %1 = oflow.unsqueeze %m [0, 1] : (tensor<64x64xi1>) -> tensor<1x1x64x64xi1>
  %2 = oflow.squeeze %s [0, 1] : (tensor<1x1xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<8x64xf32>, tensor<1x1x64x64xi1>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @split_concat
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[0, 0, 0] [8, 4, 6] [1, 1, 1]
// CHECK: tensor.extract_slice %arg0[0, 0, 6] [8, 4, 6] [1, 1, 1]
// CHECK: %[[V:.*]] = tensor.extract_slice %arg0[0, 0, 12] [8, 4, 6] [1, 1, 1]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4x12xf32>
// CHECK: %[[C0:.*]] = tensor.insert_slice %[[Q]] into %[[E]][0, 0, 0] [8, 4, 6] [1, 1, 1]
// CHECK: tensor.insert_slice %[[V]] into %[[C0]][0, 0, 6] [8, 4, 6] [1, 1, 1]
func.func @split_concat(%x: tensor<8x4x18xf32>) -> (tensor<8x4x6xf32>, tensor<8x4x12xf32>) {
  %q, %k, %v = oflow.split %x {axis = 2 : i64, sizes = array<i64: 6, 6, 6>} : (tensor<8x4x18xf32>) -> (tensor<8x4x6xf32>, tensor<8x4x6xf32>, tensor<8x4x6xf32>)
  %c = oflow.concat %q, %v {axis = 2 : i64} : (tensor<8x4x6xf32>, tensor<8x4x6xf32>) -> tensor<8x4x12xf32>
  return %k, %c : tensor<8x4x6xf32>, tensor<8x4x12xf32>
}

// -----

// A negative stride is the positive-stride slice of the same elements
// (starting at the last one), reversed by a generic.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1, d2) -> (-d0 + 3, d1, -d2 + 5)>
// CHECK-LABEL: func.func @reversed_slice
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[1, 0, 2] [4, 2, 6] [2, 1, 3]
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #{{.*}}]{{.*}} ins(%[[S]] : tensor<4x2x6xf32>)
func.func @reversed_slice(%x: tensor<8x2x18xf32>) -> tensor<4x2x6xf32> {
  %s = oflow.slice %x {offsets = array<i64: 7, 0, 17>, sizes = array<i64: 4, 2, 6>, strides = array<i64: -2, 1, -3>} : (tensor<8x2x18xf32>) -> tensor<4x2x6xf32>
  return %s : tensor<4x2x6xf32>
}

// -----

// CHECK-LABEL: func.func @slice_backward
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3xf32>)
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: tensor.insert_slice %[[G]] into %[[Z]][1, 0] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<4x6xf32>
func.func @slice_backward(%g: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %0 = oflow.slice_backward %g {input_shape = array<i64: 4, 6>, offsets = array<i64: 3, 0>, sizes = array<i64: 2, 3>, strides = array<i64: -2, 2>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @trilu
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.subi
// CHECK: arith.cmpi sle
// CHECK: arith.select
func.func @trilu(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = oflow.trilu %x {upper = false, k = 0 : i64} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK-DAG: #[[BC:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[BC]], #{{.*}}]{{.*}} ins(%arg0 : tensor<1x64xf32>) outs(%{{.*}} : tensor<8x64xf32>)
func.func @expand(%x: tensor<1x64xf32>) -> tensor<8x64xf32> {
  %0 = oflow.expand %x [8, 64] : (tensor<1x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}
