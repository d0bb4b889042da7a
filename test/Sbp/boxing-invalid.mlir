// Verifiers of the boxing ops: the mesh axis must exist; before partitioning
// operand and result types agree; after it the converted tensor axis grows or
// shrinks by the mesh axis size.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics

// A mesh axis the mesh does not have.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @bad_mesh_axis(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.all_gather' op mesh_axis 1 is not an axis of the mesh 4 (1 axes)}}
    %0 = oflow.all_gather %x {axis = 0 : i64, mesh_axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  func.func @bad_mesh_axis_all_reduce(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.all_reduce' op mesh_axis -1 is not an axis of the mesh 4 (2 axes)}}
    %0 = oflow.all_reduce %x {mesh_axis = -1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

// Before partitioning the types agree.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @global_mismatch(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.local_slice' op result type 'tensor<2x12xf32>' does not match the operand 'tensor<8x12xf32>' (before partitioning they agree)}}
    %0 = oflow.local_slice %x {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<2x12xf32>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @all_reduce_mismatch(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.all_reduce' op result type 'tensor<8x12xf64>' differs from its operand's 'tensor<8x12xf32>'}}
    %0 = oflow.all_reduce %x {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf64>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @bucket_arity(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.all_reduce' op has 2 operands but 1 results}}
    %0 = oflow.all_reduce %x, %x {mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

// Tensor axis out of range.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @axis_range(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.reduce_scatter' op tensor axis 2 is out of range for 'tensor<8x12xf32>'}}
    %0 = oflow.reduce_scatter %x {axis = 2 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @same_axes(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.all_to_all' op source_axis and axis must differ}}
    %0 = oflow.all_to_all %x {axis = 0 : i64, mesh_axis = 0 : i64, source_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

// After partitioning: all_gather grows its axis by 4, not 2.
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @local_gather(%x: tensor<2x12xf32>) {
    // expected-error @below {{'oflow.all_gather' op result type 'tensor<4x12xf32>' does not match the operand 'tensor<2x12xf32>' converted on its mesh axis}}
    %0 = oflow.all_gather %x {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<4x12xf32>
    return
  }
}

// -----

// After partitioning the shape no longer agrees: a reduce_scatter that keeps it.
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @local_scatter(%x: tensor<8x12xf32>) {
    // expected-error @below {{'oflow.reduce_scatter' op result type 'tensor<8x12xf32>' does not match the operand 'tensor<8x12xf32>' converted on its mesh axis}}
    %0 = oflow.reduce_scatter %x {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}

// -----

// A local piece that does not divide by the mesh axis size.
module attributes {oflow.mesh = #oflow.mesh<2x3>, oflow.partitioned} {
  func.func @local_not_dividing(%x: tensor<8x4xf32>) {
    // expected-error @below {{'oflow.local_slice' op tensor axis 1 of 'tensor<8x4xf32>' does not divide by mesh axis 1 of size 3}}
    %0 = oflow.local_slice %x {axis = 1 : i64, mesh_axis = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x1xf32>
    return
  }
}

// -----

// all_to_all after partitioning: the source axis grows, the target shrinks.
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @local_all_to_all(%x: tensor<2x12xf32>) {
    // expected-error @below {{'oflow.all_to_all' op result type 'tensor<2x3xf32>' does not match the operand 'tensor<2x12xf32>' converted on its mesh axis}}
    %0 = oflow.all_to_all %x {axis = 1 : i64, mesh_axis = 0 : i64, source_axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<2x3xf32>
    return
  }
}

// -----

// The same ops in their correct local forms verify.
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @local_ok(%x: tensor<2x12xf32>, %b: tensor<8x12xf32>) {
    %0 = oflow.all_to_all %x {axis = 1 : i64, mesh_axis = 0 : i64, source_axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<8x3xf32>
    %1 = oflow.all_gather %x {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<8x12xf32>
    %2 = oflow.split_to_partial %x {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<8x12xf32>
    %3 = oflow.reduce_scatter %b {axis = 1 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x3xf32>
    %4 = oflow.local_slice %b {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<2x12xf32>
    %5 = oflow.broadcast_to_partial %b {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return
  }
}
