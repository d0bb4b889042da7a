// oflow-autocast: every f32 linalg.matmul / batch_matmul on static tensors
// reads its two operands rounded (arith.truncf in an elementwise generic)
// and keeps its f32 output; nothing else changes.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -pass-pipeline="builtin.module(func.func(oflow-autocast{precision=bf16}))" | FileCheck %s
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -pass-pipeline="builtin.module(func.func(oflow-autocast{precision=fp16}))" | FileCheck %s --check-prefix=F16
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -pass-pipeline="builtin.module(func.func(oflow-autocast{precision=fp32}))" | FileCheck %s --check-prefix=F32

// CHECK-LABEL: func.func @linear
// CHECK: %[[EA:.*]] = tensor.empty() : tensor<8x32xbf16>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x32xf32>) outs(%[[EA]] : tensor<8x32xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32x16xf32>) outs(%{{.*}} : tensor<32x16xbf16>)
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%arg2 : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<8x16xf32>)
// CHECK-NOT: truncf
// CHECK: return %[[S]]
// F16-LABEL: func.func @linear
// F16: arith.truncf %{{.*}} : f32 to f16
// F16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x32xf16>, tensor<32x16xf16>) outs(%arg2 : tensor<8x16xf32>)
// F32-LABEL: func.func @linear
// F32-NOT: truncf
// F32: linalg.matmul ins(%arg0, %arg1 : tensor<8x32xf32>, tensor<32x16xf32>)
func.func @linear(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @attention_scores
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x8x16xbf16>, tensor<4x16x8xbf16>) outs(%arg2 : tensor<4x8x8xf32>)
func.func @attention_scores(%q: tensor<4x8x16xf32>, %kt: tensor<4x16x8xf32>, %init: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%init : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %s : tensor<4x8x8xf32>
}

// -----

// Integer GEMMs are left alone; a matmul reading A transposed (indexing
// maps) is rounded and keeps its maps.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @integer_and_transposed
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<8x32xi32>, tensor<32x16xi32>)
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<32x8xf32>)
// CHECK: arith.truncf
// CHECK: linalg.matmul indexing_maps = [#[[AT]], #{{.*}}, #{{.*}}]
// CHECK-SAME: ins(%[[A]], %{{.*}} : tensor<32x8xbf16>, tensor<32x16xbf16>)
func.func @integer_and_transposed(%a: tensor<8x32xi32>, %b: tensor<32x16xi32>, %c: tensor<8x16xi32>,
                      %at: tensor<32x8xf32>, %bf: tensor<32x16xf32>, %cf: tensor<8x16xf32>)
    -> (tensor<8x16xi32>, tensor<8x16xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<8x32xi32>, tensor<32x16xi32>) outs(%c : tensor<8x16xi32>) -> tensor<8x16xi32>
  %t = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                      affine_map<(d0, d1, d2) -> (d2, d1)>,
                                      affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%at, %bf : tensor<32x8xf32>, tensor<32x16xf32>) outs(%cf : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r, %t : tensor<8x16xi32>, tensor<8x16xf32>
}

// -----

// An operand that is a tensor inserted into zeros (a padded GEMM's
// gradient: slice_backward of oflow-pad-gemm-extents' slice) is rounded
// before the insertion, and the zeros are built in bf16: the f32 padded
// tensor is never needed.
// CHECK-LABEL: func.func @padded_operand
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16xbf16>
// CHECK: %[[SLAB:.*]] = tensor.extract_slice %[[E]][0, 13] [8, 3] [1, 1] : tensor<8x16xbf16> to tensor<8x3xbf16>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%[[SLAB]] : tensor<8x3xbf16>)
// CHECK: %[[ZS:.*]] = tensor.insert_slice %[[Z]] into %[[E]][0, 13] [8, 3] [1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x13xf32>) outs(%{{.*}} : tensor<8x13xbf16>)
// CHECK: %[[A:.*]] = tensor.insert_slice %[[R]] into %[[ZS]][0, 0] [8, 13] [1, 1] : tensor<8x13xbf16> into tensor<8x16xbf16>
// CHECK: linalg.matmul {{.*}} ins(%[[A]], %{{.*}} : tensor<8x16xbf16>, tensor<8x32xbf16>)
func.func @padded_operand(%g: tensor<8x13xf32>, %x: tensor<8x32xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %slab = tensor.extract_slice %e[0, 13] [8, 3] [1, 1] : tensor<8x16xf32> to tensor<8x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%slab : tensor<8x3xf32>) -> tensor<8x3xf32>
  %zs = tensor.insert_slice %z into %e[0, 13] [8, 3] [1, 1] : tensor<8x3xf32> into tensor<8x16xf32>
  %padded = tensor.insert_slice %g into %zs[0, 0] [8, 13] [1, 1] : tensor<8x13xf32> into tensor<8x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%padded, %x : tensor<8x16xf32>, tensor<8x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// A joined operand (oflow-merge-sibling-matmuls: the q, k and v gradients
// concatenated, their batch dims collapsed for the GEMM) is rounded piece by
// piece into a bf16 tensor, collapsed the same way: each rounding fuses into
// its piece's producer, and the f32 whole is never written.
// CHECK-LABEL: func.func @joined_operand
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x24xbf16>
// CHECK: %[[RA:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x4x8xbf16>)
// CHECK: %[[A:.*]] = tensor.insert_slice %[[RA]] into %[[E]][0, 0, 0] [2, 4, 8] [1, 1, 1]
// CHECK: %[[RB:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x4x16xf32>) outs(%{{.*}} : tensor<2x4x16xbf16>)
// CHECK: %[[B:.*]] = tensor.insert_slice %[[RB]] into %[[A]][0, 0, 8] [2, 4, 16] [1, 1, 1]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2]] : tensor<2x4x24xbf16> into tensor<8x24xbf16>
// CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<8x24xbf16>, tensor<24x32xbf16>)
func.func @joined_operand(%a: tensor<2x4x8xf32>, %b: tensor<2x4x16xf32>, %w: tensor<24x32xf32>, %init: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<2x4x24xf32>
  %ja = tensor.insert_slice %a into %e[0, 0, 0] [2, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> into tensor<2x4x24xf32>
  %jb = tensor.insert_slice %b into %ja[0, 0, 8] [2, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> into tensor<2x4x24xf32>
  %j = tensor.collapse_shape %jb [[0, 1], [2]] : tensor<2x4x24xf32> into tensor<8x24xf32>
  %y = linalg.matmul ins(%j, %w : tensor<8x24xf32>, tensor<24x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
