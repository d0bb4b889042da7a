// oflow-split-reductions{warp-rows}: the row reductions that
// oflow-gpu-row-reductions runs one warp per row (parallel loops then 32 to
// 32 x max-chain reduced columns, one f32 output) stay whole; the others
// are split as before.
//
// RUN: oflow-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(oflow-split-reductions{max-chain=64 warp-rows=true}))" | FileCheck %s
// RUN: oflow-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(oflow-split-reductions{max-chain=64}))" | FileCheck %s --check-prefix=SPLIT

// 96 rows of 1024: one warp each, 32 adds per lane; without warp-rows
// the occupancy and accuracy splits apply.
// CHECK-LABEL: func.func @rows
//       CHECK: linalg.generic
//   CHECK-NOT: linalg.generic
// SPLIT-LABEL: func.func @rows
//       SPLIT: linalg.generic
//       SPLIT: linalg.generic
func.func @rows(%x: tensor<96x1024xf32>, %init: tensor<96xf32>) -> tensor<96xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<96x1024xf32>) outs(%init : tensor<96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  return %r : tensor<96xf32>
}

// -----

// Rows longer than 32 x 64 columns (a vocabulary) are split either way.
// CHECK-LABEL: func.func @long_rows
//       CHECK: linalg.generic
//       CHECK: linalg.generic
func.func @long_rows(%x: tensor<4x8192xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
