// oflow-merge-sibling-matmuls: matmuls of one activation by several 2-D
// weights become one matmul by the joined weights, split back into pieces;
// autodiff then gives one GEMM for the input gradient and one for the joined
// weight gradient, sliced back into each weight's.
//
// RUN: oflow-opt %s -split-input-file --oflow-merge-sibling-matmuls | FileCheck %s

// q, k and v of an attention layer, weights stored [N, K] as torch stores
// them and read through transposes: joined along N (contiguous pieces), read
// with transpose_b. The extents may differ (grouped-query attention's k, v).
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: %[[Q:.*]] = oflow.weight "q"
// CHECK-DAG: %[[K:.*]] = oflow.weight "k"
// CHECK-DAG: %[[V:.*]] = oflow.weight "v"
// CHECK-NOT: oflow.transpose
// CHECK: %[[W:.*]] = oflow.concat %[[Q]], %[[K]], %[[V]] {axis = 0 : i64} : (tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
// CHECK: %[[Y:.*]] = oflow.matmul %arg0, %[[W]] {transpose_b} : (tensor<4x8x32xf32>, tensor<64x32xf32>) -> tensor<4x8x64xf32>
// CHECK: %[[P:.*]]:3 = oflow.split %[[Y]] {axis = 2 : i64, sizes = array<i64: 32, 16, 16>}
// CHECK-NOT: oflow.matmul
// CHECK: %[[S:.*]] = oflow.slice %[[P]]#0
// CHECK: oflow.add %[[S]], %[[P]]#1
// CHECK: oflow.add %{{.*}}, %[[P]]#2
func.func @qkv(%x: tensor<4x8x32xf32>, %t: tensor<4x8x16xf32>) -> tensor<f32> {
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

// -----

// Weights stored [K, N] (ONNX MatMul's own layout) are joined along N, and
// the GEMM reads them as they are.
// CHECK-LABEL: func.func @kn
// CHECK: %[[W:.*]] = oflow.concat %arg1, %arg2 {axis = 1 : i64} : (tensor<32x8xf32>, tensor<32x24xf32>) -> tensor<32x32xf32>
// CHECK: %[[Y:.*]] = oflow.matmul %arg0, %[[W]] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK: oflow.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 8, 24>}
func.func @kn(%x: tensor<16x32xf32>, %a: tensor<32x8xf32>, %b: tensor<32x24xf32>) -> (tensor<16x8xf32>, tensor<16x24xf32>) {
  %p = oflow.matmul %x, %a : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %r = oflow.matmul %x, %b : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
  return %p, %r : tensor<16x8xf32>, tensor<16x24xf32>
}

// -----

// Left alone: different left operands, a transposed left operand, weights
// stored differently, a weight defined after the first sibling, and a lone
// matmul.
// CHECK-LABEL: func.func @not_siblings
// CHECK-NOT: oflow.concat
// CHECK-NOT: oflow.split
// CHECK-COUNT-7: oflow.matmul
func.func @not_siblings(%x: tensor<16x32xf32>, %y: tensor<16x32xf32>, %a: tensor<32x8xf32>, %b: tensor<8x32xf32>, %c: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<32x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %p = oflow.matmul %x, %a : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %q = oflow.matmul %y, %a : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %r = oflow.matmul %y, %b {transpose_b} : (tensor<16x32xf32>, tensor<8x32xf32>) -> tensor<16x8xf32>
  %s = oflow.matmul %x, %c {transpose_a} : (tensor<16x32xf32>, tensor<16x8xf32>) -> tensor<32x8xf32>
  %late = oflow.relu %a : tensor<32x8xf32>
  %t = oflow.matmul %x, %late : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %u = oflow.matmul %c, %b : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %v = oflow.matmul %u, %a : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %p, %q, %r, %s, %t, %v : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<32x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// On a mesh of several devices the planner splits each weight on its own:
// nothing changes.
// CHECK-LABEL: func.func @mesh
// CHECK-NOT: oflow.concat
module attributes {oflow.mesh = #oflow.mesh<2>} {
  func.func @mesh(%x: tensor<16x32xf32>, %a: tensor<32x8xf32>, %b: tensor<32x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
    %p = oflow.matmul %x, %a : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %r = oflow.matmul %x, %b : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    return %p, %r : tensor<16x8xf32>, tensor<16x8xf32>
  }
}
