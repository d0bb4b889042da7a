// Round trip of the mesh and SBP attributes and of their uses: oflow.mesh on
// the module, oflow.sbp (and oflow.name) on function arguments, function
// results and op results (one nd-SBP per result).
//
// RUN: oflow-opt %s -split-input-file | oflow-opt -split-input-file | FileCheck %s
// RUN: oflow-opt %s -split-input-file --mlir-print-op-generic | oflow-opt -split-input-file | FileCheck %s

// CHECK: module attributes {oflow.mesh = #oflow.mesh<8>} {
module attributes {oflow.mesh = #oflow.mesh<8>} {
}

// -----

// CHECK: module attributes {oflow.mesh = #oflow.mesh<8x4, names = [node, gpu], links = [ib, nvlink]>} {
module attributes {oflow.mesh = #oflow.mesh<8x4, names = [node, gpu], links = [ib, nvlink]>} {
}

// -----

// A name that is not a keyword stays quoted.
// CHECK: module attributes {oflow.mesh = #oflow.mesh<2x2x2, names = [dp, "tensor parallel", pp]>} {
module attributes {oflow.mesh = #oflow.mesh<2x2x2, names = [dp, "tensor parallel", pp]>} {
}

// -----

// CHECK: module attributes {oflow.mesh = #oflow.mesh<4x2x1, links = [ethernet, pcie, local]>} {
module attributes {oflow.mesh = #oflow.mesh<4x2x1, links = [ethernet, pcie, local]>} {
}

// -----

// A bare P is P(sum).
// CHECK-LABEL: func.func @sbp_kinds()
// CHECK-SAME: sbps = [#oflow.sbp<S(0)>, #oflow.sbp<S(3)>, #oflow.sbp<B>, #oflow.sbp<P(sum)>, #oflow.sbp<P(sum)>, #oflow.sbp<P(max)>]
func.func @sbp_kinds() attributes {sbps = [#oflow.sbp<S(0)>, #oflow.sbp<S(3)>, #oflow.sbp<B>, #oflow.sbp<P>, #oflow.sbp<P(sum)>, #oflow.sbp<P(max)>]} {
  return
}

// -----

// CHECK-LABEL: func.func @nd_sbp_forms()
// CHECK-SAME: layouts = [#oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[P(max)]>, #oflow.nd_sbp<[B, P(sum), S(1)]>]
func.func @nd_sbp_forms() attributes {layouts = [#oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[P(max)]>, #oflow.nd_sbp<[B, P, S(1)]>]} {
  return
}

// -----

// CHECK: module attributes {oflow.mesh = #oflow.mesh<2x4, names = [node, gpu]>} {
// CHECK-LABEL: func.func @arg_and_result_sbp(
// CHECK-SAME: %arg0: tensor<8x16xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), B]>},
// CHECK-SAME: %arg1: tensor<16x32xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(1)]>})
// CHECK-SAME: -> (tensor<8x32xf32> {oflow.name = "y", oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>})
// CHECK: %0 = oflow.matmul %arg0, %arg1 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
module attributes {oflow.mesh = #oflow.mesh<2x4, names = [node, gpu]>} {
  func.func @arg_and_result_sbp(%x: tensor<8x16xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), B]>},
                                %w: tensor<16x32xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(1)]>})
      -> (tensor<8x32xf32> {oflow.name = "y", oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) {
    %0 = oflow.matmul %x, %w {oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    return %0 : tensor<8x32xf32>
  }
}

// -----

// Partial values, and both mesh axes splitting tensor axis 0 (8 = 2 * 4).
// CHECK: module attributes {oflow.mesh = #oflow.mesh<2x4>} {
// CHECK-LABEL: func.func @partial_and_two_axes_one_dim(
// CHECK: %0 = oflow.matmul %arg0, %arg1 {oflow.name = "mm", oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: %1 = oflow.relu %0 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : tensor<8x32xf32>
// CHECK-NEXT: %2 = oflow.reduce_sum %1 {axes = array<i64: 0, 1>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<8x32xf32>) -> tensor<f32>
module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  func.func @partial_and_two_axes_one_dim(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) {
    %0 = oflow.matmul %x, %w {oflow.name = "mm", oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = oflow.relu %0 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : tensor<8x32xf32>
    %2 = oflow.reduce_sum %1 {axes = array<i64: 0, 1>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[P, B]>]} : (tensor<8x32xf32>) -> tensor<f32>
    return
  }
}

// -----

// CHECK: module attributes {oflow.mesh = #oflow.mesh<2x2, names = [a, b]>} {
// CHECK-LABEL: func.func @one_sbp_per_result(
// CHECK: %0:3 = oflow.split %arg0 {axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[B, S(1)]>, #oflow.nd_sbp<[S(0), S(1)]>], sizes = array<i64: 4, 4, 4>} : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
module attributes {oflow.mesh = #oflow.mesh<2x2, names = [a, b]>} {
  func.func @one_sbp_per_result(%qkv: tensor<4x12xf32>) {
    %q, %k, %v = oflow.split %qkv {axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>, #oflow.nd_sbp<[B, S(1)]>, #oflow.nd_sbp<[S(0), S(1)]>], sizes = array<i64: 4, 4, 4>} : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
    return
  }
}

// -----

// Without oflow.mesh the program runs on one device: one SBP entry, and a
// split by 1 always divides.
// CHECK-LABEL: func.func @default_mesh(
// CHECK-SAME: %arg0: tensor<3x5xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}
// CHECK: %0 = oflow.neg %arg0 {oflow.sbp = [#oflow.nd_sbp<[B]>]} : tensor<3x5xf32>
func.func @default_mesh(%x: tensor<3x5xf32> {oflow.sbp = #oflow.nd_sbp<[S(1)]>}) -> tensor<3x5xf32> {
  %0 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[B]>]} : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
