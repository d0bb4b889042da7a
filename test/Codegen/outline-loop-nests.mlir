// oflow-outline-loop-nests: an entry's ops move, in runs holding a few loop
// nests each, into private functions called (no_inline) in their place.
// Views of the arena and constants stay and are recomputed where used;
// other values from before a run become arguments, values used after it
// results.
//
// RUN: oflow-opt %s -split-input-file -oflow-outline-loop-nests='nests-per-function=1 dedup=false' | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-outline-loop-nests='nests-per-function=2 dedup=false' | FileCheck %s --check-prefix=TWO
// RUN: oflow-opt %s -split-input-file -oflow-outline-loop-nests='min-nests=4 dedup=false' | FileCheck %s --check-prefix=FEW

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[ARENA:.*]]: memref<?xi8>, %[[X:.*]]: memref<f32>)
// CHECK: %[[S:.*]] = call @step_nest0(%[[X]], %[[ARENA]]) {no_inline} : (memref<f32>, memref<?xi8>) -> f32
// CHECK-NEXT: call @step_nest1(%[[ARENA]]) {no_inline} : (memref<?xi8>) -> ()
// CHECK-NEXT: call @step_nest2(%[[ARENA]], %[[S]], %[[X]]) {no_inline} : (memref<?xi8>, f32, memref<f32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @step_nest0(%[[X0:.*]]: memref<f32>, %[[A0:.*]]: memref<?xi8>) -> f32
// CHECK: %[[V0:.*]] = memref.view %[[A0]]
// CHECK: %[[L:.*]] = memref.load %[[X0]][]
// CHECK: scf.for
// CHECK: memref.store %[[L]], %[[V0]]
// CHECK: return %[[L]] : f32
// CHECK: func.func private @step_nest1(
// CHECK: arith.addf
// CHECK: func.func private @step_nest2(%[[A2:.*]]: memref<?xi8>, %[[S2:.*]]: f32, %[[X2:.*]]: memref<f32>)
// CHECK: %[[R:.*]] = scf.for {{.*}} -> (f32)
// CHECK: %[[T:.*]] = arith.addf %[[R]], %[[S2]]
// CHECK: memref.store %[[T]], %[[X2]][]
// CHECK: return

// Two nests per function: the load's value stays inside the first.
// TWO-LABEL: func.func @step(
// TWO-NEXT: arith.constant
// TWO: call @step_nest0(%{{.*}}, %{{.*}}) {no_inline} : (memref<f32>, memref<?xi8>) -> f32
// TWO-NEXT: call @step_nest1(
// TWO-NEXT: return
// TWO-NOT: @step_nest2

// Fewer nests than min-nests: left alone.
// FEW-LABEL: func.func @step(
// FEW-NOT: call
// FEW: scf.for
func.func @step(%arena: memref<?xi8>, %x: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %v = memref.view %arena[%c0][] : memref<?xi8> to memref<8xf32>
  %s = memref.load %x[] : memref<f32>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %s, %v[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %v[%i] : memref<8xf32>
    %b = arith.addf %a, %a : f32
    memref.store %b, %v[%i] : memref<8xf32>
  }
  %t = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %a = memref.load %v[%i] : memref<8xf32>
    %n = arith.addf %acc, %a : f32
    scf.yield %n : f32
  }
  %u = arith.addf %t, %s : f32
  memref.store %u, %x[] : memref<f32>
  return
}
