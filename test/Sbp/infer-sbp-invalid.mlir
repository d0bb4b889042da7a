// oflow-infer-sbp errors: malformed hints, hints that name nothing, partial
// or non-dividing variable layouts (from --sbp), in-IR hints that do not
// fit, ops without SBP signatures.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-infer-sbp -o /dev/null
// Hint option errors are reported at the module (the first split):
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=w' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=w=Q' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADLAYOUT
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=nothing=B' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=w=P' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARTIAL
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=w=P(max)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PMAX
// RUN: not oflow-opt %s -split-input-file '-oflow-infer-sbp=sbp=v=S(0)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIVIDE

// NOLAYOUT: error: --sbp w: expected NAME=LAYOUT with one of S(i), B, P per mesh axis (1 for this mesh), e.g. fc1.weight=S(0)
// BADLAYOUT: error: --sbp w=Q: expected NAME=LAYOUT
// UNUSED: error: --sbp nothing=B: names no variable or graph input
// PARTIAL: :[[@LINE+5]]:3: error: variable 'w' cannot be stored as [P(sum)]: a stored value is whole (B) or split (S)
// PMAX: error: variable 'w' cannot be stored as [P(max)]
// NODIVIDE: :[[@LINE+4]]:3: error: variable 'v' as [S(0)]: nd-SBP [S(0)]: tensor axis 0 (size 6) is not divisible by the size 4 of mesh axis 0
// A valid module: without hints it plans (no diagnostics).
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w param : tensor<12x16xf32>
  oflow.variable @v param : tensor<6x16xf32>
  func.func @train(%x: tensor<8x12xf32> {oflow.name = "x"}) -> tensor<8x16xf32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<12x16xf32>
    %y = oflow.matmul %x, %w : (tensor<8x12xf32>, tensor<12x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

// An in-IR hint must fit the shape.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @hint_not_dividing(%x: tensor<6x12xf32>) {
    // expected-error @below {{hinted layout [S(0)] does not fit 'tensor<6x12xf32>' on this mesh}}
    %h = "oflow.sbp_hint"(%x) <{sbp = #oflow.nd_sbp<[S(0)]>}> : (tensor<6x12xf32>) -> tensor<6x12xf32>
    return
  }
}

// -----

// A variable whose IR layout is partial.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  // expected-error @below {{a variable is stored whole or split, never partial: [P(sum)]}}
  oflow.variable @w param : tensor<12x16xf32> {sbp = #oflow.nd_sbp<[P(sum)]>}
}

// -----

// An op on tensors without SBP signatures cannot be placed.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @no_signatures(%x: tensor<8x12xf32>) -> tensor<8x12xf32> {
    // expected-error @below {{has no SBP signatures: cannot place it on the mesh}}
    %0 = arith.addf %x, %x : tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
}

// -----

// An argument layout that does not divide, or has the wrong number of
// entries for the mesh.
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  // expected-error @below {{argument #0: nd-SBP [S(0), S(0)]: tensor axis 0 (size 6) is not divisible by 4, the product of the mesh axes that split it}}
  func.func @arg_not_dividing(%x: tensor<6x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  // expected-error @below {{argument #0: nd-SBP [S(0)] has 1 entries but the mesh #oflow.mesh<2x2> has 2 axes}}
  func.func @wrong_rank(%x: tensor<8x12xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    return
  }
}

// -----

// A graph input is read whole or split, never partial.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  // expected-error @below {{input 's' cannot be fed as [P(sum)]: each rank reads whole (B) or split (S) data}}
  func.func @partial_input(%s: tensor<8xf32> {oflow.name = "s", oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) -> tensor<8xf32> {
    return %s : tensor<8xf32>
  }
}
