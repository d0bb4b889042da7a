// RUN: oflow-opt %s --oflow-bind-program-interface --split-input-file --verify-diagnostics | FileCheck %s

// Variables get state offsets (64-byte aligned, in module order); inputs,
// scalars and outputs io slots shared by name across entries; the entry takes
// (state, io, arena) and has a C interface.

// CHECK: module attributes {oflow.io = [{kind = "scalar", name = "poison", offset = 0 : i64, type = tensor<i8>}, {kind = "input", name = "x", offset = 64 : i64, type = tensor<2x4xf32>}, {int_range = array<i64: 0, 10>, kind = "input", name = "tok", offset = 128 : i64, type = tensor<2xi64>}, {kind = "scalar", name = "lr", offset = 192 : i64, type = tensor<f32>}, {kind = "output", name = "loss", offset = 256 : i64, type = tensor<f32>}, {kind = "scalar", name = "lr_used", offset = 320 : i64, type = tensor<f32>}, {kind = "grad", name = "w", offset = 384 : i64, type = tensor<10x4xf32>}], oflow.io_bytes = 576 : i64, oflow.state_bytes = 384 : i64}
// CHECK: oflow.variable @w param {{.*}}oflow.state_offset = 0 : i64
// CHECK: oflow.variable @w.momentum_buffer optimizer {{.*}}oflow.state_offset = 192 : i64
module {
  oflow.variable @w param : tensor<10x4xf32> = dense<1.0> : tensor<10x4xf32>
  oflow.variable @w.momentum_buffer optimizer : tensor<10x4xf32> {of = @w}
  // CHECK-LABEL: func.func @oflow_train_step
  // CHECK-SAME: (%[[STATE:.*]]: memref<?xi8>, %[[IO:.*]]: memref<?xi8>, %{{.*}}: memref<?xi8>)
  // CHECK-SAME: llvm.emit_c_interface
  // CHECK: %[[C64:.*]] = arith.constant 64 : index
  // CHECK: %[[XV:.*]] = memref.view %[[IO]][%[[C64]]][] : memref<?xi8> to memref<2x4xf32>
  // CHECK: bufferization.to_tensor %[[XV]] restrict : memref<2x4xf32> to tensor<2x4xf32>
  // CHECK: %[[WV:.*]] = memref.view %[[STATE]][%{{.*}}][] : memref<?xi8> to memref<10x4xf32>
  // CHECK: %[[W:.*]] = bufferization.to_tensor %[[WV]] restrict
  // CHECK-NOT: bufferization.to_tensor
  // CHECK: %[[NEW:.*]] = oflow.sub %[[W]], %[[W]]
  // CHECK: %[[DEST:.*]] = memref.view %[[STATE]][%{{.*}}][] : memref<?xi8> to memref<10x4xf32>
  // CHECK: bufferization.materialize_in_destination %[[NEW]] in writable %[[DEST]]
  // CHECK: return
  // CHECK-NOT: oflow.read_variable
  func.func @oflow_train_step(%x: tensor<2x4xf32> {oflow.name = "x"}, %tok: tensor<2xi64> {oflow.name = "tok"},
                              %lr: tensor<f32> {oflow.scalar = "lr"})
      -> (tensor<f32> {oflow.name = "loss"}, tensor<f32> {oflow.scalar = "lr_used"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<10x4xf32>
    %w2 = oflow.read_variable @w : tensor<10x4xf32>
    %e = oflow.gather %w, %tok {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %l = oflow.reduce_sum %e {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
    %new = oflow.sub %w, %w2 : (tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
    oflow.write_variable @w, %new : tensor<10x4xf32>
    return %l, %lr : tensor<f32>, tensor<f32>
  }
  // The gradient entry shares the io slots of x, tok and loss.
  // CHECK-LABEL: func.func @oflow_grad_step
  // CHECK: memref.view %{{.*}}[%[[C64b:.*]]][] : memref<?xi8> to memref<2x4xf32>
  func.func @oflow_grad_step(%x: tensor<2x4xf32> {oflow.name = "x"}, %tok: tensor<2xi64> {oflow.name = "tok"})
      -> (tensor<f32> {oflow.name = "loss"}, tensor<10x4xf32> {oflow.grad_of = "w"}) attributes {oflow.entry = "grads"} {
    %w = oflow.read_variable @w : tensor<10x4xf32>
    %l = oflow.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<10x4xf32>
  }
}

// -----

module {
  oflow.variable @w param : tensor<4xf32>
  func.func @oflow_train_step(%x: tensor<4xf32> {oflow.name = "x"}) attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<4xf32>
    // expected-error @+1 {{'oflow.gradient' op is left in an entry function: run the optimizer pass}}
    oflow.gradient "w", %w : tensor<4xf32>
    return
  }
}

// -----

module {
  // expected-error @+1 {{'func.func' op entry argument 0 has neither `oflow.name` nor `oflow.scalar`}}
  func.func @oflow_infer(%x: tensor<4xf32>) attributes {oflow.entry = "infer"} {
    return
  }
}
