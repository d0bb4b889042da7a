//===- ConvFallbackParams.h - the im2col kernels' one parameter -*- C++ -*-===//
//
// Shared by ConvFallback.cu (nvcc, the embedded fatbin) and CudaConv.cpp
// (g++, which launches the kernels): plain types only, so that both
// compilers lay the struct out alike. One image of abi.h's geometry per
// launch (the GEMMs between the kernels are per image too).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_CONVFALLBACKPARAMS_H
#define OFLOW_RT_LIB_CUDA_CONVFALLBACKPARAMS_H

#include <stdint.h>

struct OflowConvParams {
  const float *in;   // im2col: the image [c, h, w]; col2im: the columns
  float *out;        // im2col: the columns [c * kh * kw, oh * ow]; col2im: dx [c, h, w]
  const float *bias; // bias: [m]
  int64_t c, h, w, kh, kw, oh, ow;
  int64_t strideH, strideW, dilationH, dilationW, padTop, padLeft;
  int64_t count;     // the points the launch covers (bias: the output's size)
  int64_t plane;     // bias: oh * ow
  int64_t m;         // bias: output channels
};

#endif
