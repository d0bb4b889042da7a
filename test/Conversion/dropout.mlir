// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// Training dropout: one all-parallel generic. Each element's global
// row-major index (local index + offset, times the global strides: 5, 1)
// and the step are Philox4x32-10's counter, the seed (2^32 + 2) its key
// (2, 1); 10 rounds of two widened 32-bit products; kept iff word 0 >=
// ceil(0.25 * 2^32); kept elements scaled by 1/(1 - 0.25) in f32. A
// negative step (evaluation) keeps everything at scale 1.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>, %[[S:.*]]: tensor<i64>, %[[O0:.*]]: tensor<i64>, %[[O1:.*]]: tensor<i64>)
// CHECK: %[[STEP:.*]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK: %[[EVAL:.*]] = arith.cmpi slt, %[[STEP]], %{{.*}} : i64
// CHECK: %[[OFF0:.*]] = tensor.extract %[[O0]][]
// CHECK: %[[OFF1:.*]] = tensor.extract %[[O1]][]
// CHECK: %[[KEEP_SCALE:.*]] = arith.constant 1.33333337 : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SCALE:.*]] = arith.select %[[EVAL]], %[[ONE]], %[[KEEP_SCALE]] : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[X]] : tensor<2x5xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[J64:.*]] = arith.index_cast %[[J]]
// CHECK: arith.addi %[[J64]], %[[OFF1]] : i64
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]]
// CHECK: %[[GI:.*]] = arith.addi %[[I64]], %[[OFF0]] : i64
// CHECK: arith.muli %[[GI]], %c5_i64 : i64
// The first round: two products, then the key.
// CHECK-COUNT-2: arith.muli %c{{3528531795|3449720151}}_i64
// CHECK: arith.xori %{{.*}}, %c2_i32 : i32
// CHECK: arith.xori %{{.*}}, %c1_i32 : i32
// CHECK-COUNT-18: arith.muli %c{{3528531795|3449720151}}_i64
// CHECK: %[[DRAW_OK:.*]] = arith.cmpi uge, %{{.*}}, %c1073741824_i32 : i32
// CHECK: %[[KEEP:.*]] = arith.ori %[[EVAL]], %[[DRAW_OK]] : i1
// CHECK: %[[SCALED:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK: %[[Y:.*]] = arith.select %[[KEEP]], %[[SCALED]], %{{.*}} : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @dropout(%x: tensor<2x5xf32>, %s: tensor<i64>, %o0: tensor<i64>, %o1: tensor<i64>) -> tensor<2x5xf32> {
  %y = oflow.dropout %x step %s offsets(%o0, %o1) {global_shape = array<i64: 12, 5>, ratio = 0.25 : f64, seed = 4294967298 : i64} : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Unsplit: the local shape is the global one, no offsets.
// CHECK-LABEL: func.func @whole
// CHECK: linalg.generic
// CHECK-NOT: tensor.extract
// CHECK: arith.muli %{{.*}}, %c3_i64 : i64
// CHECK: arith.cmpi uge, %{{.*}}, %c-2147483648_i32 : i32
func.func @whole(%x: tensor<4x3xf64>, %s: tensor<i64>) -> tensor<4x3xf64> {
  %y = oflow.dropout %x step %s {ratio = 0.5 : f64, seed = 1 : i64} : tensor<4x3xf64>
  return %y : tensor<4x3xf64>
}
