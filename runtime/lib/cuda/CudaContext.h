//===- CudaContext.h - the CUDA runtime's shared state ----------*- C++ -*-===//
//
// Private to liboflow_runtime_cuda.a. One CudaContext per process, made by
// CudaDevice::start: the GPU, the ONE in-order compute stream every kernel,
// GEMM, copy and collective is enqueued on, the cuBLASLt handle and
// workspace, one NCCL communicator per mesh axis, and the device-memory
// accounting behind --log-json's "device_bytes".
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_CUDACONTEXT_H
#define OFLOW_RT_LIB_CUDA_CUDACONTEXT_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace oflow_rt {
class GraphBackend;
namespace detail {
class StreamCollectives;
}
}

namespace oflow_rt::cuda {

struct Context {
  int device = 0;
  cudaDeviceProp props{};
  int driverVersion = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  bool allowTf32 = false;
  std::vector<ncclComm_t> axisComms; // null where the axis has size 1
  // The NCCL collectives on the stream, for --collective-timeout (null
  // without communicators).
  detail::StreamCollectives *collectives = nullptr;
  // Device scratch for packing collectives' layouts; grows, never shrinks.
  void *scratch = nullptr;
  size_t scratchBytes = 0;
  // Scratch for GEMM operands copied into 16-byte-aligned row pitches
  // (CudaBlas.cpp); grows on uncaptured calls, never shrinks.
  void *gemmScratch = nullptr;
  size_t gemmScratchBytes = 0;
  std::vector<std::pair<void *, size_t>> retiredGemmScratch;
  // The convolution fallback's columns where the call's workspace is too
  // small (CudaConv.cpp); grows outside captures only, the smaller buffers
  // it replaces kept in retiredGemmScratch (a graph may still use them).
  void *convColumns = nullptr;
  size_t convColumnsBytes = 0;
  // Bytes the runtime holds through cudaMalloc (and mgpuMemAlloc), and the peak.
  int64_t liveBytes = 0, peakBytes = 0;

  /// "GPU 0 (NVIDIA H200, sm_90)" for messages.
  std::string gpuText() const;
  /// At least `bytes` of scratch (stream-ordered: waits for the stream when
  /// it must reallocate).
  void *scratchOf(size_t bytes);
};

/// The context, or a fatal error naming `caller` when the CUDA runtime has
/// not started (generated code running outside an entry call).
Context &context(const char *caller);
/// Null before start and after shutdown.
Context *contextIfStarted();
void setContext(Context *c);

/// "13.0" from 13000.
std::string versionText(int v);

/// Errors in calls from generated code (C frames: no exceptions through
/// them): prints `<exe>: error: [rank r: ]<message>` and ends every rank.
[[noreturn]] void fatal(const std::string &message);
/// "<call> failed: <error name>: <error string>" on error, fatal.
void check(cudaError_t e, const char *call);
void check(cublasStatus_t s, const char *call);
void check(ncclResult_t r, const char *call);
/// The same text, for errors the runtime throws (oflow_rt::Error).
std::string errorText(cudaError_t e, const char *call);
/// Throws oflow_rt::Error(errorText) on error (start-up, outside generated code).
void require(cudaError_t e, const char *call);

/// cudaMalloc / cudaFree with the accounting; allocate throws
/// oflow_rt::Error when the GPU is out of memory.
void *allocate(size_t bytes, const char *what);
void release(void *p, size_t bytes);

/// When tensor-core GEMMs run on copies with odd extents padded to a
/// multiple of 64 (CudaBlas.cpp): OFLOW_GEMM_PAD=0 turns it off,
/// OFLOW_GEMM_PAD_MAX_MB bounds the scratch; tests lower minMacs to pad
/// small GEMMs too.
struct GemmPadSettings {
  bool enabled = true;
  size_t maxBytes = size_t(4096) << 20;
  int64_t minMacs = int64_t(1) << 30; ///< m n k at least this
};
GemmPadSettings &gemmPadSettings();

/// GraphReplay's backend on `stream`: capture, instantiate, launch.
std::unique_ptr<GraphBackend> cudaGraphs(cudaStream_t stream);

} // namespace oflow_rt::cuda

#endif
