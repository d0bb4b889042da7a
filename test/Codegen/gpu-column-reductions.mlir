// RUN: oflow-opt %s --oflow-gpu-column-reductions --split-input-file --verify-diagnostics | FileCheck %s

// A bias gradient (64 rows into 48 columns) becomes one kernel: 2 tiles of
// 32 columns, a block of 8 warps each; lane l of warp w reads column
// tile * 32 + l (clamped to the last column) of rows w, w + 8, ..., 4 rows
// per iteration loaded before they are added; the partials meet in shared
// memory after a barrier and warp 0 folds them into the fill's value.
// CHECK-LABEL: func.func @bias_grad
//   CHECK-NOT: linalg.
//       CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) module(@oflow_kernels) function(@bias_grad_col0)
//  CHECK-SAME:   workgroup(%[[SHARED:.*]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
//       CHECK:   %[[LANE:.*]] = arith.remui %{{.*}}, %c32
//       CHECK:   %[[WARP:.*]] = arith.divui %{{.*}}, %c32
//       CHECK:   %[[IN:.*]] = arith.cmpi ule, %{{.*}}, %c47
//       CHECK:   %[[COL:.*]] = arith.minui %{{.*}}, %c47
//       CHECK:   %[[PART:.*]] = scf.for %[[ROW:.*]] = %[[WARP]] to %c64 step %c32{{[_0-9]*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
//       CHECK:     %[[L0:.*]] = memref.load %[[X:.*]][%[[ROW]], %[[COL]]] : memref<64x48xf32>
//       CHECK:     memref.load %[[X]]
//       CHECK:     memref.load %[[X]]
//       CHECK:     %[[L3:.*]] = memref.load %[[X]]
//       CHECK:     %[[S0:.*]] = arith.addf %[[ACC]], %[[L0]]
//       CHECK:     arith.addf %[[S0]]
//       CHECK:   memref.store %[[PART]], %[[SHARED]][%[[WARP]], %[[LANE]]]
//       CHECK:   gpu.barrier
//       CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[WARP]], %c0
//       CHECK:   %[[STORE:.*]] = arith.andi %[[FIRST]], %[[IN]]
//       CHECK:   scf.if %[[STORE]] {
//       CHECK:     %[[P0:.*]] = memref.load %[[SHARED]][%c0{{[_0-9]*}}, %[[LANE]]]
//       CHECK:     arith.addf %cst, %[[P0]]
// CHECK-COUNT-7:   memref.load %[[SHARED]]
//       CHECK:     memref.store %{{.*}}, %{{.*}}[%[[COL]]] : memref<48xf32>
//       CHECK: } {oflow.strategy = "block-column"}
func.func @bias_grad(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<64x48xf32>
  %db = memref.view %buf[%c16384][] : memref<?xi8> to memref<48xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<48xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<64x48xf32>) outs(%db : memref<48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A partial stage of split-reductions (4 slices of 40 rows, 32 columns):
// one block per slice, the slice from the block id; 40 rows are one
// unrolled iteration (rows w, w + 8, w + 16, w + 24) and a remainder loop
// (row w + 32). Without a fill, warp 0 folds into the output's value.
// CHECK-LABEL: func.func @partials
//       CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}}) threads({{.*}}) in ({{.*}} = %c256,
//       CHECK:   %[[WARP:.*]] = arith.divui %{{.*}}, %c32
//   CHECK-NOT:   arith.minui
//       CHECK:   %[[MAIN:.*]] = scf.for %{{.*}} = %[[WARP]] to %c32{{[_0-9]*}} step %c32
//       CHECK:   %[[REST:.*]] = arith.addi %[[WARP]], %c32
//       CHECK:   scf.for %{{.*}} = %[[REST]] to %c40 step %c8{{[_0-9]*}} iter_args(%{{.*}} = %[[MAIN]])
//       CHECK:   gpu.barrier
//       CHECK:   scf.if
//       CHECK:     %[[INIT:.*]] = memref.load %{{.*}} : memref<4x32xf32>
//       CHECK:     arith.maximumf %[[INIT]]
func.func @partials(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c20480 = arith.constant 20480 : index
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<4x40x32xf32>
  %p = memref.view %buf[%c20480][] : memref<?xi8> to memref<4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : memref<4x40x32xf32>) outs(%p : memref<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Left to the fallback: a row reduction (the innermost loop reduces), a
// short column reduction (8 rows), a reduction whose input shares bytes
// with its output, and one whose accumulator feeds more than its combiner.
// CHECK-LABEL: func.func @not_columns
//   CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.generic
func.func @not_columns(%buf: memref<?xi8>, %rows: memref<16x64xf32>, %sums: memref<16xf32>,
                       %short: memref<8x64xf32>, %cols: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%rows : memref<16x64xf32>) outs(%sums : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%short : memref<8x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  %all = memref.view %buf[%c0][] : memref<?xi8> to memref<64x64xf32>
  %row0 = memref.view %buf[%c0][] : memref<?xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%all : memref<64x64xf32>) outs(%row0 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%rows : memref<16x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %out, %in : f32
    %s = arith.addf %t, %in : f32
    linalg.yield %s : f32
  }
  return
}
