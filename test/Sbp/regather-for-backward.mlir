// oflow-regather-for-backward: a split weight all-gathered for the forward
// pass is gathered again right before its first backward use, so that the
// forward pass's whole copy dies at its last forward use (ZeRO-3's reshard
// after forward). Copies carry `oflow.regather`, which keeps CSE from
// merging them back.
//
// RUN: oflow-opt %s -oflow-regather-for-backward | FileCheck %s
// RUN: oflow-opt %s -oflow-regather-for-backward -cse | FileCheck %s --check-prefix=CSE

// CHECK-LABEL: func.func @oflow_train_step(
// w1: gathered, used by the forward GEMM, then gathered again after the
// loss, before the backward GEMM that reads it (and only that one).
// CHECK: %[[R1:.*]] = oflow.read_variable @w1
// CHECK-NEXT: %[[G1:.*]] = oflow.all_gather %[[R1]] {axis = 0 : i64, mesh_axis = 0 : i64}
// CHECK-NEXT: %[[H:.*]] = oflow.matmul %arg0, %[[G1]]
// w2 through a transpose: the chain is copied whole.
// CHECK: %[[R2:.*]] = oflow.read_variable @w2
// CHECK-NEXT: %[[T2:.*]] = oflow.transpose %[[R2]]
// CHECK-NEXT: %[[G2:.*]] = oflow.all_gather %[[T2]]
// CHECK-NEXT: %[[Z:.*]] = oflow.matmul %arg0, %[[G2]]
// An activation gathered in the forward pass is not a weight: kept.
// CHECK: %[[GA:.*]] = oflow.all_gather %[[H]] {axis = 1 : i64
// CHECK: oflow.softmax_cross_entropy mean
// CHECK-NEXT: %[[DZ:.*]] = oflow.softmax_cross_entropy_backward
// CHECK-NEXT: %[[T2B:.*]] = oflow.transpose %[[R2]] {{.*}}oflow.regather
// CHECK-NEXT: %[[G2B:.*]] = oflow.all_gather %[[T2B]] {{.*}}oflow.regather
// CHECK-NEXT: oflow.matmul %[[DZ]], %[[G2B]]
// CHECK: %[[G1B:.*]] = oflow.all_gather %[[R1]] {{.*}}oflow.regather
// CHECK-NEXT: oflow.matmul %{{.*}}, %[[G1B]]
// CHECK: oflow.relu %[[GA]]
// Only the two weights were copied.
// CHECK-NOT: oflow.regather
// CHECK: return

// CSE leaves the copies apart from the forward chains.
// CSE-LABEL: func.func @oflow_train_step(
// CSE-COUNT-3: oflow.regather}
// CSE-NOT: oflow.regather}

// A weight the backward pass does not read (the last layer's bias) and an
// entry without a loss are left alone.
// CHECK-LABEL: func.func @oflow_infer_step(
// CHECK-NOT: oflow.regather
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w1 param : tensor<64x32xf32> {model_name = "w1", sbp = #oflow.nd_sbp<[S(0)]>}
  oflow.variable @w2 param : tensor<32x10xf32> {model_name = "w2", sbp = #oflow.nd_sbp<[S(0)]>}
  oflow.variable @b2 param : tensor<12xf32> {model_name = "b2", sbp = #oflow.nd_sbp<[S(0)]>}
  func.func @oflow_train_step(%x: tensor<8x32xf32>, %y: tensor<8xi64>)
      -> (tensor<f32> {oflow.name = "loss"}, tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>)
      attributes {oflow.entry = "train"} {
    %one = oflow.constant dense<1.0> : tensor<f32>
    %r1 = oflow.read_variable @w1 : tensor<64x32xf32>
    %g1 = oflow.all_gather %r1 {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %h = oflow.matmul %x, %g1 {transpose_b} : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
    %r2 = oflow.read_variable @w2 : tensor<32x10xf32>
    %t2 = oflow.transpose %r2 [1, 0] : (tensor<32x10xf32>) -> tensor<10x32xf32>
    %g2 = oflow.all_gather %t2 {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<10x32xf32>) -> tensor<10x32xf32>
    %z = oflow.matmul %x, %g2 {transpose_b} : (tensor<8x32xf32>, tensor<10x32xf32>) -> tensor<8x10xf32>
    %ga = oflow.all_gather %h {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %rb = oflow.read_variable @b2 : tensor<12xf32>
    %gb = oflow.all_gather %rb {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<12xf32>) -> tensor<12xf32>
    %l = oflow.softmax_cross_entropy mean %z, %y {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    %dz = oflow.softmax_cross_entropy_backward mean %z, %y, %one {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x10xf32>
    %da = oflow.matmul %dz, %g2 : (tensor<8x10xf32>, tensor<10x32xf32>) -> tensor<8x32xf32>
    %dh = oflow.matmul %ga, %g1 : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
    %u = oflow.relu %ga : tensor<8x64xf32>
    return %l, %u, %da, %ga : tensor<f32>, tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>
  }
  func.func @oflow_infer_step(%x: tensor<8x32xf32>) -> (tensor<8x64xf32> {oflow.name = "y"})
      attributes {oflow.entry = "infer"} {
    %r1 = oflow.read_variable @w1 : tensor<64x32xf32>
    %g1 = oflow.all_gather %r1 {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %h = oflow.matmul %x, %g1 {transpose_b} : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
    return %h : tensor<8x64xf32>
  }
}
