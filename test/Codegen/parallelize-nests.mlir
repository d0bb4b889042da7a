// oflow-parallelize-nests: an outlined nest whose loop is an scf.parallel
// takes a range (begin, end) of its leading iterations, collapsed until
// there are enough to split, and records how many there are and how many
// make a task worth its overhead; callers pass the whole range.
//
// RUN: oflow-opt %s -split-input-file -oflow-parallelize-nests='min-work=4096 chunk-work=1024 min-iterations=64' | FileCheck %s

// 256 rows x 64 lanes: the rows are the range; 1024 work per task is 4 rows
// (64 x (load, exp, store) = 192 per row).
// CHECK-LABEL: func.func @rows(
// CHECK: %[[B:.*]] = arith.constant 0 : index
// CHECK: %[[E:.*]] = arith.constant 256 : index
// CHECK: call @rows_nest(%[[B]], %[[E]], %{{.*}}) {no_inline}
// CHECK: func.func private @rows_nest(%[[BEGIN:arg[0-9]+]]: index, %[[END:arg[0-9]+]]: index, %{{arg[0-9]+}}: memref<256x64xf32>)
// CHECK-SAME: oflow.parallel_grain = 6 : i64, oflow.parallel_iterations = 256 : i64
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[BEGIN]], %c0{{.*}}) to (%[[END]], %c64{{.*}})
func.func @rows(%x: memref<256x64xf32>) {
  call @rows_nest(%x) {no_inline} : (memref<256x64xf32>) -> ()
  return
}
func.func private @rows_nest(%x: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<256x64xf32>
    %e = math.exp %v : f32
    memref.store %e, %x[%i, %j] : memref<256x64xf32>
    scf.reduce
  }
  return
}

// -----

// 4 x 8 x 128: 4 and then 4 x 8 = 32 leading iterations are under 64, so
// all three dimensions merge into one of 4096.
// CHECK-LABEL: func.func private @merged_nest(
// CHECK-SAME: %[[BEGIN:arg[0-9]+]]: index, %[[END:arg[0-9]+]]: index
// CHECK-SAME: oflow.parallel_iterations = 4096 : i64
// CHECK: scf.parallel (%[[I:.*]]) = (%[[BEGIN]]) to (%[[END]])
// CHECK-NOT: scf.parallel
// CHECK: arith.remsi
// CHECK: arith.divsi
func.func @merged(%x: memref<4x8x128xf32>) {
  call @merged_nest(%x) {no_inline} : (memref<4x8x128xf32>) -> ()
  return
}
func.func private @merged_nest(%x: memref<4x8x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c4, %c8, %c128) step (%c1, %c1, %c1) {
    %v = memref.load %x[%i, %j, %k] : memref<4x8x128xf32>
    %e = math.exp %v : f32
    memref.store %e, %x[%i, %j, %k] : memref<4x8x128xf32>
    scf.reduce
  }
  return
}

// -----

// A non-unit lower bound and step: iteration i of the range is lb + i*step.
// CHECK-LABEL: func.func private @strided_nest(
// CHECK-SAME: %[[BEGIN:arg[0-9]+]]: index, %[[END:arg[0-9]+]]: index
// CHECK-SAME: oflow.parallel_iterations = 127 : i64
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[M0:.*]] = arith.muli %[[BEGIN]], %[[C2]]
// CHECK: %[[LB:.*]] = arith.addi %[[C4]], %[[M0]]
// CHECK: %[[M1:.*]] = arith.muli %[[END]], %[[C2]]
// CHECK: %[[UB:.*]] = arith.addi %[[C4]], %[[M1]]
// CHECK: scf.parallel (%{{.*}}) = (%[[LB]]) to (%[[UB]]) step (%[[C2]])
func.func @strided(%x: memref<258x256xf32>) {
  call @strided_nest(%x) {no_inline} : (memref<258x256xf32>) -> ()
  return
}
func.func private @strided_nest(%x: memref<258x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c258 = arith.constant 258 : index
  scf.parallel (%i) = (%c4) to (%c258) step (%c2) {
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %j] : memref<258x256xf32>
      memref.store %v, %x[%i, %j] : memref<258x256xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Left alone: too little work (serial is faster than waking threads), a
// nest whose outer loop is sequential, and one whose bounds are unknown.
// CHECK-LABEL: func.func @step(
// CHECK: call @small(%{{.*}}) {no_inline}
// CHECK: call @sequential(%{{.*}}) {no_inline}
// CHECK: call @dynamic(%{{.*}}, %{{.*}}) {no_inline}
// CHECK: func.func private @small(%{{[^,]*}}: memref<16x16xf32>) {
// CHECK: func.func private @sequential(%{{[^,]*}}: memref<256x64xf32>) {
// CHECK: func.func private @dynamic(%{{[^,]*}}: memref<?x64xf32>, %{{[^,]*}}: index) {
// CHECK-NOT: oflow.parallel
func.func @step(%s: memref<16x16xf32>, %x: memref<256x64xf32>, %d: memref<?x64xf32>, %n: index) {
  call @small(%s) {no_inline} : (memref<16x16xf32>) -> ()
  call @sequential(%x) {no_inline} : (memref<256x64xf32>) -> ()
  call @dynamic(%d, %n) {no_inline} : (memref<?x64xf32>, index) -> ()
  return
}
func.func private @small(%x: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<16x16xf32>
    memref.store %v, %x[%i, %j] : memref<16x16xf32>
    scf.reduce
  }
  return
}
func.func private @sequential(%x: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c1 to %c256 step %c1 {
    %p = arith.subi %i, %c1 : index
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%p, %j] : memref<256x64xf32>
      memref.store %v, %x[%i, %j] : memref<256x64xf32>
      scf.reduce
    }
  }
  return
}
func.func private @dynamic(%x: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x64xf32>
    memref.store %v, %x[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}
