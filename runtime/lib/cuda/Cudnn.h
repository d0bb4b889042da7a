//===- Cudnn.h - abi.h's convolutions through cuDNN -------------*- C++ -*-===//
//
// Private to liboflow_runtime_cuda.a. cuDNN is loaded at run time (dlopen,
// never linked): a CUDA executable starts on a machine without it and runs
// its convolutions as the runtime's im2col kernels instead (CudaConv.cpp).
// This part only builds cuDNN's descriptors for abi.h's geometries, picks
// the algorithm and calls the library; it needs no GPU of its own, so the
// tests run it against a CPU stand-in of the same functions
// (test/runtime/CudnnStandIn.cpp), which checks what oflow asks for.
//
// Policy, as PyTorch's with deterministic algorithms and TF32 off:
//   - one NCHW f32 tensor, filter and convolution descriptor per geometry,
//     cross-correlation (ONNX's Conv), groups as cuDNN's group count;
//   - math FMA (no TF32) unless the executable allows TF32;
//   - the algorithm: cuDNN's heuristic order (cudnnGet*Algorithm_v7, no
//     benchmarking: the choice is the same on every run and rank), the
//     first that is deterministic, supported, of an allowed math type and
//     needs at most the call's workspace. None: the caller falls back.
// Choices are made on the first call of each geometry and kept.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_CUDNN_H
#define OFLOW_RT_LIB_CUDA_CUDNN_H

#include "../ConvGeometry.h"

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace oflow_rt::cuda {

using oflow_rt::ConvGeometry;
using oflow_rt::describeConv;

enum class ConvKind { Forward, BackwardData, BackwardFilter };

/// The cuDNN functions oflow calls, resolved from a loaded library.
struct CudnnApi {
#define OFLOW_CUDNN_FUNCTIONS(X)                                               \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnSetTensor4dDescriptor)                                                \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnGetConvolution2dForwardOutputDim)                                     \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                             \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnConvolutionBackwardFilter)                                            \
  X(cudnnAddTensor)
#define OFLOW_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
  OFLOW_CUDNN_FUNCTIONS(OFLOW_CUDNN_MEMBER)
#undef OFLOW_CUDNN_MEMBER

  /// Loads `path` (dlopen) and resolves every function; null with `why`
  /// ("libcudnn.so.9: cannot open shared object file", "... has no
  /// cudnnAddTensor", "cuDNN 7.6 is older than 8.0") when that fails.
  static std::unique_ptr<CudnnApi> load(const std::string &path, std::string &why);
  /// The library named by OFLOW_CUDNN_LIBRARY, else the first of
  /// libcudnn.so.9, libcudnn.so.8, libcudnn.so that loads; null with `why`
  /// when none does or OFLOW_CUDNN=0 turns cuDNN off.
  static std::unique_ptr<CudnnApi> loadDefault(std::string &why);

  /// "9.19.0" from cudnnGetVersion.
  std::string versionText() const;

private:
  void *handle = nullptr;
};

/// The convolutions of one cuDNN handle: descriptors and algorithm per
/// geometry, made on first use.
class CudnnConvolutions {
public:
  /// `handle` belongs to the caller (made with api.cudnnCreate, its stream
  /// set), as does `api`.
  CudnnConvolutions(const CudnnApi &api, cudnnHandle_t handle, bool allowTf32);
  ~CudnnConvolutions();
  CudnnConvolutions(const CudnnConvolutions &) = delete;
  CudnnConvolutions &operator=(const CudnnConvolutions &) = delete;

  /// Enqueues one convolution of `kind` (abi.h's operands: a, b are x, w
  /// for the forward pass, dy, w for bwd_data, dy, x for bwd_filter; out
  /// is overwritten; bias may be null). False, with `why`, when cuDNN has
  /// no deterministic algorithm of an allowed math type that fits
  /// `workspaceBytes`, or the geometry is one cuDNN cannot take
  /// (asymmetric pads, extents past int); nothing is enqueued then. A
  /// failing cuDNN call is an oflow_rt::Error naming the call, the status
  /// and the geometry.
  bool run(ConvKind kind, const ConvGeometry &g, const void *a, const void *b,
           const void *bias, void *out, void *workspace, size_t workspaceBytes,
           std::string &why);

  /// The algorithm and math type chosen for a geometry (tests, profile
  /// labels); -1 when none was.
  struct Choice {
    int algorithm = -1;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspaceBytes = 0;
  };
  Choice choiceFor(ConvKind kind, const ConvGeometry &g) const;

private:
  struct Plan;
  const Plan *planFor(ConvKind kind, const ConvGeometry &g, size_t workspaceBytes,
                      std::string &why);

  const CudnnApi &api;
  cudnnHandle_t handle;
  bool allowTf32;
  // Keyed by the workspace's bytes too; a geometry without an algorithm is
  // kept as a plan without one (asked once).
  std::map<std::tuple<ConvKind, ConvGeometry, size_t>, std::unique_ptr<Plan>> plans;
};

} // namespace oflow_rt::cuda

#endif
