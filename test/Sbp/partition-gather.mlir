// RUN: oflow-opt %s -oflow-partition -split-input-file | FileCheck %s

// A lookup in a table split by rows (vocabulary-parallel embedding): each
// rank gathers its own rows at local positions and zeroes the others, so the
// result is a partial sum; negative indices count from the end of the whole
// table (20 rows, 5 per rank).
module attributes {oflow.mesh = #oflow.mesh<4>} {
  // CHECK-LABEL: func.func @lookup
  // CHECK-SAME: %[[T:.*]]: tensor<5x8xf32>
  // CHECK: %[[OFF:.*]] = oflow.shard_offset {mesh_axes = array<i64: 0>, piece = 5 : i64} : tensor<i64>
  // CHECK: oflow.compare lt
  // CHECK: %[[WRAP:.*]] = oflow.where
  // CHECK: %[[LOCAL:.*]] = oflow.sub %[[WRAP]], %[[OFF]]
  // CHECK: %[[ABOVE:.*]] = oflow.where %{{.*}}, %{{.*}}, %[[LOCAL]]
  // CHECK: %[[MASK:.*]] = oflow.compare lt %[[ABOVE]]
  // CHECK: %[[SAFE:.*]] = oflow.where %[[MASK]], %[[ABOVE]]
  // CHECK: %[[G:.*]] = oflow.gather %[[T]], %[[SAFE]] {{.*}} -> tensor<6x8xf32>
  // CHECK: %[[M:.*]] = oflow.reshape %[[MASK]] [6, 1]
  // CHECK: %[[Y:.*]] = oflow.where %[[M]], %[[G]]
  // CHECK: return %[[Y]]
  func.func @lookup(%t: tensor<20x8xf32> {oflow.name = "t", oflow.sbp = #oflow.nd_sbp<[S(0)]>},
                    %i: tensor<6xi64> {oflow.name = "i", oflow.sbp = #oflow.nd_sbp<[B]>})
      -> (tensor<6x8xf32> {oflow.sbp = #oflow.nd_sbp<[P(sum)]>}) {
    %g = oflow.gather %t, %i {oflow.sbp = [#oflow.nd_sbp<[P(sum)]>]} : (tensor<20x8xf32>, tensor<6xi64>) -> tensor<6x8xf32>
    return %g : tensor<6x8xf32>
  }
}

// -----

// Its gradient accumulates only the rows this rank holds: the gradient of
// other rows is zeroed and their indices made safe.
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  // CHECK-LABEL: func.func @lookup_grad
  // CHECK: oflow.shard_offset {mesh_axes = array<i64: 0, 1>, piece = 5 : i64}
  // CHECK: %[[LOCAL:.*]] = oflow.sub
  // CHECK: %[[ABOVE:.*]] = oflow.where %{{.*}}, %{{.*}}, %[[LOCAL]]
  // CHECK: %[[MASK:.*]] = oflow.compare lt %[[ABOVE]]
  // CHECK: %[[SAFE:.*]] = oflow.where %[[MASK]], %[[ABOVE]]
  // CHECK: %[[M:.*]] = oflow.reshape %[[MASK]] [6, 1]
  // CHECK: %[[DY:.*]] = oflow.where %[[M]], %{{.*}}, %{{.*}} : (tensor<6x1xi1>, tensor<6x8xf32>, tensor<f32>)
  // CHECK: oflow.gather_backward %[[DY]], %[[SAFE]] {{.*}}data_shape = array<i64: 5, 8>{{.*}} -> tensor<5x8xf32>
  func.func @lookup_grad(%dy: tensor<6x8xf32> {oflow.name = "dy", oflow.sbp = #oflow.nd_sbp<[B, B]>},
                         %i: tensor<6xi64> {oflow.name = "i", oflow.sbp = #oflow.nd_sbp<[B, B]>})
      -> (tensor<20x8xf32> {oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}) {
    %g = oflow.gather_backward %dy, %i {data_shape = array<i64: 20, 8>, oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<6x8xf32>, tensor<6xi64>) -> tensor<20x8xf32>
    return %g : tensor<20x8xf32>
  }
}
