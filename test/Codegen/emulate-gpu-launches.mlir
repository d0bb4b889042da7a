// RUN: oflow-opt %s --oflow-emulate-gpu-launches --split-input-file --verify-diagnostics | FileCheck %s
// RUN: oflow-opt %s --oflow-emulate-gpu-launches=reverse-threads=true --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=REV

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

// Shuffles and barriers at the top level (the warp-row strategy): a
// parallel loop over the blocks; in it one sequential loop over the block's
// threads per interval between them. The value a shuffle reads lives in a
// per-thread array of the block, read at the partner thread t ^ offset, so
// the emulated butterfly combines in the GPU's order; pure index arithmetic
// (the row) is recomputed in each interval instead of kept.
// CHECK-LABEL: func.func @rowsum
//       CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[BX:.*]]) = (%c0, %c0, %c0) to (%c1, %c1, %c2)
//       CHECK:   %[[PART:.*]] = memref.alloc() : memref<256xf32>
//       CHECK:   scf.for %[[T:.*]] = %c0{{.*}} to %c256{{.*}} step %c1
//       CHECK:     %[[P:.*]] = scf.for
//       CHECK:     memref.store %[[P]], %[[PART]][%[[T]]]
//       CHECK:   scf.for %[[T2:.*]] = %c0{{.*}} to %c256
//       CHECK:     %[[PARTNER:.*]] = arith.xori %[[T2]], %c16
//       CHECK:     %[[SAFE:.*]] = arith.select %{{.*}}, %[[PARTNER]], %[[T2]]
//       CHECK:     %[[THEIRS:.*]] = memref.load %[[PART]][%[[SAFE]]]
//       CHECK:     %[[MINE:.*]] = memref.load %[[PART]][%[[T2]]]
//       CHECK:     %[[SUM:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
//       CHECK:     memref.store %[[SUM]], %{{.*}}[%[[T2]]]
//       CHECK:   scf.for %[[T3:.*]] = %c0{{.*}} to %c256
//       CHECK:     arith.xori %[[T3]], %c1
//       CHECK:     arith.muli %[[BX]], %c8
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32>
//       CHECK:   memref.dealloc
//   CHECK-NOT: gpu.
// With reverse-threads, each interval runs thread 255 first, 0 last (a
// kernel whose result depends on that order has a race):
// REV-LABEL: func.func @rowsum
//       REV:   scf.for %[[I:.*]] = %c0{{.*}} to %c256{{.*}} step %c1
//       REV:     %[[T:.*]] = arith.subi %c255{{.*}}, %[[I]] : index
//       REV:     memref.store %{{.*}}, %{{.*}}[%[[T]]]
//       REV:   scf.for %[[I2:.*]] = %c0{{.*}} to %c256
//       REV:     %[[T2:.*]] = arith.subi %c255{{.*}}, %[[I2]] : index
//       REV:     arith.xori %[[T2]], %c16
func.func @rowsum(%in: memref<16x64xf32>, %out: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %lane = arith.remui %tx, %c32 : index
    %warp = arith.divui %tx, %c32 : index
    %rb = arith.muli %bx, %c8 : index
    %row = arith.addi %rb, %warp : index
    %p = scf.for %c = %lane to %c64 step %c32 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %in[%row, %c] : memref<16x64xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    %o16 = arith.constant 16 : i32
    %w = arith.constant 32 : i32
    %r1, %ok1 = gpu.shuffle xor %p, %o16, %w : f32
    %s1 = arith.addf %p, %r1 : f32
    %o1 = arith.constant 1 : i32
    %r2, %ok2 = gpu.shuffle xor %s1, %o1, %w : f32
    %s2 = arith.addf %s1, %r2 : f32
    %first = arith.cmpi eq, %lane, %c0 : index
    scf.if %first {
      memref.store %s2, %out[%row] : memref<16xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier ends an interval: every thread's store happens before any
// thread's load of its neighbour's element.
// CHECK-LABEL: func.func @barrier
//       CHECK: scf.parallel
//       CHECK:   scf.for
//       CHECK:     memref.store
//       CHECK:   scf.for
//       CHECK:     memref.load
//   CHECK-NOT: gpu.barrier
func.func @barrier(%buf: memref<64xf32>, %out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = arith.index_cast %tx : index to i32
    %f = arith.sitofp %v : i32 to f32
    memref.store %f, %buf[%tx] : memref<64xf32>
    gpu.barrier
    %n = arith.subi %c63, %tx : index
    %w = memref.load %buf[%n] : memref<64xf32>
    memref.store %w, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Shared memory (the block-column strategy): one buffer per block, allocated
// in the loop over blocks (blocks may run in parallel), poisoned with NaN
// before its threads run, and freed after the block.
// CHECK-LABEL: func.func @shared
//       CHECK: scf.parallel
//       CHECK:   %[[SHARED:.*]] = memref.alloc() : memref<64xf32>
//       CHECK:   scf.for %[[I:.*]] = %c0{{.*}} to %c64
//       CHECK:     memref.store %cst, %[[SHARED]][%[[I]]] : memref<64xf32>
//       CHECK:   scf.for
//       CHECK:     memref.store %{{.*}}, %[[SHARED]]
//       CHECK:   scf.for
//       CHECK:     memref.load %[[SHARED]]
//       CHECK:   memref.dealloc %[[SHARED]]
//   CHECK-NOT: gpu.barrier
func.func @shared(%buf: memref<64xf32>, %out: memref<256xf32>) {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %buf[%tx] : memref<64xf32>
    memref.store %v, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %n = arith.subi %c63, %tx : index
    %w = memref.load %tile[%n] : memref<64xf32, #gpu.address_space<workgroup>>
    %base = arith.muli %bx, %c64 : index
    %i = arith.addi %base, %tx : index
    memref.store %w, %out[%i] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A fused launch whose members meet at barriers: one launch per block range,
// each emulated with its barrier at the top level (block ids offset back).
// CHECK-LABEL: func.func @fused_barriers
//       CHECK: scf.parallel
//       CHECK:   memref.alloc() : memref<32xf32>
//       CHECK: scf.parallel
//       CHECK:   memref.alloc() : memref<32xf32>
//   CHECK-NOT: gpu.
func.func @fused_barriers(%buf: memref<96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) {
    %first = arith.cmpi ult, %bx, %c2 : index
    scf.if %first {
      %v = arith.constant 1.0 : f32
      memref.store %v, %tile[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
      %base = arith.muli %bx, %c32 : index
      %i = arith.addi %base, %tx : index
      memref.store %w, %buf[%i] : memref<96xf32>
    }
    %second = arith.cmpi uge, %bx, %c2 : index
    scf.if %second {
      %b = arith.subi %bx, %c2 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %tile[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%c1] : memref<32xf32, #gpu.address_space<workgroup>>
      %base = arith.addi %b, %c2 : index
      %row = arith.muli %base, %c32 : index
      %i = arith.addi %row, %tx : index
      memref.store %w, %buf[%i] : memref<96xf32>
    }
    gpu.terminator
  } {oflow.segments = array<i64: 0, 2, 3>}
  return
}

// -----

func.func @nested_shuffle(%buf: memref<64xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{cannot be emulated on the host: it uses gpu.shuffle inside control flow (only at the top level of the body can the emulator run the threads up to it)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    scf.if %c {
      %v = memref.load %buf[%tx] : memref<64xf32>
      %o = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %r, %ok = gpu.shuffle xor %v, %o, %w : f32
      memref.store %r, %buf[%tx] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// The stream's memset (checking mode's poisoning) is a host loop storing
// the value; the waits that order it go.
// CHECK-LABEL: func.func @memset
//   CHECK-NOT: gpu.wait
//       CHECK: %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<16xi32>
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]]
//       CHECK:   memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<16xi32>
//   CHECK-NOT: gpu.
//       CHECK: return
func.func @memset(%buf: memref<16xi32>) {
  %ones = arith.constant -1 : i32
  %t0 = gpu.wait async
  %t1 = gpu.memset async [%t0] %buf, %ones : memref<16xi32>, i32
  gpu.wait [%t1]
  return
}

// -----

func.func @subgroup(%buf: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{cannot be emulated on the host: it uses gpu.subgroup_reduce, which needs threads that run together}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %buf[%tx] : memref<64xf32>
    %r = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %r, %buf[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
