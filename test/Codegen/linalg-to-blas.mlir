// RUN: oflow-opt %s --oflow-linalg-to-blas | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK: %[[PA:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[K:.*]] = arith.constant 32 : i64
// CHECK: call @oflow_rt_sgemm(%[[ZERO]], %[[ZERO]], %[[M]], %[[N]], %[[K]], %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
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
