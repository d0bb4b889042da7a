// Malformed #oflow.mesh / #oflow.sbp / #oflow.nd_sbp attributes, and
// oflow.mesh / oflow.sbp / oflow.name attributes that do not fit where they
// are: an nd-SBP needs one entry per axis of the governing mesh (the module's
// oflow.mesh, or a single device), split axes within the tensor's rank,
// every split tensor axis divisible by the mesh axes that split it, and not
// both partial sums and partial maxes.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{mesh axis 0 has size 0; sizes must be positive}}
module attributes {oflow.mesh = #oflow.mesh<0>} {
}

// -----

// expected-error @below {{mesh axis 1 has size 0; sizes must be positive}}
module attributes {oflow.mesh = #oflow.mesh<4x0>} {
}

// -----

// expected-error @below {{mesh needs at least one axis}}
module attributes {oflow.mesh = #oflow.mesh<>} {
}

// -----

// expected-error @below {{expected static shape}}
module attributes {oflow.mesh = #oflow.mesh<8x?>} {
}

// -----

// expected-error @below {{mesh has 2 axes but 1 names}}
module attributes {oflow.mesh = #oflow.mesh<8x4, names = [node]>} {
}

// -----

// expected-error @below {{mesh axis name 'gpu' is used twice}}
module attributes {oflow.mesh = #oflow.mesh<2x2, names = [gpu, gpu]>} {
}

// -----

// expected-error @below {{mesh has 2 axes but 1 link kinds}}
module attributes {oflow.mesh = #oflow.mesh<8x4, links = [ib]>} {
}

// -----

// expected-error @below {{mesh axis 1 has unknown link kind 'infiniband'; expected local, nvlink, pcie, ib, ethernet or sequential}}
module attributes {oflow.mesh = #oflow.mesh<8x4, links = [ib, infiniband]>} {
}

// -----

// expected-error @below {{unknown mesh parameter 'shape'; expected names or links}}
module attributes {oflow.mesh = #oflow.mesh<8x4, shape = [8, 4]>} {
}

// -----

// expected-error @below {{unknown SBP 'X'; expected S(i), B, P(sum) or P(max)}}
func.func @unknown_sbp_letter() attributes {sbp = #oflow.sbp<X>} {
  return
}

// -----

// expected-error @below {{unknown partial reduction 'foo'; expected P(sum) or P(max)}}
func.func @unknown_partial_reduction() attributes {sbp = #oflow.sbp<P(foo)>} {
  return
}

// -----

// expected-error @below {{S(-1): split axis must be non-negative}}
func.func @negative_split_axis() attributes {sbp = #oflow.sbp<S(-1)>} {
  return
}

// -----

// expected-error @below {{unknown SBP 'Q'; expected S(i), B, P(sum) or P(max)}}
func.func @unknown_sbp_in_nd_sbp() attributes {sbp = #oflow.nd_sbp<[S(0), Q]>} {
  return
}

// -----

// expected-error @below {{nd-SBP needs one entry per mesh axis}}
func.func @empty_nd_sbp() attributes {sbp = #oflow.nd_sbp<[]>} {
  return
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  // expected-error @below {{argument #0: nd-SBP [S(0)] has 1 entries but the mesh #oflow.mesh<2x4> has 2 axes}}
  func.func @too_few_entries(%x: tensor<8x8xf32> {oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    return
  }
}

// -----

// expected-error @below {{argument #0: nd-SBP [S(0), B] has 2 entries but the mesh #oflow.mesh<1> has 1 axes}}
func.func @too_many_entries_default_mesh(%x: tensor<8x8xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), B]>}) {
  return
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  // expected-error @below {{argument #0: nd-SBP [B, S(2)] on mesh axis 1 splits axis 2 of a rank-2 tensor}}
  func.func @split_axis_beyond_rank(%x: tensor<8x8xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(2)]>}) {
    return
  }
}

// -----

// A body with fewer arguments than the function's type (found by fuzzing:
// the attribute's check read past the block's arguments): the attribute is
// checked against the type, and the function's own verifier names the rest.
module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  // expected-error @below {{argument #0: nd-SBP [B, S(2)] on mesh axis 1 splits axis 2 of a rank-2 tensor}}
  func.func @body_without_arguments(tensor<8x8xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(2)]>}) {
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4, names = [node, gpu]>} {
  // expected-error @below {{argument #0: nd-SBP [S(0), S(1)]: tensor axis 1 (size 6) is not divisible by the size 4 of mesh axis 1 (gpu)}}
  func.func @not_divisible(%x: tensor<8x6xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(1)]>}) {
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<3x4>} {
  // expected-error @below {{argument #0: nd-SBP [S(0), B]: tensor axis 0 (size 8) is not divisible by the size 3 of mesh axis 0}}
  func.func @not_divisible_unnamed(%x: tensor<8x8xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), B]>}) {
    return
  }
}

// -----

// The planner's model and the verifier share these rules
// (oflow/Support/SbpRules.h): partial with sum on one axis and max on
// another means nothing.
module attributes {oflow.mesh = #oflow.mesh<2x4, names = [node, gpu]>} {
  // expected-error @below {{argument #0: nd-SBP [P(sum), P(max)] is partial with sum and with max (mesh axis 1 (gpu)): no reduction undoes both}}
  func.func @mixed_partials(%x: tensor<4x8xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum), P(max)]>}) {
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4, names = [node, gpu]>} {
  // expected-error @below {{argument #0: nd-SBP [S(0), S(0)]: tensor axis 0 (size 4) is not divisible by 8, the product of the mesh axes that split it (up to mesh axis 1 (gpu))}}
  func.func @product_not_divisible(%x: tensor<4x8xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  // expected-error @below {{result #0: nd-SBP [B, S(0)]: tensor axis 0 (size 6) is not divisible by the size 4 of mesh axis 1}}
  func.func @result_not_divisible() -> (tensor<6xf32> {oflow.sbp = #oflow.nd_sbp<[B, S(0)]>}) {
    %0 = oflow.constant dense<0.0> : tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  func.func @op_result_not_divisible(%x: tensor<8x6xf32>) {
    // expected-error @below {{result #0: nd-SBP [S(0), S(1)]: tensor axis 1 (size 6) is not divisible by the size 4 of mesh axis 1}}
    %0 = oflow.neg %x {oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>]} : tensor<8x6xf32>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x4>} {
  func.func @op_second_result(%x: tensor<4x6xf32>) {
    // expected-error @below {{result #1: nd-SBP [S(0), S(1)]: tensor axis 1 (size 2) is not divisible by the size 4 of mesh axis 1}}
    %0:2 = oflow.split %x {axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(1)]>, #oflow.nd_sbp<[S(0), S(1)]>], sizes = array<i64: 4, 2>} : (tensor<4x6xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>)
    return
  }
}

// -----

func.func @op_sbp_count(%x: tensor<4x6xf32>) {
  // expected-error @below {{'oflow.sbp' on an op must list one #oflow.nd_sbp per result (2)}}
  %0:2 = oflow.split %x {axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[B]>], sizes = array<i64: 4, 2>} : (tensor<4x6xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>)
  return
}

// -----

func.func @op_sbp_not_a_list(%x: tensor<4x6xf32>) {
  // expected-error @below {{'oflow.sbp' on an op must list one #oflow.nd_sbp per result (1)}}
  %0 = oflow.neg %x {oflow.sbp = #oflow.nd_sbp<[B]>} : tensor<4x6xf32>
  return
}

// -----

func.func @op_sbp_not_nd_sbp(%x: tensor<4x6xf32>) {
  // expected-error @below {{'oflow.sbp' on result #0 must be an #oflow.nd_sbp}}
  %0 = oflow.neg %x {oflow.sbp = [#oflow.sbp<B>]} : tensor<4x6xf32>
  return
}

// -----

// expected-error @below {{'oflow.sbp' on argument #0 must be an #oflow.nd_sbp}}
func.func @arg_sbp_not_nd_sbp(%x: tensor<4x6xf32> {oflow.sbp = "S(0)"}) {
  return
}

// -----

// expected-error @below {{'oflow.sbp' on argument #0 needs a ranked tensor, not 'i32'}}
func.func @arg_sbp_not_tensor(%x: i32 {oflow.sbp = #oflow.nd_sbp<[B]>}) {
  return
}

// -----

// expected-error @below {{'oflow.mesh' belongs on the module}}
func.func @mesh_on_func() attributes {oflow.mesh = #oflow.mesh<8>} {
  return
}

// -----

// expected-error @below {{'oflow.mesh' must be an #oflow.mesh}}
module attributes {oflow.mesh = [8, 4]} {
}

// -----

func.func @unknown_op_attr(%x: tensor<4xf32>) {
  // expected-error @below {{unknown oflow attribute 'oflow.foo'}}
  %0 = oflow.neg %x {oflow.foo = 1 : i64} : tensor<4xf32>
  return
}

// -----

// expected-error @below {{unknown oflow attribute 'oflow.foo' on argument #0}}
func.func @unknown_arg_attr(%x: tensor<4xf32> {oflow.foo}) {
  return
}

// -----

// expected-error @below {{unknown oflow attribute 'oflow.sbpp' on result #0}}
func.func @unknown_result_attr(%x: tensor<4xf32>) -> (tensor<4xf32> {oflow.sbpp = #oflow.nd_sbp<[B]>}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{unknown oflow attribute 'oflow.foo'}}
module attributes {oflow.foo = 1 : i64} {
}

// -----

// expected-error @below {{'oflow.name' on argument #0 must be a string}}
func.func @name_not_string(%x: tensor<4xf32> {oflow.name = 3 : i64}) {
  return
}

// -----

func.func @op_name_not_string(%x: tensor<4xf32>) {
  // expected-error @below {{'oflow.name' must be a string}}
  %0 = oflow.neg %x {oflow.name = ["a"]} : tensor<4xf32>
  return
}

// -----

// --micro-batches' request for sharded gradient accumulators is the module's.
// expected-error @below {{'oflow.scatter_each_micro_batch' is a unit attribute of the module}}
func.func @scatter_request_on_a_function() attributes {oflow.scatter_each_micro_batch} {
  return
}

// -----

// oflow.view (oflow-flatten-state): the shape a variable stored flat is read
// in, with at most as many elements as the variable (the rest is padding).
module {
  // expected-error @below {{'oflow.view' on the variable has 40 elements, more than the tensor's 36}}
  oflow.variable @w param : tensor<4x9xf32> {oflow.view = array<i64: 5, 8>}
}

// -----

// expected-error @below {{'oflow.view' is an attribute of oflow.variable}}
func.func @view_on_a_function() attributes {oflow.view = array<i64: 2>} {
  return
}

// -----

// expected-error @below {{'oflow.view' on result #0 has 9 elements, more than the tensor's 8}}
func.func @view_on_a_result() -> (tensor<8xf32> {oflow.view = array<i64: 3, 3>}) {
  %0 = oflow.constant dense<0.0> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
