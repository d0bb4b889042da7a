// A gradient reduced for the optimizer update is planned without the
// links' latencies (nothing before the step's end waits for it, and
// oflow-bucket-collectives fuses its collectives with the others'): on a
// two-axis mesh even a small one is reduce-scattered in the node, reduced
// across nodes on its piece and gathered (the ring formula's bytes), where
// a reduction the step waits for goes by latency: all-reduced whole along
// each axis (two latencies instead of three, 1.7x the bytes).
//
// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s
// RUN: oflow-opt %s -oflow-infer-sbp -oflow-insert-boxing -oflow-bucket-collectives -oflow-verify-sbp | FileCheck %s --check-prefix=BUCKET

// CHECK-LABEL: func.func @step
// CHECK: %[[GB:.*]] = oflow.reduce_sum
// CHECK-NEXT: %[[RS:.*]] = oflow.reduce_scatter %[[GB]] {axis = 0 : i64, mesh_axis = 1 : i64
// CHECK-NEXT: %[[AR:.*]] = oflow.all_reduce %[[RS]] {mesh_axis = 0 : i64
// CHECK-NEXT: %[[AG:.*]] = oflow.all_gather %[[AR]] {axis = 0 : i64, mesh_axis = 1 : i64
// CHECK-NEXT: oflow.sub %{{.*}}, %[[AG]]
// CHECK: %[[AR1:.*]] = oflow.all_reduce %{{[0-9]+}} {mesh_axis = 1 : i64
// CHECK-NEXT: %[[AR0:.*]] = oflow.all_reduce %[[AR1]] {mesh_axis = 0 : i64
// CHECK-NEXT: oflow.exp %[[AR0]]

// The small gradients' gathers (a 1 MiB weight beside them makes them
// small), issued once the last of them is reduced, are one collective; the
// large weight's stays apart.
// BUCKET-LABEL: func.func @step
// BUCKET: oflow.all_reduce {{.*}}mesh_axis = 0 : i64
// BUCKET: oflow.all_gather %{{[0-9]+}}#{{[0-9]}}, %{{[0-9]+}}#{{[0-9]}} {axis = 0 : i64, mesh_axis = 1 : i64
// BUCKET: oflow.all_gather %{{[0-9]+}} {axis = 0 : i64, mesh_axis = 1 : i64{{.*}} -> tensor<4096x64xf32>
// BUCKET-NOT: oflow.all_gather

module attributes {oflow.mesh = #oflow.mesh<4x2, links = [ib, nvlink]>} {
  oflow.variable @b param : tensor<64xf32> {sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @c param : tensor<64xf32> {sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @w param : tensor<4096x64xf32> {sbp = #oflow.nd_sbp<[B, B]>}
  func.func @step(%x: tensor<16x64xf32> {oflow.name = "x"}, %y: tensor<16x64xf32> {oflow.name = "y"}, %z: tensor<16x4096xf32> {oflow.name = "z"}) -> tensor<64xf32> attributes {oflow.entry = "train"} {
    %w = oflow.read_variable @w : tensor<4096x64xf32>
    %gw = oflow.matmul %z, %y {transpose_a} : (tensor<16x4096xf32>, tensor<16x64xf32>) -> tensor<4096x64xf32>
    %nw = oflow.sub %w, %gw : (tensor<4096x64xf32>, tensor<4096x64xf32>) -> tensor<4096x64xf32>
    oflow.write_variable @w, %nw : tensor<4096x64xf32>
    %b = oflow.read_variable @b : tensor<64xf32>
    %gb = oflow.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<16x64xf32>) -> tensor<64xf32>
    %nb = oflow.sub %b, %gb : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    oflow.write_variable @b, %nb : tensor<64xf32>
    %c = oflow.read_variable @c : tensor<64xf32>
    %gc = oflow.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<16x64xf32>) -> tensor<64xf32>
    %nc = oflow.sub %c, %gc : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    oflow.write_variable @c, %nc : tensor<64xf32>
    %s = oflow.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<16x64xf32>) -> tensor<64xf32>
    %e = oflow.exp %s : tensor<64xf32>
    return %e : tensor<64xf32>
  }
}
