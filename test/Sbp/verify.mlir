// oflow-verify-sbp: every op's operand and result nd-SBPs form one of its
// signatures on each mesh axis.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-verify-sbp | FileCheck %s

// Data parallel on 2 devices, then a partial sum from the split batch.
// CHECK-LABEL: func.func @data_parallel
module attributes {oflow.mesh = #oflow.mesh<2>} {
  func.func @data_parallel(%x: tensor<8x4xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>},
                           %w: tensor<6x4xf32> {oflow.sbp = #oflow.nd_sbp<[B]>},
                           %b: tensor<6xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) -> tensor<1x6xf32> {
    %0 = oflow.gemm %x, %w, %b {transpose_b, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<8x6xf32>
    %1 = oflow.relu %0 {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : tensor<8x6xf32>
    %2 = oflow.reduce_sum %1 {axes = array<i64: 0>, oflow.sbp = [#oflow.nd_sbp<[P]>]} : (tensor<8x6xf32>) -> tensor<1x6xf32>
    return %2 : tensor<1x6xf32>
  }
}

// -----

// Data x tensor parallel on 2x2: rows split the batch, columns the output
// features of a column-parallel linear layer.
// CHECK-LABEL: func.func @two_d
module attributes {oflow.mesh = #oflow.mesh<2x2, names = [dp, tp]>} {
  func.func @two_d(%x: tensor<8x4xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), B]>},
                   %w: tensor<6x4xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(0)]>}) -> tensor<8x6xf32> {
    %0 = oflow.gemm %x, %w {transpose_b, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : (tensor<8x4xf32>, tensor<6x4xf32>) -> tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}

// -----

// Adding a partial sum to a broadcast value would add it n times.
module attributes {oflow.mesh = #oflow.mesh<2x2, names = [dp, tp]>} {
  func.func @partial_plus_broadcast(%a: tensor<4xf32> {oflow.sbp = #oflow.nd_sbp<[B, P]>},
                                    %b: tensor<4xf32> {oflow.sbp = #oflow.nd_sbp<[B, B]>}) -> tensor<4xf32> {
    // expected-error @+1 {{has no SBP signature P(sum), B -> P(sum) on mesh axis 1 (tp) (size 2)}}
    %0 = oflow.add %a, %b {oflow.sbp = [#oflow.nd_sbp<[B, P]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// A value with no nd-SBP (SBP choice has not run) cannot be checked.
module attributes {oflow.mesh = #oflow.mesh<2>} {
  func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{operand #0 has no nd-SBP}}
    %0 = oflow.neg %a {oflow.sbp = [#oflow.nd_sbp<[B]>]} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2>} {
  func.func @unplaced_result(%a: tensor<4xf32> {oflow.sbp = #oflow.nd_sbp<[B]>}) -> tensor<4xf32> {
    // expected-error @+1 {{result #0 has no nd-SBP}}
    %0 = oflow.neg %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
