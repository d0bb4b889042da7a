// RUN: oflow-opt %s --oflow-outline-gpu-kernels | FileCheck %s
// RUN: oflow-opt %s --oflow-outline-gpu-kernels=dedup=false | FileCheck %s --check-prefix=NODEDUP

// oflow-outline-gpu-kernels: upstream outlining, the launch's strategy kept
// on its kernel, and kernels equal up to their views' offsets shared: two
// layers' scalings of different buffers become one gpu.func that takes the
// offset as a parameter; a kernel that computes something else stays apart.
// Each launch keeps the ONNX nodes it came from.

// CHECK-LABEL: func.func @layers(
//       CHECK: %[[O0:.*]] = arith.constant 0 : index
//       CHECK: gpu.launch_func @oflow_kernels::@layers_k0 {{.*}} args(%{{.*}} : memref<?xi8>, %[[O0]] : index)
//  CHECK-SAME: oflow.origins = "/layer0/Mul"
//       CHECK: %[[O1:.*]] = arith.constant 256 : index
//       CHECK: gpu.launch_func @oflow_kernels::@layers_k0 {{.*}} args(%{{.*}} : memref<?xi8>, %[[O1]] : index)
//  CHECK-SAME: oflow.origins = "/layer1/Mul"
//       CHECK: gpu.launch_func @oflow_kernels::@layers_k2
//       CHECK: gpu.module @oflow_kernels
//       CHECK: gpu.func @layers_k0(%{{.*}}: memref<?xi8>, %[[OFF:.*]]: index) kernel
//  CHECK-SAME: oflow.strategy = "pointwise"
//       CHECK: memref.view %{{.*}}[%[[OFF]]][] : memref<?xi8> to memref<64xf32>
//   CHECK-NOT: gpu.func @layers_k1
//       CHECK: gpu.func @layers_k2(
//       CHECK: arith.addf

// NODEDUP: gpu.func @layers_k0(
// NODEDUP: gpu.func @layers_k1(
// NODEDUP: gpu.func @layers_k2(
module attributes {gpu.container_module} {
  func.func @layers(%arena: memref<?xi8>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
               module(@oflow_kernels) function(@layers_k0) {
      %c0 = arith.constant 0 : index
      %v = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
      %x = memref.load %v[%tx] : memref<64xf32> loc("/layer0/Mul")
      %y = arith.mulf %x, %x : f32 loc("/layer0/Mul")
      memref.store %y, %v[%tx] : memref<64xf32> loc("/layer0/Mul")
      gpu.terminator
    } {oflow.strategy = "pointwise"}
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
               module(@oflow_kernels) function(@layers_k1) {
      %c256 = arith.constant 256 : index
      %v = memref.view %arena[%c256][] : memref<?xi8> to memref<64xf32>
      %x = memref.load %v[%tx] : memref<64xf32> loc("/layer1/Mul")
      %y = arith.mulf %x, %x : f32 loc("/layer1/Mul")
      memref.store %y, %v[%tx] : memref<64xf32> loc("/layer1/Mul")
      gpu.terminator
    } {oflow.strategy = "pointwise"}
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
               module(@oflow_kernels) function(@layers_k2) {
      %c512 = arith.constant 512 : index
      %v = memref.view %arena[%c512][] : memref<?xi8> to memref<64xf32>
      %x = memref.load %v[%tx] : memref<64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %v[%tx] : memref<64xf32>
      gpu.terminator
    } {oflow.strategy = "pointwise"}
    return
  }
}
