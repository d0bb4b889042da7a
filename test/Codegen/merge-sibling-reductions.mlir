// oflow-merge-sibling-reductions: reductions over the same loops that read
// the same data become one generic (one pass over it), each output keeping
// its combiner and its order of terms.
//
// RUN: oflow-opt %s -split-input-file -oflow-merge-sibling-reductions | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-merge-sibling-reductions="gpu-strategies=true" | FileCheck %s --check-prefix=GPU

#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
// A batch norm's backward sums, sum(g) and sum(g * xhat) per channel: one
// loop nest reading g and xhat once, both results from it. The GPU merges
// them too (the innermost loop is a reduction, no warp-row shape).
// CHECK-LABEL: func.func @batch_norm_backward
// CHECK: %[[M:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x4x6x6xf32>, tensor<8x4x6x6xf32>) outs(%arg2, %arg2 : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[XH:.*]]: f32, %[[A0:.*]]: f32, %[[A1:.*]]: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[A0]], %[[G]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[XH]]
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[A1]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S0]], %[[S1]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]#0, %[[M]]#1
// GPU-LABEL: func.func @batch_norm_backward
// GPU: linalg.generic
// GPU-NOT: linalg.generic
// GPU: return
func.func @batch_norm_backward(%g: tensor<8x4x6x6xf32>, %xhat: tensor<8x4x6x6xf32>,
                               %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sg = linalg.generic {indexing_maps = [#x, #c],
                        iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%g : tensor<8x4x6x6xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %sgx = linalg.generic {indexing_maps = [#x, #x, #c],
                         iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%g, %xhat : tensor<8x4x6x6xf32>, tensor<8x4x6x6xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sg, %sgx : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(r, d) -> (r, d)>
#row = affine_map<(r, d) -> (r)>
#col = affine_map<(r, d) -> (d)>
// Two rows' sums of different data that share only a broadcast weight (two
// micro-batches' norms): not the same data, left alone.
// CHECK-LABEL: func.func @only_a_weight_shared
// CHECK-COUNT-2: linalg.generic
func.func @only_a_weight_shared(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>,
                                %w: tensor<64xf32>, %init: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<16x64xf32>, tensor<64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %s: f32, %acc: f32):
    %p = arith.mulf %v, %s : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y, %w : tensor<16x64xf32>, tensor<64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %s: f32, %acc: f32):
    %p = arith.mulf %v, %s : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(r, d) -> (r, d)>
#row = affine_map<(r, d) -> (r)>
// A layer norm's statistics: the squared deviations read the mean, so they
// cannot share its pass; and a sum whose input is made after the first sum
// cannot move up to it. On the GPU these rows are the warp-row strategy's
// (and a column sum, innermost loop parallel, the column strategy's): never
// merged there.
// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-3: linalg.generic {{.*}}"reduction"]
// GPU-LABEL: func.func @dependent
// GPU-COUNT-3: linalg.generic {{.*}}"reduction"]
func.func @dependent(%x: tensor<16x64xf32>, %init: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %sum : tensor<16x64xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %p = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %later = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>
  %max = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %later : tensor<16x64xf32>, tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %t: f32, %acc: f32):
    %p = arith.mulf %v, %t : f32
    %r = arith.maximumf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %sum, %sq, %max : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(r, d) -> (r, d)>
#col = affine_map<(r, d) -> (d)>
// Column sums (a norm's weight and bias gradients) of the same data: one
// pass on the CPU; the GPU's column strategy takes one output, so they stay
// two there.
// CHECK-LABEL: func.func @columns
// CHECK: linalg.generic {{.*}} outs(%arg2, %arg2 : tensor<64xf32>, tensor<64xf32>)
// CHECK-NOT: linalg.generic
// GPU-LABEL: func.func @columns
// GPU-COUNT-2: linalg.generic {{.*}}outs(%arg2 : tensor<64xf32>)
func.func @columns(%g: tensor<16x64xf32>, %xhat: tensor<16x64xf32>, %init: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<16x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g, %xhat : tensor<16x64xf32>, tensor<16x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %h: f32, %acc: f32):
    %p = arith.mulf %v, %h : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// -----

#win = affine_map<(n, c, kh, kw, y, x) -> (n, c, y * 2 + kh, x * 2 + kw)>
#k = affine_map<(n, c, kh, kw, y, x) -> (kh, kw)>
#o = affine_map<(n, c, kh, kw, y, x) -> (n, c, y, x)>
// A max pool's forward maximum and, later, its backward pass's arg-max over
// the same windows (every loop moves the window's read): one pass, where
// the forward stands. The arg-max's accumulators (fills of an empty tensor
// made after the forward) move up with it, so its positions are kept from
// the forward pass instead of read again. The GPU runs window loops with an
// innermost parallel loop, one output per kernel: left alone there.
// CHECK-LABEL: func.func @max_pool_argmax
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x4x4xi32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%[[E]] : tensor<2x3x4x4xi32>)
// CHECK-NEXT: %[[M:.*]]:3 = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x3x8x8xf32>, tensor<2x2xf32>) outs(%arg2, %arg2, %[[F]] : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>)
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]#0, %[[M]]#2
// GPU-LABEL: func.func @max_pool_argmax
// GPU-COUNT-2: linalg.generic
func.func @max_pool_argmax(%x: tensor<2x3x8x8xf32>, %window: tensor<2x2xf32>,
                           %init: tensor<2x3x4x4xf32>)
    -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>) {
  %max = linalg.generic {indexing_maps = [#win, #k, #o],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %window : tensor<2x3x8x8xf32>, tensor<2x2xf32>) outs(%init : tensor<2x3x4x4xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  %none = arith.constant 4 : i32
  %e = tensor.empty() : tensor<2x3x4x4xi32>
  %first = linalg.fill ins(%none : i32) outs(%e : tensor<2x3x4x4xi32>) -> tensor<2x3x4x4xi32>
  %arg:2 = linalg.generic {indexing_maps = [#win, #k, #o, #o],
                           iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %window : tensor<2x3x8x8xf32>, tensor<2x2xf32>) outs(%init, %first : tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32, %at: i32):
    %kh = linalg.index 2 : index
    %kw = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %row = arith.muli %kh, %c2 : index
    %pos = arith.addi %row, %kw : index
    %p = arith.index_cast %pos : index to i32
    %gt = arith.cmpf ogt, %v, %acc : f32
    %m = arith.select %gt, %v, %acc : f32
    %a = arith.select %gt, %p, %at : i32
    linalg.yield %m, %a : f32, i32
  } -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>)
  return %max, %arg#1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>
}

// -----

#win = affine_map<(n, c, kh, kw, y, x) -> (n, c, y * 2 + kh, x * 2 + kw)>
#k = affine_map<(n, c, kh, kw, y, x) -> (kh, kw)>
#o = affine_map<(n, c, kh, kw, y, x) -> (n, c, y, x)>
// The later reduction's accumulator starts from a value computed after the
// first (not an init maker): it cannot move up, so nothing merges.
// CHECK-LABEL: func.func @init_computed_later
// CHECK-COUNT-2: linalg.generic {{.*}}"reduction", "reduction", "parallel", "parallel"]
func.func @init_computed_later(%x: tensor<2x3x8x8xf32>, %window: tensor<2x2xf32>,
                               %init: tensor<2x3x4x4xf32>)
    -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %max = linalg.generic {indexing_maps = [#win, #k, #o],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %window : tensor<2x3x8x8xf32>, tensor<2x2xf32>) outs(%init : tensor<2x3x4x4xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  %start = arith.addf %max, %max : tensor<2x3x4x4xf32>
  %sum = linalg.generic {indexing_maps = [#win, #k, #o],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %window : tensor<2x3x8x8xf32>, tensor<2x2xf32>) outs(%start : tensor<2x3x4x4xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x4xf32>
  return %max, %sum : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}
