// RUN: oflow-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(oflow-store-results-in-place))" | FileCheck %s
// RUN: oflow-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(oflow-store-results-in-place),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize)" | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0) -> (d0)>

// An SGD-like update of a parameter in state (%arg0): the update writes
// into the parameter's own tensor, and bufferization computes it in place,
// with no arena buffer and no copy.
// CHECK-LABEL: func.func @update
// CHECK: %[[V:.*]] = memref.view %arg0
// CHECK: %[[W:.*]] = bufferization.to_tensor %[[V]] restrict writable
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : {{.*}}) outs(%[[W]] : tensor<16xf32>)
// CHECK: bufferization.materialize_in_destination %[[N]] in writable %[[V]]
// BUF-LABEL: func.func @update
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @update(%arg0: memref<?xi8>, %arg1: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %view = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %view restrict : memref<16xf32> to tensor<16xf32>
  %gview = memref.view %arg1[%c64][] : memref<?xi8> to memref<16xf32>
  %g = bufferization.to_tensor %gview restrict : memref<16xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %new in writable %view : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Elementwise fusion leaves a moment's update (%m1) before the parameter's
// update, which recomputes the new moment from the old one (%m). The
// moment's update moves after that last read of the old moment, so both
// are done in place.
// CHECK-LABEL: func.func @moment
// CHECK: %[[M:.*]] = bufferization.to_tensor %{{.*}} restrict writable
// CHECK: %[[W:.*]] = bufferization.to_tensor %{{.*}} restrict writable
// CHECK: %[[W1:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[M]] : {{.*}}) outs(%[[W]] : tensor<16xf32>)
// CHECK: %[[M1:.*]] = linalg.generic {{.*}} ins(%[[M]] : {{.*}}) outs(%[[M]] : tensor<16xf32>)
// CHECK: bufferization.materialize_in_destination %[[M1]]
// CHECK: bufferization.materialize_in_destination %[[W1]]
// BUF-LABEL: func.func @moment
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @moment(%arg0: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %mview = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %m = bufferization.to_tensor %mview restrict : memref<16xf32> to tensor<16xf32>
  %wview = memref.view %arg0[%c64][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %wview restrict : memref<16xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%m : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %w1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %m : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %b, %b : f32
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %m1 in writable %mview : (tensor<16xf32>, memref<16xf32>) -> ()
  bufferization.materialize_in_destination %w1 in writable %wview : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// An output that is only written (a gradient into io): the view moves up
// to the producer, which writes through a new writable tensor of it.
// CHECK-LABEL: func.func @output
// CHECK: %[[C:.*]] = arith.constant 32 : index
// CHECK: %[[V:.*]] = memref.view %arg1[%[[C]]][]
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[V]] restrict writable
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%[[T]] : tensor<8xf32>)
// CHECK: bufferization.materialize_in_destination %[[G]] in writable %[[V]]
// BUF-LABEL: func.func @output
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @output(%arg0: memref<?xi8>, %arg1: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %xview = memref.view %arg0[%c0][] : memref<?xi8> to memref<8xf32>
  %x = bufferization.to_tensor %xview restrict : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  %c32 = arith.constant 32 : index
  %gview = memref.view %arg1[%c32][] : memref<?xi8> to memref<8xf32>
  bufferization.materialize_in_destination %g in writable %gview : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>

// Left alone: a destination another view overlaps (writing it in place
// could change what that view reads), and a producer that reads its init
// (a sum into a zero fill).
// CHECK-LABEL: func.func @left_alone
// CHECK: bufferization.to_tensor %{{.*}} restrict :
// CHECK-NOT: writable :
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16xf32>)
// CHECK: linalg.fill
// CHECK: return
func.func @left_alone(%arg0: memref<?xi8>, %arg1: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %view = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %view restrict : memref<16xf32> to tensor<16xf32>
  %alias = memref.view %arg0[%c8][] : memref<?xi8> to memref<4xf32>
  %e = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%w : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %new in writable %view : (tensor<16xf32>, memref<16xf32>) -> ()
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
      ins(%w : tensor<16xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %o : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  %sview = memref.view %arg1[%c0][] : memref<?xi8> to memref<f32>
  bufferization.materialize_in_destination %s in writable %sview : (tensor<f32>, memref<f32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A convolution's weight: the library calls read it straight from its view
// (bufferization folds to_buffer(to_tensor(view)) to the view), which
// bufferization cannot see. The update is moved after the last such call
// and then writes the weight in place: no arena buffer, no copy back.
// CHECK-LABEL: func.func @read_by_calls
// CHECK: %[[V:.*]] = memref.view %arg0
// CHECK: %[[W:.*]] = bufferization.to_tensor %[[V]] restrict writable
// CHECK: %[[C:.*]] = memref.cast %[[V]]
// CHECK: call @conv_forward(%[[C]])
// CHECK: call @conv_backward_data(%[[C]])
// CHECK: %[[N:.*]] = linalg.generic {{.*}} outs(%[[W]] : tensor<16xf32>)
// CHECK: bufferization.materialize_in_destination %[[N]] in writable %[[V]]
// BUF-LABEL: func.func @read_by_calls
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func private @conv_forward(memref<?xf32>)
func.func private @conv_backward_data(memref<?xf32>)
func.func @read_by_calls(%arg0: memref<?xi8>, %arg1: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %view = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %view restrict : memref<16xf32> to tensor<16xf32>
  %cast = memref.cast %view : memref<16xf32> to memref<?xf32>
  call @conv_forward(%cast) : (memref<?xf32>) -> ()
  %gview = memref.view %arg1[%c64][] : memref<?xi8> to memref<16xf32>
  %g = bufferization.to_tensor %gview restrict : memref<16xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  call @conv_backward_data(%cast) : (memref<?xf32>) -> ()
  bufferization.materialize_in_destination %new in writable %view : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A call reads the weight's view after the update's result is used: the
// update cannot follow it, so it keeps its own buffer (the view is not made
// writable) and bufferization copies it back at the end.
// CHECK-LABEL: func.func @call_after_a_use
// CHECK: bufferization.to_tensor %{{.*}} restrict :
// CHECK-NOT: writable :
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<16xf32>)
// CHECK: call @read
// CHECK: return
func.func private @read(memref<?xf32>)
func.func @call_after_a_use(%arg0: memref<?xi8>, %arg1: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %view = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %view restrict : memref<16xf32> to tensor<16xf32>
  %cast = memref.cast %view : memref<16xf32> to memref<?xf32>
  %e = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%w : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %first = tensor.extract %new[%c0] : tensor<16xf32>
  %oview = memref.view %arg1[%c0][] : memref<?xi8> to memref<f32>
  memref.store %first, %oview[] : memref<f32>
  call @read(%cast) : (memref<?xf32>) -> ()
  bufferization.materialize_in_destination %new in writable %view : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The update and its store in a region, a call reading the weight after the
// region: the call cannot be ordered against the update from inside it, so
// the view is left to bufferization's copy.
// CHECK-LABEL: func.func @call_outside_the_region
// CHECK: bufferization.to_tensor %{{.*}} restrict :
// CHECK-NOT: writable :
// CHECK: call @read_weight
func.func private @read_weight(memref<?xf32>)
func.func @call_outside_the_region(%arg0: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %view = memref.view %arg0[%c0][] : memref<?xi8> to memref<16xf32>
  %w = bufferization.to_tensor %view restrict : memref<16xf32> to tensor<16xf32>
  %cast = memref.cast %view : memref<16xf32> to memref<?xf32>
  scf.execute_region {
    %e = tensor.empty() : tensor<16xf32>
    %new = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%w : tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %d = arith.addf %a, %a : f32
      linalg.yield %d : f32
    } -> tensor<16xf32>
    bufferization.materialize_in_destination %new in writable %view : (tensor<16xf32>, memref<16xf32>) -> ()
    scf.yield
  }
  call @read_weight(%cast) : (memref<?xf32>) -> ()
  return
}
