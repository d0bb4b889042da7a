// RUN: oflow-opt %s -split-input-file -verify-diagnostics

// The dialect's checks of the training markers.

func.func @f() {
  // expected-error @+1 {{'oflow.trainable' is a unit attribute of oflow.weight}}
  %c = oflow.constant dense<1.0> : tensor<f32> {oflow.trainable}
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'oflow.trainable' is a unit attribute of oflow.weight}}
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable = 1}
  return
}

// -----

// expected-error @+1 {{'oflow.entry' must be "train", "grads" or "infer" on a function}}
func.func @f() attributes {oflow.entry = "eval"} {
  return
}

// -----

// expected-error @+1 {{'oflow.optimizer' must be a dictionary on a function}}
func.func @f() attributes {oflow.optimizer = "sgd"} {
  return
}

// -----

// expected-error @+1 {{'oflow.scalar' on argument #0 must be a string}}
func.func @f(%lr: tensor<f32> {oflow.scalar = 1}) {
  return
}

// -----

// expected-error @+1 {{'oflow.grad_of' on result #0 must be a string}}
func.func @f(%g: tensor<f32>) -> (tensor<f32> {oflow.grad_of = 2}) {
  return %g : tensor<f32>
}

// -----

// Well-formed markers are accepted.
func.func @f(%lr: tensor<f32> {oflow.scalar = "lr"}) -> (tensor<f32> {oflow.grad_of = "w"})
    attributes {oflow.entry = "grads", oflow.optimizer = {kind = "sgd"}} {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  return %w : tensor<f32>
}
