//===- CudaConv.h - the GPU convolutions' test hook -------------*- C++ -*-===//
//
// Private to liboflow_runtime_cuda.a and its GPU check: CudaConv.cpp runs
// abi.h's convolutions with cuDNN where it can, else with its im2col
// fallback; setting forcedFallback() sends every call to the fallback, so
// the check compares both paths in one process (OFLOW_CUDNN=0 decides only
// at the first call).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_CUDACONV_H
#define OFLOW_RT_LIB_CUDA_CUDACONV_H

namespace oflow_rt::cuda {

/// False by default; true runs every oflow_rt_conv2d_* call as im2col.
bool &forcedFallback();

} // namespace oflow_rt::cuda

#endif
