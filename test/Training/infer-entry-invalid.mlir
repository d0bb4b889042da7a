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
