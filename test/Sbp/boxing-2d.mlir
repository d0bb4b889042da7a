// oflow-insert-boxing on a 2x2 mesh: the chains of one-mesh-axis boxing ops
// for 2-D conversions of a tensor<8x12xf32>, each checked step by step (kind,
// mesh axis, tensor axis, layout after the step). oflow-verify-sbp checks that
// every step converts exactly its mesh axis. See boxing-1d.mlir for the form
// of the cases (an unused sbp_hint asks for the target layout).
//
// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s

module attributes {oflow.mesh = #oflow.mesh<2x2>} {

// [S(0), S(0)] -> [B, S(0)]: rows split twice; mesh axis 0 cannot gather first (its group would hold strided rows): gather on axis 1, then 0, then slice.
// CHECK-LABEL: func.func @from_s0_s0_to_b_s0(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_gather %0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %2 = oflow.local_slice %1 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s0_s0_to_b_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B, S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [P(sum), P(sum)] -> [B, B]: all-reduce on each mesh axis.
// CHECK-LABEL: func.func @from_p_p_to_b_b(
// CHECK-NEXT: %0 = oflow.all_reduce %arg0 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_reduce %0 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_p_p_to_b_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum), P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B, B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [S(0), B] -> [B, S(0)]: gather rows on mesh axis 0, then each rank keeps its rows on axis 1.
// CHECK-LABEL: func.func @from_s0_b_to_b_s0(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.local_slice %0 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s0_b_to_b_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B, S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [P(sum), S(1)] -> [S(0), S(1)]: one reduce-scatter on mesh axis 0; the column split on axis 1 passes through.
// CHECK-LABEL: func.func @from_p_s1_to_s0_s1(
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_p_s1_to_s0_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum), S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [B, B] -> [S(0), S(1)]: two local slices, no communication.
// CHECK-LABEL: func.func @from_b_b_to_s0_s1(
// CHECK-NEXT: %0 = oflow.local_slice %arg0 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.local_slice %0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_b_b_to_s0_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B, B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [S(1), S(0)] -> [S(0), S(1)]: swap: zero-pad on mesh axis 1, all-to-all on 0 (linear, so P passes through), reduce-scatter on 1.
// CHECK-LABEL: func.func @from_s1_s0_to_s0_s1(
// CHECK-NEXT: %0 = oflow.split_to_partial %arg0 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1), P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_to_all %0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>], source_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %2 = oflow.reduce_scatter %1 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s1_s0_to_s0_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(1), S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [S(0), S(1)] -> [S(1), S(0)]: the mirror of the swap above.
// CHECK-LABEL: func.func @from_s0_s1_to_s1_s0(
// CHECK-NEXT: %0 = oflow.split_to_partial %arg0 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_to_all %0 {axis = 1 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1), P(sum)]>], source_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %2 = oflow.reduce_scatter %1 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(1), S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s0_s1_to_s1_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(1), S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [B, P(sum)] -> [S(0), B]: slice first so that the all-reduce moves a quarter.
// CHECK-LABEL: func.func @from_b_p_to_s0_b(
// CHECK-NEXT: %0 = oflow.local_slice %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_reduce %0 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_b_p_to_s0_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B, P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [S(0), S(1)] -> [B, B]: gather each mesh axis.
// CHECK-LABEL: func.func @from_s0_s1_to_b_b(
// CHECK-NEXT: %0 = oflow.all_gather %arg0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_gather %0 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s0_s1_to_b_b(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B, B]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [P(sum), B] -> [B, S(1)]: slice first, then all-reduce half the columns.
// CHECK-LABEL: func.func @from_p_b_to_b_s1(
// CHECK-NEXT: %0 = oflow.local_slice %arg0 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.all_reduce %0 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_p_b_to_b_s1(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum), B]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[B, S(1)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [B, S(0)] -> [S(0), S(0)]: rows [c1*4, +4) to rows [(2*c0+c1)*2, +2): zero-pad, slice, reduce-scatter (half the bytes of gathering).
// CHECK-LABEL: func.func @from_b_s0_to_s0_s0(
// CHECK-NEXT: %0 = oflow.split_to_partial %arg0 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B, P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %1 = oflow.local_slice %0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %2 = oflow.reduce_scatter %1 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_b_s0_to_s0_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(0)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

// [S(0), P(sum)] -> [S(0), S(0)]: reduce-scatter the rows on mesh axis 1 inside mesh axis 0's block.
// CHECK-LABEL: func.func @from_s0_p_to_s0_s0(
// CHECK-NEXT: %0 = oflow.reduce_scatter %arg0 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return
  func.func @from_s0_p_to_s0_s0(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), P(sum)]>}) {
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0), S(0)]>}> : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }

}
