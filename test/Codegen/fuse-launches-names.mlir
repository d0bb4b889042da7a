// RUN: oflow-opt %s --oflow-fuse-launches --mlir-disable-threading | FileCheck %s
// RUN: oflow-opt %s --oflow-fuse-launches | FileCheck %s

// Fused launches are numbered per function: the names do not depend on
// which functions the pass ran on before (nor, with threads, on which
// thread ran which), so two compiles of one model give the same kernels.
// CHECK-LABEL: func.func @first
//       CHECK:   gpu.launch {{.*}} function(@first_h0)
// CHECK-LABEL: func.func @second
//       CHECK:   gpu.launch {{.*}} function(@second_h0)

func.func @first(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c4096 = arith.constant 4096 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@a0) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@a1) {
    %y = memref.view %buf[%c4096][] : memref<?xi8> to memref<32xf32>
    memref.store %one, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

func.func @second(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c4096 = arith.constant 4096 : index
  %two = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@b0) {
    %x = memref.view %buf[%c0][] : memref<?xi8> to memref<32xf32>
    memref.store %two, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@oflow_kernels) function(@b1) {
    %y = memref.view %buf[%c4096][] : memref<?xi8> to memref<32xf32>
    memref.store %two, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
