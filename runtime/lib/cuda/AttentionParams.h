//===- AttentionParams.h - the attention kernels' one parameter -*- C++ -*-===//
//
// Shared by Attention.cu (compiled by nvcc into the embedded fatbin) and
// CudaAttention.cpp (g++, which launches the kernels): every kernel takes
// this struct by value, so both sides must see the same layout (plain
// types only: the same x86-64 ABI on both compilers), and the tile shapes
// below, from which the host sizes grids and dynamic shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_ATTENTIONPARAMS_H
#define OFLOW_RT_LIB_CUDA_ATTENTIONPARAMS_H

#include <stddef.h>
#include <stdint.h>

struct OflowAttentionParams {
  const float *q, *k, *v;  // [bh, tq, d], [bh, tk, d], [bh, tk, d]
  const float *dout;       // [bh, tq, d]                    (bwd)
  float *out, *lse;        // [bh, tq, d], [bh, tq]: fwd writes, bwd reads
  float *dq, *dk, *dv;     // (bwd) overwritten
  float *delta;            // [bh, tq]                       (bwd) scratch
  int64_t bh, tq, tk;
  int32_t d;
  int32_t causal;          // 0 or 1
  float scale;             // the softmax scale
  float scaleLog2;         // scale * log2(e): scores in the exp2 domain
  // 1 when every f32 tensor the tiles are read from (q, k, v, dout) is
  // 16-byte aligned and d % 4 == 0, so rows can be read as float4.
  int32_t vec4;
  int32_t pad0;
};

// The shape helpers are evaluated in device code's constant expressions too.
#ifdef __CUDACC__
#define OFLOW_ATTN_HD __host__ __device__
#else
#define OFLOW_ATTN_HD
#endif

namespace oflow_attention {

constexpr int kThreads = 128; // 4 warps per block, each owning 16 rows
constexpr int kBlockM = 64;   // query rows of a fwd and a dq block
constexpr int kBlockN = 64;   // key rows of a dk/dv block, and of the key
                              // tiles the fwd and dq blocks loop over
constexpr int kDeltaRows = 8; // rows of delta per block (a warp each)

/// d padded to a whole number of mma k-steps (16); the padding is zeros.
OFLOW_ATTN_HD constexpr int paddedD(int d) { return (d + 15) / 16 * 16; }
/// The shared-memory row pitch in 16-bit elements: 16-byte rows for
/// ldmatrix, and 8 extra elements so that the 8 rows one ldmatrix phase
/// reads fall in 8 different groups of 4 banks (pitch = 4 mod 8 words).
OFLOW_ATTN_HD constexpr int pitch(int dp) { return dp + 8; }
/// Queries per step of the dk/dv block: 64 while the two accumulators
/// (dk, dv: dp/2 floats each per thread) are small, 32 above d 64 so that
/// the 16 x tile scores and their gradients fit the registers too.
OFLOW_ATTN_HD constexpr int bwdQueryTile(int dp) { return dp <= 64 ? 64 : 32; }

OFLOW_ATTN_HD constexpr size_t fwdSmemBytes(int dp) {
  return size_t(kBlockM + 2 * kBlockN) * pitch(dp) * 2; // Q, K, V tiles
}
OFLOW_ATTN_HD constexpr size_t bwdKvSmemBytes(int dp) { // K, V, then Q, dO tiles, lse, delta
  return size_t(2 * kBlockN + 2 * bwdQueryTile(dp)) * pitch(dp) * 2 +
         size_t(2 * bwdQueryTile(dp)) * sizeof(float);
}
OFLOW_ATTN_HD constexpr size_t bwdQSmemBytes(int dp) { // Q, dO, then K, V tiles
  return size_t(2 * kBlockM + 2 * kBlockN) * pitch(dp) * 2;
}

} // namespace oflow_attention

#endif
