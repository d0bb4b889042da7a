// RUN: oflow-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// `oflow.trainable`, the mark oflow-autodiff leaves on trained weights.
// CHECK: oflow.weight "w", {{.*}} {oflow.trainable}
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  return %w : tensor<f32>
}

// -----

func.func @main() -> tensor<f32> {
  // expected-error @+1 {{'oflow.trainable' is a unit attribute of oflow.weight}}
  %c = oflow.constant dense<1.0> : tensor<f32> {oflow.trainable}
  return %c : tensor<f32>
}

// -----

func.func @main() -> tensor<f32> {
  // expected-error @+1 {{'oflow.trainable' is a unit attribute of oflow.weight}}
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable = 1 : i64}
  return %w : tensor<f32>
}
