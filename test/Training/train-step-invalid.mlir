// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-build-train-step

// expected-error @+1 {{@main must return the scalar float loss first (run oflow-append-loss and oflow-autodiff first)}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{oflow-build-train-step: no function @main with a body}}
module {
  func.func @model(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

// expected-error @+1 {{oflow-build-train-step: the module already has @oflow_train_step}}
module {
  func.func @oflow_train_step(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

// expected-error @+1 {{@main trains no weight: no float initializer reaches the loss (values fed as graph inputs are data, not parameters; --freeze may exclude them; oflow-autodiff marks what is trained)}}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32>
  %y = oflow.mul %x, %w : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'oflow.weight' op trainable weight 'w' has no oflow.gradient (run oflow-autodiff first)}}
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  %y = oflow.mul %x, %w : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  // expected-error @+1 {{'oflow.weight' op weight 'w' appears with types 'tensor<f32>' and 'tensor<2xf32>'; ops of one name must be one weight}}
  %w2 = oflow.weight "w", dense<1.0> : tensor<2xf32>
  oflow.gradient "w", %x : tensor<f32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  oflow.gradient "w", %x : tensor<f32>
  // expected-error @+1 {{'oflow.gradient' op names 'v', which is no oflow.weight of @main}}
  oflow.gradient "v", %x : tensor<f32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  %b = oflow.weight "b", dense<1.0> : tensor<f32>
  oflow.gradient "w", %x : tensor<f32>
  // expected-error @+1 {{'oflow.gradient' op names 'b', a weight that is not oflow.trainable}}
  oflow.gradient "b", %x : tensor<f32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>, %g: tensor<2xf32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  // expected-error @+1 {{'oflow.gradient' op gradient of 'w' has type 'tensor<2xf32>', but the weight is 'tensor<f32>'}}
  oflow.gradient "w", %g : tensor<2xf32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32> {oflow.trainable}
  oflow.gradient "w", %x : tensor<f32>
  // expected-error @+1 {{'oflow.gradient' op is the second gradient of 'w'}}
  oflow.gradient "w", %x : tensor<f32>
  return %w : tensor<f32>
}

// -----

func.func @main(%x: tensor<4x2xf32>, %g: tensor<2xf32>) -> tensor<f32> {
  %s = oflow.weight "s", dense<1.0> : tensor<2xf32> {oflow.trainable}
  %b = oflow.weight "b", dense<0.0> : tensor<2xf32>
  %m = oflow.weight "m", dense<0.0> : tensor<2xf32>
  %v = oflow.weight "v", dense<1.0> : tensor<2xf32>
  %y, %nm, %nv = oflow.batch_norm_training %x, %s, %b, %m, %v
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  // expected-error @+1 {{'oflow.batch_norm_training' op updates running statistics 'm' that another batch_norm_training updates too}}
  %y2, %nm2, %nv2 = oflow.batch_norm_training %y, %s, %b, %m, %v
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %l = oflow.reduce_mean %y2 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  oflow.gradient "s", %g : tensor<2xf32>
  return %l : tensor<f32>
}

// -----

func.func @main(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'oflow.weight' op weight name 'oflow_grad_step' is reserved for an entry function}}
  %w = oflow.weight "oflow_grad_step", dense<1.0> : tensor<f32> {oflow.trainable}
  oflow.gradient "oflow_grad_step", %x : tensor<f32>
  return %w : tensor<f32>
}
