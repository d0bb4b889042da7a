// oflow-merge-sibling-matmuls before autodiff: the backward of the joined
// q, k and v projections is one GEMM for the input gradient (its reduction
// runs over the joined extent: no partial products to add) and one for the
// joined weight gradient, sliced back into each weight's (contiguous rows).
//
// RUN: oflow-opt %s --oflow-merge-sibling-matmuls --oflow-autodiff | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK: %[[D:.*]] = oflow.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<4x8x32xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x64xf32>
// CHECK: oflow.matmul %[[D]], %{{.*}} : (tensor<4x8x64xf32>, tensor<64x32xf32>) -> tensor<4x8x32xf32>
// CHECK: oflow.matmul %{{.*}}, %{{.*}} {transpose_a} : (tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
// CHECK-NOT: oflow.matmul
// CHECK: oflow.slice %{{.*}} {offsets = array<i64: 0, 0>, sizes = array<i64: 32, 32>
// CHECK: oflow.slice %{{.*}} {offsets = array<i64: 32, 0>, sizes = array<i64: 16, 32>
// CHECK: oflow.slice %{{.*}} {offsets = array<i64: 48, 0>, sizes = array<i64: 16, 32>
func.func @main(%x0: tensor<4x8x32xf32>, %t: tensor<4x8x16xf32>) -> tensor<f32> {
  %g = oflow.weight "g", dense<2.0> : tensor<32xf32>
  %x = oflow.mul %x0, %g : (tensor<4x8x32xf32>, tensor<32xf32>) -> tensor<4x8x32xf32>
  %wq = oflow.weight "q", dense<0.5> : tensor<32x32xf32>
  %wk = oflow.weight "k", dense<0.25> : tensor<16x32xf32>
  %wv = oflow.weight "v", dense<0.125> : tensor<16x32xf32>
  %qt = oflow.transpose %wq [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %q = oflow.matmul %x, %qt : (tensor<4x8x32xf32>, tensor<32x32xf32>) -> tensor<4x8x32xf32>
  %kt = oflow.transpose %wk [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %k = oflow.matmul %x, %kt : (tensor<4x8x32xf32>, tensor<32x16xf32>) -> tensor<4x8x16xf32>
  %vt = oflow.transpose %wv [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %v = oflow.matmul %x, %vt : (tensor<4x8x32xf32>, tensor<32x16xf32>) -> tensor<4x8x16xf32>
  %qs = oflow.slice %q {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 4, 8, 16>, strides = array<i64: 1, 1, 1>} : (tensor<4x8x32xf32>) -> tensor<4x8x16xf32>
  %s = oflow.add %qs, %k : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %u = oflow.add %s, %v : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %l = oflow.mse_loss mean %u, %t : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
