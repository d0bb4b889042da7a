// oflow-flatten-state: a variable --shard-state would split into more pieces
// stored flat than in its own shape is stored as [devices, n/devices]
// (FSDP's flat parameters): a 6x6 weight on 4 devices, whose 6
// rows and columns 4 does not divide, becomes 4x9 with oflow.view = [6, 6].
// Reads are reshaped back for the forward pass; the update runs flat, so
// that every piece of it runs on one device; the grads entry returns the
// gradient flat. An 8-element bias splits as it is and stays. A hinted
// variable keeps its shape (and the slots of a hinted parameter follow it),
// unless `flat` names it (a plan file's `stored_flat`); an update that is
// not elementwise (the transpose below) keeps the group.
//
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=none' | FileCheck %s --check-prefix=NONE
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=optimizer' | FileCheck %s --check-prefix=OPT
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=all' | FileCheck %s --check-prefix=ALL
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=all sbp=w=S(0)' | FileCheck %s --check-prefix=HINT
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=none sbp=w=S(0),w.m=S(0) flat=w,w.m' | FileCheck %s --check-prefix=FLAT
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=all' '-oflow-infer-sbp=shard-state=all' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX
// RUN: oflow-opt %s -split-input-file '-oflow-flatten-state=shard-state=all' '-oflow-infer-sbp=shard-state=all' -oflow-insert-boxing -oflow-verify-sbp -oflow-partition | FileCheck %s --check-prefix=LOCAL

// NONE: oflow.variable @w param : tensor<6x6xf32> = dense<1.000000e+00> : tensor<6x6xf32>
// NONE: oflow.variable @w.m optimizer : tensor<6x6xf32> {of = @w}

// ZeRO-2: the slot flat, the parameter whole; the update runs on the flat
// view and its new parameter is reshaped back for the write.
// OPT: oflow.variable @w param : tensor<6x6xf32>
// OPT: oflow.variable @w.m optimizer : tensor<4x9xf32> {of = @w, oflow.view = array<i64: 6, 6>}
// OPT: oflow.variable @b.m optimizer : tensor<8xf32> {of = @b}
// OPT-LABEL: func.func @train
// OPT: %[[W:.*]] = oflow.read_variable @w : tensor<6x6xf32>
// OPT: %[[M:.*]] = oflow.read_variable @w.m : tensor<4x9xf32>
// OPT: %[[MD:.*]] = oflow.mul %[[M]], %{{.*}} : (tensor<4x9xf32>, tensor<f32>) -> tensor<4x9xf32>
// OPT: %[[G:.*]] = oflow.reshape %arg1 [4, 9] : (tensor<6x6xf32>) -> tensor<4x9xf32>
// OPT: %[[NM:.*]] = oflow.add %[[MD]], %[[G]] : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
// OPT: %[[WF:.*]] = oflow.reshape %[[W]] [4, 9]
// OPT: %[[NW:.*]] = oflow.sub %[[WF]], %[[NM]] : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
// OPT: oflow.write_variable @w.m, %[[NM]] : tensor<4x9xf32>
// OPT: %[[BACK:.*]] = oflow.reshape %[[NW]] [6, 6]
// OPT: oflow.write_variable @w, %[[BACK]] : tensor<6x6xf32>
// OPT-LABEL: func.func @grads
// OPT-SAME: -> (tensor<6x6xf32> {oflow.grad_of = "w"})

// ZeRO-3: the parameter too, its initial value viewed flat; the forward
// pass reads it in its own shape.
// ALL: oflow.variable @w param : tensor<4x9xf32> = dense<1.000000e+00> : tensor<4x9xf32> {oflow.view = array<i64: 6, 6>}
// ALL: oflow.variable @w.m optimizer : tensor<4x9xf32> {of = @w, oflow.view = array<i64: 6, 6>}
// ALL: oflow.variable @b param : tensor<8xf32>
// ALL: oflow.variable @c param : tensor<6x6xf32>
// ALL: oflow.variable @c.m optimizer : tensor<6x6xf32> {of = @c}
// ALL-LABEL: func.func @train
// ALL: %[[W:.*]] = oflow.read_variable @w : tensor<4x9xf32>
// ALL: %[[OWN:.*]] = oflow.reshape %[[W]] [6, 6] : (tensor<4x9xf32>) -> tensor<6x6xf32>
// ALL: oflow.matmul %arg0, %[[OWN]]
// ALL: %[[NW:.*]] = oflow.sub %[[W]], %{{.*}} : (tensor<4x9xf32>, tensor<4x9xf32>) -> tensor<4x9xf32>
// ALL: oflow.write_variable @w, %[[NW]] : tensor<4x9xf32>
// ALL-LABEL: func.func @grads
// ALL-SAME: -> (tensor<4x9xf32> {oflow.grad_of = "w", oflow.view = array<i64: 6, 6>})
// ALL: %[[FLATGRAD:.*]] = oflow.reshape %{{.*}} [4, 9] : (tensor<6x6xf32>) -> tensor<4x9xf32>
// ALL: return %[[FLATGRAD]] : tensor<4x9xf32>

// HINT: oflow.variable @w param : tensor<6x6xf32> = dense<1.000000e+00> : tensor<6x6xf32>
// HINT: oflow.variable @w.m optimizer : tensor<6x6xf32> {of = @w}
// HINT: oflow.variable @c param : tensor<6x6xf32>

// FLAT: oflow.variable @w param : tensor<4x9xf32> = dense<1.000000e+00> : tensor<4x9xf32> {oflow.view = array<i64: 6, 6>}
// FLAT: oflow.variable @w.m optimizer : tensor<4x9xf32> {of = @w, oflow.view = array<i64: 6, 6>}

// Every device holds a quarter of the flat state; the update needs no
// collective but the gradient's slice; the forward pass all-gathers.
// BOX: oflow.variable @w param : tensor<4x9xf32> {{.*}}sbp = #oflow.nd_sbp<[S(0)]>}
// BOX: oflow.variable @w.m optimizer : tensor<4x9xf32> {{.*}}sbp = #oflow.nd_sbp<[S(0)]>}
// BOX-LABEL: func.func @train
// BOX: %[[W:.*]] = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : tensor<4x9xf32>
// BOX: %[[GATHERED:.*]] = oflow.all_gather %[[W]]
// BOX: oflow.reshape %[[GATHERED]] [6, 6]
// BOX: %[[NW:.*]] = oflow.sub %[[W]], %{{.*}} {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// BOX: oflow.write_variable @w, %[[NW]]

// LOCAL: oflow.variable @w param : tensor<1x9xf32> {{.*}}oflow.view = array<i64: 6, 6>

module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w param : tensor<6x6xf32> = dense<1.0> : tensor<6x6xf32>
  oflow.variable @w.m optimizer : tensor<6x6xf32> {of = @w}
  oflow.variable @b param : tensor<8xf32>
  oflow.variable @b.m optimizer : tensor<8xf32> {of = @b}
  oflow.variable @c param : tensor<6x6xf32>
  oflow.variable @c.m optimizer : tensor<6x6xf32> {of = @c}
  func.func @train(%x: tensor<4x6xf32> {oflow.name = "x"}, %g: tensor<6x6xf32> {oflow.name = "g"}) -> (tensor<4x6xf32> {oflow.name = "y"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<6x6xf32>
    %y = oflow.matmul %x, %w : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
    %m = oflow.read_variable @w.m : tensor<6x6xf32>
    %c9 = oflow.constant dense<0.9> : tensor<f32>
    %md = oflow.mul %m, %c9 : (tensor<6x6xf32>, tensor<f32>) -> tensor<6x6xf32>
    %nm = oflow.add %md, %g : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    %nw = oflow.sub %w, %nm : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    oflow.write_variable @w.m, %nm : tensor<6x6xf32>
    oflow.write_variable @w, %nw : tensor<6x6xf32>
    %c = oflow.read_variable @c : tensor<6x6xf32>
    %cm = oflow.read_variable @c.m : tensor<6x6xf32>
    %cmt = oflow.transpose %cm [1, 0] : (tensor<6x6xf32>) -> tensor<6x6xf32>
    %ncm = oflow.add %cmt, %g : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    %nc = oflow.sub %c, %ncm : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    oflow.write_variable @c.m, %ncm : tensor<6x6xf32>
    oflow.write_variable @c, %nc : tensor<6x6xf32>
    return %y : tensor<4x6xf32>
  }
  func.func @grads(%x: tensor<4x6xf32> {oflow.name = "x"}, %g: tensor<6x6xf32> {oflow.name = "g"}) -> (tensor<6x6xf32> {oflow.grad_of = "w"}) attributes {oflow.entry = "grads"} {
    %w = oflow.read_variable @w : tensor<6x6xf32>
    %s = oflow.mul %g, %w : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    return %s : tensor<6x6xf32>
  }
}

// -----

// 16385 elements on 4 devices: rows of 4097, the last 3 elements zeros. The gradient is padded into the update
// (slice_backward), the forward pass reads the weight's first 16385.
// ALL-LABEL: oflow.variable @p param : tensor<4x4097xf32> {oflow.view = array<i64: 16385>}
// ALL: oflow.variable @p.m optimizer : tensor<4x4097xf32> {of = @p, oflow.view = array<i64: 16385>}
// A 42-element bias too: rows of 11, 2 zeros (oflow-bucket-collectives
// gathers and scatters such small pieces together).
// ALL: oflow.variable @q param : tensor<4x11xf32> {oflow.view = array<i64: 42>}
// ALL-LABEL: func.func @train
// ALL: %[[P:.*]] = oflow.read_variable @p : tensor<4x4097xf32>
// ALL: %[[ROW:.*]] = oflow.reshape %[[P]] [16388]
// ALL: %[[HEAD:.*]] = oflow.slice %[[ROW]] {offsets = array<i64: 0>, sizes = array<i64: 16385>, strides = array<i64: 1>}
// ALL: oflow.mul %arg0, %[[HEAD]]
// ALL: %[[PAD:.*]] = oflow.slice_backward %arg1 {input_shape = array<i64: 16388>, offsets = array<i64: 0>, sizes = array<i64: 16385>, strides = array<i64: 1>}
// ALL: %[[G:.*]] = oflow.reshape %[[PAD]] [4, 4097]
// ALL: oflow.write_variable @p, %{{.*}} : tensor<4x4097xf32>
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @p param : tensor<16385xf32>
  oflow.variable @p.m optimizer : tensor<16385xf32> {of = @p}
  oflow.variable @q param : tensor<42xf32>
  oflow.variable @q.m optimizer : tensor<42xf32> {of = @q}
  func.func @train(%x: tensor<16385xf32> {oflow.name = "x"}, %g: tensor<16385xf32> {oflow.name = "g"}) -> (tensor<16385xf32> {oflow.name = "y"}) attributes {oflow.entry = "train"} {
    %p = oflow.read_variable @p : tensor<16385xf32>
    %y = oflow.mul %x, %p : (tensor<16385xf32>, tensor<16385xf32>) -> tensor<16385xf32>
    %m = oflow.read_variable @p.m : tensor<16385xf32>
    %nm = oflow.add %m, %g : (tensor<16385xf32>, tensor<16385xf32>) -> tensor<16385xf32>
    %np = oflow.sub %p, %nm : (tensor<16385xf32>, tensor<16385xf32>) -> tensor<16385xf32>
    oflow.write_variable @p.m, %nm : tensor<16385xf32>
    oflow.write_variable @p, %np : tensor<16385xf32>
    return %y : tensor<16385xf32>
  }
}
