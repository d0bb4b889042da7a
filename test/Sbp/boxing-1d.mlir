// oflow-insert-boxing on a mesh of 4: every 1-D conversion between S(0), S(1),
// B and P(sum) of a tensor<8x12xf32> (plus P(max) -> B / S(1)) is one boxing
// op of the right kind, mesh axis and tensor axis. The argument carries the
// source layout; an `oflow.sbp_hint` whose result is unused asks for the
// target one (insert-boxing converts its operand, then drops the hint).
// The hints are written in generic form: the custom form
// `%x #oflow.nd_sbp<..>` of the committed op does not parse (`%x#...` reads
// as a result number).
//
// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s

module attributes {oflow.mesh = #oflow.mesh<4>} {

// S(0) -> S(0): same layout: no boxing.
// CHECK-LABEL: func.func @s0_to_s0(
// CHECK-NEXT: return
  func.func @s0_to_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(0) -> S(1): all-to-all from axis 0 to axis 1.
// CHECK-LABEL: func.func @s0_to_s1(
// CHECK-NEXT: %0 = oflow.all_to_all %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>], source_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s0_to_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(0) -> B: all-gather along axis 0.
// CHECK-LABEL: func.func @s0_to_b(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s0_to_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(0) -> P(sum): zero-pad the piece (no communication).
// CHECK-LABEL: func.func @s0_to_p(
// CHECK-NEXT: %0 = oflow.split_to_partial %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s0_to_p(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[P(sum)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(1) -> S(0): all-to-all from axis 1 to axis 0.
// CHECK-LABEL: func.func @s1_to_s0(
// CHECK-NEXT: %0 = oflow.all_to_all %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>], source_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s1_to_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(1) -> S(1): same layout: no boxing.
// CHECK-LABEL: func.func @s1_to_s1(
// CHECK-NEXT: return
  func.func @s1_to_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(1) -> B: all-gather along axis 1.
// CHECK-LABEL: func.func @s1_to_b(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s1_to_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// S(1) -> P(sum): zero-pad the piece along axis 1.
// CHECK-LABEL: func.func @s1_to_p(
// CHECK-NEXT: %0 = oflow.split_to_partial %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @s1_to_p(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[P(sum)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// B -> S(0): each rank keeps its rows (no communication).
// CHECK-LABEL: func.func @b_to_s0(
// CHECK-NEXT: %0 = oflow.local_slice %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @b_to_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// B -> S(1): each rank keeps its columns.
// CHECK-LABEL: func.func @b_to_s1(
// CHECK-NEXT: %0 = oflow.local_slice %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @b_to_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// B -> B: same layout: no boxing.
// CHECK-LABEL: func.func @b_to_b(
// CHECK-NEXT: return
  func.func @b_to_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// B -> P(sum): coordinate 0 keeps the value, the others zeros.
// CHECK-LABEL: func.func @b_to_p(
// CHECK-NEXT: %0 = oflow.broadcast_to_partial %arg0 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @b_to_p(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[P(sum)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(sum) -> S(0): reduce-scatter along axis 0.
// CHECK-LABEL: func.func @p_to_s0(
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @p_to_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(sum) -> S(1): reduce-scatter along axis 1.
// CHECK-LABEL: func.func @p_to_s1(
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @p_to_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(sum) -> B: all-reduce (sum).
// CHECK-LABEL: func.func @p_to_b(
// CHECK-NEXT: %0 = oflow.all_reduce %arg0 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @p_to_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(sum) -> P(sum): same layout: no boxing.
// CHECK-LABEL: func.func @p_to_p(
// CHECK-NEXT: return
  func.func @p_to_p(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[P(sum)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(max) -> S(1): reduce-scatter with max.
// CHECK-LABEL: func.func @pmax_to_s1(
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 1 : i64, max, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @pmax_to_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(max)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(max) -> B: all-reduce with max.
// CHECK-LABEL: func.func @pmax_to_b(
// CHECK-NEXT: %0 = oflow.all_reduce %arg0 {max, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @pmax_to_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(max)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// P(sum) -> P(max) has no one-step form: all-reduce, then every rank keeps
// the whole value as its P(max) piece.
// CHECK-LABEL: func.func @psum_to_pmax(
// CHECK-NEXT: %0 = oflow.all_reduce %arg0 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]}
// CHECK-NEXT: %1 = oflow.broadcast_to_partial %0 {max, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(max)]>]}
// CHECK-NEXT: return
  func.func @psum_to_pmax(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[P(max)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// Two consumers wanting the same layout share one conversion.
// CHECK-LABEL: func.func @reuse(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 0 : i64
// CHECK-NEXT: return %0, %0
  func.func @reuse(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) -> (tensor<8x12xf32>, tensor<8x12xf32>) {
    %a = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %b = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %a, %b : tensor<8x12xf32>, tensor<8x12xf32>
  }

// A hinted value used further on is converted from the hint's layout: the
// return wants B, so P -> S(1) (the hint) is followed by S(1) -> B.
// CHECK-LABEL: func.func @hint_then_return(
// CHECK-SAME: -> (tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B]>})
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1)]>]}
// CHECK-NEXT: %1 = oflow.all_gather %0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]}
// CHECK-NEXT: return %1
  func.func @hint_then_return(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) -> tensor<8x12xf32> {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %h : tensor<8x12xf32>
  }
}
