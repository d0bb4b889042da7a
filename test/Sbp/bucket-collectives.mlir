// oflow-bucket-collectives: single-operand all-reduces on the same mesh axis
// (same reduction, same element type) fuse into multi-operand ones, placed
// right after the last operand is computed.
//
// RUN: oflow-opt %s -split-input-file -oflow-bucket-collectives | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-bucket-collectives=bucket-mb=0 | FileCheck %s --check-prefix=NOFUSE
// A tensor<8x12xf32> is 384 bytes; 0.0008 MiB (838 bytes) holds two of them.
// RUN: oflow-opt %s -split-input-file -oflow-bucket-collectives=bucket-mb=0.0008 | FileCheck %s --check-prefix=SMALL

// Three gradients: one all-reduce after the last one is computed; the relu
// that used the first result moves after it.
// CHECK-LABEL: func.func @three
// CHECK: %[[A:.*]] = oflow.neg %arg0
// CHECK-NEXT: %[[B:.*]] = oflow.neg %arg1
// CHECK-NEXT: %[[C:.*]] = oflow.neg %arg2
// CHECK-NEXT: %[[R:.*]]:3 = oflow.all_reduce %[[A]], %[[B]], %[[C]] {mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK-NEXT: %[[U:.*]] = oflow.relu %[[R]]#0
// CHECK-NEXT: return %[[U]], %[[R]]#1, %[[R]]#2
// bucket-mb=0: nothing changes.
// NOFUSE-LABEL: func.func @three
// NOFUSE-COUNT-3: oflow.all_reduce %{{[0-9]+}} {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// Two per bucket: [a, b] then c alone.
// SMALL-LABEL: func.func @three
// SMALL: %[[A:.*]] = oflow.neg %arg0
// SMALL-NEXT: %[[B:.*]] = oflow.neg %arg1
// SMALL-NEXT: %[[R:.*]]:2 = oflow.all_reduce %[[A]], %[[B]] {mesh_axis = 0 : i64}
// SMALL-NEXT: oflow.relu %[[R]]#0
// SMALL-NEXT: %[[C:.*]] = oflow.neg %arg2
// SMALL-NEXT: oflow.all_reduce %[[C]] {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @three(%a: tensor<8x12xf32>, %b: tensor<8x12xf32>, %c: tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) {
    %ga = oflow.neg %a : tensor<8x12xf32>
    %ra = oflow.all_reduce %ga {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %ua = oflow.relu %ra : tensor<8x12xf32>
    %gb = oflow.neg %b : tensor<8x12xf32>
    %gc = oflow.neg %c : tensor<8x12xf32>
    %rb = oflow.all_reduce %gb {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %rc = oflow.all_reduce %gc {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %ua, %rb, %rc : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>
  }
}

// -----

// Five gradients with the small limit: buckets of 2, 2 and 1, each issued
// right after its last operand. The sizes are the local pieces: an S(0)
// operand on 4 devices is 96 bytes, so eight of them fit in one bucket.
// SMALL-LABEL: func.func @five
// SMALL: %[[R1:.*]]:2 = oflow.all_reduce %{{.*}}, %{{.*}} {mesh_axis = 0 : i64}
// SMALL: %[[R2:.*]]:2 = oflow.all_reduce %{{.*}}, %{{.*}} {mesh_axis = 0 : i64}
// SMALL: %[[R3:.*]] = oflow.all_reduce %{{.*}} {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// SMALL-NEXT: return %[[R1]]#0, %[[R1]]#1, %[[R2]]#0, %[[R2]]#1, %[[R3]]
// CHECK-LABEL: func.func @five
// CHECK: oflow.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {mesh_axis = 0 : i64}
// CHECK-NEXT: return
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @five(%x: tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) {
    %g0 = oflow.neg %x : tensor<8x12xf32>
    %r0 = oflow.all_reduce %g0 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g1 = oflow.exp %x : tensor<8x12xf32>
    %r1 = oflow.all_reduce %g1 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g2 = oflow.relu %x : tensor<8x12xf32>
    %r2 = oflow.all_reduce %g2 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g3 = oflow.sqrt %x : tensor<8x12xf32>
    %r3 = oflow.all_reduce %g3 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g4 = oflow.abs %x : tensor<8x12xf32>
    %r4 = oflow.all_reduce %g4 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %r0, %r1, %r2, %r3, %r4 : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>
  }
}

// -----

// Local sizes count: with oflow.sbp the operands' pieces are S(0) (96 bytes
// each on 4 devices), so the small limit fuses all four.
// SMALL-LABEL: func.func @local_sizes
// SMALL: oflow.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[S(0), B]>]}
module attributes {oflow.mesh = #oflow.mesh<4x2>} {
  func.func @local_sizes(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), P(sum)]>}) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) {
    %g0 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : tensor<8x12xf32>
    %r0 = oflow.all_reduce %g0 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g1 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : tensor<8x12xf32>
    %r1 = oflow.all_reduce %g1 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g2 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : tensor<8x12xf32>
    %r2 = oflow.all_reduce %g2 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g3 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : tensor<8x12xf32>
    %r3 = oflow.all_reduce %g3 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %r0, %r1, %r2, %r3 : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>
  }
}

// -----

// An all-reduce whose operand is computed from an earlier one's result
// cannot join its bucket (it would wait for itself): it starts a new one,
// which the third joins.
// CHECK-LABEL: func.func @dependent
// CHECK: %[[R0:.*]] = oflow.all_reduce %{{.*}} {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: %[[G1:.*]] = oflow.neg %[[R0]]
// CHECK-NEXT: %[[G2:.*]] = oflow.exp %arg1
// CHECK-NEXT: %{{.*}}:2 = oflow.all_reduce %[[G1]], %[[G2]] {mesh_axis = 0 : i64}
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @dependent(%x: tensor<8x12xf32>, %y: tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>) {
    %g0 = oflow.neg %x : tensor<8x12xf32>
    %r0 = oflow.all_reduce %g0 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g1 = oflow.neg %r0 : tensor<8x12xf32>
    %r1 = oflow.all_reduce %g1 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g2 = oflow.exp %y : tensor<8x12xf32>
    %r2 = oflow.all_reduce %g2 {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %r1, %r2 : tensor<8x12xf32>, tensor<8x12xf32>
  }
}

// -----

// Different mesh axes, reductions and element types are not fused; each
// group forms its own bucket.
// CHECK-LABEL: func.func @keys
// CHECK-DAG: oflow.all_reduce %{{.*}}, %{{.*}} {mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK-DAG: oflow.all_reduce %{{.*}}, %{{.*}} {mesh_axis = 1 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK-DAG: oflow.all_reduce %{{.*}} {max, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK-DAG: oflow.all_reduce %{{.*}} {mesh_axis = 0 : i64} : (tensor<8x12xf64>) -> tensor<8x12xf64>
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  func.func @keys(%x: tensor<8x12xf32>, %d: tensor<8x12xf64>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf64>) {
    %r0 = oflow.all_reduce %x {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %r1 = oflow.all_reduce %x {mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %r2 = oflow.all_reduce %x {mesh_axis = 0 : i64, max} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %g = oflow.neg %x : tensor<8x12xf32>
    %r3 = oflow.all_reduce %g {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %r4 = oflow.all_reduce %g {mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %r5 = oflow.all_reduce %d {mesh_axis = 0 : i64} : (tensor<8x12xf64>) -> tensor<8x12xf64>
    return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf64>
  }
}

// -----

// Regression: fusing the mesh-axis-0 bucket moves the users of its first
// member after it, among them the mesh-axis-1 all-reduce %b1; the axis-1
// bucket [%b1, %b2] must then go after %b1 (the member that is now last),
// not after %b2, or its operand %u would not dominate it.
// CHECK-LABEL: func.func @cross_axes
// CHECK: %[[GA:.*]] = oflow.neg %arg0
// CHECK-NEXT: %[[GB:.*]] = oflow.neg %arg1
// CHECK-NEXT: %[[GC:.*]] = oflow.neg %arg2
// CHECK-NEXT: %[[A:.*]]:2 = oflow.all_reduce %[[GA]], %[[GC]] {mesh_axis = 0 : i64}
// CHECK-NEXT: %[[U:.*]] = oflow.relu %[[A]]#0
// (Members join their fused op in block order, %b2's operand first.)
// CHECK-NEXT: %[[B:.*]]:2 = oflow.all_reduce %[[GB]], %[[U]] {mesh_axis = 1 : i64}
// CHECK-NEXT: return %[[B]]#1, %[[B]]#0, %[[A]]#1
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  func.func @cross_axes(%a: tensor<8x12xf32>, %b: tensor<8x12xf32>, %c: tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) {
    %ga = oflow.neg %a : tensor<8x12xf32>
    %a1 = oflow.all_reduce %ga {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %u = oflow.relu %a1 : tensor<8x12xf32>
    %b1 = oflow.all_reduce %u {mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %gb = oflow.neg %b : tensor<8x12xf32>
    %b2 = oflow.all_reduce %gb {mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %gc = oflow.neg %c : tensor<8x12xf32>
    %a2 = oflow.all_reduce %gc {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %b1, %b2, %a2 : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>
  }
}

// -----

// Small weights' all-gathers (ZeRO-3's biases, stored flat): the later
// members' reads and views move up to the first member, and one all-gather
// takes them all there. The bucket holds at most what the largest gather
// of the function (@big, 1 KiB) holds, each member at most a quarter of
// that. @c is written between the first member and its read: its gather
// stays alone. The backward pass's copies (oflow.regather) bucket apart,
// and a weight gathered twice in a bucket is gathered once.
// CHECK-LABEL: func.func @weights
// CHECK: %[[A:.*]] = oflow.read_variable @a
// CHECK-NEXT: %[[B:.*]] = oflow.read_variable @b
// CHECK-NEXT: %[[BV:.*]] = oflow.reshape %[[B]] [4, 2]
// CHECK-NEXT: %[[G:.*]]:2 = oflow.all_gather %[[A]], %[[BV]] {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: oflow.all_gather %{{.*}} {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK: oflow.write_variable @c
// CHECK: %[[C:.*]] = oflow.read_variable @c
// CHECK-NEXT: oflow.all_gather %[[C]] {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[R:.*]]:2 = oflow.all_gather %[[A]], %[[BV]] {axis = 0 : i64, mesh_axis = 0 : i64, oflow.regather} : (tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK-NOT: oflow.all_gather
// CHECK: oflow.add %{{.*}}, %[[R]]#0
// CHECK-NOT: oflow.all_gather
// NOFUSE-LABEL: func.func @weights
// NOFUSE-COUNT-7: oflow.all_gather %{{[0-9]+}} {
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @a param : tensor<4x2xf32>
  oflow.variable @b param : tensor<8xf32>
  oflow.variable @c param : tensor<4x2xf32>
  oflow.variable @big param : tensor<4x64xf32>
  func.func @weights(%x: tensor<4x2xf32>, %y: tensor<4x64xf32>) -> (tensor<4x2xf32>, tensor<4x64xf32>) {
    %a = oflow.read_variable @a : tensor<4x2xf32>
    %ga = oflow.all_gather %a {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %u = oflow.mul %x, %ga : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %big = oflow.read_variable @big : tensor<4x64xf32>
    %gbig = oflow.all_gather %big {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32>
    %z = oflow.mul %y, %gbig : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %b = oflow.read_variable @b : tensor<8xf32>
    %bv = oflow.reshape %b [4, 2] : (tensor<8xf32>) -> tensor<4x2xf32>
    %gb = oflow.all_gather %bv {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %v = oflow.add %u, %gb : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    oflow.write_variable @c, %v : tensor<4x2xf32>
    %c = oflow.read_variable @c : tensor<4x2xf32>
    %gc = oflow.all_gather %c {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %w = oflow.add %v, %gc : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %ra = oflow.all_gather %a {axis = 0 : i64, mesh_axis = 0 : i64, oflow.regather} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %w2 = oflow.add %w, %ra : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %rb = oflow.all_gather %bv {axis = 0 : i64, mesh_axis = 0 : i64, oflow.regather} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %w3 = oflow.add %w2, %rb : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %ra2 = oflow.all_gather %a {axis = 0 : i64, mesh_axis = 0 : i64, oflow.regather} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %w4 = oflow.add %w3, %ra2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    return %w4, %z : tensor<4x2xf32>, tensor<4x64xf32>
  }
}

// -----

// Small reduce-scatters bucket like all-reduces, after the last operand.
// The largest scatter (1.5 KiB) bounds the bucket, a member a quarter of
// it: the largest stays alone.
// CHECK-LABEL: func.func @scatters
// CHECK: %[[A:.*]] = oflow.neg %arg0
// CHECK-NEXT: %[[B:.*]] = oflow.exp %arg0
// CHECK-NEXT: %[[S:.*]]:2 = oflow.reduce_scatter %[[A]], %[[B]] {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK: oflow.reduce_scatter %{{.*}} {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<8x48xf32>) -> tensor<8x48xf32>
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @scatters(%x: tensor<8x12xf32>, %y: tensor<8x48xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x48xf32>) {
    %a = oflow.neg %x : tensor<8x12xf32>
    %sa = oflow.reduce_scatter %a {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %b = oflow.exp %x : tensor<8x12xf32>
    %sb = oflow.reduce_scatter %b {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %c = oflow.relu %y : tensor<8x48xf32>
    %sc = oflow.reduce_scatter %c {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<8x48xf32>) -> tensor<8x48xf32>
    return %sa, %sb, %sc : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x48xf32>
  }
}

// -----

// ZeRO-1/2's updated parameters, gathered only to be stored, bucket like
// the reductions: after the last update, their writes after the bucket,
// with the size limits of the scatters (@big, the largest, stays alone). A
// gather something else reads (@w) stays alone too.
// CHECK-LABEL: func.func @updated
// CHECK: %[[U:.*]] = oflow.neg %arg0
// CHECK-NEXT: %[[V:.*]] = oflow.exp %arg0
// CHECK-NEXT: %[[G:.*]]:2 = oflow.all_gather %[[U]], %[[V]] {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>) -> (tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK-DAG: oflow.write_variable @u, %[[G]]#0
// CHECK-DAG: oflow.write_variable @v, %[[G]]#1
// CHECK-DAG: oflow.all_gather %{{.*}} {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x48xf32>) -> tensor<8x48xf32>
// CHECK-DAG: %[[W:.*]] = oflow.all_gather %{{.*}} {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK: return %[[W]]
// NOFUSE-LABEL: func.func @updated
// NOFUSE-COUNT-4: oflow.all_gather %{{[0-9a-z]+}} {
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @u param : tensor<8x12xf32>
  oflow.variable @v param : tensor<8x12xf32>
  oflow.variable @w param : tensor<8x12xf32>
  oflow.variable @big param : tensor<8x48xf32>
  func.func @updated(%x: tensor<8x12xf32>, %y: tensor<8x48xf32>) -> tensor<8x12xf32> {
    %u = oflow.neg %x : tensor<8x12xf32>
    %v = oflow.exp %x : tensor<8x12xf32>
    %w = oflow.relu %x : tensor<8x12xf32>
    %b = oflow.neg %y : tensor<8x48xf32>
    %gu = oflow.all_gather %u {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    oflow.write_variable @u, %gu : tensor<8x12xf32>
    %gb = oflow.all_gather %b {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x48xf32>) -> tensor<8x48xf32>
    oflow.write_variable @big, %gb : tensor<8x48xf32>
    %gv = oflow.all_gather %v {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    oflow.write_variable @v, %gv : tensor<8x12xf32>
    %gw = oflow.all_gather %w {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    oflow.write_variable @w, %gw : tensor<8x12xf32>
    return %gw : tensor<8x12xf32>
  }
}

// -----

// Scatters along a later axis bucket too (a bias gradient reduced as
// 1x1xN; a 2-D weight's transposed gradient split along its columns): the
// lowering makes each rank's piece of a member one run. @s1, @s2 and @s4
// bucket; the largest (@s3) stays alone.
// CHECK-LABEL: func.func @unit_leading
// CHECK: oflow.reduce_scatter %{{.*}} {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<1x1x256xf32>) -> tensor<1x1x256xf32>
// CHECK: %[[S:.*]]:3 = oflow.reduce_scatter %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<4x1x16xf32>)
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @unit_leading(%x: tensor<1x1x16xf32>, %y: tensor<1x1x256xf32>, %z: tensor<4x1x16xf32>)
      -> (tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x256xf32>, tensor<4x1x16xf32>) {
    %a = oflow.neg %x : tensor<1x1x16xf32>
    %s1 = oflow.reduce_scatter %a {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<1x1x16xf32>) -> tensor<1x1x16xf32>
    %b = oflow.exp %x : tensor<1x1x16xf32>
    %s2 = oflow.reduce_scatter %b {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<1x1x16xf32>) -> tensor<1x1x16xf32>
    %c = oflow.neg %y : tensor<1x1x256xf32>
    %s3 = oflow.reduce_scatter %c {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<1x1x256xf32>) -> tensor<1x1x256xf32>
    %d = oflow.neg %z : tensor<4x1x16xf32>
    %s4 = oflow.reduce_scatter %d {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
    return %s1, %s2, %s3, %s4 : tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x256xf32>, tensor<4x1x16xf32>
  }
}

// -----

// On two mesh axes an updated parameter is gathered on one axis, then the
// other, only to be stored: the first gathers bucket, then the second.
// CHECK-LABEL: func.func @updated_2d
// CHECK: %[[G0:.*]]:2 = oflow.all_gather %{{.*}}, %{{.*}} {axis = 0 : i64, mesh_axis = 0 : i64}
// CHECK: %[[G1:.*]]:2 = oflow.all_gather %[[G0]]#0, %[[G0]]#1 {axis = 0 : i64, mesh_axis = 1 : i64}
// CHECK-DAG: oflow.write_variable @u, %[[G1]]#0
// CHECK-DAG: oflow.write_variable @v, %[[G1]]#1
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  oflow.variable @u param : tensor<8x12xf32>
  oflow.variable @v param : tensor<8x12xf32>
  oflow.variable @big param : tensor<8x48xf32>
  func.func @updated_2d(%x: tensor<8x12xf32>, %y: tensor<8x48xf32>) {
    %u = oflow.neg %x : tensor<8x12xf32>
    %v = oflow.exp %x : tensor<8x12xf32>
    %b = oflow.neg %y : tensor<8x48xf32>
    %gu0 = oflow.all_gather %u {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %gu1 = oflow.all_gather %gu0 {axis = 0 : i64, mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    oflow.write_variable @u, %gu1 : tensor<8x12xf32>
    %gb = oflow.all_gather %b {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x48xf32>) -> tensor<8x48xf32>
    oflow.write_variable @big, %gb : tensor<8x48xf32>
    %gv0 = oflow.all_gather %v {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %gv1 = oflow.all_gather %gv0 {axis = 0 : i64, mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    oflow.write_variable @v, %gv1 : tensor<8x12xf32>
    return
  }
}

// -----

// A weight gathered on mesh axis 1, then 0 (@a), joins the open axis-0
// bucket of @c only if its axis-1 gather lies before @c's: that gather is
// a member of the axis-1 bucket opened by @x, fused at @x's gather, after
// @c's. So @a's axis-0 gather starts a bucket of its own, and the result
// verifies (each value defined before its use).
// CHECK-LABEL: func.func @chain_through_open_bucket
// CHECK: %[[C:.*]] = oflow.read_variable @c
// CHECK-NEXT: oflow.all_gather %[[C]] {axis = 0 : i64, mesh_axis = 0 : i64}
// CHECK: %[[X1:.*]]:2 = oflow.all_gather %{{.*}}, %{{.*}} {axis = 0 : i64, mesh_axis = 1 : i64}
// CHECK: oflow.all_gather %[[X1]]#1 {axis = 0 : i64, mesh_axis = 0 : i64}
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  oflow.variable @a param : tensor<4x2xf32>
  oflow.variable @c param : tensor<4x2xf32>
  oflow.variable @x param : tensor<4x2xf32>
  oflow.variable @big param : tensor<4x64xf32>
  func.func @chain_through_open_bucket(%in: tensor<4x2xf32>, %y: tensor<4x64xf32>) -> (tensor<4x2xf32>, tensor<4x64xf32>) {
    %big = oflow.read_variable @big : tensor<4x64xf32>
    %gbig = oflow.all_gather %big {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32>
    %z = oflow.mul %y, %gbig : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %c = oflow.read_variable @c : tensor<4x2xf32>
    %gc = oflow.all_gather %c {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %u = oflow.mul %in, %gc : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %x = oflow.read_variable @x : tensor<4x2xf32>
    %gx = oflow.all_gather %x {axis = 0 : i64, mesh_axis = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %v = oflow.add %u, %gx : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %a = oflow.read_variable @a : tensor<4x2xf32>
    %ga1 = oflow.all_gather %a {axis = 0 : i64, mesh_axis = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %ga0 = oflow.all_gather %ga1 {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %w = oflow.add %v, %ga0 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    return %w, %z : tensor<4x2xf32>, tensor<4x64xf32>
  }
}
