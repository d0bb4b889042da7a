//===- Profile.h - per-kernel GPU times (OFLOW_CUDA_PROFILE=1) --*- C++ -*-===//
//
// Private to liboflow_runtime_cuda.a. With OFLOW_CUDA_PROFILE=1 in the
// environment, every kernel launch, cuBLASLt GEMM and collective the runtime
// enqueues is bracketed by two CUDA events on its stream; at exit the runtime
// prints, on stderr, the GPU time per label (kernel name, "gemm MxNxK", ...)
// summed over the run, largest first (OFLOW_CUDA_PROFILE_TOP rows, default
// 40). With OFLOW_CUDA_PROFILE_EVERY=SECONDS a thread also prints, that
// often, the totals of what has finished and the label still running, so a
// run that never ends says where its time goes. Without OFLOW_CUDA_PROFILE
// nothing is recorded: the scopes cost one branch.
//
// The events are read only at exit, so profiling adds no synchronization:
// the step times stay close to an unprofiled run's.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_PROFILE_H
#define OFLOW_RT_LIB_CUDA_PROFILE_H

#include <cuda_runtime_api.h>

#include <string>

namespace oflow_rt::cuda {

/// True when OFLOW_CUDA_PROFILE is set to a non-empty value other than "0".
bool profiling();

/// Records [start, end) events around the work enqueued on `stream` during
/// its lifetime, under `label` (a kernel name, or text the caller builds
/// only when profiling() is true).
class ProfileScope {
public:
  ProfileScope(cudaStream_t stream, const char *label);
  ProfileScope(cudaStream_t stream, const std::string &label)
      : ProfileScope(stream, label.c_str()) {}
  ~ProfileScope();
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  cudaStream_t stream = nullptr;
  long index = -1; // the record, or -1 when not profiling
};

/// Remembers a kernel's name for the profile (kernels are launched by handle).
void nameKernel(const void *kernel, const char *name);
/// The name given to nameKernel, or "kernel@0x..." .
const char *kernelName(const void *kernel);

} // namespace oflow_rt::cuda

#endif
