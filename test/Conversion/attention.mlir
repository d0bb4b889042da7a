// oflow.attention and its backward op lower to the runtime's fused kernels
// (oflow_rt_attention_fwd / _bwd), the (batch, head) dims collapsed into one:
// dtype (5 = bf16), causal, bh, tq, tk, d, scale, then the operands' own
// buffers and fresh result buffers (the backward's last one is the runtime's
// [bh, tq] scratch).
//
// RUN: oflow-opt %s --oflow-lower-to-linalg --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[D:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[T:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[BH:.*]] = arith.constant 6 : i64
// CHECK-DAG: %[[CAUSAL:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[BF16:.*]] = arith.constant 5 : i64
// CHECK: %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<2x3x8x16xf32> into tensor<6x8x16xf32>
// CHECK: %[[O:.*]] = memref.alloc() : memref<6x8x16xf32>
// CHECK: %[[OC:.*]] = memref.cast %[[O]]
// CHECK: %[[L:.*]] = memref.alloc() : memref<6x8xf32>
// CHECK: %[[LC:.*]] = memref.cast %[[L]]
// CHECK: call @__oflow_rt_attention_fwd_f32(%[[BF16]], %[[CAUSAL]], %[[BH]], %[[T]], %[[T]], %[[D]], %[[SCALE]], %{{.*}}, %{{.*}}, %{{.*}}, %[[OC]], %[[LC]])
// CHECK: memref.alloc() : memref<6x8x16xf32>
// CHECK: memref.alloc() : memref<6x8x16xf32>
// CHECK: memref.alloc() : memref<6x8x16xf32>
// CHECK: memref.alloc() : memref<6x8xf32>
// CHECK: call @__oflow_rt_attention_bwd_f32(%[[BF16]], %[[CAUSAL]], %[[BH]], %[[T]], %[[T]], %[[D]], %[[SCALE]], %{{.*}}, %{{.*}}, %{{.*}}, %[[OC]], %[[LC]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-COUNT-3: tensor.expand_shape {{.*}} output_shape [2, 3, 8, 16]
// CHECK-NOT: linalg.
func.func @attention(%q: tensor<2x3x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>, %do: tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) {
  %o, %lse = oflow.attention %q, %k, %v {causal, operand_type = bf16, scale = 0.125 : f32} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8xf32>)
  %dq, %dk, %dv = oflow.attention_backward %q, %k, %v, %o, %lse, %do {causal, operand_type = bf16, scale = 0.125 : f32} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>)
  return %o, %dq, %dk, %dv : tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>
}
