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

// Scatter-add as a loop over the indices: each index adds its gradient row
// into the data row it names, in place (indices x columns, not rows x
// indices x columns).
// CHECK-LABEL: func.func @gather_backward
// CHECK: %[[IDX:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<8x64xi64> into tensor<512xi64>
// CHECK: %[[DY:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<8x64x16xf32> into tensor<512x16xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<104x16xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c512 {{.*}} iter_args(%[[ACC:.*]] = %[[Z]])
// CHECK: %[[E:.*]] = tensor.extract %[[IDX]][%[[I]]]
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[SRC:.*]] = tensor.extract_slice %[[DY]][%[[I]], 0] [1, 16] [1, 1]
// CHECK: %[[DST:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 16] [1, 1]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SRC]] : tensor<16xf32>) outs(%[[DST]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]][%[[ROW]], 0] [1, 16] [1, 1]
// CHECK: scf.yield %[[NEXT]]
func.func @gather_backward(%dy: tensor<8x64x16xf32>, %t: tensor<8x64xi64>) -> tensor<104x16xf32> {
  %g = oflow.gather_backward %dy, %t {axis = 0 : i64, data_shape = array<i64: 104, 16>} : (tensor<8x64x16xf32>, tensor<8x64xi64>) -> tensor<104x16xf32>
  return %g : tensor<104x16xf32>
}
