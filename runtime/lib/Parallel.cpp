//===- Parallel.cpp - the generated loop nests on the OpenMP threads ------===//
//
// One pool for everything on the CPU: the generated nests run on libgomp's
// threads, which oneDNN's convolutions use too, and `--threads` sets both
// (Blas.cpp). Each thread takes one contiguous range of iterations, so a
// nest reads and writes the same memory per thread from step to step.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/abi.h"

#include <algorithm>
#include <omp.h>

extern "C" void oflow_rt_parallel_for(oflow_rt_task_fn task, void *ctx,
                                      int64_t iterations, int64_t grain) {
  if (iterations <= 0)
    return;
  int64_t chunks = iterations / std::max<int64_t>(grain, 1);
  int64_t threads = std::min<int64_t>(omp_get_max_threads(), chunks);
  if (threads <= 1 || omp_in_parallel()) {
    task(ctx, 0, iterations);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    int64_t begin = iterations * t / n, end = iterations * (t + 1) / n;
    if (begin < end)
      task(ctx, begin, end);
  }
}
