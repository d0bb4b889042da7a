// RUN: oflow-opt %s --oflow-gpu-row-reductions --split-input-file --verify-diagnostics | FileCheck %s

// A softmax (max, sum of exp, normalize) becomes one kernel: a warp per row
// (8 per block: 2 blocks for 16 rows), lane l visiting columns l, l + 32;
// each reduction's lane partials combined by a butterfly of xor shuffles,
// stored by lane 0 and reused from the register (the normalize reads no
// max or sum from memory). The fills become the initial values.
// CHECK-LABEL: func.func @softmax
//   CHECK-NOT: linalg.
//       CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) module(@oflow_kernels) function(@softmax_row0)
//       CHECK:   %[[LANE:.*]] = arith.remui %{{.*}}, %c32
//       CHECK:   %[[MAXP:.*]] = scf.for %{{.*}} = %[[LANE]] to %c64 step %c32{{.*}} iter_args(%{{.*}} = %cst{{.*}}) -> (f32)
//       CHECK:     memref.load %[[X:.*]][%{{.*}}, %{{.*}}] : memref<16x64xf32>
//       CHECK:     arith.maximumf
//       CHECK:   gpu.shuffle xor %[[MAXP]], %c16_i32
//       CHECK:   gpu.shuffle xor %{{.*}}, %c8_i32
//       CHECK:   gpu.shuffle xor %{{.*}}, %c4_i32
//       CHECK:   gpu.shuffle xor %{{.*}}, %c2_i32
//       CHECK:   gpu.shuffle xor %{{.*}}, %c1_i32
//       CHECK:   %[[MAX:.*]] = arith.maximumf %cst, %{{.*}} : f32
//       CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
//       CHECK:   scf.if %[[FIRST]] {
//  CHECK-NEXT:     memref.store %[[MAX]], %{{.*}}[%{{.*}}] : memref<16xf32>
//       CHECK:   scf.for %{{.*}} = %[[LANE]] to %c64
//   CHECK-NOT:     memref.load %{{.*}} : memref<16xf32>
//       CHECK:     arith.subf %{{.*}}, %[[MAX]]
//       CHECK:   gpu.shuffle xor
//       CHECK:   %[[SUM:.*]] = arith.addf %cst_0, %{{.*}} : f32
//       CHECK:   scf.for %{{.*}} = %[[LANE]] to %c64
//   CHECK-NOT:     memref.load %{{.*}} : memref<16xf32>
//       CHECK:     arith.divf %{{.*}}, %[[SUM]]
//       CHECK:     memref.store %{{.*}} : memref<16x64xf32>
//       CHECK:   gpu.terminator
//       CHECK: } {oflow.strategy = "warp-row"}
//   CHECK-NOT: gpu.launch
func.func @softmax(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c4160 = arith.constant 4160 : index
  %c8192 = arith.constant 8192 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<16x64xf32>
  %max = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  %sum = memref.view %buf[%c4160][] : memref<?xi8> to memref<16xf32>
  %y = memref.view %buf[%c8192][] : memref<?xi8> to memref<16x64xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%max : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %max : memref<16x64xf32>, memref<16xf32>) outs(%sum : memref<16xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %out, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %max, %sum : memref<16x64xf32>, memref<16xf32>, memref<16xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %m: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A layer norm's mean: the sum, then `mean = sum / 64` over the rows alone
// (a row-scalar member: every lane computes it, lane 0 stores it), then the
// centered square sum reading the mean from the register. Without a fill
// the reduction starts from its output in memory. 10 rows: 8 warps per
// block, 2 blocks, the last block's idle warps clamped to row 9 and kept
// from storing.
// CHECK-LABEL: func.func @mean_var
//       CHECK: gpu.launch {{.*}} function(@mean_var_row0)
//       CHECK:   %[[ROW:.*]] = arith.addi
//       CHECK:   %[[IN:.*]] = arith.cmpi ule, %[[ROW]], %c9
//       CHECK:   %[[R:.*]] = arith.minui %[[ROW]], %c9
//       CHECK:   %[[INIT:.*]] = memref.load %{{.*}}[%[[R]]] : memref<10xf32>
//       CHECK:   %[[S:.*]] = arith.addf %[[INIT]], %{{.*}} : f32
//       CHECK:   %[[MEAN:.*]] = arith.divf %[[S]], %{{.*}} : f32
//       CHECK:   arith.andi %[[IN]], %{{.*}} : i1
//       CHECK:   scf.for
//       CHECK:     arith.subf %{{.*}}, %[[MEAN]]
//       CHECK: } {oflow.strategy = "warp-row"}
//   CHECK-NOT: linalg.generic
func.func @mean_var(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c4160 = arith.constant 4160 : index
  %c4224 = arith.constant 4224 : index
  %n = arith.constant 64.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<10x64xf32>
  %sum = memref.view %buf[%c4096][] : memref<?xi8> to memref<10xf32>
  %mean = memref.view %buf[%c4160][] : memref<?xi8> to memref<10xf32>
  %var = memref.view %buf[%c4224][] : memref<?xi8> to memref<10xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<10x64xf32>) outs(%sum : memref<10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : memref<10xf32>) outs(%mean : memref<10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %n : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : memref<10x64xf32>, memref<10xf32>) outs(%var : memref<10xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %q = arith.mulf %d, %d : f32
    %s = arith.addf %out, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 160 columns: a main loop of 4 columns per lane and iteration (lane,
// lane + 32, + 64, + 96: four loads issued before the first add, the adds
// in column order), then the columns from 128 on one at a time.
// CHECK-LABEL: func.func @unrolled
//       CHECK: %[[LANE:.*]] = arith.remui
//       CHECK: %[[MAIN:.*]] = scf.for %[[C:.*]] = %[[LANE]] to %c128 step %c128{{.*}} iter_args(%[[ACC:.*]] = %cst
//       CHECK:   %[[V0:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C]]]
//       CHECK:   %[[C1:.*]] = arith.addi %[[C]], %c32
//       CHECK:   %[[V1:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C1]]]
//       CHECK:   %[[C2:.*]] = arith.addi %[[C]], %c64
//       CHECK:   %[[V2:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C2]]]
//       CHECK:   %[[C3:.*]] = arith.addi %[[C]], %c96
//       CHECK:   %[[V3:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C3]]]
//  CHECK-NEXT:   %[[A0:.*]] = arith.addf %[[ACC]], %[[V0]]
//  CHECK-NEXT:   %[[A1:.*]] = arith.addf %[[A0]], %[[V1]]
//  CHECK-NEXT:   %[[A2:.*]] = arith.addf %[[A1]], %[[V2]]
//  CHECK-NEXT:   %[[A3:.*]] = arith.addf %[[A2]], %[[V3]]
//  CHECK-NEXT:   scf.yield %[[A3]]
//       CHECK: %[[REST:.*]] = arith.addi %[[LANE]], %c128
//       CHECK: scf.for %{{.*}} = %[[REST]] to %c160 step %c32{{.*}} iter_args(%{{.*}} = %[[MAIN]])
func.func @unrolled(%x: memref<16x160xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x160xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Between members: checking mode's poisoning of dead buffers. One that no
// later member touches runs after the kernel; one whose bytes a later member
// reuses (the dead sum's bytes hold the second sum, through another view)
// cannot run in between and is dropped: that buffer lived inside the kernel.
// CHECK-LABEL: func.func @poisoning
//       CHECK: %[[FLAG:.*]] = call @oflow_rt_check_memory()
//       CHECK: %[[ON:.*]] = arith.cmpi ne, %[[FLAG]]
//       CHECK: gpu.launch {{.*}} function(@poisoning_row0)
//   CHECK-NOT: gpu.launch
//       CHECK: scf.if %[[ON]] {
//  CHECK-NEXT:   memref.view %{{.*}}[%c12288{{.*}}][] : memref<?xi8> to memref<64xi32>
//  CHECK-NEXT:   linalg.fill
//  CHECK-NEXT: }
//   CHECK-NOT: scf.if
//       CHECK: return
func.func private @oflow_rt_check_memory() -> i8
func.func @poisoning(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c4160 = arith.constant 4160 : index
  %c12288 = arith.constant 12288 : index
  %zero_i8 = arith.constant 0 : i8
  %ones = arith.constant -1 : i32
  %flag = func.call @oflow_rt_check_memory() : () -> i8
  %on = arith.cmpi ne, %flag, %zero_i8 : i8
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<16x64xf32>
  %s1 = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  %m = memref.view %buf[%c4160][] : memref<?xi8> to memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%s1 : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s1 : memref<16xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  scf.if %on {
    %dead = memref.view %buf[%c12288][] : memref<?xi8> to memref<64xi32>
    linalg.fill ins(%ones : i32) outs(%dead : memref<64xi32>)
  }
  scf.if %on {
    %sumBytes = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xi32>
    linalg.fill ins(%ones : i32) outs(%sumBytes : memref<16xi32>)
  }
  %s2 = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %m : memref<16x64xf32>, memref<16xf32>) outs(%s2 : memref<16xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %d = arith.subf %in, %mm : f32
    %r = arith.addf %out, %d : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A member reading what another warp wrote would race: the reduction reads
// y shifted by one row (a view 256 bytes further), which the elementwise op
// before it wrote. The group ends there and the reduction starts its own
// kernel. (A second view of the same bytes and type is the same buffer.)
// CHECK-LABEL: func.func @hazard
//       CHECK: gpu.launch {{.*}} function(@hazard_row0)
//       CHECK:   gpu.shuffle
//       CHECK:   memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x64xf32>
//       CHECK: gpu.launch {{.*}} function(@hazard_row1)
//       CHECK:   gpu.shuffle
func.func @hazard(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c4160 = arith.constant 4160 : index
  %c8192 = arith.constant 8192 : index
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<16x64xf32>
  %s1 = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  %s2 = memref.view %buf[%c4160][] : memref<?xi8> to memref<16xf32>
  %y = memref.view %buf[%c8192][] : memref<?xi8> to memref<16x64xf32>
  %c8448 = arith.constant 8448 : index
  %y2 = memref.view %buf[%c8448][] : memref<?xi8> to memref<16x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%s1 : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s1 : memref<16x64xf32>, memref<16xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.subf %in, %s : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y2 : memref<16x64xf32>) outs(%s2 : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows of fewer than 32 columns (idle lanes), a sum over the rows (not the
// innermost loops) and integer sums are not this strategy's.
// CHECK-LABEL: func.func @not_rows
//   CHECK-NOT: gpu.launch
//       CHECK: linalg.generic
//       CHECK: linalg.generic
//       CHECK: linalg.generic
func.func @not_rows(%x: memref<16x16xf32>, %rows: memref<16xf32>, %y: memref<64x16xf32>,
                    %cols: memref<16xf32>, %i: memref<16x64xi32>, %isum: memref<16xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x16xf32>) outs(%rows : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%y : memref<64x16xf32>) outs(%cols : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%i : memref<16x64xi32>) outs(%isum : memref<16xi32>) {
  ^bb0(%in: i32, %out: i32):
    %s = arith.addi %out, %in : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// split-reductions{warp-rows} left such a reduction whole: it must become
// a kernel, which inside control flow it cannot.
func.func @nested(%x: memref<16x64xf32>, %s: memref<16xf32>, %c: i1) {
  scf.if %c {
    // expected-error @below {{a row reduction nested in control flow cannot become a warp-per-row kernel}}
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%s : memref<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %out, %in : f32
      linalg.yield %r : f32
    }
  }
  return
}

// -----

// A reduction whose output was filled earlier, with other work in between
// (no fill to fold): every lane reads the initial value from memory before
// the shuffles, so before lane 0 stores the row's result over it. Read after
// them, lanes 1..31 could see lane 0's store and count the row twice
// (s7-O0-480-cuda-emulated: a layer norm's mean, wrong gradients).
// CHECK-LABEL: func.func @sum_onto_memory
//       CHECK: linalg.fill
//       CHECK: memref.store
//       CHECK: gpu.launch
//       CHECK:   %[[INIT:.*]] = memref.load %[[S:.*]][%{{.*}}] : memref<8xf32>
//       CHECK:   scf.for
//       CHECK:   gpu.shuffle xor %{{.*}}, %c16_i32
//       CHECK:   gpu.shuffle xor %{{.*}}, %c1_i32
//       CHECK:   %[[SUM:.*]] = arith.addf %[[INIT]], %{{.*}} : f32
//       CHECK:   scf.if
//  CHECK-NEXT:     memref.store %[[SUM]], %[[S]][%{{.*}}] : memref<8xf32>
//       CHECK: } {oflow.strategy = "warp-row"}
func.func @sum_onto_memory(%buf: memref<?xi8>, %other: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<8x64xf32>
  %s = memref.view %buf[%c2048][] : memref<?xi8> to memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  memref.store %one, %other[%c0] : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A layer norm's backward as autodiff orders it: the row statistic, then a
// column sum (a weight gradient) over other bytes, then the row-wise input
// gradient. The scan looks past the column sum: the statistic and the input
// gradient are one kernel, and the column sum runs after it. It reads x as
// the kernel does (two reads do not conflict).
// CHECK-LABEL: func.func @past_column_sum
//       CHECK: gpu.launch {{.*}} function(@past_column_sum_row0)
//       CHECK:   gpu.shuffle
//       CHECK:   arith.subf
//       CHECK:   memref.store %{{.*}} : memref<16x64xf32>
//       CHECK: } {oflow.strategy = "warp-row"}
//       CHECK: linalg.fill
//  CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
//   CHECK-NOT: linalg.generic
func.func @past_column_sum(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c4160 = arith.constant 4160 : index
  %c8192 = arith.constant 8192 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<16x64xf32>
  %s = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  %cols = memref.view %buf[%c4160][] : memref<?xi8> to memref<64xf32>
  %y = memref.view %buf[%c8192][] : memref<?xi8> to memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%cols : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<16x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<16x64xf32>, memref<16xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same, but the column sum's output shares bytes with what the row-wise
// op writes (the memory plan reused them): moving the column sum after the
// kernel would overwrite it, so the group ends before the row-wise op, which
// stays after the column sum.
// CHECK-LABEL: func.func @column_sum_in_the_way
//       CHECK: gpu.launch {{.*}} function(@column_sum_in_the_way_row0)
//   CHECK-NOT:   arith.subf
//       CHECK: } {oflow.strategy = "warp-row"}
//       CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
//       CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
func.func @column_sum_in_the_way(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %buf[%c0][] : memref<?xi8> to memref<16x64xf32>
  %s = memref.view %buf[%c4096][] : memref<?xi8> to memref<16xf32>
  %cols = memref.view %buf[%c8192][] : memref<?xi8> to memref<64xf32>
  %y = memref.view %buf[%c8192][] : memref<?xi8> to memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<16x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<16x64xf32>, memref<16xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  }
  return
}
