// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-append-loss
// An unknown --loss:
// RUN: not oflow-opt %s -split-input-file -oflow-append-loss="loss=hinge" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: oflow-append-loss: unknown loss 'hinge' (expected none, cross-entropy or mse)

// No scalar output and no --loss: the error lists the outputs.
// expected-error @+1 {{@main returns no scalar loss (outputs: 'logits' : tensor<8x10xf32>, #1 : tensor<8xi64>); pass --loss cross-entropy|mse --label NAME to append one}}
func.func @main(%x: tensor<8x10xf32> {oflow.name = "x"}, %n: tensor<8xi64>) -> (tensor<8x10xf32> {oflow.name = "logits"}, tensor<8xi64>) {
  return %x, %n : tensor<8x10xf32>, tensor<8xi64>
}

// -----

// expected-error @+1 {{oflow-append-loss: no function @main with a body to take the loss from}}
module {
  func.func @other(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}
