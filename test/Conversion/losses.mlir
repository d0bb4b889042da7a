// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// softmax_cross_entropy = nll_loss(log_softmax): per-sample -logp[n, label]
// (0 for ignored labels), summed and divided by the count of counted labels.
// CHECK-LABEL: func.func @cross_entropy_mean
// CHECK: %[[LOGP:.*]] = linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}} : tensor<32x8xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK: math.log
// CHECK: %[[PER:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32xi64>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[COUNTED:.*]] = arith.cmpi ne, %{{.*}}, %c-100_i64
// CHECK: tensor.extract %[[LOGP]]
// CHECK: arith.negf
// CHECK: arith.select %[[COUNTED]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PER]] : tensor<32xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%arg1 : tensor<32xi64>) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[COUNT]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @cross_entropy_mean(%x: tensor<32x8xf32>, %y: tensor<32xi64>) -> tensor<f32> {
  %0 = oflow.softmax_cross_entropy mean %x, %y {ignore_index = -100 : i64} : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// none over [N, C, d]: the class is dim 1, the labels' map drops it.
// CHECK-LABEL: func.func @nll_none
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2x5xi32>) outs(%{{.*}} : tensor<2x5xf32>)
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK: %[[D:.*]] = linalg.index 1
// CHECK: tensor.extract %arg0[%[[N]], %{{.*}}, %[[D]]] : tensor<2x3x5xf32>
// CHECK-NOT: iterator_types = ["reduction"
// CHECK: return
func.func @nll_none(%x: tensor<2x3x5xf32>, %y: tensor<2x5xi32>) -> tensor<2x5xf32> {
  %0 = oflow.nll_loss none %x, %y : (tensor<2x3x5xf32>, tensor<2x5xi32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// (softmax - onehot) * weight, weight = grad_loss / count (0 if ignored).
// CHECK-DAG: #[[LAB:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @cross_entropy_backward
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%arg1 : tensor<32xi64>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1, %arg2, %[[COUNT]] : tensor<32xi64>, tensor<f32>, tensor<f32>)
// CHECK: arith.divf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0,
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[LAB]], #[[LAB]], #{{.*}}, #{{.*}}], {{.*}} ins(%arg1, %[[W]], %[[P]] :
// CHECK: %[[CLS:.*]] = linalg.index 1
// CHECK: arith.cmpi eq, %{{.*}}, %[[CLS]]
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @cross_entropy_backward(%x: tensor<32x8xf32>, %y: tensor<32xi64>, %g: tensor<f32>) -> tensor<32x8xf32> {
  %0 = oflow.softmax_cross_entropy_backward mean %x, %y, %g {ignore_index = -100 : i64} : (tensor<32x8xf32>, tensor<32xi64>, tensor<f32>) -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

// CHECK-LABEL: func.func @mse_sum
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-NOT: arith.divf
// CHECK: return
func.func @mse_sum(%x: tensor<4x2xf32>, %t: tensor<4x2xf32>) -> tensor<f32> {
  %0 = oflow.mse_loss sum %x, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
