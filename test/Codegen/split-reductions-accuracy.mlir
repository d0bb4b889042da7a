// oflow-split-reductions{max-chain=N}: float sums whose sequential chain is
// longer than N are split into partial sums and folds, again and again,
// until no chain is longer (cascade summation). The CPU pipeline runs it
// with target-threads=0: accuracy only, no occupancy split. Issue #13: a
// batch-norm bias gradient after a global average pool summed 16384 alike
// terms in one chain and came out 1e-4 off.
//
// RUN: oflow-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(oflow-split-reductions{target-threads=0 max-chain=64}))" | FileCheck %s

#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
// The bias gradient of a batch norm on [16, 8, 32, 32]: 16384 terms per
// channel. The outermost loop (n, 16) is split whole (no divisor of 16 gets
// the chain to 64), leaving chains of 1024; then h by 16 (chains of 64).
// Folds: 16 and 16 terms. The inner, contiguous w loop stays whole.
// CHECK-LABEL: func.func @bias_grad
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1], [2], [3], [4]] output_shape [16, 1, 8, 32, 32]
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0], [1], [2], [3, 4], [5]] output_shape [16, 1, 8, 16, 2, 32]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs({{.*}} : tensor<16x16x8xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: outs({{.*}} : tensor<16x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%arg1 : tensor<8xf32>)
func.func @bias_grad(%g: tensor<16x8x32x32xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#x, #c],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%g : tensor<16x8x32x32xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// Chains of at most 64 are left alone, and so are maxima of any length
// (exact in every order) and integer sums.
// CHECK-LABEL: func.func @short_and_exact
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @short_and_exact(%x: tensor<16x64xf32>, %y: tensor<16x4096xf32>,
                           %i: tensor<16x4096xi32>, %f: tensor<16xf32>,
                           %n: tensor<16xi32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xi32>) {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<16x4096xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %k = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%i : tensor<16x4096xi32>) outs(%n : tensor<16xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %r = arith.addi %a, %acc : i32
    linalg.yield %r : i32
  } -> tensor<16xi32>
  return %s, %m, %k : tensor<16xf32>, tensor<16xf32>, tensor<16xi32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// A softmax row sum over 50257 = 1733 x 29 columns: 1733 partials of 29
// (the smallest divisor that gets the chain under 64); the fold over the
// prime 1733 cannot be split further.
// CHECK-LABEL: func.func @prime_row
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [16, 1733, 29]
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @prime_row(%x: tensor<16x50257xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x50257xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}


// -----

#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
// Two sums of one pass (oflow-merge-sibling-reductions' batch-norm
// statistics, each its own combiner): split together, the partial stage one
// generic with both partials, then one fold per output (what the GPU's
// column strategy takes), each output folded with its own combiner.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[P:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs({{.*}}, {{.*}} : tensor<16x8xf64>, tensor<16x8xf64>)
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[P]]#0 : tensor<16x8xf64>) outs(%arg1 : tensor<8xf64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[P]]#1 : tensor<16x8xf64>) outs(%arg2 : tensor<8xf64>)
func.func @two_sums(%x: tensor<16x8x8x8xf32>, %i0: tensor<8xf64>, %i1: tensor<8xf64>)
    -> (tensor<8xf64>, tensor<8xf64>) {
  %r:2 = linalg.generic {indexing_maps = [#x, #c, #c],
                         iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<16x8x8x8xf32>) outs(%i0, %i1 : tensor<8xf64>, tensor<8xf64>) {
  ^bb0(%a: f32, %acc0: f64, %acc1: f64):
    %e = arith.extf %a : f32 to f64
    %s = arith.addf %acc0, %e : f64
    %q = arith.mulf %e, %e : f64
    %t = arith.addf %acc1, %q : f64
    linalg.yield %s, %t : f64, f64
  } -> (tensor<8xf64>, tensor<8xf64>)
  return %r#0, %r#1 : tensor<8xf64>, tensor<8xf64>
}
