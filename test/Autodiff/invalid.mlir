// RUN: oflow-opt %s -split-input-file -verify-diagnostics --oflow-autodiff

// An op without a gradient rule on the path from a weight to the loss.
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32>
  // The node name comes from the location (the importer's NameLoc).
  // expected-error @unknown {{'arith.addf' (node "add_1") has no gradient rule; freeze the weights that reach it (--freeze) or keep it off the path from the weights to the loss}}
  %s = arith.addf %w, %w : tensor<4xf32> loc("add_1")
  %l = oflow.reduce_sum %s {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The same op off the differentiable path is fine (only its integer result
// is used); so is one that only frozen weights reach (see trainable.mlir).
func.func @main(%i: tensor<4xi64>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32>
  %j = arith.addi %i, %i : tensor<4xi64>
  %f = oflow.cast %j to f32 : tensor<4xi64>
  %p = oflow.mul %f, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{oflow-autodiff: the first result of @main must be the loss, a 0-d float tensor}}
func.func @main() -> tensor<4xf32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{oflow-autodiff: the first result of @main must be the loss, a 0-d float tensor}}
func.func @main(%x: tensor<i64>) -> tensor<i64> {
  return %x : tensor<i64>
}

// -----

// expected-error @+1 {{oflow-autodiff: the first result of @main must be the loss, a 0-d float tensor}}
func.func @main() {
  return
}

// -----

// expected-error @+1 {{oflow-autodiff: no function @main (the entry that returns the loss)}}
module {
  func.func @train() -> tensor<f32> {
    %w = oflow.weight "w", dense<1.0> : tensor<f32>
    return %w : tensor<f32>
  }
}

// -----

// expected-error @+1 {{oflow-autodiff: @main must have a body of one block}}
func.func private @main() -> tensor<f32>

// -----

func.func @main() -> tensor<f32> {
  %a = oflow.weight "w", dense<1.0> : tensor<f32>
  // expected-error @+1 {{oflow-autodiff: weight "w" is used with different types}}
  %b = oflow.weight "w", dense<1.0> : tensor<f64>
  %c = oflow.cast %b to f32 : tensor<f64>
  %s = oflow.add %a, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
