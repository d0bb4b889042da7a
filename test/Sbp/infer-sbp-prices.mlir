// Two prices oflow-infer-sbp once got wrong, each of which made
// `tensor-parallel=cost` pick tensor parallelism that the per-kernel model
// (what `--emit=simulate` prices the CUDA target with) shows slower.
//
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=device=h100 precision=bf16 shard-state=all' | FileCheck %s
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=device=h100 precision=bf16 shard-state=all' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX

// A tied LM head whose table is stored split by rows (ZeRO-3). The hidden
// states (12 KB to gather) are cheaper to gather than the table (192 KB),
// but the vocabulary-split logits that gives cannot go into the
// cross-entropy, which takes them split by rows only: an all-to-all of
// 768 KB. The planner prices what the op's users can take its result in,
// so the table is gathered and the head runs on the batch's rows.
// CHECK-LABEL: func.func @lm_head
// CHECK: oflow.matmul {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// CHECK: oflow.softmax_cross_entropy {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[S(0)]>]
// BOX-LABEL: func.func @lm_head
// BOX-NOT: oflow.all_to_all
// BOX: oflow.all_gather
// BOX-NOT: oflow.all_to_all
// BOX: return

module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @wte param : tensor<4096x16xf32>
  func.func @lm_head(%h: tensor<256x16xf32> {oflow.name = "h"}, %y: tensor<256xi64> {oflow.name = "y"}) -> tensor<f32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @wte : tensor<4096x16xf32>
    %wt = oflow.transpose %w [1, 0] : (tensor<4096x16xf32>) -> tensor<16x4096xf32>
    %logits = oflow.matmul %h, %wt : (tensor<256x16xf32>, tensor<16x4096xf32>) -> tensor<256x4096xf32>
    %loss = oflow.softmax_cross_entropy sum %logits, %y {ignore_index = -100 : i64} : (tensor<256x4096xf32>, tensor<256xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A late ResNet stage's weight gradient, 16 images per device, the weight
// stored whole (data parallelism). Computing
// it from the whole batch (dy and x gathered, 9.6 MB) sends less than
// all-reducing it (9.4 MB, twice), but does 4x the FLOPs: 14.8 GFLOP at
// the fp32 rate convolutions run at (cuDNN, whatever the GEMMs' precision),
// 160 us more than the reduction's 38 us. The FLOPs were once counted from
// the input's channels and pixels instead of the batch's, alike for every
// batch split, and at the bf16 rate: the batch was gathered.
// CHECK-LABEL: func.func @conv
// CHECK: oflow.conv2d {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// CHECK: oflow.conv2d_backward_filter {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[S(0)]>], oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]
// BOX-LABEL: func.func @conv
// BOX-NOT: oflow.all_gather
// BOX: oflow.conv2d_backward_filter
// BOX-NEXT: oflow.all_reduce

module attributes {oflow.mesh = #oflow.mesh<4, links = [nvlink]>} {
  oflow.variable @w param : tensor<512x512x3x3xf32> {sbp = #oflow.nd_sbp<[B]>}
  func.func @conv(%x: tensor<64x512x7x7xf32> {oflow.name = "x"}, %dy: tensor<64x512x7x7xf32> {oflow.name = "dy"}) -> tensor<64x512x7x7xf32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<512x512x3x3xf32>
    %y = oflow.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<64x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<64x512x7x7xf32>
    %dw = oflow.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 512, 512, 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<64x512x7x7xf32>, tensor<64x512x7x7xf32>) -> tensor<512x512x3x3xf32>
    %nw = oflow.sub %w, %dw : (tensor<512x512x3x3xf32>, tensor<512x512x3x3xf32>) -> tensor<512x512x3x3xf32>
    oflow.write_variable @w, %nw : tensor<512x512x3x3xf32>
    return %y : tensor<64x512x7x7xf32>
  }
}
