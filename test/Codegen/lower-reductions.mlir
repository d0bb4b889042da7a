// oflow-lower-reductions: a reduction whose innermost loop is a reduction
// carries its accumulator in scf.for iter_args (loaded and stored once per
// output element), its parallel loops hoisted outside; reassoc lets LLVM
// vectorize it. Reductions with an innermost parallel loop are left to
// convert-linalg-to-loops on the CPU.
//
// RUN: oflow-opt %s -pass-pipeline="builtin.module(func.func(oflow-lower-reductions))" | FileCheck %s
// With parallel-loops (the GPU): the parallel loops are one scf.parallel (a
// thread per output), and any loop order is lowered, linalg.index included.
// RUN: oflow-opt %s -pass-pipeline="builtin.module(func.func(oflow-lower-reductions{parallel-loops=true any-order=true}))" | FileCheck %s --check-prefix=GPU

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
// The innermost loop is parallel (a column sum): left alone on the CPU (the
// loop order is the cache's). On the GPU the parallel loop is the thread, the reduction
// runs inside it.
// CHECK-LABEL: func.func @outer_reduction
// CHECK: linalg.generic
// GPU-LABEL: func.func @outer_reduction
// GPU: scf.parallel (%[[J:.*]]) = {{.*}} {
// GPU: %[[INIT:.*]] = memref.load %arg1[%[[J]]]
// GPU: %[[R:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// GPU: memref.load %arg0[%[[I]], %[[J]]]
// GPU: memref.store %[[R]], %arg1[%[[J]]]
// GPU-NOT: linalg.generic
func.func @outer_reduction(%x: memref<4x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A batch norm's channel sum over [N, H, W] (loops N, C, H, W): on the CPU
// too the parallel loop C goes outside, N, H and W stay in their order inside
// it (each output adds its terms in the op's order; W, the contiguous one,
// stays innermost), with the accumulator in registers.
// CHECK-LABEL: func.func @channel_sum
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[C]]]
// CHECK: scf.for %[[N:.*]] = {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32)
// CHECK: scf.for %[[H:.*]] = {{.*}} iter_args
// CHECK: scf.for %[[W:.*]] = {{.*}} iter_args
// CHECK: memref.load %arg0[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: memref.store %{{.*}}, %arg1[%[[C]]]
// CHECK-NOT: linalg.generic
func.func @channel_sum(%x: memref<2x3x4x5xf32>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                   affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x5xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// linalg.index reads the loop's induction variable (GPU only: the CPU
// lowering leaves ops with linalg.index to convert-linalg-to-loops).
// CHECK-LABEL: func.func @weighted_row_sum
// CHECK: linalg.generic
// GPU-LABEL: func.func @weighted_row_sum
// GPU: scf.parallel (%[[I:.*]]) =
// GPU: scf.for %[[J:.*]] = {{.*}} iter_args
// GPU: arith.index_cast %[[J]] : index to i64
// GPU-NOT: linalg.index
func.func @weighted_row_sum(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %w = arith.mulf %a, %jf : f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  }
  return
}
