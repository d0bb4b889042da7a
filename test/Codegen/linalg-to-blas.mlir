// RUN: oflow-opt %s --oflow-linalg-to-blas | FileCheck %s

// C += A B: no transposes, beta = 1.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[PA:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[K:.*]] = arith.constant 32 : i64
// CHECK: call @oflow_rt_sgemm(%c0_i64{{(_[0-9]+)?}}, %c0_i64{{(_[0-9]+)?}}, %[[M]], %[[N]], %[[K]], %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// CHECK-NOT: linalg.matmul
func.func @gemm(%a: memref<8x32xf32>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// CHECK-LABEL: func.func @batched
// CHECK: call @oflow_rt_sgemm_batched
func.func @batched(%a: memref<4x8x32xf32>, %b: memref<4x32x16xf32>, %c: memref<4x8x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x32xf32>, memref<4x32x16xf32>) outs(%c : memref<4x8x16xf32>)
  return
}

// Operands stored transposed (A as [k, m], B as [n, k]) are read in place:
// the transpose flags are set and K is A's row count; a zero fill of C right
// before the GEMM becomes beta = 0.
// CHECK-LABEL: func.func @transposed_into_zeros
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[K:.*]] = arith.constant 32 : i64
// CHECK: call @oflow_rt_sgemm(%c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %[[M]], %[[N]], %[[K]], %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]], %{{.*}}, %{{.*}})
func.func @transposed_into_zeros(%a: memref<32x8xf32>, %b: memref<16x32xf32>, %c: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<32x8xf32>, memref<16x32xf32>) outs(%c : memref<8x16xf32>)
  return
}

// Batched, A transposed only; C filled with 1 keeps beta = 1 and its fill.
// CHECK-LABEL: func.func @batched_transposed_a
// CHECK: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[K:.*]] = arith.constant 32 : i64
// CHECK: call @oflow_rt_sgemm_batched(%c4_i64, %c1_i64, %c0_i64, %[[M]], %[[N]], %[[K]], %[[ONE]], {{.*}}, %[[ONE]],
func.func @batched_transposed_a(%a: memref<4x32x8xf32>, %b: memref<4x32x16xf32>, %c: memref<4x8x16xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x8x16xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : memref<4x32x8xf32>, memref<4x32x16xf32>) outs(%c : memref<4x8x16xf32>)
  return
}

// Other indexing maps (a broadcast A) stay loops.
// CHECK-LABEL: func.func @broadcast_a
// CHECK: linalg.matmul
func.func @broadcast_a(%a: memref<32xf32>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// Mixed precision: bf16 (or f16) A and B, f32 C -> oflow_rt_gemm_lowp with the
// operands' dtype code first; element offsets are scaled by 2 bytes.
// CHECK-LABEL: func.func @mixed_bf16
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: arith.muli %[[OFF]], %[[TWO]] : index
// CHECK: %[[BF16:.*]] = arith.constant 5 : i64
// CHECK: call @oflow_rt_gemm_lowp(%[[BF16]],
// CHECK-LABEL: func.func @mixed_f16_batched
// CHECK: %[[F16:.*]] = arith.constant 6 : i64
// CHECK: call @oflow_rt_gemm_lowp_batched(%[[F16]],
func.func @mixed_bf16(%a: memref<8x32xbf16>, %b: memref<32x16xbf16>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x32xbf16>, memref<32x16xbf16>) outs(%c : memref<8x16xf32>)
  return
}
func.func @mixed_f16_batched(%a: memref<4x8x32xf16>, %b: memref<4x32x16xf16>, %c: memref<4x8x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x32xf16>, memref<4x32x16xf16>) outs(%c : memref<4x8x16xf32>)
  return
}
// Mixed operand types, or a 16-bit result, stay loops.
// CHECK-LABEL: func.func @mixed_operands
// CHECK: linalg.matmul
// CHECK-LABEL: func.func @half_result
// CHECK: linalg.matmul
func.func @mixed_operands(%a: memref<8x32xbf16>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x32xbf16>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}
func.func @half_result(%a: memref<8x32xf16>, %b: memref<32x16xf16>, %c: memref<8x16xf16>) {
  linalg.matmul ins(%a, %b : memref<8x32xf16>, memref<32x16xf16>) outs(%c : memref<8x16xf16>)
  return
}

// Integer GEMMs and non-unit inner strides stay loops.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.matmul
func.func @integer(%a: memref<8x32xi32>, %b: memref<32x16xi32>, %c: memref<8x16xi32>) {
  linalg.matmul ins(%a, %b : memref<8x32xi32>, memref<32x16xi32>) outs(%c : memref<8x16xi32>)
  return
}
// CHECK-LABEL: func.func @strided
// CHECK: linalg.matmul
func.func @strided(%a: memref<8x32xf32, strided<[64, 2]>>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x32xf32, strided<[64, 2]>>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}
// CHECK: func.func private @oflow_rt_sgemm(i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64)
// CHECK: func.func private @oflow_rt_gemm_lowp(i64, i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64)
