// oflow-lower-to-linalg of the boxing ops after oflow-partition: the
// communicating ones copy their operand(s) into one fresh contiguous buffer
// and call the placeholder __oflow_rt_<kind>_<dtype> (dtype code, buffers,
// then the shape arguments of oflow_rt/abi.h and the mesh axis); the local
// ones are tensor code indexed by this rank's mesh coordinate.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-lower-to-linalg | FileCheck %s

// A bucket of two: both operands packed into one buffer of 96 + 4 elements
// by one tensor.concat (its own new buffer after bufferization, so no
// staging copy), one all-reduce (dtype 0 = f32, op 0 = sum, count 100, mesh
// axis 0), then each result sliced back out.
// CHECK-LABEL: func.func @all_reduce(
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<8x12xf32> into tensor<96xf32>
// CHECK: %[[P:.*]] = tensor.concat dim(0) %[[A]], %arg1 : (tensor<96xf32>, tensor<4xf32>) -> tensor<100xf32>
// CHECK-NOT: linalg.copy
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[P]] read_only : tensor<100xf32> to memref<100xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<100xf32>
// CHECK-DAG: %[[DT:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[OP:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[INC:.*]] = memref.cast %[[IN]] : memref<100xf32> to memref<?xf32>
// CHECK-DAG: %[[OUTC:.*]] = memref.cast %[[OUT]] : memref<100xf32> to memref<?xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant 100 : i64
// CHECK-DAG: %[[AX:.*]] = arith.constant 0 : i64
// CHECK: call @__oflow_rt_all_reduce_f32(%[[DT]], %[[OP]], %[[INC]], %[[OUTC]], %[[N]], %[[AX]]) : (i64, i64, memref<?xf32>, memref<?xf32>, i64, i64) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: %[[R0:.*]] = tensor.extract_slice %[[R]][0] [96] [1]
// CHECK: %[[R0E:.*]] = tensor.expand_shape %[[R0]] {{\[\[}}0, 1]] output_shape [8, 12]
// CHECK: %[[R1:.*]] = tensor.extract_slice %[[R]][96] [4] [1]
// CHECK: return %[[R0E]], %[[R1]]

// max: op 1. One operand: staged by a copy into a bufferization.alloc_tensor,
// which CSE never merges with another collective's (a tensor.empty would be,
// and so would equal copies).
// CHECK-LABEL: func.func @all_reduce_max(
// CHECK: %[[S:.*]] = bufferization.alloc_tensor() : tensor<96xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<96xf32>) outs(%[[S]] : tensor<96xf32>)
// CHECK: %[[OP:.*]] = arith.constant 1 : i64
// CHECK: call @__oflow_rt_all_reduce_f32(%{{.*}}, %[[OP]],

// all_gather along axis 1 of an 8x3 piece: outer 8, chunk 3, into 96.
// CHECK-LABEL: func.func @all_gather(
// CHECK: memref.alloc() : memref<96xf32>
// CHECK-DAG: %[[OUTER:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 3 : i64
// CHECK: call @__oflow_rt_all_gather_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OUTER]], %[[CHUNK]], %{{.*}}) : (i64, memref<?xf32>, memref<?xf32>, i64, i64, i64) -> ()
// CHECK: tensor.expand_shape %{{.*}} output_shape [8, 12] : tensor<96xf32> into tensor<8x12xf32>

// reduce_scatter along axis 1 into an 8x3 piece: outer 8, chunk 3.
// CHECK-LABEL: func.func @reduce_scatter(
// CHECK: memref.alloc() : memref<24xf32>
// CHECK-DAG: %[[OUTER:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 3 : i64
// CHECK: call @__oflow_rt_reduce_scatter_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[OUTER]], %[[CHUNK]], %{{.*}}) : (i64, i64, memref<?xf32>, memref<?xf32>, i64, i64, i64) -> ()
// CHECK: tensor.expand_shape %{{.*}} output_shape [8, 3]

// all_to_all S(2) -> S(0) of an 8x5x3 piece: the input as [1, 8, 5, 3, 1]
// with the target axis 0 (full here) at dim 1 scattering.
// CHECK-LABEL: func.func @all_to_all(
// CHECK-DAG: %[[D0:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[D1:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[D2:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[D3:.*]] = arith.constant 3 : i64
// CHECK: call @__oflow_rt_all_to_all_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[D4:.*]], %[[S:.*]], %[[AX:.*]]) : (i64, memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 5, 12]

// The other order, S(0) -> S(1) of a 2x12 piece: [1, 2, 1, 12, 1], the
// target axis 1 at dim 3 scattering.
// CHECK-LABEL: func.func @all_to_all_3(
// CHECK: %[[S:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[AX:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @__oflow_rt_all_to_all_f32({{.*}}, %[[S]], %[[AX]])

// local_slice: this rank's columns [coord * 3, +3).
// CHECK-LABEL: func.func @local_slice(
// CHECK: %[[AX:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[C:.*]] = call @oflow_rt_mesh_coord(%[[AX]]) : (i64) -> i64
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[C]] : i64 to index
// CHECK-NEXT: %[[K:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[CI]], %[[K]] : index
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %arg0[0, %[[OFF]]] [8, 3] [1, 1] : tensor<8x12xf32> to tensor<8x3xf32>
// CHECK-NEXT: return %[[S]]

// Two slices on one mesh axis share the function's one coordinate call.
// CHECK-LABEL: func.func @two_slices(
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[C:.*]] = call @oflow_rt_mesh_coord(
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[C]]
// CHECK-NOT: call @oflow_rt_mesh_coord
// CHECK: arith.muli %[[CI]]
// CHECK-NOT: call @oflow_rt_mesh_coord
// CHECK: arith.muli %[[CI]]
// CHECK: return

// split_to_partial: zeros with this rank's rows at coord * 2. The
// coordinate is asked at the function's start (once per mesh axis: the GPU
// scheduler cannot move the call, so it must not split the kernels).
// CHECK-LABEL: func.func @split_to_partial(
// CHECK-NEXT: %[[AX:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[C:.*]] = call @oflow_rt_mesh_coord(%[[AX]])
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[C]]
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x12xf32>)
// CHECK-NEXT: %[[K:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[CI]], %[[K]] : index
// CHECK-NEXT: %[[R:.*]] = tensor.insert_slice %arg0 into %[[Z]][%[[OFF]], 0] [2, 12] [1, 1] : tensor<2x12xf32> into tensor<8x12xf32>
// CHECK-NEXT: return %[[R]]

// broadcast_to_partial (sum): coordinate 0 keeps the value, the others zeros.
// CHECK-LABEL: func.func @broadcast_to_partial(
// CHECK: %[[C:.*]] = call @oflow_rt_mesh_coord(
// CHECK: %[[CI:.*]] = arith.index_cast %[[C]]
// CHECK: %[[KEEP:.*]] = arith.cmpi eq, %[[CI]], %{{.*}} : index
// CHECK: linalg.generic
// CHECK: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32

// broadcast_to_partial (max): every rank keeps the value.
// CHECK-LABEL: func.func @broadcast_to_partial_max(
// CHECK-NEXT: return %arg0

// Placeholders and the mesh coordinate are declared once.
// CHECK-DAG: func.func private @__oflow_rt_all_reduce_f32(i64, i64, memref<?xf32>, memref<?xf32>, i64, i64)
// CHECK-DAG: func.func private @__oflow_rt_all_gather_f32(i64, memref<?xf32>, memref<?xf32>, i64, i64, i64)
// CHECK-DAG: func.func private @__oflow_rt_reduce_scatter_f32(i64, i64, memref<?xf32>, memref<?xf32>, i64, i64, i64)
// CHECK-DAG: func.func private @__oflow_rt_all_to_all_f32(i64, memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @oflow_rt_mesh_coord(i64) -> i64
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @all_reduce(%a: tensor<8x12xf32>, %b: tensor<4xf32>) -> (tensor<8x12xf32>, tensor<4xf32>) {
    %0:2 = oflow.all_reduce %a, %b {mesh_axis = 0 : i64} : (tensor<8x12xf32>, tensor<4xf32>) -> (tensor<8x12xf32>, tensor<4xf32>)
    return %0#0, %0#1 : tensor<8x12xf32>, tensor<4xf32>
  }
  func.func @all_reduce_max(%a: tensor<8x12xf32>) -> tensor<8x12xf32> {
    %0 = oflow.all_reduce %a {mesh_axis = 0 : i64, max} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
  func.func @all_gather(%a: tensor<8x3xf32>) -> tensor<8x12xf32> {
    %0 = oflow.all_gather %a {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<8x3xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
  func.func @reduce_scatter(%a: tensor<8x12xf32>) -> tensor<8x3xf32> {
    %0 = oflow.reduce_scatter %a {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x3xf32>
    return %0 : tensor<8x3xf32>
  }
  func.func @all_to_all(%a: tensor<8x5x3xf32>) -> tensor<2x5x12xf32> {
    %0 = oflow.all_to_all %a {mesh_axis = 0 : i64, source_axis = 2 : i64, axis = 0 : i64} : (tensor<8x5x3xf32>) -> tensor<2x5x12xf32>
    return %0 : tensor<2x5x12xf32>
  }
  func.func @all_to_all_3(%a: tensor<2x12xf32>) -> tensor<8x3xf32> {
    %0 = oflow.all_to_all %a {mesh_axis = 0 : i64, source_axis = 0 : i64, axis = 1 : i64} : (tensor<2x12xf32>) -> tensor<8x3xf32>
    return %0 : tensor<8x3xf32>
  }
  func.func @local_slice(%a: tensor<8x12xf32>) -> tensor<8x3xf32> {
    %0 = oflow.local_slice %a {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x3xf32>
    return %0 : tensor<8x3xf32>
  }
  func.func @two_slices(%a: tensor<8x12xf32>, %b: tensor<8x12xf32>) -> (tensor<8x3xf32>, tensor<2x12xf32>) {
    %0 = oflow.local_slice %a {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<8x12xf32>) -> tensor<8x3xf32>
    %1 = oflow.local_slice %b {mesh_axis = 0 : i64, axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<2x12xf32>
    return %0, %1 : tensor<8x3xf32>, tensor<2x12xf32>
  }
  func.func @split_to_partial(%a: tensor<2x12xf32>) -> tensor<8x12xf32> {
    %0 = oflow.split_to_partial %a {mesh_axis = 0 : i64, axis = 0 : i64} : (tensor<2x12xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
  func.func @broadcast_to_partial(%a: tensor<8x12xf32>) -> tensor<8x12xf32> {
    %0 = oflow.broadcast_to_partial %a {mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
  func.func @broadcast_to_partial_max(%a: tensor<8x12xf32>) -> tensor<8x12xf32> {
    %0 = oflow.broadcast_to_partial %a {mesh_axis = 0 : i64, max} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
}

// -----

// Other element types: i64 (dtype 3) and bool (dtype 4, one byte).
// CHECK-LABEL: func.func @dtypes(
// CHECK: %[[DT:.*]] = arith.constant 3 : i64
// CHECK: call @__oflow_rt_all_gather_i64(%[[DT]],
// CHECK: %[[DT1:.*]] = arith.constant 4 : i64
// CHECK: call @__oflow_rt_all_reduce_i1(%[[DT1]],
module attributes {oflow.mesh = #oflow.mesh<2x2>, oflow.partitioned} {
  func.func @dtypes(%a: tensor<2x3xi64>, %m: tensor<8xi1>) -> (tensor<4x3xi64>, tensor<8xi1>) {
    %0 = oflow.all_gather %a {mesh_axis = 1 : i64, axis = 0 : i64} : (tensor<2x3xi64>) -> tensor<4x3xi64>
    %1 = oflow.all_reduce %m {mesh_axis = 0 : i64, max} : (tensor<8xi1>) -> tensor<8xi1>
    return %0, %1 : tensor<4x3xi64>, tensor<8xi1>
  }
}

// -----

// Before partitioning the types are global: no lowering.
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @not_partitioned(%x: tensor<8x12xf32>) -> tensor<8x12xf32> {
    // expected-error @+2 {{'oflow.local_slice' op cannot lower: boxing ops are lowered after oflow-partition}}
    // expected-error @+1 {{failed to legalize operation 'oflow.local_slice'}}
    %0 = oflow.local_slice %x {axis = 0 : i64, mesh_axis = 0 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    return %0 : tensor<8x12xf32>
  }
}

// -----

// A bucket of gathers along the first axis (oflow-bucket-collectives: small
// weights): each rank's chunk is its pieces side by side (3 + 2 elements),
// one all-gather of [outer 1][chunk 5] into [4 ranks][5], and each member is
// its columns of that: [4, 3] as 4x3 and [4, 2] as 8 elements.
// CHECK-LABEL: func.func @gather_bucket(
// CHECK: %[[P:.*]] = tensor.concat dim(0) %{{.*}}, %arg1 : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 5 : i64
// CHECK: call @__oflow_rt_all_gather_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[CHUNK]], %{{.*}})
// CHECK: %[[G:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
// CHECK: tensor.extract_slice %[[G]][0, 0] [4, 3] [1, 1] : tensor<4x5xf32> to tensor<4x3xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[G]][0, 3] [4, 2] [1, 1] : tensor<4x5xf32> to tensor<4x2xf32>
// CHECK: tensor.collapse_shape %[[B]] {{\[\[}}0, 1]] : tensor<4x2xf32> into tensor<8xf32>

// A bucket of scatters: rank r's chunk is the r-th part of each member (a
// [4][3] and a [4][2] view side by side, packed by one concat along dim 1),
// one reduce-scatter of [outer 1][chunk 5], and each result its run of the
// 5 elements this rank keeps.
// CHECK-LABEL: func.func @scatter_bucket(
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
// CHECK: %[[B:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
// CHECK: %[[P:.*]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
// CHECK-NOT: linalg.copy
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 5 : i64
// CHECK: call @__oflow_rt_reduce_scatter_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[CHUNK]], %{{.*}})
// CHECK: %[[R:.*]] = bufferization.to_tensor
// CHECK: tensor.extract_slice %[[R]][0] [3] [1]
// CHECK: tensor.extract_slice %[[R]][3] [2] [1]
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @gather_bucket(%a: tensor<1x3xf32>, %b: tensor<2xf32>) -> (tensor<4x3xf32>, tensor<8xf32>) {
    %0:2 = oflow.all_gather %a, %b {mesh_axis = 0 : i64, axis = 0 : i64} : (tensor<1x3xf32>, tensor<2xf32>) -> (tensor<4x3xf32>, tensor<8xf32>)
    return %0#0, %0#1 : tensor<4x3xf32>, tensor<8xf32>
  }
  func.func @scatter_bucket(%a: tensor<12xf32>, %b: tensor<8xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
    %0:2 = oflow.reduce_scatter %a, %b {mesh_axis = 0 : i64, axis = 0 : i64} : (tensor<12xf32>, tensor<8xf32>) -> (tensor<3xf32>, tensor<2xf32>)
    return %0#0, %0#1 : tensor<3xf32>, tensor<2xf32>
  }
}

// -----

// A bucket packs each rank's piece of a member as one run: a member
// converted along a later axis (2 rows before it) is transposed from
// [rows][ranks][piece] to [ranks][rows][piece] before a scatter, and the
// gathered [ranks][rows][piece] back to [rows][ranks][piece] after a gather.
// CHECK-LABEL: func.func @gather_inner_axis
// CHECK: call @__oflow_rt_all_gather_f32
// CHECK: %[[G:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 10]
// CHECK: %[[A:.*]] = tensor.extract_slice %[[G]][0, 0] [4, 6] [1, 1]
// CHECK: %[[A3:.*]] = tensor.expand_shape %[[A]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 3]
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A3]] : tensor<4x2x3xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) permutation = [1, 0, 2]
// CHECK: tensor.collapse_shape %[[AT]] {{\[\[}}0], [1, 2]] : tensor<2x4x3xf32> into tensor<2x12xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x2x2xf32>) outs(%{{.*}} : tensor<2x4x2xf32>)
// CHECK-LABEL: func.func @scatter_inner_axis
// CHECK: %[[A3:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [2, 4, 3]
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A3]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [1, 0, 2]
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[AT]] {{\[\[}}0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} : tensor<4x2x2xf32> into tensor<4x4xf32>
// CHECK: tensor.concat dim(1) %[[A]], %[[B]] : (tensor<4x6xf32>, tensor<4x4xf32>) -> tensor<4x10xf32>
// CHECK: call @__oflow_rt_reduce_scatter_f32
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
module attributes {oflow.mesh = #oflow.mesh<4>, oflow.partitioned} {
  func.func @gather_inner_axis(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> (tensor<2x12xf32>, tensor<2x8xf32>) {
    %0:2 = oflow.all_gather %a, %b {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> (tensor<2x12xf32>, tensor<2x8xf32>)
    return %0#0, %0#1 : tensor<2x12xf32>, tensor<2x8xf32>
  }
  func.func @scatter_inner_axis(%a: tensor<2x12xf32>, %b: tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {
    %0:2 = oflow.reduce_scatter %a, %b {mesh_axis = 0 : i64, axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>)
    return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x2xf32>
  }
}

