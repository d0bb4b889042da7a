// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s

// One device with micro-batches is mesh [1, K]: along the size-1 axis every
// op replicates (a split or partial there would only constrain the micro
// axis and leave no-op collectives that join the micro-batches' lanes).
// CHECK-LABEL: func.func @one_device(
// CHECK-SAME: {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[B, S(0)]>}
// CHECK: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]
// CHECK: oflow.relu {{.*}}oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]
// CHECK: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[B, P(sum)]>], transpose_a
// CHECK-NOT: mesh_axis = 0
module attributes {oflow.mesh = #oflow.mesh<1x2, links = [local, sequential]>} {
  oflow.variable @w param : tensor<16x4xf32>
  func.func @one_device(%x: tensor<8x16xf32> {oflow.name = "x"}, %dy: tensor<8x4xf32> {oflow.name = "dy"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<16x4xf32>
    %y = oflow.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %r = oflow.relu %y : tensor<8x4xf32>
    %g = oflow.matmul %x, %r {transpose_a} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %nw = oflow.sub %w, %g : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
    oflow.write_variable @w, %nw : tensor<16x4xf32>
    return
  }
}
