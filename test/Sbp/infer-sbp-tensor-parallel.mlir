// oflow-infer-sbp{tensor-parallel}: whether an op may use a parameter
// split. `cost` (the default) lets the cost model pick a slice of a weight
// with gathered activations where that looks cheaper; `none` keeps every
// op but the optimizer update on whole parameters (a split-stored one is
// all-gathered where it is used) and makes each gradient partial along the
// axes that split the data: data parallelism and ZeRO exactly, what the
// hand plans of bench/plans mean.
//
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=all device=h100' | FileCheck %s --check-prefix=COST
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=all tensor-parallel=none device=h100' | FileCheck %s --check-prefix=NONE
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=all tensor-parallel=none device=h100' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=tensor-parallel=auto' 2>&1 | FileCheck %s --check-prefix=BAD

// A tied embedding's LM head (ZeRO-3: the table stored split by rows). On
// its own prices the planner computes the head vocabulary-parallel: the
// few activations gathered, the transposed table used as its split.
// COST-LABEL: func.func @lm_head
// COST: oflow.transpose {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>], oflow.sbp = [#oflow.nd_sbp<[S(1)]>]
// COST: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[B]>, #oflow.nd_sbp<[S(1)]>], oflow.sbp = [#oflow.nd_sbp<[S(1)]>]
// With none the table is gathered and the head runs on the batch's rows;
// the update still runs on the stored rows.
// NONE-LABEL: func.func @lm_head
// NONE: oflow.transpose {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[B]>]
// NONE: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// NONE: oflow.sub {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[S(0)]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// BOX-LABEL: func.func @lm_head
// BOX: oflow.all_gather
// BOX-NOT: oflow.all_gather
// BOX: oflow.matmul

module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @wte param : tensor<1024x8xf32>
  func.func @lm_head(%h: tensor<8x8xf32> {oflow.name = "h"}, %g: tensor<1024x8xf32> {oflow.name = "g"}) -> tensor<f32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @wte : tensor<1024x8xf32>
    %wt = oflow.transpose %w [1, 0] : (tensor<1024x8xf32>) -> tensor<8x1024xf32>
    %logits = oflow.matmul %h, %wt : (tensor<8x8xf32>, tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %e = oflow.exp %logits : tensor<8x1024xf32>
    %s = oflow.reduce_sum %e {axes = array<i64: 0, 1>, keepdims = false} : (tensor<8x1024xf32>) -> tensor<f32>
    %nw = oflow.sub %w, %g : (tensor<1024x8xf32>, tensor<1024x8xf32>) -> tensor<1024x8xf32>
    oflow.write_variable @wte, %nw : tensor<1024x8xf32>
    return %s : tensor<f32>
  }
}

// -----

// A weight gradient from a small batch on a two-axis mesh (H100s, IB
// across, NVLink within). With cost the planner gathers the batch and
// computes the gradient whole on every device, skipping its all-reduce;
// with none the gradient is partial on both axes, as data parallelism
// makes it, and the boxing all-reduces it.
// COST-LABEL: func.func @weight_grad
// COST: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[B, B]>, #oflow.nd_sbp<[B, B]>], oflow.sbp = [#oflow.nd_sbp<[B, B]>]
// NONE-LABEL: func.func @weight_grad
// NONE: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0), S(0)]>, #oflow.nd_sbp<[S(0), S(0)]>], oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]

module attributes {oflow.mesh = #oflow.mesh<4x2, links = [ib, nvlink]>} {
  oflow.variable @w param : tensor<1024x1024xf32> {sbp = #oflow.nd_sbp<[B, B]>}
  func.func @weight_grad(%x: tensor<32x1024xf32> {oflow.name = "x"}, %dy: tensor<32x1024xf32> {oflow.name = "dy"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<1024x1024xf32>
    %dw = oflow.matmul %x, %dy {transpose_a} : (tensor<32x1024xf32>, tensor<32x1024xf32>) -> tensor<1024x1024xf32>
    %nw = oflow.sub %w, %dw : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    oflow.write_variable @w, %nw : tensor<1024x1024xf32>
    return
  }
}

// BAD: error: oflow-infer-sbp: unknown tensor-parallel 'auto' (cost or none)
