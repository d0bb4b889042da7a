// oflow-infer-sbp{sbp=...}: a hint on a weight is honoured, and its
// optimizer slot follows it (ZeRO-like: the gradient is reduce-scattered
// into the weight's rows, the weight all-gathered for the forward). On a
// 2-D mesh the layout's entries are joined by ';'.
//
// RUN: oflow-opt %s '-oflow-infer-sbp=sbp=w=S(0)' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=HINT
// RUN: sed 's/mesh<4>/mesh<2x2>/' %s | oflow-opt '-oflow-infer-sbp=sbp=w=B;S(1)' | FileCheck %s --check-prefix=TWOD

// TWOD: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[B, S(1)]>}
// TWOD: oflow.variable @w.momentum_buffer optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[B, S(1)]>}

// HINT: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[S(0)]>}
// HINT: oflow.variable @w.momentum_buffer optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[S(0)]>}
// HINT-LABEL: func.func @train(
// HINT: %[[W:.*]] = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// HINT-NEXT: %[[WB:.*]] = oflow.all_gather %[[W]] {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]}
// HINT-NEXT: oflow.matmul %arg0, %[[WB]]
// HINT: %[[G:.*]] = oflow.matmul {{.*}}transpose_a
// HINT: %[[RS:.*]] = oflow.reduce_scatter %[[G]] {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// HINT-NEXT: %[[NB:.*]] = oflow.add %{{.*}}, %[[RS]] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// HINT-NEXT: %[[NW:.*]] = oflow.sub %[[W]], %[[NB]] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// HINT-NEXT: oflow.write_variable @w.momentum_buffer, %[[NB]]
// HINT-NEXT: oflow.write_variable @w, %[[NW]]
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


