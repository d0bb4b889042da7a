// RUN: oflow-opt %s --oflow-lower-to-linalg --cse | FileCheck %s

// batch_norm_statistics lowers through the same helper as batch_norm_training's
// statistics: on the same input, CSE leaves one widening and one pair of
// reductions (the mean, then the mean squared deviation), which both the
// normalization and the returned statistics read. This is how the gradient
// of batch_norm_training reuses the forward pass's statistics.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-1: arith.extf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<3xf64>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%{{.*}}, %[[MEAN]] : tensor<4x3x2x2xf64>, tensor<3xf64>)
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<3xf64>)
// CHECK-NOT: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: return %{{.*}}, %[[MEAN]], %[[VAR]]
func.func @shared(%x: tensor<4x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf64>, tensor<3xf64>) {
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  %mean, %var = oflow.batch_norm_statistics %x : (tensor<4x3x2x2xf32>) -> (tensor<3xf64>, tensor<3xf64>)
  return %y, %mean, %var : tensor<4x3x2x2xf32>, tensor<3xf64>, tensor<3xf64>
}
