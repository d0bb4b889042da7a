// oflow-infer-sbp: data parallelism by default (batched inputs S(0),
// variables B, optimizer slots like their parameter), the weight gradient a
// partial sum that insert-boxing all-reduces before the update; hints from
// the pass option and from oflow.sbp_hint; batches that do not divide stay B.
//
// RUN: oflow-opt %s -split-input-file -oflow-infer-sbp | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX

// CHECK: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[B]>}
// CHECK: oflow.variable @w.momentum_buffer optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[B]>}
// CHECK-LABEL: func.func @train(
// CHECK-SAME: {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>}
// CHECK-SAME: {oflow.name = "t", oflow.sbp = #oflow.nd_sbp<[S(0)]>}
// CHECK-SAME: -> (tensor<f32> {oflow.sbp = #oflow.nd_sbp<[B]>})
// CHECK: oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[B]>]}
// Forward: rows of x times the whole weight.
// CHECK: oflow.matmul %arg0, %{{.*}} {oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// The loss over a split batch is a partial sum.
// CHECK: oflow.mse_loss sum {{.*}}oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]
// Weight gradient x^T dy contracts the split batch: P(sum).
// CHECK: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[S(0)]>], oflow.sbp = [#oflow.nd_sbp<[P(sum)]>], transpose_a}
// The update runs on whole values.
// CHECK: oflow.add {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[B]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[B]>]
// CHECK: oflow.write_variable @w.momentum_buffer, %{{.*}} {oflow.operand_sbp = [#oflow.nd_sbp<[B]>]}
// CHECK: return {oflow.operand_sbp = [#oflow.nd_sbp<[B]>]}

// BOX-LABEL: func.func @train(
// BOX: %[[G:.*]] = oflow.matmul {{.*}}transpose_a
// BOX: %[[R:.*]] = oflow.all_reduce %[[G]] {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<12x16xf32>) -> tensor<12x16xf32>
// BOX-NEXT: oflow.add %{{.*}}, %[[R]]
// BOX-NOT: oflow.operand_sbp
// BOX: %[[L:.*]] = oflow.all_reduce %{{.*}} {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<f32>) -> tensor<f32>
// BOX-NEXT: return %[[L]]

module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w param : tensor<12x16xf32>
  oflow.variable @w.momentum_buffer optimizer : tensor<12x16xf32> {of = @w}
  func.func @train(%x: tensor<8x12xf32> {oflow.name = "x"}, %t: tensor<8x16xf32> {oflow.name = "t"}) -> tensor<f32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<12x16xf32>
    %y = oflow.matmul %x, %w : (tensor<8x12xf32>, tensor<12x16xf32>) -> tensor<8x16xf32>
    %loss = oflow.mse_loss sum %y, %t : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<f32>
    %dy = oflow.sub %y, %t : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %gw = oflow.matmul %x, %dy {transpose_a} : (tensor<8x12xf32>, tensor<8x16xf32>) -> tensor<12x16xf32>
    %buf = oflow.read_variable @w.momentum_buffer : tensor<12x16xf32>
    %nb = oflow.add %buf, %gw : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %nw = oflow.sub %w, %nb : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    oflow.write_variable @w.momentum_buffer, %nb : tensor<12x16xf32>
    oflow.write_variable @w, %nw : tensor<12x16xf32>
    return %loss : tensor<f32>
  }
}

// -----

// A batch of 6 does not divide by 4: inputs stay B (the planner splits the
// weight's columns instead). Scalars and unnamed arguments are B.
// CHECK-LABEL: func.func @batch6(
// CHECK-SAME: tensor<6x12xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[B]>}
// CHECK-SAME: tensor<f32> {oflow.name = "lr", oflow.sbp = #oflow.nd_sbp<[B]>}
// CHECK-SAME: tensor<6x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w param : tensor<12x16xf32>
  func.func @batch6(%x: tensor<6x12xf32> {oflow.name = "x"}, %lr: tensor<f32> {oflow.name = "lr"}, %u: tensor<6x12xf32>) -> tensor<6x16xf32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<12x16xf32>
    %y = oflow.matmul %x, %w : (tensor<6x12xf32>, tensor<12x16xf32>) -> tensor<6x16xf32>
    return %y : tensor<6x16xf32>
  }
}

// -----

// On 2x2 a batch of 8 splits over both mesh axes, a batch of 6 only over
// the first (6 divides by 2, not by 4).
// CHECK-LABEL: func.func @two_d(
// CHECK-SAME: tensor<8x12xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}
// CHECK-SAME: tensor<6x12xf32> {oflow.name = "y", oflow.sbp = #oflow.nd_sbp<[S(0), B]>}
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  func.func @two_d(%x: tensor<8x12xf32> {oflow.name = "x"}, %y: tensor<6x12xf32> {oflow.name = "y"}) attributes {oflow.entry = "train"} {
    return
  }
}

// -----

// An oflow.sbp_hint in the IR pins its result: the relu runs on columns
// (S(1)), and the value is gathered for the return. (Regression: the
// return's B was charged twice in the look-ahead, once as the preferred
// layout and once as a direct user, so the relu ran on B, 4x the work.)
// CHECK-LABEL: func.func @ir_hint(
// CHECK: oflow.sbp_hint %arg0 {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(1)]>], oflow.sbp = [#oflow.nd_sbp<[S(1)]>]
// CHECK: oflow.relu %{{.*}} {oflow.operand_sbp = [#oflow.nd_sbp<[S(1)]>], oflow.sbp = [#oflow.nd_sbp<[S(1)]>]}
// BOX-LABEL: func.func @ir_hint(
// BOX-NEXT: %[[S:.*]] = oflow.all_to_all %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>], source_axis = 0 : i64}
// BOX-NEXT: %[[R:.*]] = oflow.relu %[[S]] {oflow.sbp = [#oflow.nd_sbp<[S(1)]>]}
// BOX-NEXT: %[[B:.*]] = oflow.all_gather %[[R]] {axis = 1 : i64
// BOX-NEXT: return %[[B]]
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @ir_hint(%x: tensor<8x12xf32> {oflow.name = "x"}) -> tensor<8x12xf32> attributes {oflow.entry = "train"} {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %r = oflow.relu %h : tensor<8x12xf32>
    return %r : tensor<8x12xf32>
  }
}
