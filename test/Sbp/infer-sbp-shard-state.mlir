// oflow-infer-sbp{shard-state}: variables without a hint split over the mesh
// so that memory per device falls (what --memory-limit's search tries).
// Each mesh axis splits the first tensor axis no other one splits that it
// divides, else the first it still divides; B where none does. `optimizer`: the slots (ZeRO-2: the gradient reduce-scattered into
// the update, the new parameter all-gathered); `all`: parameters too, the
// slots following them (ZeRO-3); `node`: parameters and slots over the
// last mesh axis only, whole across the others (HSDP). A hint still wins.
//
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=none' | FileCheck %s --check-prefix=NONE
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=optimizer' | FileCheck %s --check-prefix=OPT
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=all' | FileCheck %s --check-prefix=ALL
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=node' | FileCheck %s --check-prefix=NODE
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=node' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=NODEBOX
// RUN: oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=optimizer' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=shard-state=some' 2>&1 | FileCheck %s --check-prefix=BAD

// NONE: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[B, B]>}
// NONE: oflow.variable @w.m optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[B, B]>}
// NONE: oflow.variable @b param : tensor<3xf32> {sbp = #oflow.nd_sbp<[B, B]>}
// NONE: oflow.variable @b.m optimizer : tensor<3xf32> {of = @b, sbp = #oflow.nd_sbp<[B, B]>}

// 12 rows split 2 ways, then 16 columns 2 ways: distinct tensor axes, so
// a gradient reduce-scattered on the last (fast) mesh axis first needs no
// all-to-all to reorder its pieces.
// OPT: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[B, B]>}
// OPT: oflow.variable @w.m optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[S(0), S(1)]>}
// 3 divides by neither axis: whole.
// OPT: oflow.variable @b.m optimizer : tensor<3xf32> {of = @b, sbp = #oflow.nd_sbp<[B, B]>}
// The hinted slot keeps its hint.
// OPT: oflow.variable @v.m optimizer : tensor<6x16xf32> {of = @v, sbp = #oflow.nd_sbp<[B, S(1)]>}

// ALL: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[S(0), S(1)]>}
// ALL: oflow.variable @w.m optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[S(0), S(1)]>}
// ALL: oflow.variable @v param : tensor<6x16xf32> {sbp = #oflow.nd_sbp<[S(0), S(1)]>}
// A vector: both mesh axes on its one dim (8 % 4 == 0).
// ALL: oflow.variable @u param : tensor<8xf32> {sbp = #oflow.nd_sbp<[S(0), S(0)]>}

// NODE: oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[B, S(0)]>}
// NODE: oflow.variable @w.m optimizer : tensor<12x16xf32> {of = @w, sbp = #oflow.nd_sbp<[B, S(0)]>}
// NODE: oflow.variable @b param : tensor<3xf32> {sbp = #oflow.nd_sbp<[B, B]>}
// NODE: oflow.variable @v param : tensor<6x16xf32> {sbp = #oflow.nd_sbp<[B, S(0)]>}
// Its update boxes and verifies like any other layout.
// NODEBOX-LABEL: func.func @train
// NODEBOX: oflow.write_variable @w

// The slot's update runs on pieces: the whole parameter is sliced locally,
// the update's result all-gathered into the whole parameter.
// BOX: oflow.local_slice
// BOX: oflow.all_gather

// BAD: error: oflow-infer-sbp: unknown shard-state 'some' (none, optimizer, all or node)

module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  oflow.variable @w param : tensor<12x16xf32>
  oflow.variable @w.m optimizer : tensor<12x16xf32> {of = @w}
  oflow.variable @b param : tensor<3xf32>
  oflow.variable @b.m optimizer : tensor<3xf32> {of = @b}
  oflow.variable @v param : tensor<6x16xf32>
  oflow.variable @v.m optimizer : tensor<6x16xf32> {of = @v, sbp = #oflow.nd_sbp<[B, S(1)]>}
  oflow.variable @u param : tensor<8xf32>
  func.func @train(%g: tensor<12x16xf32> {oflow.name = "g"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<12x16xf32>
    %m = oflow.read_variable @w.m : tensor<12x16xf32>
    %nm = oflow.add %m, %g : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    %nw = oflow.sub %w, %nm : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
    oflow.write_variable @w.m, %nm : tensor<12x16xf32>
    oflow.write_variable @w, %nw : tensor<12x16xf32>
    return
  }
}
