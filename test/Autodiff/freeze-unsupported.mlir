// RUN: oflow-opt %s --oflow-autodiff='freeze=frozen\..*' | FileCheck %s

// An op without a gradient rule is fine when only frozen weights reach it:
// the error's advice (--freeze) works. The other weight still trains.
// CHECK-LABEL: func.func @main
// CHECK: oflow.weight "frozen.table", {{.*}} : tensor<4xf32>{{$}}
// CHECK: oflow.weight "w", {{.*}} {oflow.trainable}
// CHECK: arith.addf
// CHECK-NOT: oflow.gradient "frozen.table"
// CHECK: oflow.gradient "w", %{{.*}} : tensor<4xf32>
// CHECK-NEXT: return
func.func @main() -> tensor<f32> {
  %t = oflow.weight "frozen.table", dense<1.0> : tensor<4xf32>
  %w = oflow.weight "w", dense<2.0> : tensor<4xf32>
  %s = arith.addf %t, %t : tensor<4xf32>
  %p = oflow.mul %s, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
