// oflow-pad-gemm-extents: a GEMM whose output extent is not a multiple of
// `multiple` (16 bytes) gets zero weight rows up to a multiple of `pad-to`;
// the product is sliced back, and the backward GEMMs see the padded extent.
//
// RUN: oflow-opt %s --oflow-pad-gemm-extents="min-macs=1" | FileCheck %s
// RUN: oflow-opt %s --oflow-pad-gemm-extents="min-macs=1" --oflow-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: oflow-opt %s --oflow-pad-gemm-extents | FileCheck %s --check-prefix=SMALL
// RUN: not oflow-opt %s --oflow-pad-gemm-extents="multiple=128 pad-to=64" 2>&1 | FileCheck %s --check-prefix=BAD

// The logits of a tied embedding (x W^T, W [77, 32]): W padded to 128 rows,
// read transposed by the GEMM, the logits a slice of the [64, 128] product.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = oflow.weight "w"
// CHECK-NOT: oflow.transpose
// CHECK: %[[Z:.*]] = oflow.constant dense<0.000000e+00> : tensor<51x32xf32>
// CHECK: %[[WP:.*]] = oflow.concat %[[W]], %[[Z]] {axis = 0 : i64} : (tensor<77x32xf32>, tensor<51x32xf32>) -> tensor<128x32xf32>
// CHECK: %[[Y:.*]] = oflow.matmul %arg0, %[[WP]] {transpose_b} : (tensor<64x32xf32>, tensor<128x32xf32>) -> tensor<64x128xf32>
// CHECK: oflow.slice %[[Y]] {offsets = array<i64: 0, 0>, sizes = array<i64: 64, 77>, strides = array<i64: 1, 1>}
// GRAD: %[[D:.*]] = oflow.slice_backward %{{.*}} {input_shape = array<i64: 64, 128>
// GRAD: oflow.matmul %[[D]], %{{.*}} {transpose_a} : (tensor<64x128xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
// GRAD: oflow.slice %{{.*}} {offsets = array<i64: 0, 0>, sizes = array<i64: 77, 32>
// SMALL-LABEL: func.func @main
// SMALL-NOT: oflow.concat
// BAD: oflow-pad-gemm-extents: needs 1 <= multiple <= pad-to
func.func @main(%x: tensor<64x32xf32>, %labels: tensor<64xi64>) -> tensor<f32> {
  %w = oflow.weight "w", dense<0.5> : tensor<77x32xf32>
  %wt = oflow.transpose %w [1, 0] : (tensor<77x32xf32>) -> tensor<32x77xf32>
  %y = oflow.matmul %x, %wt : (tensor<64x32xf32>, tensor<32x77xf32>) -> tensor<64x77xf32>
  %l = oflow.softmax_cross_entropy mean %y, %labels : (tensor<64x77xf32>, tensor<64xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
