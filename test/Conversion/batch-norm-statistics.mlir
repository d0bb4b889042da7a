// RUN: oflow-opt %s --oflow-lower-to-linalg --cse | FileCheck %s
// RUN: oflow-opt %s --oflow-lower-to-linalg --cse --oflow-fuse-elementwise --cse --oflow-merge-sibling-reductions | FileCheck %s --check-prefix=ONEPASS

// batch_norm_statistics lowers through the same helper as batch_norm_training's
// statistics: on the same input, CSE leaves one widening and one pair of
// reductions, which both the normalization and the returned statistics read.
// This is how the gradient of batch_norm_training reuses the forward pass's
// statistics. The pair are sums of the data shifted by each channel's first
// value k (s1 = sum(x - k), s2 = sum((x - k)^2)): neither reads the other,
// so they can be one pass over the data; mean = k + s1/n and
// var = max(s2/n - (s1/n)^2, 0).
// CHECK-LABEL: func.func @shared
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<3xf32>
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%[[FIRST]] : tensor<3xf32>)
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x3x2x2xf32>) outs(%{{.*}} : tensor<4x3x2x2xf64>)
// CHECK-NOT: tensor<4x3x2x2xf64>)
// CHECK: %[[S1:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%[[X]], %[[K]] : tensor<4x3x2x2xf64>, tensor<3xf64>)
// CHECK: %[[S2:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%[[X]], %[[K]] : tensor<4x3x2x2xf64>, tensor<3xf64>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[S1]] : tensor<3xf64>, tensor<3xf64>)
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[S1]], %[[S2]] : tensor<3xf64>, tensor<3xf64>)
// CHECK: arith.maximumf
// CHECK-NOT: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: return %{{.*}}, %[[MEAN]], %[[VAR]]

// After fusion (the widening into its readers) the two sums read the same
// f32 data and oflow-merge-sibling-reductions makes them one loop nest: a
// single reduction over the input, with two results.
// ONEPASS-LABEL: func.func @shared
// ONEPASS: %[[SUMS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%arg0, %{{.*}} : tensor<4x3x2x2xf32>, tensor<3xf64>)
// ONEPASS-NOT: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// ONEPASS: ins(%{{.*}}, %[[SUMS]]#0 : tensor<3xf32>, tensor<3xf64>)
// ONEPASS: ins(%[[SUMS]]#0, %[[SUMS]]#1 : tensor<3xf64>, tensor<3xf64>)
func.func @shared(%x: tensor<4x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf64>, tensor<3xf64>) {
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  %mean, %var = oflow.batch_norm_statistics %x : (tensor<4x3x2x2xf32>) -> (tensor<3xf64>, tensor<3xf64>)
  return %y, %mean, %var : tensor<4x3x2x2xf32>, tensor<3xf64>, tensor<3xf64>
}
