// oflow-split-reductions: a reduction into few outputs becomes k partial
// reductions (a new outermost parallel loop, started from the combiner's
// neutral element) and a fold of the k partials into the original output.
//
// RUN: oflow-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(oflow-split-reductions))" | FileCheck %s
// RUN: oflow-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(oflow-split-reductions{target-threads=4096 min-chunk=512}))" | FileCheck %s --check-prefix=SMALL

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// A bias gradient: 8192 rows into 768 columns. 65536 / 768 -> k <= 86; the
// largest divisor of 8192 below that is 64 (128 rows per partial).
// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [64, 128, 768]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x768xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<64x768xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<64x128x768xf32>) outs(%[[F]] : tensor<64x768xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[P]] : tensor<64x768xf32>) outs(%arg1 : tensor<768xf32>)
// CHECK: return %[[R]]
// Aiming at 4096 threads: 4096 / 768 -> k <= 6, so 4 partials of 2048 rows.
// SMALL-LABEL: func.func @bias_grad
// SMALL: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [4, 2048, 768]
// And min-chunk 512 caps the row max at 50257 / 512 -> no divisor of 50257
// in 2..98 but 29.
// SMALL-LABEL: func.func @row_max
// SMALL: output_shape [16, 29, 1733]

func.func @bias_grad(%g: tensor<8192x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<8192x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %r : tensor<768xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// A row max over 50257 = 29 x 1733 columns: the partials start from -inf,
// the fold is a max too (the accumulator's operand position is kept).
// CHECK-LABEL: func.func @row_max
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [16, 29, 1733]
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32) outs({{.*}} : tensor<29x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: arith.maximumf %[[ACC]], %[[IN]] : f32
func.func @row_max(%x: tensor<16x50257xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x50257xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// Cross-entropy rows of GPT-2: 8192 rows want k <= 8, and 50257 has no
// divisor up to 8: the next one, 29, is within 8x of the target.
// CHECK-LABEL: func.func @vocab_rows
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [8192, 29, 1733]
func.func @vocab_rows(%x: tensor<8192x50257xf32>, %init: tensor<8192xf32>) -> tensor<8192xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x50257xf32>) outs(%init : tensor<8192xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  return %r : tensor<8192xf32>
}

// -----

#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d2)>
// Two reduction loops (batch 8, sequence 1024): the larger one is split;
// linalg.index of the split loop becomes outer * 16 + inner.
// CHECK-LABEL: func.func @two_reductions_with_index
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3]] output_shape [8, 64, 16, 768]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]
// CHECK-DAG: %[[INNER:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[OUTER:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[M:.*]] = arith.muli %[[OUTER]], %[[C16]]
// CHECK: arith.addi %[[M]], %[[INNER]]
func.func @two_reductions_with_index(%x: tensor<8x1024x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %r = linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : tensor<8x1024x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %w = arith.mulf %a, %tf : f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %r : tensor<768xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// Left alone: enough outputs already (65536 rows), a reduction too short to
// split (8 elements), and a combiner without a neutral element.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%big: tensor<65536x64xf32>, %i1: tensor<65536xf32>,
                      %short: tensor<4x8xf32>, %i2: tensor<4xf32>,
                      %y: tensor<4x4096xf32>, %i3: tensor<4xf32>)
    -> (tensor<65536xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%big : tensor<65536x64xf32>) outs(%i1 : tensor<65536xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<4x8xf32>) outs(%i2 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // acc - v is not a reduction with a neutral element.
  %c = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x4096xf32>) outs(%i3 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.subf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %a, %b, %c : tensor<65536xf32>, tensor<4xf32>, tensor<4xf32>
}
