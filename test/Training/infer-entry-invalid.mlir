// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-build-infer-entry

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  // expected-error @+1 {{'oflow.gradient' op in @main: an inference entry computes no gradients (build it from the imported model, before oflow-autodiff)}}
  oflow.gradient "w", %x : tensor<f32>
  return %w : tensor<f32>
}

// -----

// expected-error @+1 {{oflow-build-infer-entry: no function @main with a body}}
module {
  func.func private @main(%x: tensor<f32>) -> tensor<f32>
}

// -----

// expected-error @+1 {{oflow-build-infer-entry: the module already has @oflow_infer}}
module {
  func.func @oflow_infer(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32>
  // expected-error @+1 {{'oflow.weight' op weight 'w' appears with types 'tensor<f32>' and 'tensor<1xf32>'; ops of one name must be one weight}}
  %v = oflow.weight "w", dense<1.0> : tensor<1xf32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'oflow.weight' op weight name 'oflow_infer' is reserved for an entry function}}
  %w = oflow.weight "oflow_infer", dense<1.0> : tensor<f32>
  return %w : tensor<f32>
}

// -----

// A training-mode dropout draws a random mask even at inference (ONNX), and
// no other runtime's mask could be matched: refused, naming the fix.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'oflow.dropout' op in @main: dropout in training mode (ratio 5.000000e-01) in an inference program draws a random mask; export the model in eval mode (training_mode false) to infer with it}}
  %d = oflow.dropout %x {ratio = 0.5 : f64, seed = 1 : i64} : tensor<4xf32>
  return %d : tensor<4xf32>
}
