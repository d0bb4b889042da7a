//===- BlasTest.cpp - the GEMM kernels generated code calls ---------------===//
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <vector>

namespace {
// C = alpha * op(A) op(B) + beta * C, row-major, by definition.
void naive(bool ta, bool tb, int m, int n, int k, float alpha, const float *a,
           int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p)
        s += (ta ? a[p * lda + i] : a[i * lda + p]) *
             (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * s + beta * c[i * ldc + j];
    }
}

std::vector<float> values(int n, float scale) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>((i * 7) % 11 - 5);
  return v;
}
} // namespace

TEST(Blas, SgemmMatchesTheDefinitionForEveryTransposition) {
  const int m = 5, n = 3, k = 4;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      // Leading dimensions wider than the matrices, as views produce.
      int lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 1, ldc = n + 3;
      auto a = values(lda * (ta ? k : m), 0.5f), b = values(ldb * (tb ? n : k), 0.25f);
      auto c = values(ldc * m, 1.0f), want = c;
      oflow_rt_sgemm(ta, tb, m, n, k, 2.0f, a.data(), lda, b.data(), ldb, 0.5f,
                     c.data(), ldc);
      naive(ta, tb, m, n, k, 2.0f, a.data(), lda, b.data(), ldb, 0.5f, want.data(), ldc);
      for (size_t i = 0; i < c.size(); ++i)
        EXPECT_FLOAT_EQ(c[i], want[i]) << "ta=" << ta << " tb=" << tb << " i=" << i;
    }
}

TEST(Blas, BatchedSgemmUsesElementStrides) {
  const int batch = 3, m = 2, n = 4, k = 3;
  const int sa = m * k + 1, sb = 0, sc = m * n + 2; // sb = 0: B shared by all
  auto a = values(sa * batch, 1.0f), b = values(k * n, 0.5f);
  auto c = values(sc * batch, 0.0f), want = c;
  oflow_rt_set_threads(1);
  oflow_rt_sgemm_batched(batch, 0, 0, m, n, k, 1.0f, a.data(), k, sa, b.data(), n, sb,
                         0.0f, c.data(), n, sc);
  for (int i = 0; i < batch; ++i)
    naive(false, false, m, n, k, 1.0f, a.data() + i * sa, k, b.data(), n, 0.0f,
          want.data() + i * sc, n);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_FLOAT_EQ(c[i], want[i]) << i;
}
