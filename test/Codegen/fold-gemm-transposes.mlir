// RUN: oflow-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(oflow-fold-gemm-transposes))" | FileCheck %s

// A linear layer, x @ transpose(w): the matmul reads w through a transposed
// map (BLAS's transb) and the transpose is gone.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<8x4xf32>, tensor<6x4xf32>)
func.func @linear(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %c: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %t : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Under bf16 the transposed weight is rounded, and read by the forward GEMM
// and, already transposed by its map, by the backward one (dx = dy @ w).
// The rounding is rebuilt over w as it lies and both GEMMs read it with
// their B maps swapped.
// CHECK-LABEL: func.func @rounded
// CHECK-NOT: linalg.transpose
// CHECK: %[[E:.*]] = tensor.empty() : tensor<6x4xbf16>
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<6x4xf32>) outs(%[[E]] : tensor<6x4xbf16>)
// CHECK: arith.truncf
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #[[BT:.*]], #{{.*}}] ins(%arg0, %[[W]] : tensor<8x4xbf16>, tensor<6x4xbf16>)
// The backward GEMM's swapped map is the default one again.
// CHECK: linalg.matmul ins(%arg2, %[[W]] : tensor<8x6xbf16>, tensor<6x4xbf16>)
// CHECK-NOT: linalg.generic
func.func @rounded(%x: tensor<8x4xbf16>, %w: tensor<6x4xf32>, %dy: tensor<8x6xbf16>, %c: tensor<8x6xf32>, %d: tensor<8x4xf32>) -> (tensor<8x6xf32>, tensor<8x4xf32>) {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<4x6xbf16>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x6xf32>) outs(%eb : tensor<4x6xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x6xbf16>
  %y = linalg.matmul ins(%x, %tb : tensor<8x4xbf16>, tensor<4x6xbf16>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%dy, %tb : tensor<8x6xbf16>, tensor<4x6xbf16>) outs(%d : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y, %dx : tensor<8x6xf32>, tensor<8x4xf32>
}

// -----

// Left alone: a transpose something other than a GEMM also reads.
// CHECK-LABEL: func.func @also_returned
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.matmul ins(%arg0, %[[T]] :
func.func @also_returned(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %c: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<4x6xf32>) {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %t : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %r, %t : tensor<8x6xf32>, tensor<4x6xf32>
}
