// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s

// Unary rules use the forward result where torch does: relu masks with
// result > 0 (relu'(0) = 0), tanh' = 1 - y^2. The seed of the loss is 1.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = oflow.weight "w"
// CHECK: %[[R:.*]] = oflow.relu %[[W]]
// CHECK: %[[T:.*]] = oflow.tanh %[[R]]
// CHECK: %[[SEED:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G:.*]] = oflow.expand %{{.*}} [4] : (tensor<1xf32>) -> tensor<4xf32>
// CHECK: %[[T2:.*]] = oflow.mul %[[T]], %[[T]]
// CHECK: %[[ONE:.*]] = oflow.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = oflow.sub %[[ONE]], %[[T2]]
// CHECK: %[[GT:.*]] = oflow.mul %[[G]], %[[D]]
// CHECK: %[[POS:.*]] = oflow.compare gt %[[R]], %{{.*}}
// CHECK: %[[GR:.*]] = oflow.where %[[POS]], %[[GT]], %{{.*}}
// CHECK: oflow.gradient "w", %[[GR]] : tensor<4xf32>
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4xf32>
  %r = oflow.relu %w : tensor<4xf32>
  %t = oflow.tanh %r : tensor<4xf32>
  %l = oflow.reduce_sum %t {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A broadcast operand's gradient is summed over the broadcast dims (leading
// and size-1) and reshaped back to its shape.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = oflow.weight "a"
// CHECK: %[[B:.*]] = oflow.weight "b"
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[GA:.*]] = oflow.mul %[[G]], %[[B]] : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[GBF:.*]] = oflow.mul %[[G]], %[[A]]
// CHECK: %[[GBS:.*]] = oflow.reduce_sum %[[GBF]] {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK: %[[GB:.*]] = oflow.reshape %[[GBS]] [3, 1] : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
// CHECK: oflow.gradient "a", %[[GA]] : tensor<2x3x4xf32>
// CHECK: oflow.gradient "b", %[[GB]] : tensor<3x1xf32>
func.func @main() -> tensor<f32> {
  %a = oflow.weight "a", dense<1.0> : tensor<2x3x4xf32>
  %b = oflow.weight "b", dense<1.0> : tensor<3x1xf32>
  %m = oflow.mul %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// max: all of the gradient where an operand wins, half of it on ties
// (torch.maximum); the scalar operand's share is summed.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = oflow.weight "a"
// CHECK: %[[B:.*]] = oflow.weight "b"
// CHECK: %[[G:.*]] = oflow.expand
// CHECK: %[[WIN:.*]] = oflow.compare gt %[[A]], %[[B]]
// CHECK: %[[TIE:.*]] = oflow.compare eq %[[A]], %[[B]]
// CHECK: %[[HALF:.*]] = oflow.constant dense<5.000000e-01>
// CHECK: %[[GH:.*]] = oflow.mul %[[G]], %[[HALF]]
// CHECK: %[[T:.*]] = oflow.where %[[TIE]], %[[GH]], %{{.*}}
// CHECK: %[[GA:.*]] = oflow.where %[[WIN]], %[[G]], %[[T]]
// CHECK: oflow.compare gt %[[B]], %[[A]]
// CHECK: oflow.compare eq %[[B]], %[[A]]
// CHECK: %[[S:.*]] = oflow.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<1xf32>
// CHECK: %[[GB:.*]] = oflow.reshape %[[S]] [] : (tensor<1xf32>) -> tensor<f32>
// CHECK: oflow.gradient "a", %[[GA]] : tensor<4xf32>
// CHECK: oflow.gradient "b", %[[GB]] : tensor<f32>
func.func @main() -> tensor<f32> {
  %a = oflow.weight "a", dense<1.0> : tensor<4xf32>
  %b = oflow.weight "b", dense<1.0> : tensor<f32>
  %m = oflow.max %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// pow: d/dbase = e * x^(e-1) (0 where e = 0); d/dexp = y * log(x) (0 where
// x = 0 and e >= 0). where: the condition selects the gradient, no gradient
// for the condition.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = oflow.weight "a"
// CHECK: %[[E:.*]] = oflow.weight "e"
// CHECK: %[[P:.*]] = oflow.pow %[[A]], %[[E]]
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[GW:.*]] = oflow.where %arg0, %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[EM1:.*]] = oflow.sub %[[E]], %{{.*}}
// CHECK: %[[XP:.*]] = oflow.pow %[[A]], %[[EM1]]
// CHECK: %[[D:.*]] = oflow.mul %[[E]], %[[XP]]
// CHECK: %[[GD:.*]] = oflow.mul %[[GW]], %[[D]]
// CHECK: %[[EZ:.*]] = oflow.compare eq %[[E]], %{{.*}}
// CHECK: %[[GA:.*]] = oflow.where %[[EZ]], %{{.*}}, %[[GD]]
// CHECK: %[[LOG:.*]] = oflow.log %[[A]]
// CHECK: %[[YL:.*]] = oflow.mul %[[P]], %[[LOG]]
// CHECK: oflow.gradient "a", %[[GA]] : tensor<4xf32>
// CHECK: oflow.gradient "e", %{{.*}} : tensor<f32>
func.func @main(%c: tensor<4xi1>) -> tensor<f32> {
  %a = oflow.weight "a", dense<1.0> : tensor<4xf32>
  %e = oflow.weight "e", dense<2.0> : tensor<f32>
  %p = oflow.pow %a, %e : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %z = oflow.constant dense<0.0> : tensor<f32>
  %w = oflow.where %c, %p, %z : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %l = oflow.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// cast f32 -> f64 casts the gradient back; dropout with ratio 0 is the
// identity; a cast to an integer type cuts the path (no gradient for "k").
// CHECK-LABEL: func.func @main
// CHECK: oflow.weight "w", {{.*}} {oflow.trainable}
// CHECK: oflow.weight "k", {{.*}} : tensor<3xf32>{{$}}
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<3xf64>
// CHECK: %[[GM:.*]] = oflow.mul %[[G]], %{{.*}}
// CHECK: %[[GC:.*]] = oflow.cast %[[GM]] to f32 : tensor<3xf64>
// CHECK-NEXT: oflow.gradient "w", %[[GC]] : tensor<3xf32>
// CHECK-NEXT: return
func.func @main() -> tensor<f64> {
  %w = oflow.weight "w", dense<1.0> : tensor<3xf32>
  %k = oflow.weight "k", dense<1.0> : tensor<3xf32>
  %d = oflow.dropout %w {ratio = 0.0 : f64} : tensor<3xf32>
  %c = oflow.cast %d to f64 : tensor<3xf32>
  %ki = oflow.cast %k to i64 : tensor<3xf32>
  %kf = oflow.cast %ki to f64 : tensor<3xi64>
  %m = oflow.mul %c, %kf : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %l = oflow.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// Training dropout is linear for its mask, which (seed, step, element) draws
// again: the gradient is the same dropout (ratio, seed, step) of the
// incoming gradient.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[STEP:[a-z0-9]+]]: tensor<i64>)
// CHECK: %[[G:.*]] = oflow.expand {{.*}} -> tensor<4x8xf32>
// CHECK: %[[GD:.*]] = oflow.dropout %[[G]] step %[[STEP]] {ratio = 2.500000e-01 : f64, seed = 11 : i64} : tensor<4x8xf32>
// CHECK-NEXT: oflow.gradient "w", %[[GD]] : tensor<4x8xf32>
func.func @main(%step: tensor<i64>) -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<4x8xf32>
  %d = oflow.dropout %w step %step {ratio = 0.25 : f64, seed = 11 : i64} : tensor<4x8xf32>
  %l = oflow.reduce_sum %d {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
