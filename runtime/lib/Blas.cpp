//===- Blas.cpp - GEMM for generated code, over OpenBLAS ------------------===//
#include "oflow_rt/abi.h"

#include <cblas.h>

extern "C" void oflow_rt_sgemm(int64_t trans_a, int64_t trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c,
                               int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

extern "C" void oflow_rt_sgemm_batched(
    int64_t batch, int64_t trans_a, int64_t trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const float *a, int64_t lda, int64_t stride_a,
    const float *b, int64_t ldb, int64_t stride_b, float beta, float *c,
    int64_t ldc, int64_t stride_c) {
  for (int64_t i = 0; i < batch; ++i)
    oflow_rt_sgemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
                   b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
}

extern "C" void oflow_rt_set_threads(int64_t threads) {
  openblas_set_num_threads(static_cast<int>(threads));
}
