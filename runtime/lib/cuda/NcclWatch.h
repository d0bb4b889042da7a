//===- NcclWatch.h - NCCL collectives under --collective-timeout -*- C++ -*-===//
//
// Private to liboflow_runtime_cuda.a. NCCL collectives are enqueued on the
// compute stream and return at once; a peer that stops leaves the stream,
// and the host wherever it next waits for it, blocked forever. The
// watchdog (CollectiveWatchdog.h) sees them through CUDA events recorded
// before and after each, and on a timeout aborts the communicators
// (ncclCommAbort, from its thread, which NCCL allows), so the stream stops
// waiting, before the job ends.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CUDA_NCCLWATCH_H
#define OFLOW_RT_LIB_CUDA_NCCLWATCH_H

#include "../CollectiveWatchdog.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <mutex>
#include <vector>

namespace oflow_rt::cuda {

class NcclMarks final : public detail::StreamMarks {
public:
  /// `comms`: the communicators to abort (nulls skipped); both outlive this.
  NcclMarks(cudaStream_t stream, const std::vector<ncclComm_t> &comms)
      : stream(stream), comms(comms) {}
  ~NcclMarks() override;
  void *mark() override;
  bool passed(void *m) override;
  void release(void *m) override;
  void abortCommunicators() override;

private:
  cudaStream_t stream;
  const std::vector<ncclComm_t> &comms;
  std::mutex mutex;
  std::vector<cudaEvent_t> pool; // released events, reused
};

} // namespace oflow_rt::cuda

#endif
