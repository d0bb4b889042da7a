// RUN: oflow-opt %s --oflow-autodiff=entry=train | FileCheck %s

// The `entry` option names the function that returns the loss; others are
// left alone.
// CHECK-LABEL: func.func @main
// CHECK-NOT: oflow.gradient
// CHECK-LABEL: func.func @train
// CHECK: %[[V:.*]] = oflow.weight "v", {{.*}} {oflow.trainable}
// CHECK: %[[E:.*]] = oflow.exp %[[V]]
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[G:.*]] = oflow.mul %[[ONE]], %[[E]]
// CHECK-NEXT: oflow.gradient "v", %[[G]] : tensor<f32>
// CHECK-NEXT: return %[[E]], %[[V]] : tensor<f32>, tensor<f32>
func.func @main() -> tensor<f32> {
  %v = oflow.weight "u", dense<3.0> : tensor<f32>
  %e = oflow.exp %v : tensor<f32>
  return %e : tensor<f32>
}

func.func @train() -> (tensor<f32>, tensor<f32>) {
  %v = oflow.weight "v", dense<3.0> : tensor<f32>
  %e = oflow.exp %v : tensor<f32>
  return %e, %v : tensor<f32>, tensor<f32>
}
