// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// An embedding lookup: the index element read through the map, wrapped
// when negative, then the row element extracted.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<8x64xi64>) outs(%{{.*}} : tensor<8x64x16xf32>)
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %c0
// CHECK: %[[WRAP:.*]] = arith.addi %[[I]], %c104
// CHECK: arith.select %[[NEG]], %[[WRAP]], %[[I]]
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK: tensor.extract %arg0[%{{.*}}, %[[COL]]] : tensor<104x16xf32>
func.func @gather(%w: tensor<104x16xf32>, %t: tensor<8x64xi64>) -> tensor<8x64x16xf32> {
  %e = oflow.gather %w, %t {axis = 0 : i64} : (tensor<104x16xf32>, tensor<8x64xi64>) -> tensor<8x64x16xf32>
  return %e : tensor<8x64x16xf32>
}

// -----

// Scatter-add as a reduction over the index dims: every data row sums the
// gradient slices whose index names it.
// CHECK-DAG: #[[G:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>
// CHECK-DAG: #[[I:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @gather_backward
// CHECK: linalg.generic {indexing_maps = [#[[G]], #[[I]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %[[ROW]]
// CHECK: %[[ADD:.*]] = arith.addf
// CHECK: arith.select %[[HIT]], %[[ADD]]
func.func @gather_backward(%dy: tensor<8x64x16xf32>, %t: tensor<8x64xi64>) -> tensor<104x16xf32> {
  %g = oflow.gather_backward %dy, %t {axis = 0 : i64, data_shape = array<i64: 104, 16>} : (tensor<8x64x16xf32>, tensor<8x64xi64>) -> tensor<104x16xf32>
  return %g : tensor<104x16xf32>
}
