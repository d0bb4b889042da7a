// --micro-batches' axis (the last, linked `sequential`) holds no state and
// must divide every input's per-device batch.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-infer-sbp -o /dev/null

module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>} {
  // expected-error @below {{variable 'w' cannot be stored as [B, S(0)]: the last mesh axis runs the micro-batches (--micro-batches), over which state is whole (B)}}
  oflow.variable @w param : tensor<4x4xf32> {sbp = #oflow.nd_sbp<[B, S(0)]>}
}

// -----

module attributes {oflow.mesh = #oflow.mesh<2x2, links = [local, sequential]>} {
  // expected-error @below {{input 'x': its 3 rows per device do not divide into 2 micro-batches (--micro-batches)}}
  func.func @train(%x: tensor<6x4xf32> {oflow.name = "x"}) -> tensor<6x4xf32> attributes {oflow.entry = "train"} {
    return %x : tensor<6x4xf32>
  }
}
