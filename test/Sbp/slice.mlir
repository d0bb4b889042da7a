// SBP signatures of slice, concat, split and trilu on a 2x3 mesh: only axes the
// op keeps whole (and, for slice, walks forward) stay split; zero padding rules
// out P(max) in slice_backward.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @slices(%x: tensor<4x6xf32>, %a: tensor<4x2xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | P(sum) -> P(sum) | P(max) -> P(max)
  %0 = oflow.slice %x {offsets = array<i64: 0, 1>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | S(1) -> S(1) | P(sum) -> P(sum) | P(max) -> P(max)
  %1 = oflow.slice %x {offsets = array<i64: 3, 0>, sizes = array<i64: 4, 6>, strides = array<i64: -1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | S(0) -> S(0) | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | P(sum) -> P(sum)
  %2 = oflow.slice_backward %0 {input_shape = array<i64: 4, 6>, offsets = array<i64: 0, 1>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<4x6xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B -> B | S(0), S(0) -> S(0) | P(sum), P(sum) -> P(sum) | P(max), P(max) -> P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B -> B | P(sum), P(sum) -> P(sum) | P(max), P(max) -> P(max)
  %3 = oflow.concat %x, %a {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B, B | S(1) -> S(1), S(1) | P(sum) -> P(sum), P(sum) | P(max) -> P(max), P(max)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B, B | S(1) -> S(1), S(1) | P(sum) -> P(sum), P(sum) | P(max) -> P(max), P(max)
  %4:2 = oflow.split %x {axis = 0 : i64, sizes = array<i64: 1, 3>} : (tensor<4x6xf32>) -> (tensor<1x6xf32>, tensor<3x6xf32>)
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B -> B | P(sum) -> P(sum)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B -> B | P(sum) -> P(sum)
  %5 = oflow.trilu %x {upper = false} : tensor<4x6xf32>
  return
}
