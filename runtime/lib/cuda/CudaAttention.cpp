//===- CudaAttention.cpp - abi.h's fused attention on the GPU -------------===//
//
// Host side of oflow_rt_attention_fwd / _bwd for liboflow_runtime_cuda.a.
// The kernels (Attention.cu) are compiled by nvcc at build time into a
// fatbin embedded here as bytes (cmake/EmbedBinary.cmake), so the runtime's
// own code stays host C++ built by g++. They are loaded like the program's
// generated kernels, through the module registry (mgpuModuleLoad records
// the blob, mgpuModuleGetFunction loads it on first use), and launched with
// cudaLaunchKernel on the compute stream: in program order, recorded by
// CUDA-graph capture like any launch, and timed by OFLOW_CUDA_PROFILE under
// one label per call ("attention fwd bf16 96x1024x1024x64 causal").
//
// Launches per call: fwd 1; bwd 3 (delta, dk/dv, dq), as abi.h says (the
// compiler's kernel report counts them).
//
//===----------------------------------------------------------------------===//
#include "../AttentionReference.h"
#include "../GraphReplay.h"
#include "AttentionParams.h"
#include "CudaContext.h"
#include "Profile.h"
#include "oflow_rt/abi.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

extern "C" const unsigned char oflow_attention_fatbin[];
extern "C" const size_t oflow_attention_fatbin_size;

namespace oflow_rt::cuda {
namespace {
using namespace oflow_attention;

enum class Kind { Fwd, BwdKv, BwdQ };

struct Kernel {
  const void *fn = nullptr;
  size_t smem = 0; // dynamic shared memory per block
};

const char *dtypeName(int64_t dtype) { return dtype == OFLOW_DT_BF16 ? "bf16" : "f16"; }

void *attentionModule() {
  // Recorded once (the registry keeps its own copy), loaded by the first
  // mgpuModuleGetFunction.
  static void *module = mgpuModuleLoad(const_cast<unsigned char *>(oflow_attention_fatbin),
                                       oflow_attention_fatbin_size);
  return module;
}

const Kernel &kernelFor(Context &ctx, const char *fn, Kind kind, int64_t dtype, int dp) {
  static std::mutex mutex;
  static auto *cache = new std::map<std::tuple<Kind, int64_t, int>, Kernel>;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = cache->try_emplace({kind, dtype, dp});
  Kernel &k = it->second;
  if (!fresh)
    return k;
  // The fatbin holds sm_80 and sm_90 code and compute_90 PTX: an older GPU
  // would get a load error about "the program's GPU code"; say what it is.
  if (ctx.props.major < 8)
    fatal(std::string(fn) + ": the fused attention kernels need an sm_80 or newer GPU (" +
          ctx.gpuText() + ")");
  const char *kindName = kind == Kind::Fwd ? "fwd" : kind == Kind::BwdKv ? "bwd_kv" : "bwd_q";
  std::string name = std::string("oflow_attn_") + kindName + "_" + dtypeName(dtype) + "_d" +
                     std::to_string(dp);
  k.fn = mgpuModuleGetFunction(attentionModule(), name.c_str());
  k.smem = kind == Kind::Fwd     ? fwdSmemBytes(dp)
           : kind == Kind::BwdKv ? bwdKvSmemBytes(dp)
                                 : bwdQSmemBytes(dp);
  // Above 48 KiB a kernel must opt in; set it once, eagerly (a call inside
  // a CUDA-graph capture then finds it done).
  if (k.smem > 48 * 1024)
    check(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(k.smem)),
          "cudaFuncSetAttribute (attention kernel shared memory)");
  return k;
}

const void *deltaKernel() {
  static const void *fn = mgpuModuleGetFunction(attentionModule(), "oflow_attn_delta");
  return fn;
}

void launch(Context &ctx, const char *fn, const void *kernel, dim3 grid, dim3 block,
            size_t smem, OflowAttentionParams &p) {
  void *args[] = {&p};
  cudaError_t e = cudaLaunchKernel(kernel, grid, block, args, smem, ctx.stream);
  if (e != cudaSuccess)
    fatal(std::string(fn) + ": " + errorText(e, "cudaLaunchKernel"));
}

bool aligned16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// The checks both entry points share; returns the compute context.
Context &start(const char *fn, int64_t dtype, int64_t causal, int64_t bh, int64_t tq,
               int64_t tk, int64_t d) {
  Context &ctx = context(fn);
  std::string why = attention::checkArgs(fn, dtype, causal, bh, tq, tk, d);
  if (!why.empty())
    fatal(why);
  // Query and key blocks are gridDim.y (at most 65535 blocks of 64 rows),
  // batch-heads gridDim.x.
  constexpr int64_t kMaxRows = int64_t(65535) * kBlockM;
  if (tq > kMaxRows || tk > kMaxRows || bh > INT32_MAX ||
      (bh * tq + kDeltaRows - 1) / kDeltaRows > INT32_MAX)
    fatal(std::string(fn) + ": bh = " + std::to_string(bh) + ", tq = " + std::to_string(tq) +
          ", tk = " + std::to_string(tk) + " exceed the CUDA kernels' limits (tq, tk <= " +
          std::to_string(kMaxRows) + ")");
  return ctx;
}

OflowAttentionParams paramsOf(int64_t causal, int64_t bh, int64_t tq, int64_t tk, int64_t d,
                              float scale) {
  OflowAttentionParams p;
  std::memset(&p, 0, sizeof p);
  p.bh = bh;
  p.tq = tq;
  p.tk = tk;
  p.d = static_cast<int32_t>(d);
  p.causal = causal != 0;
  p.scale = scale;
  p.scaleLog2 = scale * 1.4426950408889634f;
  return p;
}

/// "attention fwd bf16 96x1024x1024x64 causal": OFLOW_CUDA_PROFILE's label.
std::string label(const char *what, int64_t dtype, int64_t causal, int64_t bh, int64_t tq,
                  int64_t tk, int64_t d) {
  return std::string("attention ") + what + " " + dtypeName(dtype) + " " +
         std::to_string(bh) + "x" + std::to_string(tq) + "x" + std::to_string(tk) + "x" +
         std::to_string(d) + (causal ? " causal" : "");
}

/// Records the call's arguments in the trace GraphReplay compares between
/// calls (like a GEMM's).
void trace(const char *kind, int64_t dtype, int64_t causal, int64_t bh, int64_t tq,
           int64_t tk, int64_t d, float scale, std::initializer_list<const void *> ptrs) {
  LaunchTrace *t = LaunchTrace::active();
  if (!t)
    return;
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &scale, 4);
  std::string bytes;
  for (int64_t v : {dtype, causal, bh, tq, tk, d, int64_t(scaleBits)})
    bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
  for (const void *p : ptrs)
    bytes.append(reinterpret_cast<const char *>(&p), sizeof p);
  t->add(kind, bytes.data(), bytes.size());
}
} // namespace
} // namespace oflow_rt::cuda

using namespace oflow_rt::cuda;

extern "C" void oflow_rt_attention_fwd(int64_t dtype, int64_t causal, int64_t bh,
                                       int64_t tq, int64_t tk, int64_t d, float scale,
                                       const float *q, const float *k, const float *v,
                                       float *out, float *lse) {
  const char *fn = "oflow_rt_attention_fwd";
  Context &ctx = start(fn, dtype, causal, bh, tq, tk, d);
  trace("attention_fwd", dtype, causal, bh, tq, tk, d, scale, {q, k, v, out, lse});
  int dp = oflow_attention::paddedD(static_cast<int>(d));
  const Kernel &kernel = kernelFor(ctx, fn, Kind::Fwd, dtype, dp);
  OflowAttentionParams p = paramsOf(causal, bh, tq, tk, d, scale);
  p.q = q;
  p.k = k;
  p.v = v;
  p.out = out;
  p.lse = lse;
  p.vec4 = d % 4 == 0 && aligned16(q) && aligned16(k) && aligned16(v);
  std::string text;
  if (profiling())
    text = label("fwd", dtype, causal, bh, tq, tk, d);
  ProfileScope scope(ctx.stream, text);
  dim3 grid(static_cast<unsigned>(bh),
            static_cast<unsigned>((tq + oflow_attention::kBlockM - 1) / oflow_attention::kBlockM));
  launch(ctx, fn, kernel.fn, grid, dim3(oflow_attention::kThreads), kernel.smem, p);
}

extern "C" void oflow_rt_attention_bwd(int64_t dtype, int64_t causal, int64_t bh,
                                       int64_t tq, int64_t tk, int64_t d, float scale,
                                       const float *q, const float *k, const float *v,
                                       const float *out, const float *lse,
                                       const float *dout, float *dq, float *dk, float *dv,
                                       float *delta) {
  using namespace oflow_attention;
  const char *fn = "oflow_rt_attention_bwd";
  Context &ctx = start(fn, dtype, causal, bh, tq, tk, d);
  trace("attention_bwd", dtype, causal, bh, tq, tk, d, scale,
        {q, k, v, out, lse, dout, dq, dk, dv, delta});
  int dp = paddedD(static_cast<int>(d));
  const Kernel &kv = kernelFor(ctx, fn, Kind::BwdKv, dtype, dp);
  const Kernel &qk = kernelFor(ctx, fn, Kind::BwdQ, dtype, dp);
  const void *deltaFn = deltaKernel();
  OflowAttentionParams p = paramsOf(causal, bh, tq, tk, d, scale);
  p.q = q;
  p.k = k;
  p.v = v;
  p.out = const_cast<float *>(out);
  p.lse = const_cast<float *>(lse);
  p.dout = dout;
  p.dq = dq;
  p.dk = dk;
  p.dv = dv;
  p.delta = delta;
  p.vec4 = d % 4 == 0 && aligned16(q) && aligned16(k) && aligned16(v) && aligned16(dout);
  std::string text;
  if (profiling())
    text = label("bwd", dtype, causal, bh, tq, tk, d);
  ProfileScope scope(ctx.stream, text);
  launch(ctx, fn, deltaFn,
         dim3(static_cast<unsigned>((bh * tq + kDeltaRows - 1) / kDeltaRows)),
         dim3(32 * kDeltaRows), 0, p);
  launch(ctx, fn, kv.fn,
         dim3(static_cast<unsigned>(bh), static_cast<unsigned>((tk + kBlockN - 1) / kBlockN)),
         dim3(kThreads), kv.smem, p);
  launch(ctx, fn, qk.fn,
         dim3(static_cast<unsigned>(bh), static_cast<unsigned>((tq + kBlockM - 1) / kBlockM)),
         dim3(kThreads), qk.smem, p);
}
