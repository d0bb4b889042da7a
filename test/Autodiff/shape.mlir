// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s

// reshape: the gradient is reshaped back; transpose: transposed by the
// inverse permutation.
// CHECK-LABEL: func.func @main
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[G:.*]] = oflow.mul %{{.*}}, %arg0
// CHECK: %[[GT:.*]] = oflow.transpose %[[G]] [1, 0, 2] : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[GX:.*]] = oflow.reshape %[[GT]] [2, 12] : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: oflow.gradient "x", %[[GX]] : tensor<2x12xf32>
func.func @main(%r: tensor<3x2x4xf32>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<2x12xf32>
  %a = oflow.reshape %x [2, 3, 4] : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  %t = oflow.transpose %a [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %m = oflow.mul %t, %r : (tensor<3x2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<3x2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// split: the pieces' gradients are concatenated, zeros for a piece without
// one; concat: each input gets its slab.
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]]:3 = oflow.split
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[G2:.*]] = oflow.mul %{{.*}}, %[[P]]#0 : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: %[[G0F:.*]] = oflow.mul %{{.*}}, %[[P]]#2
// CHECK: %[[G0:.*]] = oflow.reduce_sum %[[G0F]] {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4x1xf32>
// CHECK: %[[Z:.*]] = oflow.constant dense<0.000000e+00> : tensor<4x2xf32>
// CHECK: %[[GC:.*]] = oflow.concat %[[G0]], %[[Z]], %[[G2]] {axis = 1 : i64}
// CHECK: %[[GA:.*]] = oflow.slice %[[GC]] {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 2>, strides = array<i64: 1, 1>}
// CHECK: %[[GB:.*]] = oflow.slice %[[GC]] {offsets = array<i64: 0, 2>, sizes = array<i64: 4, 4>, strides = array<i64: 1, 1>}
// CHECK: oflow.gradient "a", %[[GA]] : tensor<4x2xf32>
// CHECK: oflow.gradient "b", %[[GB]] : tensor<4x4xf32>
func.func @main(%r: tensor<4x6xf32>) -> tensor<f32> {
  %a = oflow.weight "a", dense<1.0> : tensor<4x2xf32>
  %b = oflow.weight "b", dense<1.0> : tensor<4x4xf32>
  %c = oflow.concat %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>
  %p:3 = oflow.split %c {axis = 1 : i64, sizes = array<i64: 1, 2, 3>} : (tensor<4x6xf32>) -> (tensor<4x1xf32>, tensor<4x2xf32>, tensor<4x3xf32>)
  %m = oflow.mul %p#2, %p#0 : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// flatten, squeeze, unsqueeze reshape back; expand sums over the expanded
// dims; trilu keeps the same triangle; gather scatter-adds (indices get no
// gradient); a reversed strided slice uses slice_backward.
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = oflow.expand %{{.*}} [8, 15]
// CHECK: %[[G1:.*]] = oflow.reshape %[[G]] [4, 2, 3, 5]
// CHECK: %[[G2:.*]] = oflow.reshape %[[G1]] [1, 4, 2, 3, 5]
// CHECK: %[[G3:.*]] = oflow.reshape %[[G2]] [4, 2, 3, 5]
// CHECK: %[[G4:.*]] = oflow.reduce_sum %[[G3]] {axes = array<i64: 0>} : (tensor<4x2x3x5xf32>) -> tensor<1x2x3x5xf32>
// CHECK: %[[G5:.*]] = oflow.reshape %[[G4]] [2, 3, 5]
// CHECK: %[[G6:.*]] = oflow.trilu %[[G5]] {k = -1 : i64, upper = false}
// CHECK: %[[G7:.*]] = oflow.gather_backward %[[G6]], %arg0 {data_shape = array<i64: 3, 5>}
// CHECK: %[[G8:.*]] = oflow.slice_backward %[[G7]] {input_shape = array<i64: 6, 5>, offsets = array<i64: 5, 0>, sizes = array<i64: 3, 5>, strides = array<i64: -2, 1>}
// CHECK: oflow.gradient "x", %[[G8]] : tensor<6x5xf32>
func.func @main(%i: tensor<2x3xi64>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<6x5xf32>
  %s = oflow.slice %x {offsets = array<i64: 5, 0>, sizes = array<i64: 3, 5>, strides = array<i64: -2, 1>} : (tensor<6x5xf32>) -> tensor<3x5xf32>
  %g = oflow.gather %s, %i {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2x3xi64>) -> tensor<2x3x5xf32>
  %u = oflow.trilu %g {upper = false, k = -1 : i64} : tensor<2x3x5xf32>
  %e = oflow.expand %u [4, 2, 3, 5] : (tensor<2x3x5xf32>) -> tensor<4x2x3x5xf32>
  %q = oflow.unsqueeze %e [0] : (tensor<4x2x3x5xf32>) -> tensor<1x4x2x3x5xf32>
  %z = oflow.squeeze %q [0] : (tensor<1x4x2x3x5xf32>) -> tensor<4x2x3x5xf32>
  %f = oflow.flatten %z {axis = 2 : i64} : (tensor<4x2x3x5xf32>) -> tensor<8x15xf32>
  %l = oflow.reduce_sum %f {axes = array<i64: 0, 1>, keepdims = false} : (tensor<8x15xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
