// RUN: oflow-opt %s --oflow-hoist-row-consumers --split-input-file | FileCheck %s

// A layer norm's backward as autodiff leaves it: the row statistic, the
// weight gradient's column sum (partials and fold), then the input gradient
// and its bf16 rounding for the next GEMM. The two row-wise generics move up
// next to the statistic, with the tensor.empty each writes into; the column
// sums keep their order after them.
// CHECK-LABEL: func.func @norm_backward
//       CHECK: %[[STAT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK: } -> tensor<16xf32>
//  CHECK-NEXT: tensor.empty() : tensor<16x64xf32>
//  CHECK-NEXT: %[[DX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}ins(%{{.*}}, %[[STAT]] :
//  CHECK-NEXT: ^bb0
//  CHECK-NEXT: arith.subf
//  CHECK-NEXT: linalg.yield
//  CHECK-NEXT: }
//  CHECK-NEXT: tensor.empty() : tensor<16x64xbf16>
//  CHECK-NEXT: %[[ROUND:.*]] = linalg.generic {{.*}}ins(%[[DX]] :
//       CHECK: %[[PART:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
//       CHECK: %[[FOLD:.*]] = linalg.generic {{.*}}ins(%[[PART]] :
//       CHECK: return %[[ROUND]], %[[FOLD]]
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @norm_backward(%x: tensor<16x64xf32>, %dy: tensor<16x64xf32>) -> (tensor<16x64xbf16>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %stat = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%dy : tensor<16x64xf32>) outs(%f16 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  %e2x64 = tensor.empty() : tensor<2x64xf32>
  %f2x64 = linalg.fill ins(%zero : f32) outs(%e2x64 : tensor<2x64xf32>) -> tensor<2x64xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %part = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x3 : tensor<2x8x64xf32>) outs(%f2x64 : tensor<2x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x64xf32>
  %e64 = tensor.empty() : tensor<64xf32>
  %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<64xf32>) -> tensor<64xf32>
  %fold = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%part : tensor<2x64xf32>) outs(%f64 : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %edx = tensor.empty() : tensor<16x64xf32>
  %dx = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %stat : tensor<16x64xf32>, tensor<16xf32>) outs(%edx : tensor<16x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.subf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %eb = tensor.empty() : tensor<16x64xbf16>
  %round = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%dx : tensor<16x64xf32>) outs(%eb : tensor<16x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x64xbf16>
  return %round, %fold : tensor<16x64xbf16>, tensor<64xf32>
}

// -----

// A row-wise generic that needs a value computed after the statistic by an
// op that cannot move with it (here the column sum) stays where it is, and
// so do generics over other loops.
// CHECK-LABEL: func.func @needs_the_column_sum
//       CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
//       CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
//       CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @needs_the_column_sum(%x: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %stat = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x64xf32>) outs(%f16 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  %e64 = tensor.empty() : tensor<64xf32>
  %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<64xf32>) -> tensor<64xf32>
  %cols = linalg.generic {indexing_maps = [#rows, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%f64 : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %ey = tensor.empty() : tensor<16x64xf32>
  %y = linalg.generic {indexing_maps = [#row, #col, #rows], iterator_types = ["parallel", "parallel"]} ins(%stat, %cols : tensor<16xf32>, tensor<64xf32>) outs(%ey : tensor<16x64xf32>) {
  ^bb0(%s: f32, %c: f32, %out: f32):
    %r = arith.subf %s, %c : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %e64b = tensor.empty() : tensor<64xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cols : tensor<64xf32>) outs(%e64b : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  return %y, %neg : tensor<16x64xf32>, tensor<64xf32>
}
