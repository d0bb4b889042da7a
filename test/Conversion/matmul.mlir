// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// torch's Linear: the weight read transposed in place (B's indexing map is
// (n, k)), the bias broadcast into the accumulator.
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], #{{.*}}], {{.*}} ins(%arg2 : tensor<64xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<32x32xf32>, tensor<64x32xf32>) outs(%[[INIT]] : tensor<32x64xf32>)
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<32x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.gemm %x, %w, %b {transpose_b} : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// alpha != 1: the product into zeros, then alpha * AB + beta * C; A is read
// transposed in place.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @gemm_alpha_beta
// CHECK-NOT: linalg.transpose
// CHECK: %[[AB:.*]] = linalg.matmul indexing_maps = [#[[AT]], #{{.*}}, #{{.*}}] ins(%arg0, %arg1 : tensor<3x4xf32>, tensor<3x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[AB]], %arg2 : tensor<4x5xf32>, tensor<4x1xf32>)
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.constant 2.000000e+00 : f32
func.func @gemm_alpha_beta(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>, %c: tensor<4x1xf32>) -> tensor<4x5xf32> {
  %0 = oflow.gemm %a, %b, %c {transpose_a, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<3x4xf32>, tensor<3x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A shared 2-D right operand: the left operand's batch dims fold into rows.
// CHECK-LABEL: func.func @shared_rhs
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<8x64x32xf32> into tensor<512x32xf32>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %arg1 : tensor<512x32xf32>, tensor<32x16xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [8, 64, 16]
func.func @shared_rhs(%x: tensor<8x64x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x64x16xf32> {
  %0 = oflow.matmul %x, %w : (tensor<8x64x32xf32>, tensor<32x16xf32>) -> tensor<8x64x16xf32>
  return %0 : tensor<8x64x16xf32>
}

// -----

// Batch dims broadcast ([2, 1] and [3] to [2, 3]), collapsed into one for
// linalg.batch_matmul, expanded back; K stays [.., 8, 4], read transposed.
// CHECK-DAG: #[[LB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[RB:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @batched
// CHECK-NOT: linalg.transpose
// CHECK: %[[Q:.*]] = linalg.generic {indexing_maps = [#[[LB]], #{{.*}}]{{.*}} ins(%arg0 : tensor<2x1x8x4xf32>) outs(%{{.*}} : tensor<2x3x8x4xf32>)
// CHECK: %[[Q3:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x8x4xf32> into tensor<6x8x4xf32>
// CHECK: %[[K:.*]] = linalg.generic {indexing_maps = [#[[RB]], #{{.*}}]{{.*}} ins(%arg1 : tensor<3x8x4xf32>)
// CHECK: %[[K3:.*]] = tensor.collapse_shape %[[K]]
// CHECK: %[[S:.*]] = linalg.batch_matmul indexing_maps = [#{{.*}}, #[[KT]], #{{.*}}] ins(%[[Q3]], %[[K3]] : tensor<6x8x4xf32>, tensor<6x8x4xf32>) outs(%{{.*}} : tensor<6x8x8xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 8, 8]
func.func @batched(%q: tensor<2x1x8x4xf32>, %k: tensor<3x8x4xf32>) -> tensor<2x3x8x8xf32> {
  %0 = oflow.matmul %q, %k {transpose_b} : (tensor<2x1x8x4xf32>, tensor<3x8x4xf32>) -> tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x8x8xf32>
}

// -----

// Integer products use the same named op.
// CHECK-LABEL: func.func @int_matmul
// CHECK: arith.constant 0 : i32
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<2x3xi32>, tensor<3x4xi32>)
func.func @int_matmul(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>) -> tensor<2x4xi32> {
  %0 = oflow.matmul %a, %b : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}
