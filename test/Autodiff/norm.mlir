// RUN: oflow-opt %s -split-input-file --oflow-autodiff | FileCheck %s

// reduce_max shares the gradient among tied maxima (torch.amax): the mask of
// maxima divided by its count; reduce_mean expands the gradient over the
// reduced dims divided by their size.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = oflow.weight "x"
// CHECK: %[[M:.*]] = oflow.reduce_max %[[X]]
// CHECK: %[[THIRD:.*]] = oflow.constant dense<0.333333343>
// CHECK: %[[GS:.*]] = oflow.mul %{{.*}}, %[[THIRD]] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
// CHECK: %[[GM:.*]] = oflow.expand %[[GS]] [2, 3]
// CHECK: %[[MK:.*]] = oflow.reshape %[[M]] [2, 3, 1]
// CHECK: %[[EQ:.*]] = oflow.compare eq %[[X]], %[[MK]]
// CHECK: %[[MASK:.*]] = oflow.cast %[[EQ]] to f32
// CHECK: %[[CNT:.*]] = oflow.reduce_sum %[[MASK]] {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[GK:.*]] = oflow.reshape %[[GM]] [2, 3, 1]
// CHECK: %[[SHARE:.*]] = oflow.div %[[GK]], %[[CNT]]
// CHECK: %[[GX:.*]] = oflow.mul %[[SHARE]], %[[MASK]]
// CHECK: oflow.gradient "x", %[[GX]] : tensor<2x3x4xf32>
func.func @main() -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<2x3x4xf32>
  %m = oflow.reduce_max %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %s = oflow.reduce_mean %m {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %l = oflow.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g), each
// along its own axis.
// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = oflow.softmax
// CHECK: %[[T:.*]] = oflow.log_softmax %[[S]]
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[G:.*]] = oflow.mul %{{.*}}, %arg0
// CHECK: %[[SUM:.*]] = oflow.reduce_sum %[[G]] {axes = array<i64: 0>} : (tensor<2x5xf32>) -> tensor<1x5xf32>
// CHECK: %[[E:.*]] = oflow.exp %[[T]]
// CHECK: %[[ES:.*]] = oflow.mul %[[E]], %[[SUM]]
// CHECK: %[[GS:.*]] = oflow.sub %[[G]], %[[ES]]
// CHECK: %[[GY:.*]] = oflow.mul %[[GS]], %[[S]]
// CHECK: %[[DOT:.*]] = oflow.reduce_sum %[[GY]] {axes = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK: %[[D:.*]] = oflow.sub %[[GS]], %[[DOT]]
// CHECK: %[[GX:.*]] = oflow.mul %[[S]], %[[D]]
// CHECK: oflow.gradient "x", %[[GX]]
func.func @main(%r: tensor<2x5xf32>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<2x5xf32>
  %s = oflow.softmax %x {axis = 1 : i64} : tensor<2x5xf32>
  %t = oflow.log_softmax %s {axis = 0 : i64} : tensor<2x5xf32>
  %m = oflow.mul %t, %r : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm recomputes the normalized input (biased variance, rsqrt) for
// the scale's gradient; scale and bias gradients sum over the leading dims.
// No input gradient: the input is data.
// CHECK-LABEL: func.func @main
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[G:.*]] = oflow.mul %{{.*}}, %arg1
// CHECK: %[[MEAN:.*]] = oflow.reduce_mean %arg0 {axes = array<i64: 2>}
// CHECK: %[[C:.*]] = oflow.sub %arg0, %[[MEAN]]
// CHECK: %[[C2:.*]] = oflow.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.*]] = oflow.reduce_mean %[[C2]] {axes = array<i64: 2>}
// CHECK: %[[EPS:.*]] = oflow.constant dense<9.99999974E-6>
// CHECK: %[[VE:.*]] = oflow.add %[[VAR]], %[[EPS]]
// CHECK: %[[RSTD:.*]] = oflow.rsqrt %[[VE]]
// CHECK: %[[XHAT:.*]] = oflow.mul %[[C]], %[[RSTD]]
// CHECK: %[[GXH:.*]] = oflow.mul %[[G]], %[[XHAT]]
// CHECK: %[[GW:.*]] = oflow.reduce_sum %[[GXH]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
// CHECK: %[[GB:.*]] = oflow.reduce_sum %[[G]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
// CHECK: oflow.gradient "ln.weight", %[[GW]]
// CHECK: oflow.gradient "ln.bias", %[[GB]]
func.func @main(%x: tensor<2x3x4xf32>, %r: tensor<2x3x4xf32>) -> tensor<f32> {
  %g = oflow.weight "ln.weight", dense<1.0> : tensor<4xf32>
  %b = oflow.weight "ln.bias", dense<0.0> : tensor<4xf32>
  %y = oflow.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %m = oflow.mul %y, %r : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// batch_norm_training: batch statistics over N, H, W, read from
// batch_norm_statistics (the forward pass's, after lowering and CSE); two
// sums in f64 (the op's statistics type), sum(g) and sum(g * xhat), give all
// three gradients. dx = scale * rstd * (g - mean(g) - xhat * mean(g * xhat))
// is applied as PyTorch's CPU kernel applies it: per channel, in f64 and
// rounded to f32 once, a = scale * rstd, k = rstd * sum(g * xhat) / n and
// mean(g); per element in f32, dx = (g - mean(g) - (x - mean) * k) * a. The
// running statistics are buffers (no gradient, not trainable).
// CHECK-LABEL: func.func @main
// CHECK: oflow.weight "bn.running_mean", {{.*}} : tensor<3xf32>{{$}}
// CHECK: oflow.weight "bn.running_var", {{.*}} : tensor<3xf32>{{$}}
// CHECK: oflow.constant dense<1.000000e+00>
// CHECK: %[[G32:.*]] = oflow.mul %{{.*}}, %arg0
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = oflow.batch_norm_statistics %[[XW:.*]] : (tensor<4x3x2x2xf32>) -> (tensor<3xf64>, tensor<3xf64>)
// CHECK: %[[X:.*]] = oflow.cast %[[XW]] to f64 : tensor<4x3x2x2xf32>
// CHECK: %[[G:.*]] = oflow.cast %[[G32]] to f64 : tensor<4x3x2x2xf32>
// CHECK: %[[VE:.*]] = oflow.add %[[VAR]], %{{.*}}
// CHECK: %[[RSTD:.*]] = oflow.rsqrt %[[VE]] : tensor<3xf64>
// CHECK: %[[RSTDC:.*]] = oflow.reshape %[[RSTD]] [1, 3, 1, 1]
// CHECK: %[[MEANC:.*]] = oflow.reshape %[[MEAN]] [1, 3, 1, 1]
// CHECK: %[[C:.*]] = oflow.sub %[[X]], %[[MEANC]]
// CHECK: %[[XHAT:.*]] = oflow.mul %[[C]], %[[RSTDC]]
// CHECK: %[[SG:.*]] = oflow.reduce_sum %[[G]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<4x3x2x2xf64>) -> tensor<3xf64>
// CHECK: %[[GXH:.*]] = oflow.mul %[[G]], %[[XHAT]]
// CHECK: %[[SGX:.*]] = oflow.reduce_sum %[[GXH]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<4x3x2x2xf64>) -> tensor<3xf64>
// CHECK: %[[S64:.*]] = oflow.cast %{{.*}} to f64 : tensor<3xf32>
// CHECK: %[[A64:.*]] = oflow.mul %[[S64]], %[[RSTD]]
// CHECK: %[[A32:.*]] = oflow.cast %[[A64]] to f32 : tensor<3xf64>
// CHECK: %[[A:.*]] = oflow.reshape %[[A32]] [1, 3, 1, 1] : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
// CHECK: %[[RS:.*]] = oflow.mul %[[RSTD]], %[[SGX]]
// CHECK: %[[INV:.*]] = oflow.constant dense<6.250000e-02> : tensor<f64>
// CHECK: %[[K64:.*]] = oflow.mul %[[RS]], %[[INV]]
// CHECK: %[[K32:.*]] = oflow.cast %[[K64]] to f32
// CHECK: %[[K:.*]] = oflow.reshape %[[K32]] [1, 3, 1, 1]
// CHECK: %[[MG64:.*]] = oflow.mul %[[SG]], %{{.*}}
// CHECK: %[[MG32:.*]] = oflow.cast %[[MG64]] to f32
// CHECK: %[[MG:.*]] = oflow.reshape %[[MG32]] [1, 3, 1, 1]
// CHECK: %[[M32:.*]] = oflow.cast %[[MEAN]] to f32
// CHECK: %[[M:.*]] = oflow.reshape %[[M32]] [1, 3, 1, 1]
// CHECK: %[[XC:.*]] = oflow.sub %[[XW]], %[[M]] : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>)
// CHECK: %[[XK:.*]] = oflow.mul %[[XC]], %[[K]]
// CHECK: %[[D1:.*]] = oflow.sub %[[G32]], %[[MG]]
// CHECK: %[[D2:.*]] = oflow.sub %[[D1]], %[[XK]]
// CHECK: %[[GX:.*]] = oflow.mul %[[D2]], %[[A]] : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
// CHECK: %[[GW:.*]] = oflow.cast %[[SGX]] to f32 : tensor<3xf64>
// CHECK: %[[GB:.*]] = oflow.cast %[[SG]] to f32 : tensor<3xf64>
// CHECK: oflow.gradient "x", %[[GX]] : tensor<4x3x2x2xf32>
// CHECK-NEXT: oflow.gradient "bn.weight", %[[GW]] : tensor<3xf32>
// CHECK-NEXT: oflow.gradient "bn.bias", %[[GB]] : tensor<3xf32>
// CHECK-NEXT: return
func.func @main(%r: tensor<4x3x2x2xf32>) -> tensor<f32> {
  %x = oflow.weight "x", dense<1.0> : tensor<4x3x2x2xf32>
  %s = oflow.weight "bn.weight", dense<1.0> : tensor<3xf32>
  %b = oflow.weight "bn.bias", dense<0.0> : tensor<3xf32>
  %rm = oflow.weight "bn.running_mean", dense<0.0> : tensor<3xf32>
  %rv = oflow.weight "bn.running_var", dense<1.0> : tensor<3xf32>
  %y, %nrm, %nrv = oflow.batch_norm_training %x, %s, %b, %rm, %rv : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  %m = oflow.mul %y, %r : (tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>) -> tensor<4x3x2x2xf32>
  %l = oflow.reduce_sum %m {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<4x3x2x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// batch_norm_inference normalizes with the given statistics, which are
// buffers: no gradient for them.
// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = oflow.weight "bn.weight"
// CHECK: %[[RM:.*]] = oflow.weight "bn.running_mean", {{.*}} : tensor<3xf32>{{$}}
// CHECK: %[[RV:.*]] = oflow.weight "bn.running_var", {{.*}} : tensor<3xf32>{{$}}
// CHECK: %[[VE:.*]] = oflow.add %[[RV]], %{{.*}}
// CHECK: %[[RSTD:.*]] = oflow.rsqrt %[[VE]]
// CHECK: %[[RSTDC:.*]] = oflow.reshape %[[RSTD]] [1, 3]
// CHECK: %[[MC:.*]] = oflow.reshape %[[RM]] [1, 3]
// CHECK: %[[C:.*]] = oflow.sub %arg0, %[[MC]]
// CHECK: %[[XHAT:.*]] = oflow.mul %[[C]], %[[RSTDC]]
// CHECK: oflow.gradient "bn.weight"
// CHECK-NEXT: oflow.gradient "bn.bias"
// CHECK-NEXT: return
func.func @main(%x: tensor<4x3xf32>) -> tensor<f32> {
  %s = oflow.weight "bn.weight", dense<1.0> : tensor<3xf32>
  %b = oflow.weight "bn.bias", dense<0.0> : tensor<3xf32>
  %rm = oflow.weight "bn.running_mean", dense<0.0> : tensor<3xf32>
  %rv = oflow.weight "bn.running_var", dense<1.0> : tensor<3xf32>
  %y = oflow.batch_norm_inference %x, %s, %b, %rm, %rv : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %l = oflow.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
