// oflow-decompose-for-sbp: on a mesh of more than one device, means become
// sums times 1/count (a sum over a split axis is P, which boxing all-reduces),
// mean losses become sum losses divided by the global label count (also in
// their backward op), and batch_norm_training becomes sums and elementwise
// ops. On one device nothing changes.
//
// RUN: oflow-opt %s -split-input-file -oflow-decompose-for-sbp | FileCheck %s

// reduce_mean over 12 columns: reduce_sum (same axes, keepdims) times 1/12.
// CHECK-LABEL: func.func @mean
// CHECK-NEXT: %[[S:.*]] = oflow.reduce_sum %arg0 {axes = array<i64: 1>} : (tensor<8x12xf32>) -> tensor<8x1xf32>
// CHECK-NEXT: %[[K:.*]] = oflow.constant dense<0.0833333358> : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = oflow.mul %[[S]], %[[K]]
// CHECK-NEXT: return %[[M]]

// Mean cross entropy: the sum loss over the 8 labels divided by 8.
// CHECK-LABEL: func.func @sce
// CHECK-NEXT: %[[N:.*]] = oflow.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[L:.*]] = oflow.softmax_cross_entropy sum %arg0, %arg1
// CHECK-NEXT: %[[M:.*]] = oflow.div %[[L]], %[[N]]
// CHECK-NEXT: return %[[M]]

// With ignore_index the count is the number of labels not ignored.
// CHECK-LABEL: func.func @sce_ignore
// CHECK-NEXT: %[[I:.*]] = oflow.constant dense<-100> : tensor<i64>
// CHECK-NEXT: %[[KEEP:.*]] = oflow.compare ne %arg1, %[[I]] : (tensor<8xi64>, tensor<i64>) -> tensor<8xi1>
// CHECK-NEXT: %[[ONES:.*]] = oflow.cast %[[KEEP]] to f32
// CHECK-NEXT: %[[N:.*]] = oflow.reduce_sum %[[ONES]] {axes = array<i64: 0>, keepdims = false} : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT: %[[L:.*]] = oflow.softmax_cross_entropy sum %arg0, %arg1 {ignore_index = -100 : i64}
// CHECK-NEXT: %[[M:.*]] = oflow.div %[[L]], %[[N]]
// CHECK-NEXT: return %[[M]]

// The backward op of a mean loss: the sum form with grad_loss / count.
// CHECK-LABEL: func.func @sce_backward
// CHECK-NEXT: %[[N:.*]] = oflow.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[G:.*]] = oflow.div %arg2, %[[N]]
// CHECK-NEXT: %[[D:.*]] = oflow.softmax_cross_entropy_backward sum %arg0, %arg1, %[[G]]
// CHECK-NEXT: return %[[D]]

// The same for nll_loss and its backward op, with ignore_index.
// CHECK-LABEL: func.func @nll
// CHECK: oflow.compare ne %arg1
// CHECK: %[[N:.*]] = oflow.reduce_sum
// CHECK: %[[L:.*]] = oflow.nll_loss sum %arg0, %arg1 {ignore_index = 3 : i64}
// CHECK-NEXT: %[[M:.*]] = oflow.div %[[L]], %[[N]]
// CHECK: oflow.compare ne %arg1
// CHECK: %[[N2:.*]] = oflow.reduce_sum
// CHECK-NEXT: %[[G:.*]] = oflow.div %arg2, %[[N2]]
// CHECK-NEXT: %[[D:.*]] = oflow.nll_loss_backward sum %arg0, %arg1, %[[G]] {ignore_index = 3 : i64}
// CHECK-NEXT: return %[[M]], %[[D]]

// Mean squared error over 24 elements: the sum times 1/24.
// CHECK-LABEL: func.func @mse
// CHECK-NEXT: %[[L:.*]] = oflow.mse_loss sum %arg0, %arg1
// CHECK-NEXT: %[[K:.*]] = oflow.constant dense<0.0416666679> : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = oflow.mul %[[L]], %[[K]]
// CHECK-NEXT: return %[[M]]

// batch_norm_statistics (the gradient's statistics): the same sums as
// batch_norm_training's, which CSE shares, reshaped to [C].
// CHECK-LABEL: func.func @bn_statistics
// CHECK-NEXT: %[[X:.*]] = oflow.cast %arg0 to f64 : tensor<8x4x2x2xf32>
// CHECK-NEXT: %[[SUM:.*]] = oflow.reduce_sum %[[X]] {axes = array<i64: 0, 2, 3>} : (tensor<8x4x2x2xf64>) -> tensor<1x4x1x1xf64>
// CHECK-NEXT: %[[INV:.*]] = oflow.constant dense<3.125000e-02>
// CHECK-NEXT: %[[MEAN:.*]] = oflow.mul %[[SUM]], %[[INV]]
// CHECK-NEXT: %[[C:.*]] = oflow.sub %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[SQ:.*]] = oflow.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[SUMSQ:.*]] = oflow.reduce_sum %[[SQ]] {axes = array<i64: 0, 2, 3>}
// CHECK-NEXT: %[[M:.*]] = oflow.reshape %[[MEAN]] [4] : (tensor<1x4x1x1xf64>) -> tensor<4xf64>
// CHECK-NEXT: %[[INV2:.*]] = oflow.constant dense<3.125000e-02>
// CHECK-NEXT: %[[VAR:.*]] = oflow.mul %[[SUMSQ]], %[[INV2]]
// CHECK-NEXT: %[[V:.*]] = oflow.reshape %[[VAR]] [4] : (tensor<1x4x1x1xf64>) -> tensor<4xf64>
// CHECK-NEXT: return %[[M]], %[[V]]

// Batch norm over [N, H, W] (32 values per channel), in f64 (the op's
// statistics type; the partial sums a mesh all-reduces are f64 too): mean
// and biased variance from sums (keepdims), normalization with scale and
// bias reshaped to [1, C, 1, 1]; running statistics old * 0.75 + batch *
// 0.25 with the unbiased variance (sum / 31) for the running variance; the
// results rounded to f32 once.
// CHECK-LABEL: func.func @bn
// CHECK-NOT: oflow.batch_norm_training
// CHECK: %[[X:.*]] = oflow.cast %arg0 to f64 : tensor<8x4x2x2xf32>
// CHECK-NEXT: %[[SUM:.*]] = oflow.reduce_sum %[[X]] {axes = array<i64: 0, 2, 3>} : (tensor<8x4x2x2xf64>) -> tensor<1x4x1x1xf64>
// CHECK-NEXT: %[[INV:.*]] = oflow.constant dense<3.125000e-02>
// CHECK-NEXT: %[[MEAN:.*]] = oflow.mul %[[SUM]], %[[INV]]
// CHECK-NEXT: %[[C:.*]] = oflow.sub %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[SQ:.*]] = oflow.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[SUMSQ:.*]] = oflow.reduce_sum %[[SQ]] {axes = array<i64: 0, 2, 3>}
// CHECK-NEXT: %[[INV2:.*]] = oflow.constant dense<3.125000e-02>
// CHECK-NEXT: %[[VAR:.*]] = oflow.mul %[[SUMSQ]], %[[INV2]]
// CHECK-NEXT: %[[EPS:.*]] = oflow.constant dense<9.9999997473787516E-6>
// CHECK-NEXT: %[[VE:.*]] = oflow.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[RSTD:.*]] = oflow.rsqrt %[[VE]]
// CHECK-NEXT: %[[B64:.*]] = oflow.cast %arg2 to f64
// CHECK-NEXT: %[[BIAS:.*]] = oflow.reshape %[[B64]] [1, 4, 1, 1]
// CHECK-NEXT: %[[S64:.*]] = oflow.cast %arg1 to f64
// CHECK-NEXT: %[[SCALE:.*]] = oflow.reshape %[[S64]] [1, 4, 1, 1]
// CHECK-NEXT: %[[NORM:.*]] = oflow.mul %[[C]], %[[RSTD]]
// CHECK-NEXT: %[[SCALED:.*]] = oflow.mul %[[NORM]], %[[SCALE]]
// CHECK-NEXT: %[[Y64:.*]] = oflow.add %[[SCALED]], %[[BIAS]]
// CHECK-NEXT: %[[Y:.*]] = oflow.cast %[[Y64]] to f32
// CHECK-NEXT: %[[UNB:.*]] = oflow.constant dense<0.032258064516129031>
// CHECK-NEXT: %[[UVAR:.*]] = oflow.mul %[[SUMSQ]], %[[UNB]]
// CHECK-NEXT: %[[M4:.*]] = oflow.reshape %[[MEAN]] [4]
// CHECK-NEXT: %[[Q:.*]] = oflow.constant dense<2.500000e-01>
// CHECK-NEXT: %[[MB:.*]] = oflow.mul %[[M4]], %[[Q]]
// CHECK-NEXT: %[[OLDM:.*]] = oflow.cast %arg3 to f64
// CHECK-NEXT: %[[MOM:.*]] = oflow.constant dense<7.500000e-01>
// CHECK-NEXT: %[[MO:.*]] = oflow.mul %[[OLDM]], %[[MOM]]
// CHECK-NEXT: %[[RM64:.*]] = oflow.add %[[MO]], %[[MB]]
// CHECK-NEXT: %[[RM:.*]] = oflow.cast %[[RM64]] to f32
// CHECK-NEXT: %[[V4:.*]] = oflow.reshape %[[UVAR]] [4]
// CHECK-NEXT: %[[Q2:.*]] = oflow.constant dense<2.500000e-01>
// CHECK-NEXT: %[[VB:.*]] = oflow.mul %[[V4]], %[[Q2]]
// CHECK-NEXT: %[[OLDV:.*]] = oflow.cast %arg4 to f64
// CHECK-NEXT: %[[MOM2:.*]] = oflow.constant dense<7.500000e-01>
// CHECK-NEXT: %[[VO:.*]] = oflow.mul %[[OLDV]], %[[MOM2]]
// CHECK-NEXT: %[[RV64:.*]] = oflow.add %[[VO]], %[[VB]]
// CHECK-NEXT: %[[RV:.*]] = oflow.cast %[[RV64]] to f32
// CHECK-NEXT: return %[[Y]], %[[RM]], %[[RV]]
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @mean(%x: tensor<8x12xf32>) -> tensor<8x1xf32> {
    %0 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<8x12xf32>) -> tensor<8x1xf32>
    return %0 : tensor<8x1xf32>
  }
  func.func @sce(%x: tensor<8x10xf32>, %y: tensor<8xi64>) -> tensor<f32> {
    %0 = oflow.softmax_cross_entropy mean %x, %y : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @sce_ignore(%x: tensor<8x10xf32>, %y: tensor<8xi64>) -> tensor<f32> {
    %0 = oflow.softmax_cross_entropy mean %x, %y {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @sce_backward(%x: tensor<8x10xf32>, %y: tensor<8xi64>, %g: tensor<f32>) -> tensor<8x10xf32> {
    %0 = oflow.softmax_cross_entropy_backward mean %x, %y, %g : (tensor<8x10xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x10xf32>
    return %0 : tensor<8x10xf32>
  }
  func.func @nll(%x: tensor<8x10xf32>, %y: tensor<8xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<8x10xf32>) {
    %0 = oflow.nll_loss mean %x, %y {ignore_index = 3 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    %1 = oflow.nll_loss_backward mean %x, %y, %g {ignore_index = 3 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x10xf32>
    return %0, %1 : tensor<f32>, tensor<8x10xf32>
  }
  func.func @mse(%x: tensor<8x3xf32>, %t: tensor<8x3xf32>) -> tensor<f32> {
    %0 = oflow.mse_loss mean %x, %t : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @bn_statistics(%x: tensor<8x4x2x2xf32>) -> (tensor<4xf64>, tensor<4xf64>) {
    %m, %v = oflow.batch_norm_statistics %x : (tensor<8x4x2x2xf32>) -> (tensor<4xf64>, tensor<4xf64>)
    return %m, %v : tensor<4xf64>, tensor<4xf64>
  }
  func.func @bn(%x: tensor<8x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) {
    %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f32, momentum = 0.75 : f32} : (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>)
    return %y, %rm, %rv : tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// One device (and no mesh): nothing to decompose.
// CHECK-LABEL: func.func @one_device
// CHECK-NEXT: oflow.reduce_mean %arg0
// CHECK-NEXT: oflow.softmax_cross_entropy mean
// CHECK-NEXT: oflow.batch_norm_training
module attributes {oflow.mesh = #oflow.mesh<1>} {
  func.func @one_device(%x: tensor<8x4xf32>, %y: tensor<8xi64>, %p: tensor<4xf32>) -> (tensor<8x1xf32>, tensor<f32>, tensor<8x4xf32>) {
    %0 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
    %1 = oflow.softmax_cross_entropy mean %x, %y : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<f32>
    %y2, %rm, %rv = oflow.batch_norm_training %x, %p, %p, %p, %p : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>)
    return %0, %1, %y2 : tensor<8x1xf32>, tensor<f32>, tensor<8x4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @no_mesh
// CHECK-NEXT: oflow.reduce_mean %arg0
func.func @no_mesh(%x: tensor<8x4xf32>) -> tensor<8x1xf32> {
  %0 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

// An integer mean divides the sum by the count (truncating like the
// single-device mean); a float factor 1/count would truncate to 0.
// CHECK-LABEL: func.func @int_mean
// CHECK: %[[S:.*]] = oflow.reduce_sum %arg0 {axes = array<i64: 0>, keepdims = false}
// CHECK: %[[N:.*]] = oflow.constant dense<16> : tensor<i32>
// CHECK: oflow.div %[[S]], %[[N]]
module attributes {oflow.mesh = #oflow.mesh<4>} {
  func.func @int_mean(%x: tensor<16x8xi32>) -> tensor<8xi32> {
    %0 = oflow.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<16x8xi32>) -> tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
