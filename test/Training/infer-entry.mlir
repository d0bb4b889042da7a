// RUN: oflow-opt %s -split-input-file -oflow-build-infer-entry | FileCheck %s

// Weights become read-only (constant) variables, first in the module; the
// entry is renamed; unnamed outputs get a name; inputs keep theirs.
// CHECK: module {
// CHECK-NEXT: oflow.variable @fc.weight constant : tensor<2x3xf32> = dense<5.000000e-01> : tensor<2x3xf32> {model_name = "fc.weight"}
// CHECK-NEXT: oflow.variable @fc.bias constant : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32> {model_name = "fc.bias"}
// CHECK-NEXT: func.func @oflow_infer(%[[X:.*]]: tensor<4x3xf32> {oflow.name = "x"})
// CHECK-SAME: -> (tensor<4x2xf32> {oflow.name = "logits"}, tensor<4xf32> {oflow.name = "output_1"})
// CHECK-SAME: attributes {oflow.entry = "infer"}
// CHECK-NEXT: %[[W:.*]] = oflow.read_variable @fc.weight : tensor<2x3xf32>
// CHECK-NEXT: %[[B:.*]] = oflow.read_variable @fc.bias : tensor<2xf32>
// CHECK-NEXT: %[[Z:.*]] = oflow.gemm %[[X]], %[[W]], %[[B]] {transpose_b}
// CHECK-NOT: oflow.write_variable
// CHECK: return %[[Z]], %{{.*}}
// CHECK-NOT: @main
func.func @main(%x: tensor<4x3xf32> {oflow.name = "x"}) -> (tensor<4x2xf32> {oflow.name = "logits"}, tensor<4xf32>) {
  %w = oflow.weight "fc.weight", dense<0.5> : tensor<2x3xf32>
  %b = oflow.weight "fc.bias", dense<0.0> : tensor<2xf32>
  %z = oflow.gemm %x, %w, %b {transpose_b} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %m = oflow.reduce_max %z {axes = array<i64: 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<4xf32>
  return %z, %m : tensor<4x2xf32>, tensor<4xf32>
}

// -----

// A weight used twice is one variable read twice.
// CHECK: oflow.variable @e constant
// CHECK-NOT: oflow.variable
// CHECK: func.func @oflow_infer
// CHECK-NEXT: oflow.read_variable @e
// CHECK-NEXT: oflow.read_variable @e
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = oflow.weight "e", dense<1.0> : tensor<3xf32>
  %b = oflow.weight "e", dense<1.0> : tensor<3xf32>
  %y = oflow.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %z = oflow.mul %y, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %z : tensor<3xf32>
}
