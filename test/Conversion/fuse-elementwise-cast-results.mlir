// RUN: oflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(oflow-fuse-elementwise{cast-results=true}))' | FileCheck %s
// RUN: oflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(oflow-fuse-elementwise))' | FileCheck %s --check-prefix=OFF

// A GELU-like backward (exp: not fused into a second user) whose f32 result
// feeds a bias gradient's column sum and, rounded to bf16, a GEMM. With
// `cast-results` the producer writes both: the f32 value and its rounding,
// one generic with two results; the column sum reads the f32 one. Without
// it the rounding is a generic of its own, reading the f32 value back.
// CHECK-LABEL: func.func @gelu_backward
//       CHECK: %[[BF:.*]] = tensor.empty() : tensor<64x32xbf16>
//       CHECK: %[[BOTH:.*]]:2 = linalg.generic
//  CHECK-SAME:   outs(%{{.*}}, %[[BF]] : tensor<64x32xf32>, tensor<64x32xbf16>)
//       CHECK:   %[[E:.*]] = math.exp
//       CHECK:   %[[V:.*]] = arith.mulf %[[E]]
//       CHECK:   %[[R:.*]] = arith.truncf %[[V]] : f32 to bf16
//       CHECK:   linalg.yield %[[V]], %[[R]] : f32, bf16
//       CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}}ins(%[[BOTH]]#0 :
//   CHECK-NOT: math.exp
//       CHECK: return %[[BOTH]]#1, %[[SUM]]
// OFF-LABEL: func.func @gelu_backward
//       OFF: math.exp
//       OFF: linalg.generic
//  OFF-NEXT: ^bb0
//  OFF-NEXT: arith.truncf
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @gelu_backward(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>) -> (tensor<64x32xbf16>, tensor<32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = math.exp %x : f32
    %1 = arith.mulf %0, %y : f32
    linalg.yield %1 : f32
  } -> tensor<64x32xf32>
  %eb = tensor.empty() : tensor<64x32xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<64x32xf32>) outs(%eb : tensor<64x32xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<64x32xbf16>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<32xf32>
  %f = linalg.fill ins(%z : f32) outs(%ec : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%p : tensor<64x32xf32>) outs(%f : tensor<32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = arith.addf %x, %o : f32
    linalg.yield %0 : f32
  } -> tensor<32xf32>
  return %r, %s : tensor<64x32xbf16>, tensor<32xf32>
}

// -----

// A cast through a permutation (the rounding reads the value transposed) is
// left to the fusion: the two results would be written in different orders.
// CHECK-LABEL: func.func @transposed_cast
//       CHECK: linalg.generic
//       CHECK:   math.exp
//       CHECK:   linalg.yield %{{.*}} : f32
//       CHECK: linalg.generic
//       CHECK:   arith.truncf
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_cast(%a: tensor<32x32xf32>) -> (tensor<32x32xbf16>, tensor<32x32xf32>) {
  %e = tensor.empty() : tensor<32x32xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.exp %x : f32
    linalg.yield %0 : f32
  } -> tensor<32x32xf32>
  %eb = tensor.empty() : tensor<32x32xbf16>
  %r = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<32x32xf32>) outs(%eb : tensor<32x32xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<32x32xbf16>
  return %r, %p : tensor<32x32xbf16>, tensor<32x32xf32>
}
