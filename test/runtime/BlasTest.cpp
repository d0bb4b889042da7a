//===- BlasTest.cpp - the GEMM kernels generated code calls ---------------===//
#include "../../runtime/lib/HalfFloat.h"
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
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

// Losses must not depend on --threads: every GEMM gives the same bits at 1,
// 2 and 3 threads (OpenBLAS's own threading does not: the shapes below are
// the GPT example's, where OpenBLAS 0.3.21 on AVX-512 gave other bits with
// 2 threads), and the pieces still compute the definition.
TEST(Blas, SgemmGivesTheSameBitsAtEveryThreadCount) {
  struct Shape {
    int ta, tb, m, n, k;
  };
  const Shape shapes[] = {{0, 0, 512, 256, 64}, {0, 1, 512, 80, 64}, {1, 0, 64, 256, 512},
                          {1, 0, 256, 64, 512}, {0, 0, 1000, 37, 100}, {1, 1, 37, 1000, 100}};
  for (const Shape &s : shapes) {
    int lda = (s.ta ? s.m : s.k) + 1, ldb = (s.tb ? s.k : s.n) + 2, ldc = s.n + 3;
    std::vector<float> a(lda * (s.ta ? s.k : s.m)), b(ldb * (s.tb ? s.n : s.k));
    uint32_t seed = 7;
    auto next = [&] {
      seed = seed * 1664525u + 1013904223u;
      return static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
    };
    for (float &x : a)
      x = next();
    for (float &x : b)
      x = next();
    std::vector<float> c0(ldc * s.m);
    for (float &x : c0)
      x = next();
    std::vector<float> one;
    for (int threads = 1; threads <= 3; ++threads) {
      oflow_rt_set_threads(threads);
      std::vector<float> c = c0;
      oflow_rt_sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.5f, a.data(), lda, b.data(), ldb, 0.5f,
                     c.data(), ldc);
      if (threads == 1) {
        one = c;
        std::vector<float> want = c0;
        naive(s.ta, s.tb, s.m, s.n, s.k, 1.5f, a.data(), lda, b.data(), ldb, 0.5f,
              want.data(), ldc);
        for (size_t i = 0; i < c.size(); ++i)
          ASSERT_NEAR(c[i], want[i], 1e-4f * s.k) << s.m << "x" << s.n << "x" << s.k << " i=" << i;
        continue;
      }
      EXPECT_EQ(0, std::memcmp(c.data(), one.data(), c.size() * sizeof(float)))
          << s.ta << s.tb << " " << s.m << "x" << s.n << "x" << s.k << " at " << threads
          << " threads";
    }
    // Batched: each matrix of the batch as the single GEMM gives it.
    const int batch = 3;
    std::vector<float> cb;
    for (int threads = 1; threads <= 2; ++threads) {
      oflow_rt_set_threads(threads);
      std::vector<float> c(ldc * s.m * batch);
      for (int i = 0; i < batch; ++i)
        std::copy(c0.begin(), c0.end(), c.begin() + i * ldc * s.m);
      oflow_rt_sgemm_batched(batch, s.ta, s.tb, s.m, s.n, s.k, 1.5f, a.data(), lda, 0,
                             b.data(), ldb, 0, 0.5f, c.data(), ldc, ldc * s.m);
      for (int i = 0; i < batch; ++i)
        EXPECT_EQ(0, std::memcmp(c.data() + i * ldc * s.m, one.data(),
                                 one.size() * sizeof(float)))
            << "batch item " << i << " at " << threads << " threads";
    }
  }
  oflow_rt_set_threads(1);
}

// ---- oflow_rt_gemm_lowp*: bf16 / f16 A and B, f32 C ----------------------
namespace {
// The value of a 16-bit float, decoded independently of HalfFloat.h (by the
// formats' definitions, in double).
double decode(int64_t dtype, uint16_t h) {
  bool bf = dtype == OFLOW_DT_BF16;
  int mantBits = bf ? 7 : 10, expBits = bf ? 8 : 5;
  int bias = (1 << (expBits - 1)) - 1, expMax = (1 << expBits) - 1;
  int exp = (h >> mantBits) & expMax, mant = h & ((1 << mantBits) - 1);
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == expMax)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp == 0)
    return sign * std::ldexp(mant, 1 - bias - mantBits);
  return sign * std::ldexp(mant + (1 << mantBits), exp - bias - mantBits);
}

// Random finite 16-bit floats with magnitudes about 2^-3 .. 2^2 (and a few
// zeros and, for f16, subnormals): values "rounded to bf16/f16" by
// construction.
std::vector<uint16_t> randoms16(int64_t dtype, int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  bool bf = dtype == OFLOW_DT_BF16;
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t r = seed >> 8;
    uint32_t sign = (r & 1) << 15, mant = (r >> 1) & (bf ? 0x7fu : 0x3ffu);
    int e = int((r >> 11) % 6) - 3; // unbiased exponent -3 .. 2
    uint32_t exp = bf ? uint32_t(e + 127) : uint32_t(e + 15);
    if ((r >> 14) % 23 == 0)
      exp = 0; // zero or (f16) subnormal; bf16: a subnormal too small to matter
    x = static_cast<uint16_t>(sign | (exp << (bf ? 7 : 10)) | mant);
  }
  return v;
}

// A NaN of the format: what the padding between rows holds, so that a GEMM
// reading outside op(A)/op(B) poisons its result.
uint16_t nan16(int64_t dtype) { return dtype == OFLOW_DT_BF16 ? 0x7fc0 : 0x7e00; }

// C = alpha op(A) op(B) + beta C in double from the 16-bit values, and the
// bound a float GEMM's rounding stays within (|alpha| sum |a b| + |beta c|).
void reference16(int64_t dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 float alpha, const uint16_t *a, int64_t lda, const uint16_t *b,
                 int64_t ldb, float beta, const float *c, int64_t ldc,
                 std::vector<double> &want, std::vector<double> &scale) {
  want.assign(m * n, 0);
  scale.assign(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, abs = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = decode(dtype, ta ? a[p * lda + i] : a[i * lda + p]);
        double y = decode(dtype, tb ? b[j * ldb + p] : b[p * ldb + j]);
        s += x * y;
        abs += std::fabs(x * y);
      }
      want[i * n + j] = alpha * s + double(beta) * c[i * ldc + j];
      scale[i * n + j] = std::fabs(alpha) * abs + std::fabs(beta * c[i * ldc + j]);
    }
}

const char *nameOf(int64_t dtype) { return dtype == OFLOW_DT_BF16 ? "bf16" : "f16"; }

struct LowpCase {
  int64_t dtype, batch, ta, tb, m, n, k;
  int64_t padA = 3, padB = 1, padC = 2;   // leading dim - row length
  int64_t gapA = 5, gapB = 7, gapC = 4;   // stride - matrix size
  bool sharedA = false, sharedB = false;  // stride 0
  float alpha = 1.5f, beta = -0.5f;
};

// Runs one case through oflow_rt_gemm_lowp (batch 1) or _batched and checks
// every element of C: inside the matrices against the reference, outside
// (padding, gaps) untouched.
void checkLowp(const LowpCase &t) {
  std::string tag = std::string(nameOf(t.dtype)) + " batch=" + std::to_string(t.batch) +
                    " ta=" + std::to_string(t.ta) + " tb=" + std::to_string(t.tb) +
                    " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
                    " k=" + std::to_string(t.k);
  int64_t rowsA = t.ta ? t.k : t.m, colsA = t.ta ? t.m : t.k;
  int64_t rowsB = t.tb ? t.n : t.k, colsB = t.tb ? t.k : t.n;
  int64_t lda = colsA + t.padA, ldb = colsB + t.padB, ldc = t.n + t.padC;
  int64_t sa = t.sharedA ? 0 : rowsA * lda + t.gapA;
  int64_t sb = t.sharedB ? 0 : rowsB * ldb + t.gapB;
  int64_t sc = t.m * ldc + t.gapC;
  int64_t nA = (t.batch - 1) * sa + rowsA * lda, nB = (t.batch - 1) * sb + rowsB * ldb;
  auto a = randoms16(t.dtype, nA, 11 + uint32_t(t.m)),
       b = randoms16(t.dtype, nB, 13 + uint32_t(t.n));
  // Padding and gaps hold NaN: only op(A)/op(B) may be read.
  for (int64_t i = 0; i < nA; ++i)
    if ((i % (sa ? sa : nA)) >= rowsA * lda || (i % (sa ? sa : nA)) % lda >= colsA)
      a[i] = nan16(t.dtype);
  for (int64_t i = 0; i < nB; ++i)
    if ((i % (sb ? sb : nB)) >= rowsB * ldb || (i % (sb ? sb : nB)) % ldb >= colsB)
      b[i] = nan16(t.dtype);
  auto c = values(int(t.batch * sc), 0.75f), before = c;
  if (t.batch == 1)
    oflow_rt_gemm_lowp(t.dtype, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), lda,
                       b.data(), ldb, t.beta, c.data(), ldc);
  else
    oflow_rt_gemm_lowp_batched(t.dtype, t.batch, t.ta, t.tb, t.m, t.n, t.k, t.alpha,
                               a.data(), lda, sa, b.data(), ldb, sb, t.beta,
                               c.data(), ldc, sc);
  std::vector<double> want, scale;
  int bad = 0;
  for (int64_t i = 0; i < t.batch; ++i) {
    reference16(t.dtype, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data() + i * sa, lda,
                b.data() + i * sb, ldb, t.beta, before.data() + i * sc, ldc, want,
                scale);
    for (int64_t r = 0; r < t.m; ++r)
      for (int64_t j = 0; j < t.n; ++j) {
        double got = c[i * sc + r * ldc + j], w = want[r * t.n + j];
        double tol = 1e-6 * std::sqrt(double(t.k) + 1) * scale[r * t.n + j] + 1e-30;
        if (!(std::fabs(got - w) <= tol) && bad++ < 5)
          ADD_FAILURE() << tag << " batch " << i << " C[" << r << "][" << j
                        << "] = " << got << ", want " << w << " (tolerance " << tol << ")";
      }
  }
  for (int64_t i = 0; i < t.batch * sc; ++i) {
    int64_t o = i % sc, r = o / ldc, j = o % ldc;
    if ((r >= t.m || j >= t.n) && c[i] != before[i] && bad++ < 5)
      ADD_FAILURE() << tag << ": C element " << i << " outside the matrices changed";
  }
}
} // namespace

TEST(Blas, F16ToFloatIsExactForEveryHalf) {
  using oflow_rt::detail::f16ToFloat;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float got = f16ToFloat(uint16_t(h));
    double want = decode(OFLOW_DT_F16, uint16_t(h));
    uint32_t bits;
    std::memcpy(&bits, &got, 4);
    if (std::isnan(want)) {
      // NaN stays NaN with its sign and payload (the quiet bit included).
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
      EXPECT_EQ(bits, ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13))
          << std::hex << h;
    } else {
      EXPECT_EQ(double(got), want) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
    }
  }
  EXPECT_EQ(f16ToFloat(0x0001), 0x1p-24f);             // smallest subnormal
  EXPECT_EQ(f16ToFloat(0x03ff), 1023 * 0x1p-24f);      // largest subnormal
  EXPECT_EQ(f16ToFloat(0x0400), 0x1p-14f);             // smallest normal
  EXPECT_EQ(f16ToFloat(0x7bff), 65504.0f);             // max
  EXPECT_EQ(f16ToFloat(0xfbff), -65504.0f);
  EXPECT_EQ(f16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(f16ToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16ToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16ToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(f16ToFloat(0x7c01))); // signalling NaN stays NaN
  EXPECT_EQ(f16ToFloat(0x8000), 0.0f);
  EXPECT_TRUE(std::signbit(f16ToFloat(0x8000))); // negative zero
}

TEST(Blas, Bf16ToFloatIsExactForEveryBfloat16) {
  using oflow_rt::detail::bf16ToFloat;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float got = bf16ToFloat(uint16_t(h));
    uint32_t bits;
    std::memcpy(&bits, &got, 4);
    EXPECT_EQ(bits, h << 16) << std::hex << h;
    double want = decode(OFLOW_DT_BF16, uint16_t(h));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    else
      EXPECT_EQ(double(got), want) << std::hex << h;
  }
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
}

TEST(Blas, GemmLowpMatchesTheDefinitionForEveryTransposition) {
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16})
    for (int64_t ta = 0; ta < 2; ++ta)
      for (int64_t tb = 0; tb < 2; ++tb)
        for (auto [m, n, k] : {std::array<int64_t, 3>{5, 3, 4}, {1, 1, 1},
                               {17, 9, 33}, {64, 48, 96}, {1, 65, 130}}) {
          LowpCase t{dtype, 1, ta, tb, m, n, k};
          checkLowp(t);
          t.alpha = -0.25f;
          t.beta = 0.0f;
          t.padA = t.padB = t.padC = 0; // dense operands too
          checkLowp(t);
        }
}

TEST(Blas, BatchedGemmLowpUsesElementStrides) {
  oflow_rt_set_threads(1);
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16})
    for (int64_t ta = 0; ta < 2; ++ta)
      for (int64_t tb = 0; tb < 2; ++tb) {
        LowpCase t{dtype, 3, ta, tb, 6, 5, 7};
        checkLowp(t);
        t.sharedB = true; // stride_b = 0: B shared by the batch
        t.beta = 0.0f;
        checkLowp(t);
        t.sharedB = false;
        t.sharedA = true;
        t.beta = 1.0f;
        checkLowp(t);
      }
  oflow_rt_set_threads(2);
  LowpCase big{OFLOW_DT_F16, 4, 1, 0, 40, 70, 50};
  checkLowp(big);
}

TEST(Blas, GemmLowpWithKZeroScalesC) {
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16})
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      auto c = values(12, 1.0f), want = c;
      for (auto &x : want)
        x *= beta;
      uint16_t dummy = 0;
      oflow_rt_gemm_lowp(dtype, 0, 0, 3, 4, 0, 1.0f, &dummy, 1, &dummy, 4, beta,
                         c.data(), 4);
      for (size_t i = 0; i < c.size(); ++i)
        EXPECT_EQ(c[i], want[i]) << nameOf(dtype) << " beta " << beta << " i=" << i;
      c = values(16, 1.0f);
      auto before = c;
      oflow_rt_gemm_lowp_batched(dtype, 2, 1, 1, 2, 3, 0, 1.0f, &dummy, 2, 0, &dummy,
                                 1, 0, beta, c.data(), 4, 8);
      for (int64_t i = 0; i < 16; ++i) {
        bool inside = i % 4 < 3; // rows of 4 (ldc), 3 columns (n)
        EXPECT_EQ(c[i], inside ? before[i] * beta : before[i])
            << nameOf(dtype) << " batched beta " << beta << " i=" << i;
      }
    }
}

TEST(Blas, GemmLowpF16EdgeValuesThroughA1x1x1Gemm) {
  // c = a * b, b = 1 (0x3c00), alpha 1, beta 0.
  auto product = [](int64_t dtype, uint16_t a, uint16_t b) {
    float c = 123.0f;
    oflow_rt_gemm_lowp(dtype, 0, 0, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
    return c;
  };
  const uint16_t one = 0x3c00;
  EXPECT_EQ(product(OFLOW_DT_F16, 0x0001, one), 0x1p-24f);
  EXPECT_EQ(product(OFLOW_DT_F16, 0x83ff, one), -1023 * 0x1p-24f);
  EXPECT_EQ(product(OFLOW_DT_F16, 0x7bff, one), 65504.0f);
  // Products and sums in f32: max * max does not overflow as it would in f16.
  EXPECT_EQ(product(OFLOW_DT_F16, 0x7bff, 0x7bff), 65504.0f * 65504.0f);
  EXPECT_EQ(product(OFLOW_DT_F16, 0x7c00, one), std::numeric_limits<float>::infinity());
  EXPECT_EQ(product(OFLOW_DT_F16, 0xfc00, one), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(product(OFLOW_DT_F16, 0x7e00, one)));
  EXPECT_TRUE(std::isnan(product(OFLOW_DT_F16, 0x7c00, 0x0000))); // inf * 0
  EXPECT_EQ(product(OFLOW_DT_F16, 0x8000, one), 0.0f);             // -0 * 1
  // bf16: f32's range.
  const uint16_t bone = 0x3f80;
  EXPECT_EQ(product(OFLOW_DT_BF16, 0x7f7f, bone), 0x1.FEp127f);
  EXPECT_EQ(product(OFLOW_DT_BF16, 0xff80, bone), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(product(OFLOW_DT_BF16, 0x7fc0, bone)));
  EXPECT_EQ(product(OFLOW_DT_BF16, 0x3e00, 0x4040), 0.375f); // 0.125 * 3
}
