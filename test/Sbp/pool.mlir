// SBP signatures of pooling and batch norm on a 2x3 mesh: batch and channel
// axes split freely; a split spatial axis makes global pooling partial;
// training batch norm on a split batch or space needs its statistics all-
// reduced (SyncBatchNorm).
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @pools(%x: tensor<4x6x8x8xf32>, %dy: tensor<4x6x4x4xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(max) -> P(max)
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<4x6x8x8xf32>) -> tensor<4x6x4x4xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum)
  %1 = oflow.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<4x6x8x8xf32>) -> tensor<4x6x4x4xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(sum) -> P(sum) | S(2) -> P(sum) [needs division by the global count] | S(3) -> P(sum) [needs division by the global count]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum)
  %2 = oflow.global_avg_pool %x : (tensor<4x6x8x8xf32>) -> tensor<4x6x1x1xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | S(1), S(1) -> S(1) | P(sum), B -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | S(1), S(1) -> S(1) | P(sum), B -> P(sum)
  %3 = oflow.max_pool2d_backward %dy, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<4x6x4x4xf32>, tensor<4x6x8x8xf32>) -> tensor<4x6x8x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | S(1) -> S(1) | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum)
  %4 = oflow.avg_pool2d_backward %dy {input_shape = array<i64: 4, 6, 8, 8>, kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<4x6x4x4xf32>) -> tensor<4x6x8x8xf32>
  return
}

// -----

func.func @batch_norm(%x: tensor<4x6x8x9xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B, B, B -> B | S(1), S(0), S(0), S(0), S(0) -> S(1) | S(0), B, B, B, B -> S(0) | S(2), B, B, B, B -> S(2)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B, B, B -> B | S(1), S(0), S(0), S(0), S(0) -> S(1) | S(3), B, B, B, B -> S(3)
  %0 = oflow.batch_norm_inference %x, %s, %b, %m, %v : (tensor<4x6x8x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<4x6x8x9xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B, B, B -> B, B, B | S(1), S(0), S(0), S(0), S(0) -> S(1), S(0), S(0) | S(0), B, B, B, B -> S(0), B, B [needs all-reduce of the batch statistics] | S(2), B, B, B, B -> S(2), B, B [needs all-reduce of the batch statistics]
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B, B, B -> B, B, B | S(1), S(0), S(0), S(0), S(0) -> S(1), S(0), S(0) | S(3), B, B, B, B -> S(3), B, B [needs all-reduce of the batch statistics]
  %1:3 = oflow.batch_norm_training %x, %s, %b, %m, %v : (tensor<4x6x8x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<4x6x8x9xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}
