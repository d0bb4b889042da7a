//===- NcclWatch.cpp - NCCL collectives under --collective-timeout --------===//
#include "NcclWatch.h"
#include "CudaContext.h"

namespace oflow_rt::cuda {

NcclMarks::~NcclMarks() {
  for (cudaEvent_t e : pool)
    cudaEventDestroy(e);
}

void *NcclMarks::mark() {
  cudaEvent_t e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!pool.empty()) {
      e = pool.back();
      pool.pop_back();
    }
  }
  if (!e)
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
          "cudaEventCreateWithFlags (collective watchdog)");
  check(cudaEventRecord(e, stream), "cudaEventRecord (collective watchdog)");
  return e;
}

bool NcclMarks::passed(void *m) {
  // Not ready is the only "no": an error (the context failed) counts as
  // passed, so the watchdog does not time out what the error reports.
  return cudaEventQuery(static_cast<cudaEvent_t>(m)) != cudaErrorNotReady;
}

void NcclMarks::release(void *m) {
  if (!m)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  pool.push_back(static_cast<cudaEvent_t>(m));
}

void NcclMarks::abortCommunicators() {
  for (ncclComm_t c : comms)
    if (c)
      ncclCommAbort(c);
}

} // namespace oflow_rt::cuda
