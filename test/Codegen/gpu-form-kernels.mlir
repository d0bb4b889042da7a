// oflow-form-gpu-kernels: on the CUDA target no host op may touch device
// memory. Parallel loops become launches with one thread per point (256 per
// block, bounds-checked when the grid overshoots); host reads of device
// memory and what is computed from them move into every kernel using them;
// an scf.if on such a value is pushed into the kernels of its branch; the
// remaining memory-touching ops become single-thread launches.
//
// RUN: oflow-opt %s -split-input-file -oflow-form-gpu-kernels | FileCheck %s

// Parallel loops become one-thread-per-point launches.
func.func @parallel(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c1000 = arith.constant 1000 : index
  %cst = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<4x8xf32>
  %b = memref.view %arena[%c0][] : memref<?xi8> to memref<1000xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    %w = arith.addf %v, %cst : f32
    memref.store %w, %a[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    memref.store %cst, %b[%i] : memref<1000xf32>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @parallel(
// 32 points: one block of 32 threads, no bounds check; the last dimension
// varies fastest.
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]+]], {{.*}} threads(%[[TX:[a-z0-9]+]], {{.*}} in (%[[BS:[a-z0-9]+]] = %c32{{[_0-9]*}}, {{.*}} module(@oflow_kernels) function(@parallel_k0)
// The kernel derives its views from the buffer itself.
// CHECK: %[[A:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<4x8xf32>
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[BS]] : index
// CHECK-NEXT: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[ID]], %{{.*}} : index
// CHECK-NEXT: memref.load %[[A]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
// 1000 points: 4 blocks of 256, the 24 extra threads do nothing.
// CHECK: gpu.launch blocks({{.*}}) in (%{{[a-z0-9]+}} = %c4{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{[a-z0-9]+}} = %c256{{[_0-9]*}}, {{.*}} function(@parallel_k1)
// CHECK: %[[ID:.*]] = arith.addi
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %c1000{{[_0-9]*}} : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[ID]]] : memref<1000xf32>

// -----

// A large loop (256 x 1024 points, a multiple of 4 x 256): each thread
// computes 4 points 65536 apart (every copy's warp accesses stay
// coalesced); the loads (and the pure arithmetic) of all 4 come before the
// first store.
func.func @four_points(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %c1m = arith.constant 1048576 : index
  %x = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1024xf32>
  %y = memref.view %arena[%c1m][] : memref<?xi8> to memref<256x1024xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<256x1024xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %y[%i, %j] : memref<256x1024xf32>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @four_points(
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}} threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}} function(@four_points_k0)
// CHECK: %[[ID:.*]] = arith.addi
// CHECK-NOT: scf.if
// CHECK: memref.load %{{.*}} : memref<256x1024xf32>
// CHECK: arith.mulf
// CHECK: arith.addi %[[ID]], %c65536
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: arith.addi %[[ID]], %c131072
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: arith.addi %[[ID]], %c196608
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK-NOT: memref.load
// CHECK: memref.store
// CHECK: memref.store
// CHECK: memref.store
// CHECK: memref.store
// CHECK: } {oflow.strategy = "pointwise-x4"}

// -----

// The poison pattern: a flag read on the host guards fills.
func.func @poison(%io: memref<?xi8>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c0_i8 = arith.constant 0 : i8
  %c-1_i8 = arith.constant -1 : i8
  %flagv = memref.view %io[%c0][] : memref<?xi8> to memref<i8>
  %flag = memref.load %flagv[] : memref<i8>
  %poison = arith.cmpi ne, %flag, %c0_i8 : i8
  scf.if %poison {
    %bytes = memref.view %arena[%c0][] : memref<?xi8> to memref<64xi8>
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      memref.store %c-1_i8, %bytes[%i] : memref<64xi8>
      scf.reduce
    }
    %one = memref.view %arena[%c64][] : memref<?xi8> to memref<i8>
    memref.store %c-1_i8, %one[] : memref<i8>
  }
  return
}

// CHECK-LABEL: func.func @poison(
// CHECK-NOT: memref.load
// The parallel fill tests the flag in its body: still one thread per byte.
// CHECK: gpu.launch {{.*}} function(@poison_k0)
// CHECK: %[[FLAG:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<i8>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[FLAG]][] : memref<i8>
// CHECK: %[[P:.*]] = arith.cmpi ne, %[[V]], %{{.*}} : i8
// CHECK: scf.if %[[P]] {
// CHECK-NEXT: memref.store %{{.*}} : memref<64xi8>
// The flag is read again by the next kernel (nothing writes it).
// CHECK: gpu.launch {{.*}} function(@poison_k1)
// CHECK: %[[FLAG:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<i8>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[FLAG]][] : memref<i8>
// CHECK: %[[P:.*]] = arith.cmpi ne, %[[V]], %{{.*}} : i8
// CHECK-NEXT: scf.if %[[P]] {
// CHECK-NEXT: memref.store %{{.*}} : memref<i8>
// CHECK-NOT: scf.if
// CHECK: return

// -----

// The GPU targets ask the runtime for the flag (oflow-plan-memory{host-flag}):
// a host condition, so the scf.if stays on the host and its fill launches
// only when the flag is set (named _check<N>, apart from the step's kernels).
// A fill of 32- or 16-bit words becomes the stream's memset (no kernel);
// one of bytes (a buffer whose size is not a multiple of 4) stays a kernel.
func.func private @oflow_rt_check_memory() -> i8
func.func @host_poison(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c0_i8 = arith.constant 0 : i8
  %c-1_i8 = arith.constant -1 : i8
  %flag = func.call @oflow_rt_check_memory() : () -> i8
  %poison = arith.cmpi ne, %flag, %c0_i8 : i8
  scf.if %poison {
    %bytes = memref.view %arena[%c0][] : memref<?xi8> to memref<64xi8>
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      memref.store %c-1_i8, %bytes[%i] : memref<64xi8>
      scf.reduce
    }
    %c16 = arith.constant 16 : index
    %c-1_i32 = arith.constant -1 : i32
    %words = memref.view %arena[%c64][] : memref<?xi8> to memref<16xi32>
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
      memref.store %c-1_i32, %words[%i] : memref<16xi32>
      scf.reduce
    }
  }
  return
}

// CHECK-LABEL: func.func @host_poison(
// CHECK: %[[FLAG:.*]] = call @oflow_rt_check_memory() : () -> i8
// CHECK: %[[P:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i8
// CHECK: scf.if %[[P]] {
// CHECK: gpu.launch {{.*}} function(@host_poison_check0)
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.*}} : memref<64xi8>
// CHECK: %[[W:.*]] = memref.view %{{.*}} to memref<16xi32>
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memset async [%[[T0]]] %[[W]], %{{.*}} : memref<16xi32>, i32
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NOT: gpu.launch
// CHECK: return

// -----

// Scalar code and sequential loops: single-thread launches, one per run.
func.func @scalar(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %x = memref.view %arena[%c0][] : memref<?xi8> to memref<f32>
  %y = memref.view %arena[%c64][] : memref<?xi8> to memref<f32>
  %v = memref.view %arena[%c64][] : memref<?xi8> to memref<4xf32>
  %a = memref.load %x[] : memref<f32>
  %b = arith.mulf %a, %a : f32
  memref.store %b, %y[] : memref<f32>
  %c = memref.load %y[] : memref<f32>
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c) -> (f32) {
    %e = memref.load %v[%i] : memref<4xf32>
    %n = arith.addf %acc, %e : f32
    scf.yield %n : f32
  }
  memref.store %s, %x[] : memref<f32>
  return
}
// CHECK-LABEL: func.func @scalar(
// CHECK: gpu.launch blocks({{.*}}) in (%{{[a-z0-9]+}} = %[[ONE:[a-z0-9_]+]], {{.*}} threads({{.*}}) in (%{{[a-z0-9]+}} = %[[ONE]], {{.*}} function(@scalar_k0)
// The reads stay in program order between the stores.
// CHECK: memref.load
// CHECK-NEXT: arith.mulf
// CHECK: memref.store
// CHECK-NEXT: memref.load
// CHECK-NEXT: scf.for
// CHECK: memref.store
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch

// -----

// A scalar of the arena read just before the kernel that uses it, which
// writes other bytes: it moves in.
func.func @read_then_use(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %s = memref.view %arena[%c0][] : memref<?xi8> to memref<f32>
  %v = memref.view %arena[%c64][] : memref<?xi8> to memref<8xf32>
  %cst = arith.constant 2.0 : f32
  memref.store %cst, %s[] : memref<f32>
  %x = memref.load %s[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %x, %v[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
// CHECK-LABEL: func.func @read_then_use(
// CHECK: gpu.launch {{.*}} function(@read_then_use_k1)
// CHECK: memref.store
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: memref.load
// CHECK: gpu.launch {{.*}} function(@read_then_use_k0)
// CHECK: %[[X:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.store %[[X]], %{{.*}}[%{{.*}}] : memref<8xf32>

// -----

// A reduction over the leading dimension: the sequential loop moves inside,
// one thread per output element.
func.func @column_sum(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %in = memref.view %arena[%c0][] : memref<?xi8> to memref<8x64xf32>
  %out = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %a = memref.load %in[%i, %j] : memref<8x64xf32>
      %b = memref.load %out[%j] : memref<64xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %out[%j] : memref<64xf32>
      scf.reduce
    }
  }
  return
}
// CHECK-LABEL: func.func @column_sum(
// CHECK: gpu.launch blocks({{.*}}) in (%{{[a-z0-9]+}} = %c1{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{[a-z0-9]+}} = %c64{{[_0-9]*}}, {{.*}} function(@column_sum_k0)
// CHECK: %[[J:.*]] = arith.addi
// CHECK-NEXT: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]]] : memref<8x64xf32>
// CHECK-NOT: gpu.launch

// -----

// A scatter-add (an embedding's gradient): row tokens[i] of the table gets
// row i of the gradient. Rows repeat across i, so one thread per element of
// the gradient adds atomically.
func.func @scatter_add(%io: memref<?xi8>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %tokens = memref.view %io[%c0][] : memref<?xi8> to memref<16xi64>
  %grad = memref.view %arena[%c0][] : memref<?xi8> to memref<16x64xf32>
  %table = memref.view %arena[%c4096][] : memref<?xi8> to memref<100x64xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %t = memref.load %tokens[%i] : memref<16xi64>
    %row = arith.index_cast %t : i64 to index
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %g = memref.load %grad[%i, %j] : memref<16x64xf32>
      %old = memref.load %table[%row, %j] : memref<100x64xf32>
      %new = arith.addf %old, %g : f32
      memref.store %new, %table[%row, %j] : memref<100x64xf32>
      scf.reduce
    }
  }
  return
}
// CHECK-LABEL: func.func @scatter_add(
// CHECK: gpu.launch blocks({{.*}}) in (%{{[a-z0-9]+}} = %c4{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{[a-z0-9]+}} = %c256{{[_0-9]*}}, {{.*}} function(@scatter_add_k0)
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %c64
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %c64
// CHECK: %[[T:.*]] = memref.load %{{.*}}[%[[I]]] : memref<16xi64>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[T]] : i64 to index
// CHECK: %[[G:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<16x64xf32>
// CHECK: memref.atomic_rmw addf %[[G]], %{{.*}}[%[[ROW]], %[[J]]] : (f32, memref<100x64xf32>) -> f32
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
