//===- Attention.cu - fused attention on tensor cores (sm_80 and newer) ---===//
//
// abi.h's oflow_rt_attention_fwd / _bwd, FlashAttention-2 style. Compiled by
// nvcc at build time into a fatbin (sm_80, sm_90 and compute_90 PTX) that
// the runtime embeds and loads through its module registry
// (CudaAttention.cpp); the runtime's host code stays g++-only.
//
// Every block has 4 warps; a warp owns 16 rows (queries, or keys for dk/dv)
// and computes 16 x 8 x 16 products with mma.sync.m16n8k16 (bf16 or f16
// operands, f32 accumulators). Tiles of q, k, v, dout are read from f32
// global memory, rounded to the dtype (round to nearest even: the same r()
// as the CPU reference) into shared memory, d zero-padded to DP (a multiple
// of 16, a template parameter: the accumulators live in registers, so their
// size must be static), rows past tq/tk zero and masked. Fragments come from
// shared memory through ldmatrix (.trans where the operand is stored k-major
// the wrong way round). The score matrix of a tile lives in registers only:
// its accumulator layout (row g / g + 8, columns 2 t, 2 t + 1 of each 8-wide
// tile, g = lane / 4, t = lane % 4) is exactly the A-fragment layout of the
// next product, so P (or dS) is rounded and packed in place, never stored.
// Row statistics (max, sum) reduce over the 4 lanes sharing a row with two
// xor shuffles. Softmax runs in the exp2 domain (scores times
// scale * log2 e; ex2.approx), lse is written in natural log units.
//
//   fwd     grid (bh, query blocks of 64), the longest causal blocks first.
//           Q fragments stay in registers; loop over key tiles of 64 (causal:
//           only those at or below the diagonal, the diagonal tile masked
//           from indices), online softmax, O += r(exp(s - m)) r(V), out =
//           O / l at the end (FlashAttention-2's rounding), lse = m + log l.
//   delta   one warp per query row: delta = sum_c dout out (f32).
//   bwd_kv  grid (bh, key blocks of 64): dK, dV of its keys in registers;
//           loop over query tiles (64, or 32 above d 64; causal: from the
//           diagonal down). S^T = K Q^T, P^T = exp(S^T - lse) (recomputed
//           from the forward's lse), dV += r(P^T) r(dO), dP^T = V dO^T,
//           dS^T = P^T (dP^T - delta) scale, dK += r(dS^T) r(Q).
//   bwd_q   grid (bh, query blocks of 64): dQ in registers; loop over key
//           tiles: S, P, dP = dO V^T, dS, dQ += r(dS) r(K).
// dk/dv and dq are separate kernels so that every output element is
// written once by one thread: no atomics, deterministic results.
//
//===----------------------------------------------------------------------===//
#include "AttentionParams.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

using namespace oflow_attention;

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give the row
// addresses of matrix i, register i receives it (row lane / 4, elements
// 2 (lane % 4) and + 1; transposed with .trans).
__device__ __forceinline__ void ldsm4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm4t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a b: a 16x16 (row), b 16x8 (col), c 16x8 f32.
template <bool BF16>
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (BF16)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two f32 rounded to the dtype (nearest even), `lo` in the low half: the
// element with the smaller column index, as fragments want it.
template <bool BF16> __device__ __forceinline__ uint32_t pack(float lo, float hi) {
  uint32_t u;
  if constexpr (BF16) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    u = *reinterpret_cast<uint32_t *>(&h);
  } else {
    __half2 h = __floats2half2_rn(lo, hi);
    u = *reinterpret_cast<uint32_t *>(&h);
  }
  return u;
}

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Rows [row0, row0 + ROWS) of NT [rows, d] f32 matrices (the K and V
// tiles, Q and dO, or Q alone) into ROWS x DP tiles of 16-bit values (pitch
// DP + 8), zeros past d and past `rows`. Loads go out in rounds of kRound
// items per matrix, all of a round's loads before its stores: enough in
// flight to cover some latency (the other blocks on the SM cover the rest),
// few enough that the loaded values (up to 32 floats) fit the registers
// beside the accumulators. Unrolled completely, ptxas hoisted every load of
// both tiles (128 floats at d 128) and spilled.
template <bool BF16, int DP, int ROWS, int NT>
__device__ __forceinline__ void loadTiles(uint16_t *const (&s)[NT],
                                          const float *const (&g)[NT], int64_t rows,
                                          int64_t row0, int d, bool vec4, int tid) {
  constexpr int LD = pitch(DP);
  if (vec4) { // d % 4 == 0 and 16-byte aligned rows: float4 loads
    constexpr int perRow = DP / 4, items = ROWS * perRow / kThreads;
    constexpr int kRound = 8 / NT; // float4s per matrix per round
    static_assert(ROWS * perRow % kThreads == 0, "whole rounds of the block");
#pragma unroll 1
    for (int i0 = 0; i0 < items; i0 += kRound) {
      float4 x[NT][kRound];
#pragma unroll
      for (int j = 0; j < kRound; ++j) {
        int idx = tid + (i0 + j) * kThreads, r = idx / perRow, c = idx % perRow * 4;
        int64_t row = row0 + r;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          x[t][j] = make_float4(0.f, 0.f, 0.f, 0.f);
          // d % 4 == 0: a float4 starting inside the row is inside it.
          if (i0 + j < items && row < rows && c < d)
            x[t][j] = __ldg(reinterpret_cast<const float4 *>(g[t] + row * d + c));
        }
      }
#pragma unroll
      for (int j = 0; j < kRound; ++j) {
        int idx = tid + (i0 + j) * kThreads, r = idx / perRow, c = idx % perRow * 4;
        if (i0 + j < items)
#pragma unroll
          for (int t = 0; t < NT; ++t) {
            uint2 w;
            w.x = pack<BF16>(x[t][j].x, x[t][j].y);
            w.y = pack<BF16>(x[t][j].z, x[t][j].w);
            *reinterpret_cast<uint2 *>(s[t] + r * LD + c) = w;
          }
      }
    }
  } else { // any d, 4-byte alignment: pairs of scalar loads
    constexpr int perRow = DP / 2, items = ROWS * perRow / kThreads;
    constexpr int kRound = 16 / NT; // pairs per matrix per round
    static_assert(ROWS * perRow % kThreads == 0, "whole rounds of the block");
#pragma unroll 1
    for (int i0 = 0; i0 < items; i0 += kRound) {
      float x[NT][kRound][2];
#pragma unroll
      for (int j = 0; j < kRound; ++j) {
        int idx = tid + (i0 + j) * kThreads, r = idx / perRow, c = idx % perRow * 2;
        int64_t row = row0 + r;
        bool in = i0 + j < items && row < rows;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          const float *src = g[t] + row * d + c;
          x[t][j][0] = in && c < d ? __ldg(src) : 0.f;
          x[t][j][1] = in && c + 1 < d ? __ldg(src + 1) : 0.f;
        }
      }
#pragma unroll
      for (int j = 0; j < kRound; ++j) {
        int idx = tid + (i0 + j) * kThreads, r = idx / perRow, c = idx % perRow * 2;
        if (i0 + j < items)
#pragma unroll
          for (int t = 0; t < NT; ++t)
            *reinterpret_cast<uint32_t *>(s[t] + r * LD + c) =
                pack<BF16>(x[t][j][0], x[t][j][1]);
      }
    }
  }
}

// One matrix, or two at once.
template <bool BF16, int DP, int ROWS>
__device__ __forceinline__ void loadTile(uint16_t *s, const float *g, int64_t rows,
                                         int64_t row0, int d, bool vec4, int tid) {
  uint16_t *const ss[1] = {s};
  const float *const gg[1] = {g};
  loadTiles<BF16, DP, ROWS, 1>(ss, gg, rows, row0, d, vec4, tid);
}
template <bool BF16, int DP, int ROWS>
__device__ __forceinline__ void loadTile2(uint16_t *s0, const float *g0, uint16_t *s1,
                                          const float *g1, int64_t rows, int64_t row0,
                                          int d, bool vec4, int tid) {
  uint16_t *const ss[2] = {s0, s1};
  const float *const gg[2] = {g0, g1};
  loadTiles<BF16, DP, ROWS, 2>(ss, gg, rows, row0, d, vec4, tid);
}

// acc[NT][4] += A B^T for one warp: A its 16 rows x KT*16 of a tile (aAddr:
// the lane's ldmatrix address for k-step 0), B NT*8 rows x KT*16 stored
// row-major (bAddr: likewise), i.e. B^T's columns are B's rows: the "col"
// operand as it is stored, no transpose.
template <bool BF16, int KT, int NT, int LD>
__device__ __forceinline__ void gemmABt(float (&acc)[NT][4], uint32_t aAddr, uint32_t bAddr) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
    uint32_t a[4];
    ldsm4(a, aAddr + kk * 32);
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) {
      uint32_t b[4];
      ldsm4(b, bAddr + (j * 16 * LD + kk * 16) * 2);
      mma<BF16>(acc[2 * j], a, b[0], b[1]);
      mma<BF16>(acc[2 * j + 1], a, b[2], b[3]);
    }
  }
}

// The same with A already in registers (the forward's Q).
template <bool BF16, int KT, int NT, int LD>
__device__ __forceinline__ void gemmRegABt(float (&acc)[NT][4], const uint32_t (&a)[KT][4],
                                           uint32_t bAddr) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk)
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) {
      uint32_t b[4];
      ldsm4(b, bAddr + (j * 16 * LD + kk * 16) * 2);
      mma<BF16>(acc[2 * j], a[kk], b[0], b[1]);
      mma<BF16>(acc[2 * j + 1], a[kk], b[2], b[3]);
    }
}

// acc[CT][4] += r(P) B for one warp: P (16 x KN*8) is an accumulator of
// the previous product, reused as the A operand (the layouts coincide; the
// values are rounded to the dtype here), B (KN*8 x CT*8) stored row-major,
// k-major, so its fragments come through ldmatrix.trans (bAddr: the lane's
// address of rows 0..15, columns 0..15).
template <bool BF16, int KN, int CT, int LD>
__device__ __forceinline__ void gemmPB(float (&acc)[CT][4], const float (&p)[KN][4],
                                       uint32_t bAddr) {
#pragma unroll
  for (int kk = 0; kk < KN / 2; ++kk) {
    uint32_t a[4] = {pack<BF16>(p[2 * kk][0], p[2 * kk][1]),
                     pack<BF16>(p[2 * kk][2], p[2 * kk][3]),
                     pack<BF16>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                     pack<BF16>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int cp = 0; cp < CT / 2; ++cp) {
      uint32_t b[4];
      ldsm4t(b, bAddr + (kk * 16 * LD + cp * 16) * 2);
      mma<BF16>(acc[2 * cp], a, b[0], b[1]);
      mma<BF16>(acc[2 * cp + 1], a, b[2], b[3]);
    }
  }
}

// The lane's element offsets of an ldmatrix.x4 within a tile of pitch LD:
//  - A operand (16 rows x 16) and the .trans B operand (16 k-rows x 16):
//    matrices (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15);
//  - B operand stored n-major (two n-tiles of 8 rows x 16 k): matrices
//    (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15),
//    i.e. b0, b1 of the first n-tile, then of the second.
template <int LD> __device__ __forceinline__ int offA(int lane) {
  return (lane & 15) * LD + (lane >> 4) * 8;
}
template <int LD> __device__ __forceinline__ int offB(int lane) {
  return ((lane & 7) + ((lane >> 4) << 3)) * LD + ((lane >> 3) & 1) * 8;
}

// Stores a warp's 16 x DP accumulator (rows row0, row0 + 8 of this lane)
// times rowScale[h] into a [rows, d] f32 matrix, skipping padding.
template <int CT>
__device__ __forceinline__ void storeRows(float *dst, const float (&acc)[CT][4], int64_t row0,
                                          int64_t rows, int d, int tig,
                                          const float (&rowScale)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    int64_t row = row0 + 8 * h;
    if (row >= rows)
      continue;
    float *out = dst + row * d;
#pragma unroll
    for (int ct = 0; ct < CT; ++ct) {
      int c = ct * 8 + 2 * tig;
      if (c < d)
        out[c] = acc[ct][2 * h] * rowScale[h];
      if (c + 1 < d)
        out[c + 1] = acc[ct][2 * h + 1] * rowScale[h];
    }
  }
}

template <bool BF16, int DP>
__device__ __forceinline__ void attentionFwd(const OflowAttentionParams &p) {
  constexpr int LD = pitch(DP), KT = DP / 16, CT = DP / 8, NT = kBlockN / 8;
  extern __shared__ __align__(16) unsigned char smemRaw[];
  uint16_t *sQ = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *sK = sQ + kBlockM * LD, *sV = sK + kBlockN * LD;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, tig = lane & 3;
  const int64_t b = blockIdx.x, tq = p.tq, tk = p.tk;
  const int d = p.d;
  // Causal blocks further down have more key tiles: launch those first.
  const int64_t m0 = int64_t(gridDim.y - 1 - blockIdx.y) * kBlockM;
  const float *q = p.q + b * tq * d, *k = p.k + b * tk * d, *v = p.v + b * tk * d;

  loadTile<BF16, DP, kBlockM>(sQ, q, tq, m0, d, p.vec4, tid);
  __syncthreads();
  uint32_t qf[KT][4];
  const uint32_t qAddr = smemAddr(sQ + warp * 16 * LD + offA<LD>(lane));
#pragma unroll
  for (int kk = 0; kk < KT; ++kk)
    ldsm4(qf[kk], qAddr + kk * 32);
  const uint32_t kAddr = smemAddr(sK + offB<LD>(lane));
  const uint32_t vAddr = smemAddr(sV + offA<LD>(lane));

  float o[CT][4];
#pragma unroll
  for (int ct = 0; ct < CT; ++ct)
    o[ct][0] = o[ct][1] = o[ct][2] = o[ct][3] = 0.f;
  // Running max (exp2 domain) and this lane's part of the row sums, for
  // rows row0 (h = 0) and row0 + 8 (h = 1).
  float mRow[2] = {-INFINITY, -INFINITY}, lRow[2] = {0.f, 0.f};
  const int64_t row0 = m0 + warp * 16 + g;
  const int64_t nEnd = p.causal ? min(tk, m0 + kBlockM) : tk;
  for (int64_t n0 = 0; n0 < nEnd; n0 += kBlockN) {
    __syncthreads(); // every warp is done with the previous K and V tiles
    loadTile2<BF16, DP, kBlockN>(sK, k, sV, v, tk, n0, d, p.vec4, tid);
    __syncthreads();
    float s[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
    gemmRegABt<BF16, KT, NT, LD>(s, qf, kAddr);
    // Keys past tk, and (causal) keys after the query; only the last tile
    // and the diagonal one have any (a uniform branch).
    const bool mask = n0 + kBlockN > tk || (p.causal && n0 + kBlockN - 1 > m0);
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[j][e] * p.scaleLog2;
        if (mask) {
          int64_t key = n0 + j * 8 + 2 * tig + (e & 1), row = row0 + (e >> 1) * 8;
          if (key >= tk || (p.causal && key > row))
            x = -INFINITY;
        }
        s[j][e] = x;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < NT; ++j)
        mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 2));
      float mNew = fmaxf(mRow[h], mx);
      // A row with no allowed key yet keeps max -inf: exp2(-inf - 0) = 0
      // instead of exp2(-inf + inf) = NaN. (Every real row has key 0 in its
      // first tile; this keeps padding rows and odd shapes finite.)
      float base = mNew == -INFINITY ? 0.f : mNew;
      float alpha = ex2(mRow[h] - base);
      mRow[h] = mNew;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        s[j][2 * h] = ex2(s[j][2 * h] - base);
        s[j][2 * h + 1] = ex2(s[j][2 * h + 1] - base);
        sum += s[j][2 * h] + s[j][2 * h + 1];
      }
      lRow[h] = lRow[h] * alpha + sum;
#pragma unroll
      for (int ct = 0; ct < CT; ++ct) {
        o[ct][2 * h] *= alpha;
        o[ct][2 * h + 1] *= alpha;
      }
    }
    gemmPB<BF16, NT, CT, LD>(o, s, vAddr);
  }

  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lRow[h] += __shfl_xor_sync(kFull, lRow[h], 1);
    lRow[h] += __shfl_xor_sync(kFull, lRow[h], 2);
    inv[h] = 1.f / lRow[h];
  }
  storeRows<CT>(p.out + b * tq * d, o, row0, tq, d, tig, inv);
  if (tig == 0) {
    float *lse = p.lse + b * tq;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (row0 + 8 * h < tq)
        lse[row0 + 8 * h] = (mRow[h] + log2f(lRow[h])) * kLn2;
  }
}

template <bool BF16, int DP>
__device__ __forceinline__ void attentionBwdKv(const OflowAttentionParams &p) {
  constexpr int LD = pitch(DP), KT = DP / 16, CT = DP / 8;
  constexpr int BQ = bwdQueryTile(DP), QT = BQ / 8;
  extern __shared__ __align__(16) unsigned char smemRaw[];
  uint16_t *sK = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *sV = sK + kBlockN * LD, *sQ = sV + kBlockN * LD, *sO = sQ + BQ * LD;
  float *sLse = reinterpret_cast<float *>(sO + BQ * LD), *sDelta = sLse + BQ;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, tig = lane & 3;
  const int64_t b = blockIdx.x, tq = p.tq, tk = p.tk;
  const int d = p.d;
  // Causal: the first key blocks see the most queries; they come first anyway.
  const int64_t n0 = int64_t(blockIdx.y) * kBlockN;
  const float *q = p.q + b * tq * d, *k = p.k + b * tk * d, *v = p.v + b * tk * d;
  const float *dout = p.dout + b * tq * d, *lse = p.lse + b * tq;
  const float *delta = p.delta + b * tq;

  loadTile2<BF16, DP, kBlockN>(sK, k, sV, v, tk, n0, d, p.vec4, tid);
  const uint32_t kA = smemAddr(sK + warp * 16 * LD + offA<LD>(lane));
  const uint32_t vA = smemAddr(sV + warp * 16 * LD + offA<LD>(lane));
  const uint32_t qB = smemAddr(sQ + offB<LD>(lane)), oB = smemAddr(sO + offB<LD>(lane));
  const uint32_t qT = smemAddr(sQ + offA<LD>(lane)), oT = smemAddr(sO + offA<LD>(lane));

  float dk[CT][4], dv[CT][4];
#pragma unroll
  for (int ct = 0; ct < CT; ++ct)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dk[ct][e] = dv[ct][e] = 0.f;
  const int64_t key0 = n0 + warp * 16 + g; // and key0 + 8
  const int64_t mStart = p.causal ? n0 / BQ * BQ : 0;
  for (int64_t m0 = mStart; m0 < tq; m0 += BQ) {
    __syncthreads(); // every warp is done with the previous Q and dO tiles
    loadTile2<BF16, DP, BQ>(sQ, q, sO, dout, tq, m0, d, p.vec4, tid);
    if (tid < BQ) {
      int64_t row = m0 + tid;
      // Padding queries get lse +inf: their P is exactly 0.
      sLse[tid] = row < tq ? lse[row] * kLog2e : INFINITY;
      sDelta[tid] = row < tq ? delta[row] : 0.f;
    }
    __syncthreads();
    // S^T (16 keys x BQ queries per warp) = K Q^T.
    float st[QT][4];
#pragma unroll
    for (int j = 0; j < QT; ++j)
      st[j][0] = st[j][1] = st[j][2] = st[j][3] = 0.f;
    gemmABt<BF16, KT, QT, LD>(st, kA, qB);
    const bool mask = p.causal && n0 + kBlockN - 1 > m0;
#pragma unroll
    for (int j = 0; j < QT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int col = j * 8 + 2 * tig + (e & 1);
        float x = st[j][e] * p.scaleLog2 - sLse[col];
        if (mask && key0 + (e >> 1) * 8 > m0 + col)
          x = -INFINITY;
        st[j][e] = ex2(x); // P^T
      }
    gemmPB<BF16, QT, CT, LD>(dv, st, oT); // dV += r(P^T) r(dO)
    float dpt[QT][4];
#pragma unroll
    for (int j = 0; j < QT; ++j)
      dpt[j][0] = dpt[j][1] = dpt[j][2] = dpt[j][3] = 0.f;
    gemmABt<BF16, KT, QT, LD>(dpt, vA, oB); // dP^T = V dO^T
#pragma unroll
    for (int j = 0; j < QT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int col = j * 8 + 2 * tig + (e & 1);
        dpt[j][e] = st[j][e] * (dpt[j][e] - sDelta[col]) * p.scale; // dS^T
      }
    gemmPB<BF16, QT, CT, LD>(dk, dpt, qT); // dK += r(dS^T) r(Q)
  }
  const float one[2] = {1.f, 1.f};
  storeRows<CT>(p.dk + b * tk * d, dk, key0, tk, d, tig, one);
  storeRows<CT>(p.dv + b * tk * d, dv, key0, tk, d, tig, one);
}

template <bool BF16, int DP>
__device__ __forceinline__ void attentionBwdQ(const OflowAttentionParams &p) {
  constexpr int LD = pitch(DP), KT = DP / 16, CT = DP / 8, NT = kBlockN / 8;
  extern __shared__ __align__(16) unsigned char smemRaw[];
  uint16_t *sQ = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *sO = sQ + kBlockM * LD, *sK = sO + kBlockM * LD, *sV = sK + kBlockN * LD;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, tig = lane & 3;
  const int64_t b = blockIdx.x, tq = p.tq, tk = p.tk;
  const int d = p.d;
  const int64_t m0 = int64_t(gridDim.y - 1 - blockIdx.y) * kBlockM;
  const float *q = p.q + b * tq * d, *k = p.k + b * tk * d, *v = p.v + b * tk * d;
  const float *dout = p.dout + b * tq * d;

  loadTile2<BF16, DP, kBlockM>(sQ, q, sO, dout, tq, m0, d, p.vec4, tid);
  const int64_t row0 = m0 + warp * 16 + g;
  float lse2[2], dl[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    int64_t row = row0 + 8 * h;
    lse2[h] = row < tq ? p.lse[b * tq + row] * kLog2e : INFINITY;
    dl[h] = row < tq ? p.delta[b * tq + row] : 0.f;
  }
  const uint32_t qA = smemAddr(sQ + warp * 16 * LD + offA<LD>(lane));
  const uint32_t oA = smemAddr(sO + warp * 16 * LD + offA<LD>(lane));
  const uint32_t kB = smemAddr(sK + offB<LD>(lane)), vB = smemAddr(sV + offB<LD>(lane));
  const uint32_t kT = smemAddr(sK + offA<LD>(lane));

  float dq[CT][4];
#pragma unroll
  for (int ct = 0; ct < CT; ++ct)
    dq[ct][0] = dq[ct][1] = dq[ct][2] = dq[ct][3] = 0.f;
  const int64_t nEnd = p.causal ? min(tk, m0 + kBlockM) : tk;
  for (int64_t n0 = 0; n0 < nEnd; n0 += kBlockN) {
    __syncthreads(); // the previous K and V tiles are done with (and Q, dO loaded)
    loadTile2<BF16, DP, kBlockN>(sK, k, sV, v, tk, n0, d, p.vec4, tid);
    __syncthreads();
    float s[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
    gemmABt<BF16, KT, NT, LD>(s, qA, kB); // S = Q K^T
    const bool mask = n0 + kBlockN > tk || (p.causal && n0 + kBlockN - 1 > m0);
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[j][e] * p.scaleLog2 - lse2[e >> 1];
        if (mask) {
          int64_t key = n0 + j * 8 + 2 * tig + (e & 1), row = row0 + (e >> 1) * 8;
          if (key >= tk || (p.causal && key > row))
            x = -INFINITY;
        }
        s[j][e] = ex2(x); // P
      }
    float dp[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
      dp[j][0] = dp[j][1] = dp[j][2] = dp[j][3] = 0.f;
    gemmABt<BF16, KT, NT, LD>(dp, oA, vB); // dP = dO V^T
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dp[j][e] = s[j][e] * (dp[j][e] - dl[e >> 1]) * p.scale; // dS
    gemmPB<BF16, NT, CT, LD>(dq, dp, kT); // dQ += r(dS) r(K)
  }
  const float one[2] = {1.f, 1.f};
  storeRows<CT>(p.dq + b * tq * d, dq, row0, tq, d, tig, one);
}

} // namespace

// delta[row] = sum_c dout[row][c] out[row][c] over all bh * tq rows, one
// warp per row (f32, exact products as the reference).
extern "C" __global__ void __launch_bounds__(32 * kDeltaRows)
    oflow_attn_delta(const OflowAttentionParams p) {
  const int64_t row = int64_t(blockIdx.x) * kDeltaRows + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= p.bh * p.tq)
    return;
  const float *o = p.out + row * p.d, *g = p.dout + row * p.d;
  float acc = 0.f;
  for (int c = lane; c < p.d; c += 32)
    acc += __ldg(g + c) * __ldg(o + c);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    acc += __shfl_xor_sync(kFull, acc, off);
  if (lane == 0)
    p.delta[row] = acc;
}

// Blocks per SM each kernel is compiled for (__launch_bounds__' second
// argument, which caps the registers at 65536 / (128 n)): the highest n
// that leaves ptxas without spills (-Xptxas -v, CUDA 13, sm_80 and sm_90;
// see runtime/README.md). More resident warps hide the tile loads' latency.
// DP 32 is the odd one out: its loads fit one round, which ptxas hoists
// whole.
constexpr int fwdMinBlocks(int dp) { return dp == 32 ? 3 : dp <= 64 ? 4 : 2; }
constexpr int bwdKvMinBlocks(int dp) { return dp == 32 || dp > 64 ? 2 : 3; }
constexpr int bwdQMinBlocks(int dp) { return dp <= 64 ? 3 : 2; }

// One set of kernels per dtype and padded head dimension. The names are
// what CudaAttention.cpp looks up: oflow_attn_<fwd|bwd_kv|bwd_q>_<bf16|f16>_d<DP>.
#define OFLOW_ATTN_KERNELS(TY, BF16, DP)                                              \
  extern "C" __global__ void __launch_bounds__(kThreads, fwdMinBlocks(DP))            \
      oflow_attn_fwd_##TY##_d##DP(const OflowAttentionParams p) {                     \
    attentionFwd<BF16, DP>(p);                                                        \
  }                                                                                   \
  extern "C" __global__ void __launch_bounds__(kThreads, bwdKvMinBlocks(DP))          \
      oflow_attn_bwd_kv_##TY##_d##DP(const OflowAttentionParams p) {                  \
    attentionBwdKv<BF16, DP>(p);                                                      \
  }                                                                                   \
  extern "C" __global__ void __launch_bounds__(kThreads, bwdQMinBlocks(DP))           \
      oflow_attn_bwd_q_##TY##_d##DP(const OflowAttentionParams p) {                   \
    attentionBwdQ<BF16, DP>(p);                                                       \
  }
#define OFLOW_ATTN_KERNELS_D(DP)                                                      \
  OFLOW_ATTN_KERNELS(bf16, true, DP)                                                  \
  OFLOW_ATTN_KERNELS(f16, false, DP)

OFLOW_ATTN_KERNELS_D(16)
OFLOW_ATTN_KERNELS_D(32)
OFLOW_ATTN_KERNELS_D(48)
OFLOW_ATTN_KERNELS_D(64)
OFLOW_ATTN_KERNELS_D(80)
OFLOW_ATTN_KERNELS_D(96)
OFLOW_ATTN_KERNELS_D(112)
OFLOW_ATTN_KERNELS_D(128)
