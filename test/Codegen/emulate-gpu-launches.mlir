// RUN: oflow-opt %s --oflow-emulate-gpu-launches --split-input-file --verify-diagnostics | FileCheck %s

// A 1-D launch: the block and thread ids become the loop's induction
// variables, the sizes its bounds; the body is kept as it is.
// CHECK-LABEL: func.func @scale
//   CHECK-NOT: gpu.launch
//       CHECK: scf.parallel (%[[BZ:.*]], %[[BY:.*]], %[[BX:.*]], %[[TZ:.*]], %[[TY:.*]], %[[TX:.*]]) = (%c0, %c0, %c0, %c0, %c0, %c0) to (%c1, %c1, %[[G:.*]], %c1, %c1, %c256)
//       CHECK:   %[[BASE:.*]] = arith.muli %[[BX]], %c256
//       CHECK:   %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:   arith.cmpi ult, %[[I]], %c1000
//       CHECK:   memref.store
func.func @scale(%buf: memref<1000xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1000 = arith.constant 1000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %c1000 : index
    scf.if %in {
      %v = memref.load %buf[%i] : memref<1000xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%i] : memref<1000xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// gpu.thread_id / gpu.block_dim inside the body are replaced as well.
// CHECK-LABEL: func.func @ids
//   CHECK-NOT: gpu.thread_id
//   CHECK-NOT: gpu.block_dim
//       CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TX:.*]]) =
//       CHECK:   memref.store %{{.*}}, %{{.*}}[%[[TX]]]
func.func @ids(%buf: memref<64xindex>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %t = gpu.thread_id x
    %d = gpu.block_dim x
    memref.store %d, %buf[%t] : memref<64xindex>
    gpu.terminator
  }
  return
}

// -----

func.func @barrier(%buf: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{cannot be emulated on the host: it uses gpu.barrier, which needs threads that run together}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}
