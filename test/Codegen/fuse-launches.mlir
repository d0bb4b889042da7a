// RUN: oflow-opt %s --oflow-fuse-launches --split-input-file | FileCheck %s

// Two independent kernels (disjoint bytes, pure host ops between) share a
// launch: blocks 0..3 run the first, block 4 the second (its 32 threads of
// the 256 on); the third reads what the first writes and keeps its own.
// CHECK-LABEL: func.func @independent
//       CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c5, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}}) module(@oflow_kernels) function(@independent_h0)
//       CHECK:   %[[IN0:.*]] = arith.cmpi ult, %{{.*}}, %c4
//       CHECK:   scf.if %[[IN0]] {
//       CHECK:     memref.store %{{.*}}, %{{.*}} : memref<1024xf32>
//       CHECK:   arith.cmpi ult, %{{.*}}, %c5
//       CHECK:   arith.cmpi uge, %{{.*}}, %c4
//       CHECK:   arith.cmpi ult, %{{.*}}, %c32
//       CHECK:   scf.if
//       CHECK:     arith.subi %{{.*}}, %c4
//       CHECK:     memref.store %{{.*}}, %{{.*}} : memref<32xf32>
//       CHECK: } {oflow.segments = array<i64: 0, 4, 5>, oflow.strategy = "horizontal x2"}
//       CHECK: gpu.launch {{.*}} function(@k2)
//   CHECK-NOT: gpu.launch
func.func @independent(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c8192 = arith.constant 8192 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k0) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<1024xf32>
    %b0 = arith.muli %bx, %c256 : index
    %i = arith.addi %b0, %tx : index
    memref.store %one, %x[%i] : memref<1024xf32>
    gpu.terminator
  }
  %c4096 = arith.constant 4096 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k1) {
    %y = memref.view %buf[%c4096][] : memref<?xi8> to memref<32xf32>
    %z = memref.view %buf[%c8192][] : memref<?xi8> to memref<32xf32>
    %b0 = arith.muli %bx, %c32 : index
    %i = arith.addi %b0, %tx : index
    %v = memref.load %z[%i] : memref<32xf32>
    memref.store %v, %y[%i] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k2) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<1024xf32>
    %w = memref.view %buf[%c8192][] : memref<?xi8> to memref<32xf32>
    %v = memref.load %x[%tx] : memref<1024xf32>
    memref.store %v, %w[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Pieces of one buffer joined along its last axis (the q, k and v gradients
// rounded into the GEMM's joined operand, oflow-merge-sibling-matmuls): their
// bytes interleave row by row but never meet, so the kernels writing the
// first and the second slab share a launch. The third writes the columns
// 16..47, which overlap the second slab's 32..63 in every row: its own.
// CHECK-LABEL: func.func @slabs
//       CHECK: gpu.launch {{.*}} function(@slabs_h0)
//       CHECK: memref.store {{.*}} : memref<8x32xf32, strided<[64, 1]>>
//       CHECK: memref.store {{.*}} : memref<8x32xf32, strided<[64, 1], offset: 32>>
//       CHECK: } {oflow.segments = array<i64: 0, 1, 2>, oflow.strategy = "horizontal x2"}
//       CHECK: gpu.launch {{.*}} function(@k2)
//   CHECK-NOT: gpu.launch
func.func @slabs(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k0) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<8x64xf32>
    %s = memref.subview %x[0, 0] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1]>>
    memref.store %one, %s[%c0, %tx] : memref<8x32xf32, strided<[64, 1]>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k1) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<8x64xf32>
    %s = memref.subview %x[0, 32] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 32>>
    memref.store %one, %s[%c0, %tx] : memref<8x32xf32, strided<[64, 1], offset: 32>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k2) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<8x64xf32>
    %s = memref.subview %x[0, 16] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 16>>
    memref.store %one, %s[%c0, %tx] : memref<8x32xf32, strided<[64, 1], offset: 16>>
    gpu.terminator
  }
  return
}

// -----

// Kept apart: a runtime call of unknown effect between two kernels, and a
// kernel with a barrier (32 threads) from one of larger blocks (64), whose
// extra threads it would have to mask off around its barrier.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-3: gpu.launch
//   CHECK-NOT: oflow.segments
func.func private @oflow_rt_sync()
func.func @kept_apart(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k0) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  func.call @oflow_rt_sync() : () -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k1) {
    %y = memref.view %buf[%c4096][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %y[%tx] : memref<32xf32>
    gpu.barrier
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@k2) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<64xf32>
    memref.store %one, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Two chains (a parameter's kernels each depend on the one before) are
// scheduled by level: the first kernels of both chains share a launch, then
// the second ones. A runtime GEMM and the host-conditional poisoning of a
// dead buffer, of other bytes, stay in the window; level by level, such
// nodes come before the level's fused kernels.
// CHECK-LABEL: func.func @levels
//       CHECK: call @oflow_rt_sgemm
//       CHECK: scf.if
//       CHECK:   gpu.launch {{.*}} function(@poison)
//       CHECK: gpu.launch {{.*}} function(@levels_h0)
//       CHECK:   memref.store {{.*}} : memref<32xf32>
//       CHECK:   memref.store {{.*}} : memref<16xf32>
//       CHECK: } {oflow.segments = array<i64: 0, 1, 2>, oflow.strategy = "horizontal x2"}
//       CHECK: gpu.launch {{.*}} function(@levels_h1)
//       CHECK:   memref.load {{.*}} : memref<32xf32>
//       CHECK:   memref.load {{.*}} : memref<16xf32>
//       CHECK: } {oflow.segments = array<i64: 0, 1, 2>, oflow.strategy = "horizontal x2"}
//   CHECK-NOT: gpu.launch
func.func private @oflow_rt_sgemm(memref<4x4xf32>)
func.func @levels(%buf: memref<?xi8>, %check: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@a0) {
    %a = memref.view %buf[%c0][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@a1) {
    %a = memref.view %buf[%c0][] : memref<?xi8> to memref<32xf32>
    %a2 = memref.view %buf[%c128][] : memref<?xi8> to memref<32xf32>
    %v = memref.load %a[%tx] : memref<32xf32>
    memref.store %v, %a2[%tx] : memref<32xf32>
    gpu.terminator
  }
  %c256 = arith.constant 256 : index
  %g = memref.view %buf[%c256][] : memref<?xi8> to memref<4x4xf32>
  func.call @oflow_rt_sgemm(%g) : (memref<4x4xf32>) -> ()
  %c768 = arith.constant 768 : index
  scf.if %check {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1)
               module(@oflow_kernels) function(@poison) {
      %dead = memref.view %buf[%c768][] : memref<?xi8> to memref<16xf32>
      memref.store %one, %dead[%tx] : memref<16xf32>
      gpu.terminator
    }
  }
  %c512 = arith.constant 512 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@b0) {
    %b = memref.view %buf[%c512][] : memref<?xi8> to memref<16xf32>
    memref.store %one, %b[%tx] : memref<16xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@b1) {
    %b = memref.view %buf[%c512][] : memref<?xi8> to memref<16xf32>
    %c640 = arith.constant 640 : index
    %b2 = memref.view %buf[%c640][] : memref<?xi8> to memref<16xf32>
    %v = memref.load %b[%tx] : memref<16xf32>
    memref.store %v, %b2[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

// Kernels whose threads meet (a barrier, shared memory) join a launch of
// their own block size, whole blocks, the shared memory one buffer for
// every member of the launch (a block runs one member); a smaller kernel
// without barriers rides along, its extra threads masked off.
// CHECK-LABEL: func.func @collective
//       CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64{{[_0-9]*}}, {{.*}} function(@collective_h0)
//  CHECK-SAME:   workgroup(%[[SH:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}}, %[[SH]]
//       CHECK:     gpu.barrier
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}}, %[[SH]]
//       CHECK:     gpu.barrier
//       CHECK:   arith.cmpi ult, %{{.*}}, %c32
//       CHECK:   scf.if
//       CHECK: } {oflow.segments = array<i64: 0, 2, 4, 5>, oflow.strategy = "horizontal x3"}
func.func @collective(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@c0)
             workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<2x64xf32>
    memref.store %one, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %v = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %v, %x[%bx, %tx] : memref<2x64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@c1)
             workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) {
    %y = memref.view %buf[%c1024][] : memref<?xi8> to memref<2x64xf32>
    memref.store %one, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %v = memref.load %tile[%c1] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %v, %y[%bx, %tx] : memref<2x64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@p0) {
    %z = memref.view %buf[%c2048][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %z[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
