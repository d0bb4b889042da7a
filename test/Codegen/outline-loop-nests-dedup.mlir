// oflow-outline-loop-nests with dedup (the default): each outlined
// function's constant view offsets become parameters its call passes, and
// functions whose text is then equal are one. Two layers that scale their
// own buffer share a function; the nest that adds instead keeps its own.
//
// RUN: oflow-opt %s -oflow-outline-loop-nests='nests-per-function=1' | FileCheck %s
// RUN: oflow-opt %s -oflow-outline-loop-nests='nests-per-function=1 dedup=false' | FileCheck %s --check-prefix=NODEDUP

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[ARENA:.*]]: memref<?xi8>)
// CHECK: memref.view
// CHECK: memref.view
// CHECK: memref.view
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: call @step_nest0(%[[ARENA]], %[[C0]]) {no_inline} : (memref<?xi8>, index) -> ()
// CHECK-NEXT: %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT: call @step_nest0(%[[ARENA]], %[[C32]]) {no_inline} : (memref<?xi8>, index) -> ()
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: call @step_nest2(%[[ARENA]], %[[C64]]) {no_inline} : (memref<?xi8>, index) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @step_nest0(%[[A:.*]]: memref<?xi8>, %[[OFF:.*]]: index)
// CHECK: memref.view %[[A]][%[[OFF]]][] : memref<?xi8> to memref<8xf32>
// CHECK: arith.mulf
// CHECK-NOT: func.func private @step_nest1(
// CHECK: func.func private @step_nest2(
// CHECK: arith.addf

// NODEDUP: call @step_nest0(%{{.*}}) {no_inline} : (memref<?xi8>) -> ()
// NODEDUP: call @step_nest1(
// NODEDUP: call @step_nest2(
// NODEDUP: func.func private @step_nest1(
func.func @step(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %v0 = memref.view %arena[%c0][] : memref<?xi8> to memref<8xf32>
  %v1 = memref.view %arena[%c32][] : memref<?xi8> to memref<8xf32>
  %v2 = memref.view %arena[%c64][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %v0[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %v0[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %v1[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %v1[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %v2[%i] : memref<8xf32>
    %b = arith.addf %a, %a : f32
    memref.store %b, %v2[%i] : memref<8xf32>
  }
  return
}
