// oflow-infer-sbp on a mesh whose last axis is linked `sequential`
// (--micro-batches): inputs split their batch over it, state stays whole on
// it (ZeRO's shard-state splits only the other axes), hints name the other
// axes only, and splitting an op over it saves no compute, so the gradient
// is summed over the micro-batches (an all-reduce on the micro axis), not
// reduce-scattered over them.
//
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=optimizer sbp=x=S(0)' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s

// CHECK: oflow.variable @w param : tensor<16x4xf32> {sbp = #oflow.nd_sbp<[B, B]>}
// CHECK: oflow.variable @w.m optimizer : tensor<16x4xf32> {of = @w, sbp = #oflow.nd_sbp<[S(0), B]>}
// CHECK-LABEL: func.func @train(
// CHECK-SAME: {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}
// CHECK: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]
// CHECK: oflow.reduce_scatter {{.*}}mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]
// CHECK-NEXT: oflow.all_reduce {{.*}}mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]
module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>} {
  oflow.variable @w param : tensor<16x4xf32>
  oflow.variable @w.m optimizer : tensor<16x4xf32> {of = @w}
  func.func @train(%x: tensor<8x16xf32> {oflow.name = "x"}, %dy: tensor<8x4xf32> {oflow.name = "dy"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<16x4xf32>
    %g = oflow.matmul %x, %dy {transpose_a} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %m = oflow.read_variable @w.m : tensor<16x4xf32>
    %nm = oflow.add %m, %g : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
    %nw = oflow.sub %w, %nm : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
    oflow.write_variable @w.m, %nm : tensor<16x4xf32>
    oflow.write_variable @w, %nw : tensor<16x4xf32>
    return
  }
}

