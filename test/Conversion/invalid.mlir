// RUN: oflow-opt %s -split-input-file -verify-diagnostics --oflow-lower-to-linalg

func.func @dropout(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'oflow.dropout' op cannot lower: dropout with a positive ratio draws its mask per training step, and this one has no step (oflow-build-train-step gives it one)}}
  // expected-error @+1 {{failed to legalize operation 'oflow.dropout' that was explicitly marked illegal}}
  %0 = oflow.dropout %x {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+2 {{'oflow.add' op cannot lower: element type 'ui8' is not supported (only floats and signless integers)}}
  // expected-error @+1 {{failed to legalize operation 'oflow.add' that was explicitly marked illegal}}
  %0 = oflow.add %x, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @gather_empty(%d: tensor<0x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'oflow.gather' op cannot lower: gather from an empty axis}}
  // expected-error @+1 {{failed to legalize operation 'oflow.gather' that was explicitly marked illegal}}
  %0 = oflow.gather %d, %i {axis = 0 : i64} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_empty(%g: tensor<3x0xf32>, %i: tensor<0xi64>) -> tensor<3x0xf32> {
  // expected-error @+2 {{'oflow.gather_backward' op cannot lower: scatter into an empty axis}}
  // expected-error @+1 {{failed to legalize operation 'oflow.gather_backward' that was explicitly marked illegal}}
  %0 = oflow.gather_backward %g, %i {axis = 1 : i64, data_shape = array<i64: 3, 0>} : (tensor<3x0xf32>, tensor<0xi64>) -> tensor<3x0xf32>
  return %0 : tensor<3x0xf32>
}
