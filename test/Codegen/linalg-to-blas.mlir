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
