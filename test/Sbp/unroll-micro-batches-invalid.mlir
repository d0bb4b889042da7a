// oflow-unroll-micro-batches' errors: it runs on partitioned programs whose
// state is whole on the micro-batch axis, and every op it would copy per
// micro-batch must be free of side effects.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-unroll-micro-batches -o /dev/null

// expected-error @below {{oflow-unroll-micro-batches runs after oflow-partition}}
module attributes {oflow.mesh = #oflow.mesh<2, links = [sequential]>} {
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2, links = [sequential]>, oflow.partitioned} {
  // expected-error @below {{variable 'w' is S(0) on the micro-batch axis: state is whole on it}}
  oflow.variable @w param : tensor<2x4xf32> {sbp = #oflow.nd_sbp<[S(0)]>}
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2, links = [sequential]>, oflow.partitioned} {
  oflow.variable @w param : tensor<2x4xf32> {sbp = #oflow.nd_sbp<[B]>}
  func.func @train(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>}) {
    // expected-error @below {{'oflow.write_variable' op would run once per micro-batch, but has side effects}}
    oflow.write_variable @w, %x : tensor<2x4xf32>
    return
  }
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2, links = [sequential]>, oflow.partitioned} {
  func.func @train(%x: tensor<2x4xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0)]>}) -> tensor<4xf32> {
    %s = oflow.reduce_sum %x {axes = array<i64: 0>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<2x4xf32>) -> tensor<4xf32>
    %r = oflow.reduce_sum %x {axes = array<i64: 1>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<2x4xf32>) -> tensor<2xf32>
    %t = oflow.reshape %r [2] {oflow.sbp = [#oflow.nd_sbp<[S(0)]>]} : (tensor<2xf32>) -> tensor<2xf32>
    // expected-error @below {{'oflow.concat' op mixes per-micro-batch values with values summed over the micro-batches}}
    %c = oflow.concat %s, %t {axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<4xf32>, tensor<2xf32>) -> tensor<6xf32>
    return %s : tensor<4xf32>
  }
}
