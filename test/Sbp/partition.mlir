// oflow-partition: every type becomes its rank's local piece under its
// nd-SBP (1-D and 2-D meshes); the shape attributes of reshape, slice and
// expand follow; variables hold their local piece but keep the global initial
// value; entry arguments and results keep their nd-SBP for the program
// interface; boxing ops then verify in their local form (the converted axis
// grows or shrinks by the mesh axis size). The module is marked partitioned.
//
// RUN: oflow-opt %s -split-input-file -oflow-verify-sbp -oflow-partition | FileCheck %s

// CHECK: module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned}
// CHECK: oflow.variable @w param : tensor<3x16xf32> = dense<1.000000e+00> : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[S(0)]>}
// CHECK: oflow.variable @b param : tensor<16xf32> {sbp = #oflow.nd_sbp<[B]>}
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %arg0: tensor<2x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) -> (tensor<8x16xf32> {oflow.sbp = #oflow.nd_sbp<[B]>})
// CHECK: oflow.read_variable @w {{.*}} : tensor<3x16xf32>
// CHECK: oflow.all_gather {{.*}} : (tensor<3x16xf32>) -> tensor<12x16xf32>
// CHECK: oflow.matmul {{.*}} : (tensor<2x12xf32>, tensor<12x16xf32>) -> tensor<2x16xf32>
// CHECK: oflow.reshape %{{.*}} [2, 4, 4] {{.*}} : (tensor<2x16xf32>) -> tensor<2x4x4xf32>
// CHECK: oflow.slice {{.*}}sizes = array<i64: 2, 2, 4>{{.*}} : (tensor<2x4x4xf32>) -> tensor<2x2x4xf32>
// CHECK: oflow.expand %{{.*}} [2, 2, 4] {{.*}} : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
// CHECK: oflow.reshape %{{.*}} [2, 8] {{.*}} : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
// CHECK: oflow.concat {{.*}} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
// CHECK: oflow.all_gather {{.*}} : (tensor<2x16xf32>) -> tensor<8x16xf32>
// CHECK: return %{{.*}} : tensor<8x16xf32>
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w param : tensor<12x16xf32> = dense<1.0> : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[S(0)]>}
  oflow.variable @b param : tensor<16xf32> {sbp = #oflow.nd_sbp<[B]>}
  func.func @f(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) -> (tensor<8x16xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) {
    %w = oflow.read_variable @w {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : tensor<12x16xf32>
    %wb = oflow.all_gather %w {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<12x16xf32>) -> tensor<12x16xf32>
    %y = oflow.matmul %x, %wb {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x12xf32>, tensor<12x16xf32>) -> tensor<8x16xf32>
    %r = oflow.reshape %y [8, 4, 4] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x16xf32>) -> tensor<8x4x4xf32>
    %s = oflow.slice %r {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 8, 2, 4>, strides = array<i64: 1, 1, 1>, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x4x4xf32>) -> tensor<8x2x4xf32>
    %e = oflow.expand %s [8, 2, 4] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x2x4xf32>) -> tensor<8x2x4xf32>
    %z = oflow.reshape %e [8, 8] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x2x4xf32>) -> tensor<8x8xf32>
    %c = oflow.concat %z, %z {axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
    %g = oflow.all_gather %c {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %g : tensor<8x16xf32>
  }
}

// -----

// A 2x2 mesh: [S(0), S(1)] of 8x12 is 4x6 per rank; each boxing op's local
// form: split_to_partial grows its axis, reduce_scatter and local_slice
// shrink it, all_to_all grows the source axis and shrinks the target one,
// all_gather grows it, broadcast_to_partial and all_reduce keep the shape.
// CHECK: module attributes {oflow.mesh = #oflow.mesh<2x2>, oflow.partitioned}
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %arg0: tensor<4x6xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) -> (tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B, B]>})
// CHECK-NEXT: oflow.split_to_partial {{.*}} : (tensor<4x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: oflow.reduce_scatter {{.*}} : (tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: oflow.all_to_all {{.*}} : (tensor<4x6xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: oflow.all_gather {{.*}} : (tensor<2x12xf32>) -> tensor<4x12xf32>
// CHECK-NEXT: oflow.local_slice {{.*}} : (tensor<4x12xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: oflow.all_gather {{.*}} : (tensor<4x6xf32>) -> tensor<4x12xf32>
// CHECK-NEXT: oflow.broadcast_to_partial {{.*}} : (tensor<4x12xf32>) -> tensor<4x12xf32>
// CHECK-NEXT: oflow.all_reduce {{.*}} : (tensor<4x12xf32>) -> tensor<4x12xf32>
// CHECK-NEXT: oflow.all_gather {{.*}} : (tensor<4x12xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: return %{{.*}} : tensor<8x12xf32>
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  func.func @g(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) -> (tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[B, B]>}) {
    %0 = oflow.split_to_partial %x {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %1 = oflow.reduce_scatter %0 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %2 = oflow.all_to_all %1 {axis = 0 : i64, source_axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %3 = oflow.all_gather %2 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %4 = oflow.local_slice %3 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %5 = oflow.all_gather %4 {axis = 1 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %6 = oflow.broadcast_to_partial %5 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), P(sum)]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %7 = oflow.all_reduce %6 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %8 = oflow.all_gather %7 {axis = 0 : i64, mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %8 : tensor<8x12xf32>
  }
}
