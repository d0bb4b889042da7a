// oflow-unroll-micro-batches: the last mesh axis, linked `sequential`, is
// --micro-batches' axis. Values split on it become one lane per
// micro-batch, values partial on it are summed as the lanes make them
// (through barriers that fusion does not cross), values whole on it are
// computed once. Its boxing becomes local ops, the other axes' collectives
// run once on the sums, and the ops run lane by lane. The axis leaves the
// mesh (and the links, when the rest are all `local`, the default) and
// every nd-SBP.
//
// RUN: oflow-opt %s -split-input-file -oflow-unroll-micro-batches | FileCheck %s

// CHECK: module attributes {oflow.mesh = #oflow.mesh<2>, oflow.partitioned}
// CHECK: oflow.variable @w param : tensor<4x3xf32> {sbp = #oflow.nd_sbp<[B]>}
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>}
// CHECK-SAME: -> (tensor<f32> {oflow.sbp = #oflow.nd_sbp<[B]>})
// Lane 0: its rows, forward, the gradient and the loss that start the sums.
// CHECK: %[[X0:.*]] = oflow.slice %[[X]] {offsets = array<i64: 0, 0>, oflow.sbp = [#oflow.nd_sbp<[S(0)]>], sizes = array<i64: 2, 4>
// CHECK: %[[W:.*]] = oflow.read_variable @w
// CHECK: %[[Y0:.*]] = oflow.matmul %[[X0]], %[[W]]
// CHECK: %[[G0:.*]] = oflow.matmul %[[X0]], %[[Y0]] {oflow.sbp = [#oflow.nd_sbp<[P(sum)]>], transpose_a}
// CHECK: %[[L0:.*]] = oflow.reduce_sum %[[Y0]]
// Lane 1, each partial value added to its sum right after it is made.
// CHECK: %[[X1:.*]] = oflow.slice %[[X]] {offsets = array<i64: 2, 0>
// CHECK: %[[Y1:.*]] = oflow.matmul %[[X1]], %[[W]]
// CHECK: %[[G1:.*]] = oflow.matmul %[[X1]], %[[Y1]]
// CHECK: %[[GB:.*]] = bufferization.alloc_tensor() copy(%[[G0]]) {oflow_accumulate_barrier}
// CHECK: %[[G:.*]] = oflow.add %[[GB]], %[[G1]] {oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]}
// CHECK: %[[L1:.*]] = oflow.reduce_sum %[[Y1]]
// CHECK: %[[LB:.*]] = bufferization.alloc_tensor() copy(%[[L0]]) {oflow_accumulate_barrier}
// CHECK: %[[L:.*]] = oflow.add %[[LB]], %[[L1]]
// The micro axis's all-reduce is the sum itself; the data axis's runs once.
// CHECK: %[[R:.*]]:2 = oflow.all_reduce %[[G]], %[[L]] {mesh_axis = 0 : i64
// CHECK-NOT: mesh_axis = 1
// CHECK: oflow.sub %[[W]],
// CHECK: oflow.write_variable @w
// CHECK: return %[[R]]#1 : tensor<f32>
module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>, oflow.partitioned} {
  oflow.variable @w param : tensor<4x3xf32> {sbp = #oflow.nd_sbp<[B, B]>}
  func.func @step(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>})
      -> (tensor<f32> {oflow.sbp = #oflow.nd_sbp<[B, B]>}) {
    %w = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<4x3xf32>
    %y = oflow.matmul %x, %w {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %g = oflow.matmul %x, %y {transpose_a, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %l = oflow.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<2x3xf32>) -> tensor<f32>
    %gm, %lm = oflow.all_reduce %g, %l {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>, #oflow.nd_sbp<[P(sum), B]>]} : (tensor<4x3xf32>, tensor<f32>) -> (tensor<4x3xf32>, tensor<f32>)
    %gb, %lb = oflow.all_reduce %gm, %lm {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>, #oflow.nd_sbp<[B, B]>]} : (tensor<4x3xf32>, tensor<f32>) -> (tensor<4x3xf32>, tensor<f32>)
    %new = oflow.sub %w, %gb {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    oflow.write_variable @w, %new : tensor<4x3xf32>
    return %lb : tensor<f32>
  }
}

// -----

// On a mesh of the micro axis alone the program is one device's. An
// all-gather on the micro axis joins the lanes, a local slice cuts a whole
// value into lanes, and a result split on the axis is joined for return.
// Positions along a split axis (shard_offset) count the lanes.
// CHECK: module attributes {oflow.mesh = #oflow.mesh<1>, oflow.partitioned}
// CHECK-LABEL: func.func @views(
// CHECK-SAME: %[[X:[^:]*]]: tensor<6x2xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[B]>}
// CHECK-SAME: %[[Z:[^:]*]]: tensor<6x2xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}
// CHECK-SAME: -> (tensor<6x2xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}, tensor<6x2xf32> {oflow.sbp = #oflow.nd_sbp<[B]>})
// CHECK-DAG: %[[X0:.*]] = oflow.slice %[[X]] {offsets = array<i64: 0, 0>, {{.*}}sizes = array<i64: 2, 2>
// CHECK-DAG: %[[X1:.*]] = oflow.slice %[[X]] {offsets = array<i64: 2, 0>,
// CHECK-DAG: %[[X2:.*]] = oflow.slice %[[X]] {offsets = array<i64: 4, 0>,
// CHECK-DAG: %[[E0:.*]] = oflow.exp %[[X0]]
// CHECK-DAG: %[[E1:.*]] = oflow.exp %[[X1]]
// CHECK-DAG: %[[E2:.*]] = oflow.exp %[[X2]]
// CHECK-DAG: %[[Z0:.*]] = oflow.slice %[[Z]] {offsets = array<i64: 0, 0>
// CHECK-DAG: %[[Z2:.*]] = oflow.slice %[[Z]] {offsets = array<i64: 4, 0>
// CHECK-DAG: %[[O0:.*]] = oflow.constant dense<0> : tensor<i64>
// CHECK-DAG: %[[O1:.*]] = oflow.constant dense<2> : tensor<i64>
// CHECK-DAG: %[[O2:.*]] = oflow.constant dense<4> : tensor<i64>
// CHECK-DAG: oflow.add %[[Z0]], %[[E0]]
// CHECK-DAG: oflow.add %[[Z2]], %[[E2]]
// CHECK-DAG: oflow.cast %[[O0]] to f32
// CHECK-DAG: oflow.cast %[[O2]] to f32
// CHECK: %[[ALL:.*]] = oflow.concat %[[E0]], %[[E1]], %[[E2]] {axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]}
// CHECK: %[[OUT:.*]] = oflow.concat {{.*}} {axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<6x2xf32>
// CHECK: return %[[ALL]], %[[OUT]] : tensor<6x2xf32>, tensor<6x2xf32>
module attributes {oflow.mesh = #oflow.mesh<3, links = [sequential]>, oflow.partitioned} {
  func.func @views(%x: tensor<2x2xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>},
                   %z: tensor<6x2xf32> {oflow.sbp = #oflow.nd_sbp<[B]>})
      -> (tensor<6x2xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}, tensor<2x2xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %e = oflow.exp %x {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : tensor<2x2xf32>
    %all = oflow.all_gather %e {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<2x2xf32>) -> tensor<6x2xf32>
    %part = oflow.local_slice %z {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<6x2xf32>) -> tensor<2x2xf32>
    %sum = oflow.add %part, %e {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %off = oflow.shard_offset {mesh_axes = array<i64: 0>, piece = 2 : i64} : tensor<i64>
    %at = oflow.cast %off to f32 : tensor<i64>
    %shifted = oflow.mul %sum, %at {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
    return %all, %shifted : tensor<6x2xf32>, tensor<2x2xf32>
  }
}

// -----

// A reduce-scatter on the micro axis: each lane gets its part of the sum.
// CHECK-LABEL: func.func @scatter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x4xf32>
// CHECK: %[[G0:.*]] = oflow.matmul
// CHECK: %[[G1:.*]] = oflow.matmul
// CHECK: %[[B:.*]] = bufferization.alloc_tensor() copy(%[[G0]]) {oflow_accumulate_barrier}
// CHECK: %[[G:.*]] = oflow.add %[[B]], %[[G1]]
// CHECK-DAG: %[[S0:.*]] = oflow.slice %[[G]] {offsets = array<i64: 0, 0>, {{.*}}sizes = array<i64: 2, 4>
// CHECK-DAG: %[[S1:.*]] = oflow.slice %[[G]] {offsets = array<i64: 2, 0>, {{.*}}sizes = array<i64: 2, 4>
// CHECK: %[[R:.*]] = oflow.concat %[[S0]], %[[S1]] {axis = 0 : i64
// CHECK: return %[[R]] : tensor<4x4xf32>
module attributes {oflow.mesh = #oflow.mesh<2, links = [sequential]>, oflow.partitioned} {
  func.func @scatter(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>})
      -> (tensor<2x4xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    %g = oflow.matmul %x, %x {transpose_a, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %s = oflow.reduce_scatter %g {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<4x4xf32>) -> tensor<2x4xf32>
    return %s : tensor<2x4xf32>
  }
}

// -----

// ZeRO-3 under gradient accumulation (the module asks for sharded
// accumulators): each lane gathers its own copy of the split weight, and
// its partial gradient is reduce-scattered as soon as it is made; the
// shards are summed, so no accumulator of the whole gradient lives. The
// request leaves with the micro axis.
// CHECK: module attributes {oflow.mesh = #oflow.mesh<2>, oflow.partitioned} {
// CHECK-LABEL: func.func @zero3
// CHECK: %[[WS:.*]] = oflow.read_variable @w
// CHECK: %[[W0:.*]] = oflow.all_gather %[[WS]]
// CHECK: %[[G0:.*]] = oflow.matmul {{.*}} transpose_a
// CHECK: %[[S0:.*]] = oflow.reduce_scatter %[[G0]] {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[W1:.*]] = oflow.all_gather %[[WS]]
// CHECK: %[[G1:.*]] = oflow.matmul {{.*}} transpose_a
// CHECK: %[[S1:.*]] = oflow.reduce_scatter %[[G1]] {axis = 0 : i64, mesh_axis = 0 : i64
// CHECK: %[[B:.*]] = bufferization.alloc_tensor() copy(%[[S0]]) {oflow_accumulate_barrier} : tensor<2x3xf32>
// CHECK: %[[SUM:.*]] = oflow.add %[[B]], %[[S1]] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NOT: reduce_scatter
// CHECK: oflow.sub %[[WS]], %[[SUM]]
module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>, oflow.partitioned, oflow.scatter_each_micro_batch} {
  oflow.variable @w param : tensor<2x3xf32> {sbp = #oflow.nd_sbp<[S(0), B]>}
  func.func @zero3(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    %ws = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : tensor<2x3xf32>
    %w = oflow.all_gather %ws {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
    %y = oflow.matmul %x, %w {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %g = oflow.matmul %x, %y {transpose_a, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %gs = oflow.reduce_scatter %g {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<4x3xf32>) -> tensor<2x3xf32>
    %gm = oflow.all_reduce %gs {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %new = oflow.sub %ws, %gm {oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    oflow.write_variable @w, %new : tensor<2x3xf32>
    return
  }
}

// -----

// The same program without the request (FSDP's no_sync): the lanes' whole
// partial gradients are summed first and reduce-scattered once.
// CHECK-LABEL: func.func @no_sync
// CHECK-NOT: reduce_scatter
// CHECK: %[[B:.*]] = bufferization.alloc_tensor() copy({{.*}}) {oflow_accumulate_barrier} : tensor<4x3xf32>
// CHECK: %[[SUM:.*]] = oflow.add %[[B]], {{.*}} : (tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: oflow.reduce_scatter %[[SUM]]
// CHECK-NOT: reduce_scatter
module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>, oflow.partitioned} {
  oflow.variable @w param : tensor<2x3xf32> {sbp = #oflow.nd_sbp<[S(0), B]>}
  func.func @no_sync(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    %ws = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : tensor<2x3xf32>
    %w = oflow.all_gather %ws {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
    %y = oflow.matmul %x, %w {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %g = oflow.matmul %x, %y {transpose_a, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %gs = oflow.reduce_scatter %g {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<4x3xf32>) -> tensor<2x3xf32>
    %gm = oflow.all_reduce %gs {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %new = oflow.sub %ws, %gm {oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    oflow.write_variable @w, %new : tensor<2x3xf32>
    return
  }
}
