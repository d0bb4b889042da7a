// oflow-infer-sbp on --micro-batches' axis alone (mesh 1x2, the second axis
// `sequential`): splitting over it saves no compute, so nothing but the
// planner's view of where each value is headed keeps the batch split there.
//
// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s

// A weight gradient whose dY has the gradient's own shape (16 rows of 12,
// a 16x12 weight) is a contraction, not an elementwise op: the weight's
// layout does not flow through it to dY and on to the activations. (It
// did, and with splitting over the micro-batches saving no compute, the
// planner joined the batch over them to match: every activation whole.)
// CHECK-LABEL: func.func @square_gradient(
// CHECK-NOT: mesh_axis = 1 : i64
// CHECK: oflow.matmul %arg0, %{{.*}} {oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]}
// CHECK: oflow.sub %{{.*}}, %arg1 {oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]}
// CHECK: oflow.matmul %arg0, %{{.*}} {oflow.sbp = [#oflow.nd_sbp<[B, P(sum)]>], transpose_a}
// CHECK: oflow.all_reduce %{{.*}} {mesh_axis = 1 : i64
module attributes {oflow.mesh = #oflow.mesh<1x2, links = [local, sequential]>} {
  oflow.variable @w param : tensor<16x12xf32>
  func.func @square_gradient(%a: tensor<16x16xf32> {oflow.name = "a"}, %t: tensor<16x12xf32> {oflow.name = "t"}) -> tensor<f32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<16x12xf32>
    %y = oflow.matmul %a, %w : (tensor<16x16xf32>, tensor<16x12xf32>) -> tensor<16x12xf32>
    %loss = oflow.mse_loss sum %y, %t : (tensor<16x12xf32>, tensor<16x12xf32>) -> tensor<f32>
    %dy = oflow.sub %y, %t : (tensor<16x12xf32>, tensor<16x12xf32>) -> tensor<16x12xf32>
    %gw = oflow.matmul %a, %dy {transpose_a} : (tensor<16x16xf32>, tensor<16x12xf32>) -> tensor<16x12xf32>
    %nw = oflow.sub %w, %gw : (tensor<16x12xf32>, tensor<16x12xf32>) -> tensor<16x12xf32>
    oflow.write_variable @w, %nw : tensor<16x12xf32>
    return %loss : tensor<f32>
  }
}
