//===- AttentionCpu.cpp - abi.h's fused attention on the CPU --------------===//
//
// oflow_rt_attention_fwd / _bwd for liboflow_runtime.a (and so for the
// `--target cuda-emulated` executables, which link it): the reference of
// AttentionReference.h, batch-heads spread over the runtime's threads
// (oflow_rt_parallel_for, the pool the generated loop nests use). Each
// batch-head is computed whole by one thread in a fixed order, so the
// results do not depend on --threads.
//
//===----------------------------------------------------------------------===//
#include "AttentionReference.h"
#include "MpiWorld.h"
#include "oflow_rt/abi.h"

#include <string>

namespace {
using oflow_rt::attention::Head;

Head headOf(const char *fn, int64_t dtype, int64_t causal, int64_t bh,
            int64_t tq, int64_t tk, int64_t d, float scale) {
  std::string why = oflow_rt::attention::checkArgs(fn, dtype, causal, bh, tq, tk, d);
  if (!why.empty())
    oflow_rt::detail::fatal(why);
  return Head{dtype, tq, tk, d, causal != 0, scale};
}

/// Runs body(b) for every batch-head b on the threads.
template <typename Body> void forEachHead(int64_t bh, Body body) {
  auto task = [](void *ctx, int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      (*static_cast<Body *>(ctx))(b);
  };
  oflow_rt_parallel_for(task, &body, bh, /*grain=*/1);
}
} // namespace

extern "C" void oflow_rt_attention_fwd(int64_t dtype, int64_t causal, int64_t bh,
                                       int64_t tq, int64_t tk, int64_t d,
                                       float scale, const float *q,
                                       const float *k, const float *v,
                                       float *out, float *lse) {
  Head h = headOf("oflow_rt_attention_fwd", dtype, causal, bh, tq, tk, d, scale);
  forEachHead(bh, [&](int64_t b) {
    oflow_rt::attention::forwardHead(h, q + b * tq * d, k + b * tk * d,
                                     v + b * tk * d, out + b * tq * d, lse + b * tq);
  });
}

extern "C" void oflow_rt_attention_bwd(int64_t dtype, int64_t causal, int64_t bh,
                                       int64_t tq, int64_t tk, int64_t d,
                                       float scale, const float *q,
                                       const float *k, const float *v,
                                       const float *out, const float *lse,
                                       const float *dout, float *dq, float *dk,
                                       float *dv, float *delta) {
  Head h = headOf("oflow_rt_attention_bwd", dtype, causal, bh, tq, tk, d, scale);
  forEachHead(bh, [&](int64_t b) {
    int64_t qo = b * tq * d, ko = b * tk * d;
    oflow_rt::attention::backwardHead(h, q + qo, k + ko, v + ko, out + qo, lse + b * tq,
                                      dout + qo, dq + qo, dk + ko, dv + ko,
                                      delta + b * tq);
  });
}
