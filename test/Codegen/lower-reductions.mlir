// oflow-lower-reductions: a reduction whose reduction loops are innermost
// carries its accumulator in scf.for iter_args (loaded and stored once per
// output element); reassoc lets LLVM vectorize it. Reductions over outer
// loops are left to convert-linalg-to-loops.
//
// RUN: oflow-opt %s -pass-pipeline="builtin.module(func.func(oflow-lower-reductions))" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for %[[I:.*]] = 
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[I]]]
// CHECK: %[[R:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK: %[[S:.*]] = arith.addf %[[X]], %[[ACC]] fastmath<reassoc>
// CHECK: scf.yield %[[S]]
// CHECK: memref.store %[[R]], %arg1[%[[I]]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// A transposed input: the same loops, the map read at (j, i).
// CHECK-LABEL: func.func @col_sum
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: linalg.generic
func.func @col_sum(%x: memref<4x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// The reduction loop is outermost: left alone.
// CHECK-LABEL: func.func @outer_reduction
// CHECK: linalg.generic
func.func @outer_reduction(%x: memref<4x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
