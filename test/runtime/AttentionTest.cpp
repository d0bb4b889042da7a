//===- AttentionTest.cpp - oflow_rt_attention_fwd / _bwd on the CPU -------===//
//
// The CPU runtime's fused attention (AttentionReference.h through
// AttentionCpu.cpp) against two independent double-precision
// implementations written here:
//   - "same roundings": the definition of abi.h (operands of the five
//     products rounded to bf16/f16), but every sum and exp in double; the
//     runtime must match it to f32 accumulation error, up to the odd operand
//     that lands on the other side of a rounding boundary;
//   - "exact": softmax(Q K^T scale + mask) V and its gradient through the
//     unfused formulas (dS = P o (dP - rowsum(P o dP)) scale), no rounding at
//     all; the runtime must match it to bf16/f16 accuracy. Its gradient is
//     itself checked against finite differences.
// Plus the narrowing conversions (HalfFloat.h), cases whose rounding is
// known exactly, thread-count independence and the one-line errors.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/AttentionReference.h"
#include "../../runtime/lib/HalfFloat.h"
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {
using oflow_rt::attention::roundTo;
using oflow_rt::detail::bf16ToFloat;
using oflow_rt::detail::f16ToFloat;
using oflow_rt::detail::floatToBf16;
using oflow_rt::detail::floatToF16;

const char *nameOf(int64_t dtype) { return dtype == OFLOW_DT_BF16 ? "bf16" : "f16"; }

float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// ---- HalfFloat.h: f32 -> bf16 / f16, nearest even ------------------------

TEST(AttentionRounding, EveryHalfAndBf16RoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t v = static_cast<uint16_t>(h);
    float f = f16ToFloat(v), b = bf16ToFloat(v);
    if (!std::isnan(f))
      ASSERT_EQ(floatToF16(f), v) << std::hex << h;
    else
      ASSERT_TRUE(std::isnan(f16ToFloat(floatToF16(f)))) << std::hex << h;
    if (!std::isnan(b))
      ASSERT_EQ(floatToBf16(b), v) << std::hex << h;
    else
      ASSERT_TRUE(std::isnan(bf16ToFloat(floatToBf16(b)))) << std::hex << h;
  }
}

// Between two neighbours a < b (both finite, same sign), the midpoint goes to
// the one with the even encoding, anything nearer to one goes to it.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void checkMidpoints(uint16_t maxFinite) {
  for (uint32_t h = 0; h < maxFinite; ++h) {
    for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) {
      uint16_t lo = static_cast<uint16_t>(h | sign), hi = static_cast<uint16_t>((h + 1) | sign);
      float a = Widen(lo), b = Widen(hi);
      float mid = a + (b - a) / 2; // exact: f32 has 13+ more bits
      ASSERT_EQ(Narrow(mid), (h & 1) ? hi : lo) << std::hex << h;
      float below = std::nextafter(mid, a), above = std::nextafter(mid, b);
      ASSERT_EQ(Narrow(below), lo) << std::hex << h;
      ASSERT_EQ(Narrow(above), hi) << std::hex << h;
    }
  }
}

TEST(AttentionRounding, MidpointsRoundToEven) {
  checkMidpoints<f16ToFloat, floatToF16>(0x7bff);   // subnormals and normals
  checkMidpoints<bf16ToFloat, floatToBf16>(0x7f7f);
}

TEST(AttentionRounding, OverflowUnderflowAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00); // the midpoint to "65536": odd -> inf
  EXPECT_EQ(floatToF16(-1e10f), 0xfc00);
  EXPECT_EQ(floatToF16(inf), 0x7c00);
  EXPECT_EQ(floatToF16(0x1p-25f), 0x0000);           // half the smallest subnormal: even 0
  EXPECT_EQ(floatToF16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(floatToF16(-0x1p-26f), 0x8000);
  EXPECT_EQ(floatToF16(0x1.ff8p-15f), 0x03ff);      // the largest subnormal
  EXPECT_EQ(floatToF16(0x1.ffcp-15f), 0x0400);      // 1023.5 units: tie, up into the normals
  EXPECT_EQ(floatToF16(fromBits(0x00000001u)), 0x0000); // f32 subnormal
  EXPECT_EQ(floatToBf16(fromBits(0x7f7fffffu)), 0x7f80); // f32 max: above bf16's -> inf
  EXPECT_EQ(floatToBf16(-inf), 0xff80);
  EXPECT_EQ(floatToBf16(fromBits(0x00008000u)), 0x0000); // subnormal tie: even
  EXPECT_EQ(floatToBf16(fromBits(0x00018000u)), 0x0002);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(fromBits(0x7f800001u))))); // payload only in low bits
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(fromBits(0xff800001u)))));
  EXPECT_EQ(roundTo(OFLOW_DT_BF16, 1.0f + 0x1p-8f), 1.0f);          // tie to even
  EXPECT_EQ(roundTo(OFLOW_DT_BF16, 1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(roundTo(OFLOW_DT_F16, 1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(roundTo(OFLOW_DT_F16, 1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
}

// ---- the attention ---------------------------------------------------------

struct Case {
  int64_t bh, tq, tk, d;
  bool causal;
  std::string name() const {
    return std::to_string(bh) + "x" + std::to_string(tq) + "x" + std::to_string(tk) + "x" +
           std::to_string(d) + (causal ? " causal" : "");
  }
};

std::vector<float> randoms(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(seed >> 8) * 0x1p-24f;
  }
  return v;
}

struct Tensors {
  std::vector<float> q, k, v, dout;
};

Tensors inputsFor(const Case &c, uint32_t seed) {
  return {randoms(c.bh * c.tq * c.d, seed + 1, -2, 2), randoms(c.bh * c.tk * c.d, seed + 2, -2, 2),
          randoms(c.bh * c.tk * c.d, seed + 3, -2, 2), randoms(c.bh * c.tq * c.d, seed + 4, -1, 1)};
}

struct Results {
  std::vector<double> out, lse, dq, dk, dv;
};

bool allowed(const Case &c, int64_t i, int64_t j) { return !c.causal || j <= i; }

// abi.h's definition in double, with the same roundings at the same places.
// The backward takes the forward's out and lse as given (as the runtime's).
Results sameRoundings(int64_t dtype, const Case &c, float scale, const Tensors &t,
                      const std::vector<float> &out, const std::vector<float> &lse) {
  auto r = [&](float x) { return static_cast<double>(roundTo(dtype, x)); };
  int64_t d = c.d;
  Results res;
  res.out.assign(c.bh * c.tq * d, 0);
  res.lse.assign(c.bh * c.tq, 0);
  res.dq.assign(c.bh * c.tq * d, 0);
  res.dk.assign(c.bh * c.tk * d, 0);
  res.dv.assign(c.bh * c.tk * d, 0);
  for (int64_t b = 0; b < c.bh; ++b) {
    const float *q = &t.q[b * c.tq * d], *k = &t.k[b * c.tk * d], *v = &t.v[b * c.tk * d];
    const float *dout = &t.dout[b * c.tq * d], *o = &out[b * c.tq * d];
    for (int64_t i = 0; i < c.tq; ++i) {
      std::vector<double> s(c.tk, -INFINITY);
      double m = -INFINITY;
      for (int64_t j = 0; j < c.tk; ++j)
        if (allowed(c, i, j)) {
          double acc = 0;
          for (int64_t x = 0; x < d; ++x)
            acc += r(q[i * d + x]) * r(k[j * d + x]);
          s[j] = scale * acc;
          m = std::max(m, s[j]);
        }
      double sum = 0;
      for (int64_t j = 0; j < c.tk; ++j)
        if (allowed(c, i, j))
          sum += std::exp(s[j] - m);
      double l = m + std::log(sum);
      res.lse[b * c.tq + i] = l;
      double delta = 0;
      for (int64_t x = 0; x < d; ++x)
        delta += double(dout[i * d + x]) * o[i * d + x];
      double lGiven = lse[b * c.tq + i];
      for (int64_t j = 0; j < c.tk; ++j) {
        if (!allowed(c, i, j))
          continue;
        double rp = r(static_cast<float>(std::exp(s[j] - l)));
        double p = std::exp(s[j] - lGiven); // the backward's, from the given lse
        double rpb = r(static_cast<float>(p));
        double dp = 0;
        for (int64_t x = 0; x < d; ++x) {
          res.out[(b * c.tq + i) * d + x] += rp * r(v[j * d + x]);
          res.dv[(b * c.tk + j) * d + x] += rpb * r(dout[i * d + x]);
          dp += r(dout[i * d + x]) * r(v[j * d + x]);
        }
        double ds = r(static_cast<float>(p * (dp - delta) * scale));
        for (int64_t x = 0; x < d; ++x) {
          res.dq[(b * c.tq + i) * d + x] += ds * r(k[j * d + x]);
          res.dk[(b * c.tk + j) * d + x] += ds * r(q[i * d + x]);
        }
      }
    }
  }
  return res;
}

// softmax(Q K^T scale + mask) V and the gradient of sum(dout * out) by the
// unfused formulas, in double, nothing rounded.
Results exact(const Case &c, double scale, const std::vector<double> &q,
              const std::vector<double> &k, const std::vector<double> &v,
              const std::vector<double> &dout) {
  int64_t d = c.d, tq = c.tq, tk = c.tk;
  Results res;
  res.out.assign(c.bh * tq * d, 0);
  res.lse.assign(c.bh * tq, 0);
  res.dq.assign(c.bh * tq * d, 0);
  res.dk.assign(c.bh * tk * d, 0);
  res.dv.assign(c.bh * tk * d, 0);
  for (int64_t b = 0; b < c.bh; ++b) {
    auto Q = [&](int64_t i, int64_t x) { return q[(b * tq + i) * d + x]; };
    auto K = [&](int64_t j, int64_t x) { return k[(b * tk + j) * d + x]; };
    auto V = [&](int64_t j, int64_t x) { return v[(b * tk + j) * d + x]; };
    auto DO = [&](int64_t i, int64_t x) { return dout[(b * tq + i) * d + x]; };
    std::vector<double> P(tq * tk, 0), dP(tq * tk, 0), dS(tq * tk, 0);
    for (int64_t i = 0; i < tq; ++i) {
      double m = -INFINITY;
      std::vector<double> s(tk, -INFINITY);
      for (int64_t j = 0; j < tk; ++j)
        if (allowed(c, i, j)) {
          double acc = 0;
          for (int64_t x = 0; x < d; ++x)
            acc += Q(i, x) * K(j, x);
          s[j] = acc * scale;
          m = std::max(m, s[j]);
        }
      double sum = 0;
      for (int64_t j = 0; j < tk; ++j)
        sum += allowed(c, i, j) ? std::exp(s[j] - m) : 0.0;
      res.lse[b * tq + i] = m + std::log(sum);
      for (int64_t j = 0; j < tk; ++j)
        P[i * tk + j] = allowed(c, i, j) ? std::exp(s[j] - m) / sum : 0.0;
    }
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t x = 0; x < d; ++x) {
        double acc = 0;
        for (int64_t j = 0; j < tk; ++j)
          acc += P[i * tk + j] * V(j, x);
        res.out[(b * tq + i) * d + x] = acc;
      }
    for (int64_t i = 0; i < tq; ++i) {
      double rowsum = 0;
      for (int64_t j = 0; j < tk; ++j) {
        double acc = 0;
        for (int64_t x = 0; x < d; ++x)
          acc += DO(i, x) * V(j, x);
        dP[i * tk + j] = acc;
        rowsum += P[i * tk + j] * acc;
      }
      for (int64_t j = 0; j < tk; ++j)
        dS[i * tk + j] = P[i * tk + j] * (dP[i * tk + j] - rowsum) * scale;
    }
    for (int64_t j = 0; j < tk; ++j)
      for (int64_t x = 0; x < d; ++x) {
        double dv = 0, dk = 0;
        for (int64_t i = 0; i < tq; ++i) {
          dv += P[i * tk + j] * DO(i, x);
          dk += dS[i * tk + j] * Q(i, x);
        }
        res.dv[(b * tk + j) * d + x] = dv;
        res.dk[(b * tk + j) * d + x] = dk;
      }
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t x = 0; x < d; ++x) {
        double acc = 0;
        for (int64_t j = 0; j < tk; ++j)
          acc += dS[i * tk + j] * K(j, x);
        res.dq[(b * tq + i) * d + x] = acc;
      }
  }
  return res;
}

std::vector<double> toDouble(const std::vector<float> &v) { return {v.begin(), v.end()}; }

// max |got - want| / max(max |want|, floor): errors relative to the
// tensor's scale, or to `floor` (the size of one of its terms) where the
// tensor itself is about zero: with one allowed key p = 1 and the exact dq,
// dk are 0, while the rounded operands leave dp - delta a rounding error.
double relError(const std::vector<float> &got, const std::vector<double> &want,
                double floor = 0) {
  double err = 0, scale = floor;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = std::fabs(double(got[i]) - want[i]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / std::max(scale, 1e-30);
}

double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v)
    m = std::max(m, double(std::fabs(x)));
  return m;
}

// The floor of each output's error scale: the size of one term of it.
struct Floors {
  double out, lse, dq, dk, dv;
};
Floors floorsOf(const Tensors &t, float scale) {
  double q = maxAbs(t.q), k = maxAbs(t.k), v = maxAbs(t.v), g = maxAbs(t.dout);
  return {v, 1.0, g * v * scale * k, g * v * scale * q, g};
}

struct Outputs {
  std::vector<float> out, lse, dq, dk, dv, delta;
};

Outputs runRuntime(int64_t dtype, const Case &c, float scale, const Tensors &t) {
  Outputs r;
  r.out.assign(c.bh * c.tq * c.d, NAN);
  r.lse.assign(c.bh * c.tq, NAN);
  r.dq.assign(c.bh * c.tq * c.d, NAN);
  r.dk.assign(c.bh * c.tk * c.d, NAN);
  r.dv.assign(c.bh * c.tk * c.d, NAN);
  r.delta.assign(c.bh * c.tq, NAN);
  oflow_rt_attention_fwd(dtype, c.causal, c.bh, c.tq, c.tk, c.d, scale, t.q.data(), t.k.data(),
                         t.v.data(), r.out.data(), r.lse.data());
  oflow_rt_attention_bwd(dtype, c.causal, c.bh, c.tq, c.tk, c.d, scale, t.q.data(), t.k.data(),
                         t.v.data(), r.out.data(), r.lse.data(), t.dout.data(), r.dq.data(),
                         r.dk.data(), r.dv.data(), r.delta.data());
  return r;
}

const Case kCases[] = {
    {2, 1, 1, 1, true},    {2, 7, 7, 16, true},    {1, 33, 33, 64, true},
    {2, 65, 65, 100, true}, {1, 33, 33, 128, true}, {1, 65, 65, 1, true},
    {2, 7, 33, 16, false}, {1, 65, 7, 64, false},  {3, 33, 65, 1, false},
    {1, 1, 65, 128, false}, {1, 33, 33, 100, false},
};

class AttentionCpu : public ::testing::TestWithParam<int64_t> {};

TEST_P(AttentionCpu, MatchesTheDefinitionWithTheSameRoundingsInDouble) {
  int64_t dtype = GetParam();
  // Tolerances: f32 accumulation against double (~1e-6), plus the rare
  // operand whose f32 and double values round to neighbouring 16-bit
  // values (one ulp of the dtype in one term). Measured: 2.8e-4 (bf16),
  // 9e-6 (f16); leaving out the rounding of p or of ds gives 2.2e-3 (bf16).
  double tol = dtype == OFLOW_DT_BF16 ? 1e-3 : 1e-4;
  double worst = 0;
  for (const Case &c : kCases) {
    float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    Tensors t = inputsFor(c, static_cast<uint32_t>(c.tq * 131 + c.d));
    Outputs r = runRuntime(dtype, c, scale, t);
    Results want = sameRoundings(dtype, c, scale, t, r.out, r.lse);
    std::string what = std::string(nameOf(dtype)) + " " + c.name();
    Floors f = floorsOf(t, scale);
    for (auto [name, got, ref, floor] :
         {std::tuple{"out", &r.out, &want.out, f.out}, {"lse", &r.lse, &want.lse, f.lse},
          {"dq", &r.dq, &want.dq, f.dq}, {"dk", &r.dk, &want.dk, f.dk},
          {"dv", &r.dv, &want.dv, f.dv}}) {
      double e = relError(*got, *ref, floor);
      worst = std::max(worst, e);
      EXPECT_LE(e, tol) << what << " " << name;
    }
  }
  std::printf("[ worst ] %s, same roundings: %.3g\n", nameOf(dtype), worst);
}

TEST_P(AttentionCpu, MatchesExactAttentionToTheDtypesAccuracy) {
  int64_t dtype = GetParam();
  // Every product's operands carry one rounding (2^-9 bf16, 2^-12 f16
  // relative): errors of a few times that relative to the tensor's scale
  // (measured: 1.1e-2 bf16, 8e-4 f16).
  double tol = dtype == OFLOW_DT_BF16 ? 3e-2 : 4e-3;
  double worst = 0;
  for (const Case &c : kCases) {
    float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    Tensors t = inputsFor(c, static_cast<uint32_t>(c.tk * 17 + c.d));
    Outputs r = runRuntime(dtype, c, scale, t);
    Results want = exact(c, scale, toDouble(t.q), toDouble(t.k), toDouble(t.v), toDouble(t.dout));
    std::string what = std::string(nameOf(dtype)) + " " + c.name();
    Floors f = floorsOf(t, scale);
    for (auto [name, got, ref, floor] :
         {std::tuple{"out", &r.out, &want.out, f.out}, {"lse", &r.lse, &want.lse, f.lse},
          {"dq", &r.dq, &want.dq, f.dq}, {"dk", &r.dk, &want.dk, f.dk},
          {"dv", &r.dv, &want.dv, f.dv}}) {
      double e = relError(*got, *ref, floor);
      worst = std::max(worst, e);
      EXPECT_LE(e, tol) << what << " " << name;
    }
    // delta is the caller's scratch, but it must hold sum(dout * out).
    std::vector<double> delta(c.bh * c.tq, 0);
    for (int64_t i = 0; i < c.bh * c.tq; ++i)
      for (int64_t x = 0; x < c.d; ++x)
        delta[i] += double(t.dout[i * c.d + x]) * r.out[i * c.d + x];
    EXPECT_LE(relError(r.delta, delta), 1e-5) << what << " delta";
  }
  std::printf("[ worst ] %s, exact attention: %.3g\n", nameOf(dtype), worst);
}

TEST_P(AttentionCpu, ResultsDoNotDependOnTheThreadCount) {
  int64_t dtype = GetParam();
  Case c{5, 33, 33, 48, true};
  Tensors t = inputsFor(c, 7);
  oflow_rt_set_threads(1);
  Outputs one = runRuntime(dtype, c, 0.3f, t);
  oflow_rt_set_threads(2);
  Outputs two = runRuntime(dtype, c, 0.3f, t);
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.lse, two.lse);
  EXPECT_EQ(one.dq, two.dq);
  EXPECT_EQ(one.dk, two.dk);
  EXPECT_EQ(one.dv, two.dv);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionCpu, ::testing::Values(OFLOW_DT_BF16, OFLOW_DT_F16),
                         [](const auto &info) { return std::string(nameOf(info.param)); });

// The "exact" reference's gradient is the gradient: central differences of
// sum(dout * out) in double, for q, k and v, causal and not.
TEST(AttentionReferenceGradient, ExactGradientMatchesFiniteDifferences) {
  for (const Case &c : {Case{2, 5, 5, 3, true}, Case{1, 4, 6, 2, false}}) {
    double scale = 0.7;
    auto q = toDouble(randoms(c.bh * c.tq * c.d, 11, -1, 1));
    auto k = toDouble(randoms(c.bh * c.tk * c.d, 12, -1, 1));
    auto v = toDouble(randoms(c.bh * c.tk * c.d, 13, -1, 1));
    auto dout = toDouble(randoms(c.bh * c.tq * c.d, 14, -1, 1));
    Results g = exact(c, scale, q, k, v, dout);
    auto loss = [&] {
      Results r = exact(c, scale, q, k, v, dout);
      double l = 0;
      for (size_t i = 0; i < r.out.size(); ++i)
        l += r.out[i] * dout[i];
      return l;
    };
    const double h = 1e-6;
    for (auto [name, x, grad] : {std::tuple{"q", &q, &g.dq}, {"k", &k, &g.dk}, {"v", &v, &g.dv}})
      for (size_t i = 0; i < x->size(); ++i) {
        double saved = (*x)[i];
        (*x)[i] = saved + h;
        double up = loss();
        (*x)[i] = saved - h;
        double down = loss();
        (*x)[i] = saved;
        EXPECT_NEAR((up - down) / (2 * h), (*grad)[i], 1e-7)
            << c.name() << " d" << name << "[" << i << "]";
      }
  }
}

// Cases whose rounding is known exactly: one query, one key, d = 1, so p = 1,
// out = r(v) and lse = scale r(q) r(k), with operands that are not
// representable.
TEST(AttentionCpuRounding, OperandsAreRoundedToTheDtypeNearestEven) {
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16}) {
    float ulp = dtype == OFLOW_DT_BF16 ? 0x1p-7f : 0x1p-10f;
    float q = 1.0f + ulp / 2;     // tie: to 1
    float k = 3.0f + 3 * ulp;     // 3 + 1.5 ulp(3) -> 3 + 2 ulp(3)
    float v = 1.0f + 1.5f * ulp;  // tie: to 1 + 2 ulp (even)
    float out = NAN, lse = NAN;
    oflow_rt_attention_fwd(dtype, 1, 1, 1, 1, 1, 0.5f, &q, &k, &v, &out, &lse);
    EXPECT_EQ(out, 1.0f + 2 * ulp) << nameOf(dtype);
    EXPECT_EQ(lse, 0.5f * (3.0f + 4 * ulp)) << nameOf(dtype);
    // Backward: p = 1, dv = r(p) r(dout) = r(dout); delta = dout * out, so
    // ds = p (r(dout) r(v) - dout out) scale: the roundings are visible.
    float dout = 1.0f + 1.5f * ulp, dq = NAN, dk = NAN, dv = NAN, delta = NAN;
    oflow_rt_attention_bwd(dtype, 1, 1, 1, 1, 1, 0.5f, &q, &k, &v, &out, &lse, &dout, &dq, &dk,
                           &dv, &delta);
    float rdo = 1.0f + 2 * ulp;
    EXPECT_EQ(dv, rdo) << nameOf(dtype);
    EXPECT_EQ(delta, dout * out) << nameOf(dtype);
    float ds = roundTo(dtype, 1.0f * (rdo * roundTo(dtype, v) - delta) * 0.5f);
    EXPECT_EQ(dq, ds * roundTo(dtype, k)) << nameOf(dtype);
    EXPECT_EQ(dk, ds * roundTo(dtype, q)) << nameOf(dtype);
  }
}

// Causal: a query sees keys up to itself only, so changing a later key or
// value changes nothing before it.
TEST(AttentionCpuRounding, CausalQueriesIgnoreLaterKeys) {
  Case c{1, 9, 9, 16, true};
  Tensors t = inputsFor(c, 3);
  Outputs before = runRuntime(OFLOW_DT_BF16, c, 0.25f, t);
  for (int64_t x = 0; x < c.d; ++x) {
    t.k[8 * c.d + x] += 5.0f;
    t.v[8 * c.d + x] -= 3.0f;
  }
  Outputs after = runRuntime(OFLOW_DT_BF16, c, 0.25f, t);
  for (int64_t i = 0; i < 8 * c.d; ++i)
    EXPECT_EQ(before.out[i], after.out[i]) << i;
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(before.lse[i], after.lse[i]) << i;
}

TEST(AttentionCpuErrors, BadArgumentsEndTheRunNamingTheFunctionAndTheValue) {
  std::vector<float> x(4 * 130 * 2, 0.0f), y(4 * 130 * 2);
  const float *p = x.data();
  float *o = y.data();
  EXPECT_DEATH(oflow_rt_attention_fwd(OFLOW_DT_F32, 0, 1, 2, 2, 4, 1.0f, p, p, p, o, o),
               "oflow_rt_attention_fwd: dtype 0 is neither OFLOW_DT_BF16 \\(5\\) nor "
               "OFLOW_DT_F16 \\(6\\)");
  EXPECT_DEATH(oflow_rt_attention_fwd(OFLOW_DT_BF16, 0, 1, 2, 2, 129, 1.0f, p, p, p, o, o),
               "oflow_rt_attention_fwd: head dimension d = 129 is outside \\[1, 128\\]");
  EXPECT_DEATH(oflow_rt_attention_fwd(OFLOW_DT_F16, 0, 1, 2, 2, 0, 1.0f, p, p, p, o, o),
               "oflow_rt_attention_fwd: head dimension d = 0 is outside");
  EXPECT_DEATH(oflow_rt_attention_fwd(OFLOW_DT_BF16, 1, 1, 2, 3, 4, 1.0f, p, p, p, o, o),
               "oflow_rt_attention_fwd: causal attention needs tq == tk \\(tq = 2, tk = 3\\)");
  EXPECT_DEATH(oflow_rt_attention_fwd(OFLOW_DT_BF16, 0, 0, 2, 3, 4, 1.0f, p, p, p, o, o),
               "oflow_rt_attention_fwd: bh = 0, tq = 2, tk = 3: each must be at least 1");
  EXPECT_DEATH(oflow_rt_attention_bwd(OFLOW_DT_I64, 0, 1, 2, 2, 4, 1.0f, p, p, p, p, p, p, o,
                                      o, o, o),
               "oflow_rt_attention_bwd: dtype 3 is neither");
  EXPECT_DEATH(oflow_rt_attention_bwd(OFLOW_DT_F16, 1, 1, 5, 4, 4, 1.0f, p, p, p, p, p, p, o,
                                      o, o, o),
               "oflow_rt_attention_bwd: causal attention needs tq == tk \\(tq = 5, tk = 4\\)");
}

} // namespace
