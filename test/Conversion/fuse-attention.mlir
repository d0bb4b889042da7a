// oflow-fuse-attention: the scaled, causally masked softmax between two
// matmuls becomes one oflow.attention; anything it cannot prove to be that
// function stays unfused.
//
// RUN: oflow-opt %s -split-input-file --oflow-fuse-attention --canonicalize | FileCheck %s
// RUN: oflow-opt %s -split-input-file --oflow-fuse-attention=precision=fp16 --canonicalize | FileCheck %s --check-prefix=F16
// RUN: not oflow-opt %s --oflow-fuse-attention=precision=fp32 2>&1 | FileCheck %s --check-prefix=BAD

// GPT's form (the ONNX export of masked_fill(~tril, -inf)): k^T is a
// transpose of the key heads, folded into one transpose to [B, H, T, D].
// CHECK-LABEL: func.func @gpt_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x8x4x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>)
// CHECK: %[[KT:.*]] = oflow.transpose %[[K]] [0, 2, 1, 3]
// CHECK: %[[O:.*]], %{{.*}} = oflow.attention %[[Q]], %[[KT]], %[[V]] {causal, operand_type = bf16, scale = 2.500000e-01 : f32}
// CHECK-SAME: -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: oflow.softmax
// F16: oflow.attention {{.*}}operand_type = f16
// BAD: oflow-fuse-attention: precision must be bf16 or fp16, not 'fp32'
func.func @gpt_causal(%q: tensor<2x4x8x16xf32>, %k: tensor<2x8x4x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt = oflow.transpose %k [0, 2, 3, 1] : (tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32>
  %s = oflow.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %c = oflow.constant dense<2.500000e-01> : tensor<f32>
  %s2 = oflow.mul %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %tril = oflow.constant dense<[[true, false, false, false, false, false, false, false],
                                [true, true, false, false, false, false, false, false],
                                [true, true, true, false, false, false, false, false],
                                [true, true, true, true, false, false, false, false],
                                [true, true, true, true, true, false, false, false],
                                [true, true, true, true, true, true, false, false],
                                [true, true, true, true, true, true, true, false],
                                [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  %masked = oflow.not %tril : tensor<8x8xi1>
  %ninf = oflow.constant dense<0xFF800000> : tensor<f32>
  %s3 = oflow.where %masked, %ninf, %s2 : (tensor<8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = oflow.softmax %s3 {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = oflow.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// The mask kept where true (where(tril, s, -inf)), a weight as in GPT-2's
// `causal_mask` buffer, a division as the scale, k given with transpose_b.
// CHECK-LABEL: func.func @tril_weight_div
// CHECK-SAME: (%[[Q:.*]]: tensor<3x4x16xf32>, %[[K:.*]]: tensor<3x4x16xf32>, %[[V:.*]]: tensor<3x4x16xf32>)
// CHECK: oflow.attention %[[Q]], %[[K]], %[[V]] {causal, operand_type = bf16, scale = 5.000000e-01 : f32}
// CHECK-NOT: oflow.weight
func.func @tril_weight_div(%q: tensor<3x4x16xf32>, %k: tensor<3x4x16xf32>, %v: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %s = oflow.matmul %q, %k {transpose_b} : (tensor<3x4x16xf32>, tensor<3x4x16xf32>) -> tensor<3x4x4xf32>
  %c = oflow.constant dense<2.000000e+00> : tensor<f32>
  %s2 = oflow.div %s, %c : (tensor<3x4x4xf32>, tensor<f32>) -> tensor<3x4x4xf32>
  %tril = oflow.weight "causal_mask", dense<[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]> : tensor<1x4x4xi1>
  %ninf = oflow.constant dense<0xFF800000> : tensor<f32>
  %s3 = oflow.where %tril, %s2, %ninf : (tensor<1x4x4xi1>, tensor<3x4x4xf32>, tensor<f32>) -> tensor<3x4x4xf32>
  %p = oflow.softmax %s3 {axis = 2 : i64} : tensor<3x4x4xf32>
  %o = oflow.matmul %p, %v : (tensor<3x4x4xf32>, tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %o : tensor<3x4x16xf32>
}

// -----

// No mask and no scale: cross-attention with Tq != Tk, scale 1.
// CHECK-LABEL: func.func @cross
// CHECK: oflow.attention %{{.*}} {operand_type = bf16, scale = 1.000000e+00 : f32} : (tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>)
func.func @cross(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x7xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x5x8xf32> {
  %s = oflow.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x7xf32>) -> tensor<2x5x7xf32>
  %p = oflow.softmax %s {axis = 2 : i64} : tensor<2x5x7xf32>
  %o = oflow.matmul %p, %v : (tensor<2x5x7xf32>, tensor<2x7x8xf32>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}

// -----

// Not fused: a mask that is not causal (the diagonal masked too), the
// probabilities used twice (returned attention weights), a head dim past the
// kernels' 128, a softmax over another axis, broadcast operands.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: oflow.attention
// CHECK: oflow.softmax
func.func @not_causal(%q: tensor<1x3x8xf32>, %kt: tensor<1x8x3xf32>, %v: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %s = oflow.matmul %q, %kt : (tensor<1x3x8xf32>, tensor<1x8x3xf32>) -> tensor<1x3x3xf32>
  %m = oflow.constant dense<[[true, true, true], [false, true, true], [false, false, true]]> : tensor<3x3xi1>
  %ninf = oflow.constant dense<0xFF800000> : tensor<f32>
  %s3 = oflow.where %m, %ninf, %s : (tensor<3x3xi1>, tensor<f32>, tensor<1x3x3xf32>) -> tensor<1x3x3xf32>
  %p = oflow.softmax %s3 {axis = 2 : i64} : tensor<1x3x3xf32>
  %o = oflow.matmul %p, %v : (tensor<1x3x3xf32>, tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}

// CHECK-LABEL: func.func @probabilities_returned
// CHECK-NOT: oflow.attention
func.func @probabilities_returned(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x7xf32>, %v: tensor<2x7x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x7xf32>) {
  %s = oflow.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x7xf32>) -> tensor<2x5x7xf32>
  %p = oflow.softmax %s {axis = 2 : i64} : tensor<2x5x7xf32>
  %o = oflow.matmul %p, %v : (tensor<2x5x7xf32>, tensor<2x7x8xf32>) -> tensor<2x5x8xf32>
  return %o, %p : tensor<2x5x8xf32>, tensor<2x5x7xf32>
}

// CHECK-LABEL: func.func @head_dim_256
// CHECK-NOT: oflow.attention
func.func @head_dim_256(%q: tensor<2x5x256xf32>, %kt: tensor<2x256x7xf32>, %v: tensor<2x7x256xf32>) -> tensor<2x5x256xf32> {
  %s = oflow.matmul %q, %kt : (tensor<2x5x256xf32>, tensor<2x256x7xf32>) -> tensor<2x5x7xf32>
  %p = oflow.softmax %s {axis = 2 : i64} : tensor<2x5x7xf32>
  %o = oflow.matmul %p, %v : (tensor<2x5x7xf32>, tensor<2x7x256xf32>) -> tensor<2x5x256xf32>
  return %o : tensor<2x5x256xf32>
}

// CHECK-LABEL: func.func @softmax_other_axis
// CHECK-NOT: oflow.attention
func.func @softmax_other_axis(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %s = oflow.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  %p = oflow.softmax %s {axis = 1 : i64} : tensor<2x5x5xf32>
  %o = oflow.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}

// CHECK-LABEL: func.func @broadcast_value
// CHECK-NOT: oflow.attention
func.func @broadcast_value(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x7xf32>, %v: tensor<7x8xf32>) -> tensor<2x5x8xf32> {
  %s = oflow.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x7xf32>) -> tensor<2x5x7xf32>
  %p = oflow.softmax %s {axis = 2 : i64} : tensor<2x5x7xf32>
  %o = oflow.matmul %p, %v : (tensor<2x5x7xf32>, tensor<7x8xf32>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}
