// RUN: oflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(oflow-fuse-elementwise{transposes=true}))' | FileCheck %s
// RUN: oflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(oflow-fuse-elementwise))' | FileCheck %s --check-prefix=OFF

// An attention head split after a bias add (GEMM result + bias, reshape to
// heads, transpose): with `transposes` the add writes its result permuted,
// one generic and no transpose; without it, the transpose stays.
// CHECK-LABEL: func.func @bias_add_then_head_split
// CHECK-NOT: linalg.transpose
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x4x8x16xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
// OFF-LABEL: func.func @bias_add_then_head_split
// OFF: linalg.generic
// OFF: linalg.transpose
func.func @bias_add_then_head_split(%a: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x4x8x16xf32> {
  %x = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %0 = tensor.empty() : tensor<2x8x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %x : tensor<64xf32>, tensor<2x8x64xf32>) outs(%0 : tensor<2x8x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %s = arith.addf %in, %in_1 : f32
    linalg.yield %s : f32
  } -> tensor<2x8x64xf32>
  %h = tensor.expand_shape %1 [[0], [1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<2x8x64xf32> into tensor<2x8x4x16xf32>
  %2 = tensor.empty() : tensor<2x4x8x16xf32>
  %t = linalg.transpose ins(%h : tensor<2x8x4x16xf32>) outs(%2 : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x4x8x16xf32>
}

// -----

// Heads merged back (transpose, reshape) and then scaled: the transpose
// fuses into its consumer, which reads the heads permuted.
// CHECK-LABEL: func.func @head_merge_then_scale
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK-NOT: linalg.transpose
// CHECK: return
// OFF-LABEL: func.func @head_merge_then_scale
// OFF: linalg.transpose
func.func @head_merge_then_scale(%o: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %0 = tensor.empty() : tensor<2x8x4x16xf32>
  %t = linalg.transpose ins(%o : tensor<2x4x8x16xf32>) outs(%0 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %m = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %1 = tensor.empty() : tensor<2x8x64xf32>
  %c = arith.constant 2.0 : f32
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<2x8x64xf32>) outs(%1 : tensor<2x8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x8x64xf32>
  return %2 : tensor<2x8x64xf32>
}

// -----

// A weight's transpose that reaches a GEMM through its rounding to bf16 is
// left for oflow-fold-gemm-transposes (the GEMM reads W transposed), even
// though a generic uses it.
// CHECK-LABEL: func.func @weight_transpose_for_gemm
// CHECK: linalg.transpose
// CHECK: linalg.generic
// CHECK: arith.truncf
// CHECK: linalg.matmul
func.func @weight_transpose_for_gemm(%x: tensor<8x16xbf16>, %w: tensor<32x16xf32>) -> tensor<8x32xf32> {
  %0 = tensor.empty() : tensor<16x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%0 : tensor<16x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<16x32xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<16x32xf32>) outs(%1 : tensor<16x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %s = arith.truncf %in : f32 to bf16
    linalg.yield %s : bf16
  } -> tensor<16x32xbf16>
  %z = arith.constant 0.0 : f32
  %2 = tensor.empty() : tensor<8x32xf32>
  %3 = linalg.fill ins(%z : f32) outs(%2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %4 = linalg.matmul ins(%x, %r : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%3 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}

// -----

// A transpose between a function argument and a return fuses with nothing:
// it stays a linalg.transpose (its own copy kernel).
// CHECK-LABEL: func.func @lone_transpose
// CHECK: linalg.transpose
// CHECK-NOT: linalg.generic
func.func @lone_transpose(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]
  return %t : tensor<8x4xf32>
}

// -----

// A head gradient from the fused attention (a function argument here), put
// back in token order for its bias sum and its rounding for the GEMMs: the
// transpose fuses into both, the sum reading the heads permuted.
// CHECK-LABEL: func.func @head_gradient_to_bias_sum_and_rounding
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction", "parallel", "parallel"]
// CHECK: linalg.generic
// CHECK: arith.truncf
// CHECK-NOT: linalg.transpose
// OFF-LABEL: func.func @head_gradient_to_bias_sum_and_rounding
// OFF: linalg.transpose
func.func @head_gradient_to_bias_sum_and_rounding(%dv: tensor<2x4x8x16xf32>) -> (tensor<4x16xf32>, tensor<2x8x4x16xbf16>) {
  %0 = tensor.empty() : tensor<2x8x4x16xf32>
  %t = linalg.transpose ins(%dv : tensor<2x4x8x16xf32>) outs(%0 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %z = arith.constant 0.0 : f32
  %1 = tensor.empty() : tensor<4x16xf32>
  %2 = linalg.fill ins(%z : f32) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%t : tensor<2x8x4x16xf32>) outs(%2 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %4 = tensor.empty() : tensor<2x8x4x16xbf16>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<2x8x4x16xf32>) outs(%4 : tensor<2x8x4x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x8x4x16xbf16>
  return %3, %5 : tensor<4x16xf32>, tensor<2x8x4x16xbf16>
}
