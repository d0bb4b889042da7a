// RUN: oflow-opt %s -verify-diagnostics -pass-pipeline="builtin.module(func.func(oflow-autocast{precision=fp8}))"

// expected-error @below {{oflow-autocast: unknown precision 'fp8' (want fp32, bf16 or fp16)}}
func.func @f(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
