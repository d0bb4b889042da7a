//===- AttentionReference.h - fused attention, by definition ----*- C++ -*-===//
//
// Private to the runtime's sources (and its tests). abi.h's
// oflow_rt_attention_fwd / _bwd on the host, written as the definition
// reads: plain loops, one batch-head at a time, f32 everywhere except that
// the operands of the five GEMM-like products are rounded to the call's
// dtype (bf16 or f16, round to nearest even) first, which is what oflow's
// mixed precision does to an unfused attention's GEMMs. The CPU runtime's
// functions are these (AttentionCpu.cpp), and the CUDA check compares the
// tensor-core kernels against them. Header-only, no MLIR/LLVM, no CUDA.
//
// For batch-head b, query i, allowed keys j (j < tk; j <= i when causal),
// r(x) = x rounded to dtype and back:
//   s_ij   = scale * sum_c r(q_ic) r(k_jc)
//   lse_i  = m_i + log(sum_j exp(s_ij - m_i)),  m_i = max_j s_ij
//   p_ij   = exp(s_ij - lse_i)                  (0 for masked j)
//   out_ic = sum_j r(p_ij) r(v_jc)
// Backward, from lse (the forward's) and dout:
//   delta_i = sum_c dout_ic out_ic
//   dv_jc   = sum_i r(p_ij) r(dout_ic)
//   dp_ij   = sum_c r(dout_ic) r(v_jc)
//   ds_ij   = p_ij (dp_ij - delta_i) scale
//   dq_ic   = sum_j r(ds_ij) r(k_jc),  dk_jc = sum_i r(ds_ij) r(q_ic)
// Sums run in index order with f32 accumulation.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_ATTENTIONREFERENCE_H
#define OFLOW_RT_LIB_ATTENTIONREFERENCE_H

#include "HalfFloat.h"
#include "oflow_rt/abi.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace oflow_rt::attention {

/// The largest head dimension the kernels take (the CUDA kernels hold a
/// 16 x 128 accumulator per warp in registers).
constexpr int64_t kMaxHeadDim = 128;

/// Empty when the arguments are valid, else the one-line message both
/// runtimes end the run with (`fn` is the abi.h function's name).
inline std::string checkArgs(const char *fn, int64_t dtype, int64_t causal,
                             int64_t bh, int64_t tq, int64_t tk, int64_t d) {
  std::string f = std::string(fn) + ": ";
  if (dtype != OFLOW_DT_BF16 && dtype != OFLOW_DT_F16)
    return f + "dtype " + std::to_string(dtype) +
           " is neither OFLOW_DT_BF16 (5) nor OFLOW_DT_F16 (6)";
  if (d < 1 || d > kMaxHeadDim)
    return f + "head dimension d = " + std::to_string(d) + " is outside [1, " +
           std::to_string(kMaxHeadDim) + "]";
  if (bh < 1 || tq < 1 || tk < 1)
    return f + "bh = " + std::to_string(bh) + ", tq = " + std::to_string(tq) +
           ", tk = " + std::to_string(tk) + ": each must be at least 1";
  if (causal && tq != tk)
    return f + "causal attention needs tq == tk (tq = " + std::to_string(tq) +
           ", tk = " + std::to_string(tk) + ")";
  return "";
}

/// x rounded to dtype (OFLOW_DT_BF16 or OFLOW_DT_F16) and widened back.
inline float roundTo(int64_t dtype, float x) {
  return dtype == OFLOW_DT_BF16 ? detail::bf16ToFloat(detail::floatToBf16(x))
                                : detail::f16ToFloat(detail::floatToF16(x));
}

inline std::vector<float> rounded(int64_t dtype, const float *x, int64_t n) {
  std::vector<float> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    r[i] = roundTo(dtype, x[i]);
  return r;
}

/// One batch-head's problem: q [tq, d], k and v [tk, d] (and their grads).
struct Head {
  int64_t dtype, tq, tk, d;
  bool causal;
  float scale;
  /// Keys query i may see: [0, keys(i)).
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, tk) : tk; }
};

/// x [rows, cols] transposed into [cols, rows].
inline std::vector<float> transposed(const std::vector<float> &x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[c * rows + r] = x[r * cols + c];
  return t;
}

/// dots[j] = a . b_j for j < n, b transposed ([d, ld]): each dot sums over c
/// in index order, exactly as a plain dot product loop would, but the loop
/// over j is innermost, so the compiler vectorizes it (5-8x faster).
inline void dotsWithRows(const float *a, const float *bT, int64_t ld, int64_t d, int64_t n,
                         float *dots) {
  std::fill(dots, dots + n, 0.0f);
  for (int64_t c = 0; c < d; ++c) {
    float ac = a[c];
    const float *row = bT + c * ld;
    for (int64_t j = 0; j < n; ++j)
      dots[j] += ac * row[j];
  }
}

/// out [tq, d] and lse [tq] of one batch-head.
inline void forwardHead(const Head &h, const float *q, const float *k, const float *v,
                        float *out, float *lse) {
  std::vector<float> rq = rounded(h.dtype, q, h.tq * h.d),
                     rkT = transposed(rounded(h.dtype, k, h.tk * h.d), h.tk, h.d),
                     rv = rounded(h.dtype, v, h.tk * h.d);
  std::vector<float> s(static_cast<size_t>(h.tk)), acc(static_cast<size_t>(h.d));
  for (int64_t i = 0; i < h.tq; ++i) {
    int64_t n = h.keys(i);
    dotsWithRows(rq.data() + i * h.d, rkT.data(), h.tk, h.d, n, s.data());
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      s[j] *= h.scale;
      m = std::max(m, s[j]);
    }
    float sum = 0;
    for (int64_t j = 0; j < n; ++j)
      sum += std::exp(s[j] - m);
    float l = m + std::log(sum);
    lse[i] = l;
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      float p = roundTo(h.dtype, std::exp(s[j] - l));
      for (int64_t c = 0; c < h.d; ++c)
        acc[c] += p * rv[j * h.d + c];
    }
    std::copy(acc.begin(), acc.end(), out + i * h.d);
  }
}

/// dq [tq, d], dk and dv [tk, d] (overwritten) and delta [tq] of one
/// batch-head, from the forward's out and lse.
inline void backwardHead(const Head &h, const float *q, const float *k, const float *v,
                         const float *out, const float *lse, const float *dout, float *dq,
                         float *dk, float *dv, float *delta) {
  std::vector<float> rq = rounded(h.dtype, q, h.tq * h.d),
                     rk = rounded(h.dtype, k, h.tk * h.d),
                     rdo = rounded(h.dtype, dout, h.tq * h.d);
  std::vector<float> rkT = transposed(rk, h.tk, h.d),
                     rvT = transposed(rounded(h.dtype, v, h.tk * h.d), h.tk, h.d);
  std::fill(dq, dq + h.tq * h.d, 0.0f);
  std::fill(dk, dk + h.tk * h.d, 0.0f);
  std::fill(dv, dv + h.tk * h.d, 0.0f);
  std::vector<float> s(static_cast<size_t>(h.tk)), dp(static_cast<size_t>(h.tk));
  for (int64_t i = 0; i < h.tq; ++i) {
    float dl = 0;
    for (int64_t c = 0; c < h.d; ++c)
      dl += dout[i * h.d + c] * out[i * h.d + c];
    delta[i] = dl;
  }
  // Query-major: dv, dk and dq each accumulate their terms in index order
  // (i for dv and dk, j for dq).
  for (int64_t i = 0; i < h.tq; ++i) {
    int64_t n = h.keys(i);
    const float *rdoI = rdo.data() + i * h.d, *rqI = rq.data() + i * h.d;
    dotsWithRows(rqI, rkT.data(), h.tk, h.d, n, s.data());
    dotsWithRows(rdoI, rvT.data(), h.tk, h.d, n, dp.data());
    float *dqI = dq + i * h.d;
    for (int64_t j = 0; j < n; ++j) {
      float p = std::exp(h.scale * s[j] - lse[i]);
      float rp = roundTo(h.dtype, p);
      float ds = roundTo(h.dtype, p * (dp[j] - delta[i]) * h.scale);
      const float *rkJ = rk.data() + j * h.d;
      float *dvJ = dv + j * h.d, *dkJ = dk + j * h.d;
      for (int64_t c = 0; c < h.d; ++c) {
        dvJ[c] += rp * rdoI[c];
        dqI[c] += ds * rkJ[c];
        dkJ[c] += ds * rqI[c];
      }
    }
  }
}

} // namespace oflow_rt::attention

#endif
