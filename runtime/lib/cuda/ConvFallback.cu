//===- ConvFallback.cu - convolutions without cuDNN: im2col kernels -------===//
//
// What CudaConv.cpp runs where cuDNN is missing or has no deterministic
// algorithm that fits the workspace: per image, im2col into the columns
// [c * kh * kw, oh * ow] and cuBLASLt GEMMs per group (forward, filter
// gradient), or GEMMs into the columns and col2im (input gradient). col2im
// gathers, for each input point, the columns that read it (no atomics: the
// sums' order is fixed, so results are deterministic). Grid-stride loops,
// one thread per point; 64-bit indices (the columns of a large image pass
// 2^31 elements).
//
//===----------------------------------------------------------------------===//
#include "ConvFallbackParams.h"

namespace {
__device__ int64_t firstIndex() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ int64_t gridStride() { return int64_t(gridDim.x) * blockDim.x; }
} // namespace

// col[(ci * kh + ky) * kw + kx][oy * ow + ox] = x[ci][iy][ix], 0 in the pads.
extern "C" __global__ void oflow_conv_im2col(OflowConvParams p) {
  const int64_t positions = p.oh * p.ow;
  for (int64_t i = firstIndex(); i < p.count; i += gridStride()) {
    int64_t pos = i % positions, row = i / positions;
    int64_t kx = row % p.kw, ky = row / p.kw % p.kh, ci = row / (p.kw * p.kh);
    int64_t oy = pos / p.ow, ox = pos % p.ow;
    int64_t iy = oy * p.strideH - p.padTop + ky * p.dilationH;
    int64_t ix = ox * p.strideW - p.padLeft + kx * p.dilationW;
    bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    p.out[i] = inside ? p.in[(ci * p.h + iy) * p.w + ix] : 0.0f;
  }
}

// dx[ci][iy][ix] = sum over the (ky, kx, oy, ox) that read it of
// col[(ci * kh + ky) * kw + kx][oy * ow + ox], in (ky, kx) order.
extern "C" __global__ void oflow_conv_col2im(OflowConvParams p) {
  const int64_t positions = p.oh * p.ow;
  for (int64_t i = firstIndex(); i < p.count; i += gridStride()) {
    int64_t ix = i % p.w, iy = i / p.w % p.h, ci = i / (p.w * p.h);
    float sum = 0.0f;
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      int64_t ty = iy + p.padTop - ky * p.dilationH;
      if (ty < 0 || ty % p.strideH)
        continue;
      int64_t oy = ty / p.strideH;
      if (oy >= p.oh)
        continue;
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        int64_t tx = ix + p.padLeft - kx * p.dilationW;
        if (tx < 0 || tx % p.strideW)
          continue;
        int64_t ox = tx / p.strideW;
        if (ox >= p.ow)
          continue;
        sum += p.in[((ci * p.kh + ky) * p.kw + kx) * positions + oy * p.ow + ox];
      }
    }
    p.out[i] = sum;
  }
}

// y[i] += bias[channel of i] over the whole [n, m, oh, ow] output.
extern "C" __global__ void oflow_conv_bias(OflowConvParams p) {
  for (int64_t i = firstIndex(); i < p.count; i += gridStride())
    p.out[i] += p.bias[i / p.plane % p.m];
}
