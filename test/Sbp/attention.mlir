// SBP signatures of fused attention on a 2x3 mesh: whole, or every operand
// and result split alike along one (batch, head) axis; never along the
// sequence or head dims (a query row needs every key) and never partial.
//
// RUN: oflow-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   -oflow-test-sbp-signatures=mesh=2,3 -o /dev/null 2>&1 | FileCheck %s

func.func @attention(%q: tensor<4x6x8x16xf32>, %do: tensor<4x6x8x16xf32>) {
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B -> B, B | S(0), S(0), S(0) -> S(0), S(0) | S(1), S(1), S(1) -> S(1), S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B -> B, B | S(1), S(1), S(1) -> S(1), S(1)
  %o, %lse = oflow.attention %q, %q, %q {causal, operand_type = bf16, scale = 0.25 : f32} : (tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>) -> (tensor<4x6x8x16xf32>, tensor<4x6x8xf32>)
// CHECK: :[[@LINE+2]]:{{[0-9]+}}: remark: axis 0 (size 2): B, B, B, B, B, B -> B, B, B | S(0), S(0), S(0), S(0), S(0), S(0) -> S(0), S(0), S(0) | S(1), S(1), S(1), S(1), S(1), S(1) -> S(1), S(1), S(1)
// CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: axis 1 (size 3): B, B, B, B, B, B -> B, B, B | S(1), S(1), S(1), S(1), S(1), S(1) -> S(1), S(1), S(1)
  %dq, %dk, %dv = oflow.attention_backward %q, %q, %q, %o, %lse, %do {causal, operand_type = bf16, scale = 0.25 : f32} : (tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>, tensor<4x6x8xf32>, tensor<4x6x8x16xf32>) -> (tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>, tensor<4x6x8x16xf32>)
  return
}
