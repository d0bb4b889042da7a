// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-append-loss="loss=cross-entropy label=x"

// The label name must be new.
// expected-error @+1 {{the label name 'x' is already an input of @main (argument #0); choose another with --label}}
func.func @main(%x: tensor<8x10xf32> {oflow.name = "x"}) -> tensor<8x10xf32> {
  return %x : tensor<8x10xf32>
}

// -----

// Cross-entropy needs logits [N, C, d...].
// expected-error @+1 {{--loss cross-entropy needs output #0 'y' to be logits [N, C, d...], not 'tensor<8xf32>'}}
func.func @main(%a: tensor<8xf32>) -> (tensor<8xf32> {oflow.name = "y"}) {
  return %a : tensor<8xf32>
}

// -----

// expected-error @+1 {{--loss cross-entropy needs floating-point output #0, not 'tensor<8x3xi64>'}}
func.func @main(%a: tensor<8x3xi64>) -> tensor<8x3xi64> {
  return %a : tensor<8x3xi64>
}

// -----

// A model that returns its loss takes no --loss.
// expected-error @+1 {{@main already returns a scalar loss ('l' : tensor<f32>); --loss cross-entropy does not apply}}
func.func @main(%a: tensor<8x3xf32>, %l: tensor<f32>) -> (tensor<8x3xf32>, tensor<f32> {oflow.name = "l"}) {
  return %a, %l : tensor<8x3xf32>, tensor<f32>
}
