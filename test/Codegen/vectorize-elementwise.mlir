// oflow-vectorize-elementwise: an all-parallel f32 generic on buffers whose
// innermost extent divides by 16 becomes loops over 1x16 tiles, each read,
// computed and written as vectors; others stay as they are.
//
// RUN: oflow-opt %s -pass-pipeline="builtin.module(func.func(oflow-vectorize-elementwise))" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#bcast = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_bias
// CHECK: scf.for %[[I:.*]] = 
// CHECK: scf.for %[[J:.*]] = {{.*}} step %{{.*}} {
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK: %[[B:.*]] = memref.subview %arg1[%[[J]]] [16] [1]
// CHECK: %[[O:.*]] = memref.subview %arg2[%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK: %[[XV:.*]] = vector.transfer_read %[[X]]{{.*}} vector<1x16xf32>
// CHECK: %[[BV:.*]] = vector.transfer_read %[[B]]{{.*}} vector<1x16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<1x16xf32>
// CHECK: vector.transfer_write %[[S]], %[[O]]
// CHECK-NOT: linalg.generic
func.func @add_bias(%x: memref<4x32xf32>, %b: memref<32xf32>, %out: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x32xf32>, memref<32xf32>) outs(%out : memref<4x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}
// 10 columns do not divide by 16: left for convert-linalg-to-loops.
// CHECK-LABEL: func.func @odd
// CHECK: linalg.generic
func.func @odd(%x: memref<4x10xf32>, %out: memref<4x10xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x10xf32>) outs(%out : memref<4x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
