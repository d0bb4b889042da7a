// RUN: oflow-opt %s -oflow-partition -split-input-file | FileCheck %s

// A split dropout draws the mask of the global elements it holds: it learns
// the global shape and where this rank's piece starts along each axis. On a
// 2x3 mesh, axis 0 split by both mesh axes (12 rows, 2 per rank) and axis 1
// by none: offsets (shard_offset over mesh axes 0 and 1, 0).
module attributes {oflow.mesh = #oflow.mesh<2x3>} {
  // CHECK-LABEL: func.func @split
  // CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5xf32>
  // CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<i64>
  // CHECK: %[[OFF0:.*]] = oflow.shard_offset {mesh_axes = array<i64: 0, 1>, piece = 2 : i64} : tensor<i64>
  // CHECK: %[[OFF1:.*]] = oflow.constant dense<0> : tensor<i64>
  // CHECK: oflow.dropout %[[X]] step %[[S]] offsets(%[[OFF0]], %[[OFF1]]) {global_shape = array<i64: 12, 5>, {{.*}}ratio = 5.000000e-01 : f64, seed = 9 : i64} : tensor<2x5xf32>
  func.func @split(%x: tensor<12x5xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>},
                   %s: tensor<i64> {oflow.sbp = #oflow.nd_sbp<[B, B]>})
      -> (tensor<12x5xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    %y = oflow.dropout %x step %s {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>], ratio = 0.5 : f64, seed = 9 : i64} : tensor<12x5xf32>
    return %y : tensor<12x5xf32>
  }
}

// -----

// Broadcast or partial: every rank holds all positions; nothing to add.
module attributes {oflow.mesh = #oflow.mesh<2>} {
  // CHECK-LABEL: func.func @whole
  // CHECK-NOT: shard_offset
  // CHECK: oflow.dropout %{{.*}} step %{{.*}} {oflow.sbp = [#oflow.nd_sbp<[P(sum)]>], ratio = 5.000000e-01 : f64, seed = 9 : i64} : tensor<12x5xf32>
  func.func @whole(%x: tensor<12x5xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[P(sum)]>},
                   %s: tensor<i64> {oflow.sbp = #oflow.nd_sbp<[B]>})
      -> (tensor<12x5xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %y = oflow.dropout %x step %s {oflow.sbp = [#oflow.nd_sbp<[P(sum)]>], ratio = 0.5 : f64, seed = 9 : i64} : tensor<12x5xf32>
    return %y : tensor<12x5xf32>
  }
}
