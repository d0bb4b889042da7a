// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// A sum into zeros over the reduced dim, the division by the count, and
// keepdims as an expand_shape; max starts from -inf.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @reduce
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x6xf32>) outs(%[[ACC]] : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK: arith.constant 6.000000e+00 : f32
// CHECK: arith.divf
// CHECK: tensor.expand_shape %[[MEAN]] {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK: arith.maximumf
func.func @reduce(%x: tensor<4x6xf32>) -> (tensor<4x1xf32>, tensor<6xf32>) {
  %0 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %1 = oflow.reduce_max %x {axes = array<i64: 0>, keepdims = false} : (tensor<4x6xf32>) -> tensor<6xf32>
  return %0, %1 : tensor<4x1xf32>, tensor<6xf32>
}

// -----

// Integer reductions: max from the smallest i32, mean truncates.
// CHECK-LABEL: func.func @reduce_int
// CHECK: arith.constant -2147483648 : i32
// CHECK: arith.maxsi
// CHECK: arith.addi
// CHECK: arith.divsi
func.func @reduce_int(%x: tensor<4x6xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = oflow.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x6xi32>) -> tensor<4xi32>
  %1 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x6xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Numerically stable: the row max is subtracted before exp.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] :
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MAX]], %[[SUM]] :
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = oflow.softmax %x {axis = 1 : i64} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK: %[[SHIFTED:.*]] = arith.subf
// CHECK: %[[LOG:.*]] = math.log
// CHECK: arith.subf %[[SHIFTED]], %[[LOG]]
func.func @log_softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = oflow.log_softmax %x {axis = 0 : i64} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Statistics over the normalised trailing dims; scale and bias read through
// the trailing dims.
// CHECK-DAG: #[[STAT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[PARAM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[STAT]], #[[STAT]], #[[PARAM]], #[[PARAM]], #{{.*}}]
// CHECK: math.sqrt
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = oflow.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Batch statistics per channel (dim 1) in f64 (the op's statistics type):
// shifted sums over N, H, W, then mean and variance per channel; running
// stats with momentum 0.9 and the unbiased variance (count 4 * 2 * 2 = 16:
// 16/15 * 0.1), rounded to f32 once at the end. The normalization: per
// channel alpha = scale / sqrt(var + eps) and beta = bias - mean * alpha,
// then x * alpha + beta per element (PyTorch's CPU kernel's form), all in
// f64, rounded to f32 once: no square root or division per element.
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK: math.sqrt %{{.*}} : f64
// CHECK-NEXT: arith.divf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #{{.*}}]{{.*}} ins(%arg0, %{{.*}}, %{{.*}} : tensor<4x3x2x2xf32>, tensor<3xf64>, tensor<3xf64>) outs(%{{.*}} : tensor<4x3x2x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT: %[[XA:.*]] = arith.mulf %[[XW]], %[[A]] : f64
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[XA]], %[[B]] : f64
// CHECK-NEXT: arith.truncf %[[Y]] : f64 to f32
// CHECK: arith.constant 0.89999997615814208 : f64
// CHECK: arith.constant 0.10000002384185791 : f64
// CHECK: arith.constant 0.10666669209798177 : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @batch_norm_training(%x: tensor<4x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32} : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y, %rm, %rv : tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @global_avg_pool
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.constant 1.600000e+01 : f32
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 3, 1, 1]
func.func @global_avg_pool(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32> {
  %0 = oflow.global_avg_pool %x : (tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}
