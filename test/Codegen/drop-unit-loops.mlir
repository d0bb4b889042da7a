// RUN: oflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(oflow-drop-unit-loops))' | FileCheck %s

// A layer norm's keepdims statistics: the row sum over [8, 1, 64] and the
// 1/std over [8, 1] lose their unit loop, so both run over the rows (8)
// and, for the sum, the columns (64) like the row reductions around them.
// CHECK-LABEL: func.func @keepdims_statistics
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK: math.rsqrt
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
func.func @keepdims_statistics(%x: tensor<8x1x64xf32>) -> tensor<8x1xf32> {
  %z = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<8x1xf32>
  %1 = linalg.fill ins(%z : f32) outs(%0 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<8x1x64xf32>) outs(%1 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x1xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<8x1xf32>) outs(%0 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  return %3 : tensor<8x1xf32>
}

// -----

// A generic inside a loop (an embedding gradient's scatter of one row at a
// time) keeps its unit loop: its row slice bufferizes in place as it is.
// CHECK-LABEL: func.func @nested_row_update
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{[^ ]*}} : tensor<1x64xf32>) outs(%{{[^ ]*}} : tensor<1x64xf32>)
func.func @nested_row_update(%table: tensor<80x64xf32>, %rows: tensor<4x64xf32>) -> tensor<80x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %table) -> tensor<80x64xf32> {
    %src = tensor.extract_slice %rows[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %dst = tensor.extract_slice %t[%i, 0] [1, 64] [1, 1] : tensor<80x64xf32> to tensor<1x64xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%src : tensor<1x64xf32>) outs(%dst : tensor<1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<1x64xf32>
    %u = tensor.insert_slice %sum into %t[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<80x64xf32>
    scf.yield %u : tensor<80x64xf32>
  }
  return %r : tensor<80x64xf32>
}

// -----

// A window's indices (d1 * 2 + d2) keep every loop, the unit one included.
// CHECK-LABEL: func.func @window
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%{{[^ ]*}} : tensor<1x9xf32>) outs(%{{[^ ]*}} : tensor<1x4x3xf32>)
func.func @window(%x: tensor<1x9xf32>) -> tensor<1x4x3xf32> {
  %0 = tensor.empty() : tensor<1x4x3xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 2 + d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x9xf32>) outs(%0 : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x3xf32>
  return %1 : tensor<1x4x3xf32>
}
