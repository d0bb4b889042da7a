//===- CudaRuntimeCheck.cpp - liboflow_runtime_cuda.a on a real GPU -------===//
//
// Built always, useful only where a GPU exists: without one it prints
// "SKIP: no CUDA device (...)" and exits 0. With one it checks
//   - the device buffers: Program + CudaDevice round trip (state uploaded
//     once, io inputs in / outputs out per call, state read back lazily,
//     host changes uploaded, --check-memory's arena poison),
//   - the mgpu* wrappers: a hand-written PTX kernel recorded by a global
//     constructor (before main, as generated code does) and launched (as
//     PTX through mgpuModuleLoadJIT and as a blob through mgpuModuleLoad),
//     mgpuMemAlloc/Memset32/Memcpy/MemFree,
//   - oflow_rt_sgemm / _batched against a CPU reference (every
//     transposition, leading dims > minimal, alpha/beta, misaligned
//     pointers, strided batches, k = 0, TF32; then again with every
//     odd-sized tensor-core GEMM run on zero-padded copies),
//   - oflow_rt_gemm_lowp / _batched with bf16 and f16 A/B (the same cases,
//     2-byte misaligned A, a reference in double from the same 16-bit
//     values, error within 1e-4 of |alpha| sum |a b| + |beta c|),
//   - oflow_rt_conv2d_* (cuDNN where the GPU machine has it, and the im2col
//     fallback: asymmetric pads, a workspace too small) against the
//     definition (test/runtime/ConvReference.h), with its time per call,
//   - every collective through NCCL: on one-rank communicators, and under
//     `mpirun -np N` (N GPUs) on a mesh of N against abi.h's formulas.
// Prints one line per check; exits 1 on the first failure.
//
//===----------------------------------------------------------------------===//
#include "../../../runtime/lib/AttentionReference.h"
#include "../../../runtime/lib/GraphReplay.h"
#include "../../../runtime/lib/HalfFloat.h"
#include "../../../runtime/lib/cuda/CudaContext.h"
#include "../../../runtime/lib/cuda/CudaConv.h"
#include "../ConvReference.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Program.h"
#include "oflow_rt/abi.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern "C" char *oflow_manifest_buffer(void); // check_program.c

namespace {
using namespace oflow_rt;

// state[i] += x[i]; out[i] = 2 * state[i], i < n.
const char kPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry add_twice(
  .param .u64 p_state,
  .param .u64 p_x,
  .param .u64 p_out,
  .param .u32 p_n
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<11>;

  ld.param.u64 %rd1, [p_state];
  ld.param.u64 %rd2, [p_x];
  ld.param.u64 %rd3, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  cvta.to.global.u64 %rd6, %rd3;
  mul.wide.u32 %rd7, %r5, 4;
  add.s64 %rd8, %rd4, %rd7;
  add.s64 %rd9, %rd5, %rd7;
  add.s64 %rd10, %rd6, %rd7;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd9];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd8], %f3;
  add.f32 %f4, %f3, %f3;
  st.global.f32 [%rd10], %f4;
DONE:
  ret;
}
)";

// As generated code does: recorded by a global constructor, before main().
void *gPtxModule = mgpuModuleLoadJIT(const_cast<char *>(kPtx), 3);
// The same PTX through mgpuModuleLoad (cudaLibraryLoadData takes PTX too).
void *gBlobModule = mgpuModuleLoad(const_cast<char *>(kPtx), sizeof kPtx);

int gFailures = 0;
void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    std::fflush(stdout);
    ++gFailures;
  }
}

// io layout of the check program's manifest.
constexpr int64_t kX = 0, kLoss = 64, kOut = 128;
uint8_t *gArena = nullptr;
int gCalls = 0;
} // namespace

extern "C" void _mlir_ciface_oflow_train_step(oflow_buffer *state,
                                              oflow_buffer *io,
                                              oflow_buffer *arena) {
  void *stream = mgpuStreamCreate();
  void *f = mgpuModuleGetFunction(++gCalls % 2 ? gPtxModule : gBlobModule,
                                  "add_twice");
  void *s = state->aligned, *x = io->aligned + kX, *out = io->aligned + kOut;
  uint32_t n = 4;
  void *params[] = {&s, &x, &out, &n};
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr, 4);
  gArena = arena->aligned;
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
}

namespace {
float at(const Program &p, int64_t off, int i) {
  float v;
  std::memcpy(&v, p.io.data() + off + 4 * i, 4);
  return v;
}

void checkProgram(Program &p) {
  float x[4] = {10, 20, 30, 40};
  std::memcpy(p.io.data() + kX, x, sizeof x);
  p.call("train"); // state {1,2,3,4} uploaded -> {11,22,33,44}
  bool ok = true;
  for (int i = 0; i < 4; ++i)
    ok &= at(p, kOut, i) == 2 * (x[i] + (i + 1));
  expect(ok, "round trip: io outputs after the first call");
  p.call("train"); // state stays on the GPU: {21,42,63,84}
  const float *st = reinterpret_cast<const float *>(p.stateForRead());
  ok = true;
  for (int i = 0; i < 4; ++i)
    ok &= st[i] == 2 * x[i] + (i + 1) && at(p, kOut, i) == 2 * st[i];
  expect(ok, "round trip: state read back lazily after two calls");
  float *w = reinterpret_cast<float *>(p.stateForWrite());
  for (int i = 0; i < 4; ++i)
    w[i] = -x[i];
  p.poisonArena();
  p.call("train"); // the host's state uploaded: {0,0,0,0}
  ok = true;
  for (int i = 0; i < 4; ++i)
    ok &= at(p, kOut, i) == 0;
  expect(ok, "round trip: host state changes reach the GPU");
  uint8_t arena[64];
  cuda::check(cudaMemcpy(arena, gArena, 64, cudaMemcpyDeviceToHost), "cudaMemcpy");
  ok = true;
  for (uint8_t b : arena)
    ok &= b == 0xFF;
  expect(ok, "poisonArena fills the arena with 0xFF");
  // mgpuMemAlloc / Memset32 / Memcpy / MemFree (null stream = compute stream).
  void *d = mgpuMemAlloc(64, nullptr, false);
  mgpuMemset32(d, 0x3f800000u, 16, nullptr); // 1.0f
  float h[16] = {0};
  mgpuMemcpy(h, d, 64, nullptr);
  cuda::check(cudaStreamSynchronize(cuda::context("check").stream), "cudaStreamSynchronize");
  ok = true;
  for (float v : h)
    ok &= v == 1.0f;
  expect(ok, "mgpuMemAlloc + mgpuMemset32 + mgpuMemcpy");
  mgpuMemFree(d, nullptr);
  std::string json = p.deviceJsonFields();
  expect(json.find("\"device_bytes\": ") != std::string::npos,
         "device_bytes in the JSON fields: " + json);
  std::printf("ok: device buffers and mgpu* launch (%s)\n", json.c_str());
}

// An entry's launches replayed from a CUDA graph (runtime/lib/GraphReplay.h)
// on this GPU: five calls of add_twice (state += x, out = 2 state), the
// third captured, the last two replayed, give the numbers of five eager
// calls; a call whose kernel parameter changes is not replayed.
void checkGraphReplay() {
  cuda::Context &ctx = cuda::context("check");
  std::vector<float> state = {1, 2, 3, 4}, x = {10, 20, 30, 40}, out(4);
  float *dState = nullptr, *dX = nullptr, *dOut = nullptr;
  cuda::check(cudaMalloc(&dState, 16), "cudaMalloc");
  cuda::check(cudaMalloc(&dX, 16), "cudaMalloc");
  cuda::check(cudaMalloc(&dOut, 16), "cudaMalloc");
  cuda::check(cudaMemcpy(dState, state.data(), 16, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda::check(cudaMemcpy(dX, x.data(), 16, cudaMemcpyHostToDevice), "cudaMemcpy");
  void *f = mgpuModuleGetFunction(gBlobModule, "add_twice");
  uint32_t n = 4;
  auto step = [&] {
    void *s = dState, *px = dX, *po = dOut;
    void *params[] = {&s, &px, &po, &n};
    mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr, 4);
  };
  EntryGraph g(cuda::cudaGraphs(ctx.stream), true);
  for (int call = 1; call <= 5; ++call)
    g.call(step);
  cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  cuda::check(cudaMemcpy(state.data(), dState, 16, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda::check(cudaMemcpy(out.data(), dOut, 16, cudaMemcpyDeviceToHost), "cudaMemcpy");
  bool ok = g.replaying() && g.replays() == 3;
  for (int i = 0; i < 4; ++i)
    ok &= state[i] == (i + 1) + 5 * x[i] && out[i] == 2 * state[i];
  expect(ok, "graph replay: 5 calls (2 eager, 1 captured, 2 replayed) = 5 eager calls; " +
                 g.eagerReason());
  // The element count changes on call 2: eager from then on, numbers right.
  EntryGraph h(cuda::cudaGraphs(ctx.stream), true);
  for (int call = 1; call <= 4; ++call) {
    n = call == 2 ? 2 : 4;
    h.call(step);
  }
  cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  cuda::check(cudaMemcpy(out.data(), dState, 16, cudaMemcpyDeviceToHost), "cudaMemcpy");
  ok = !h.replaying() && !h.eagerReason().empty();
  for (int i = 0; i < 4; ++i)
    ok &= out[i] == state[i] + (i < 2 ? 4 : 3) * x[i];
  expect(ok, "graph replay: a changed parameter keeps the entry eager (" + h.eagerReason() + ")");
  cudaFree(dState);
  cudaFree(dX);
  cudaFree(dOut);
  std::printf("ok: CUDA graph capture and replay\n");
}

// C = alpha op(A) op(B) + beta C, row-major, in double.
void reference(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb,
               float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * lda + i] : a[i * lda + p]) *
             double(tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = float(alpha * s + beta * c[i * ldc + j]);
    }
}

float *toDevice(const std::vector<float> &v, int64_t pad = 0) {
  void *p = nullptr;
  cuda::check(cudaMalloc(&p, (v.size() + pad + 64) * 4), "cudaMalloc");
  float *d = static_cast<float *>(p) + pad;
  cuda::check(cudaMemcpy(d, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

std::vector<float> randoms(int64_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(int(seed >> 9) % 2001 - 1000) / 500.0f;
  }
  return v;
}

void checkGemm(bool tf32) {
  cuda::Context &ctx = cuda::context("check");
  ctx.allowTf32 = tf32;
  double tol = tf32 ? 2e-2 : 1e-4;
  int cases = 0;
  for (int64_t batch : {1, 3})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int64_t mis : {0, 1})
          for (auto [m, n, k] : {std::array<int64_t, 3>{5, 7, 3}, {64, 48, 96}, {1, 33, 17}}) {
            int64_t lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 1, ldc = n + 3;
            int64_t rowsA = ta ? k : m, rowsB = tb ? n : k;
            int64_t sa = rowsA * lda + 5, sb = rowsB * ldb, sc = m * ldc + 1;
            auto a = randoms(batch * sa, 1 + m), b = randoms(batch * sb, 2 + n),
                 c = randoms(batch * sc, 3 + k);
            float alpha = 0.75f, beta = batch > 1 ? 0.0f : -0.5f;
            std::vector<float> want = c;
            for (int64_t i = 0; i < batch; ++i)
              reference(ta, tb, m, n, k, alpha, a.data() + i * sa, lda,
                        b.data() + i * sb, ldb, beta, want.data() + i * sc, ldc);
            float *da = toDevice(a, mis), *db = toDevice(b), *dc = toDevice(c, mis);
            if (batch == 1)
              oflow_rt_sgemm(ta, tb, m, n, k, alpha, da, lda, db, ldb, beta, dc, ldc);
            else
              oflow_rt_sgemm_batched(batch, ta, tb, m, n, k, alpha, da, lda, sa,
                                     db, ldb, sb, beta, dc, ldc, sc);
            cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
            std::vector<float> got(c.size());
            cuda::check(cudaMemcpy(got.data(), dc, got.size() * 4, cudaMemcpyDeviceToHost),
                        "cudaMemcpy");
            double worst = 0;
            for (int64_t i = 0; i < batch; ++i)
              for (int64_t r = 0; r < m; ++r)
                for (int64_t j = 0; j < ldc; ++j) {
                  int64_t idx = i * sc + r * ldc + j;
                  if (j >= n) { // outside the matrix: untouched
                    if (got[idx] != c[idx])
                      worst = 1e9;
                    continue;
                  }
                  worst = std::max(worst, std::fabs(double(got[idx]) - want[idx]) /
                                              (1.0 + std::fabs(double(want[idx]))));
                }
            expect(worst <= tol, "sgemm batch " + std::to_string(batch) + " ta " +
                                     std::to_string(ta) + " tb " + std::to_string(tb) +
                                     " m " + std::to_string(m) + " n " + std::to_string(n) +
                                     " k " + std::to_string(k) + " misaligned " +
                                     std::to_string(mis) + ": error " + std::to_string(worst));
            cudaFree(da - mis);
            cudaFree(db);
            cudaFree(dc - mis);
            ++cases;
          }
  // k = 0: C = beta C for beta 0.
  auto c = randoms(12, 9);
  float *dc = toDevice(c);
  oflow_rt_sgemm(0, 0, 3, 4, 0, 1.0f, dc, 1, dc, 4, 0.0f, dc, 4);
  cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  std::vector<float> got(12);
  cuda::check(cudaMemcpy(got.data(), dc, 48, cudaMemcpyDeviceToHost), "cudaMemcpy");
  bool zero = true;
  for (float v : got)
    zero &= v == 0;
  expect(zero, "sgemm k = 0, beta 0 zeroes C");
  cudaFree(dc);
  ctx.allowTf32 = false;
  std::printf("ok: sgemm%s, %d cases\n", tf32 ? " (TF32)" : "", cases + 1);
}

// ---- oflow_rt_gemm_lowp*: bf16 / f16 A and B, f32 C ----------------------
// Random finite 16-bit floats, magnitudes about 2^-3 .. 2^2, a few zeros.
std::vector<uint16_t> randoms16(int64_t dtype, int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  bool bf = dtype == OFLOW_DT_BF16;
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t r = seed >> 8;
    uint32_t sign = (r & 1) << 15, mant = (r >> 1) & (bf ? 0x7fu : 0x3ffu);
    int e = int((r >> 11) % 6) - 3;
    uint32_t exp = bf ? uint32_t(e + 127) : uint32_t(e + 15);
    if ((r >> 14) % 23 == 0)
      exp = mant = 0;
    x = static_cast<uint16_t>(sign | (exp << (bf ? 7 : 10)) | mant);
  }
  return v;
}

std::vector<float> widened(int64_t dtype, const std::vector<uint16_t> &v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    f[i] = dtype == OFLOW_DT_BF16 ? detail::bf16ToFloat(v[i]) : detail::f16ToFloat(v[i]);
  return f;
}

// pad: elements before the data (pad 1: only 2-byte aligned).
uint16_t *toDevice16(const std::vector<uint16_t> &v, int64_t pad = 0) {
  void *p = nullptr;
  cuda::check(cudaMalloc(&p, (v.size() + pad + 64) * 2), "cudaMalloc");
  uint16_t *d = static_cast<uint16_t *>(p) + pad;
  cuda::check(cudaMemcpy(d, v.data(), v.size() * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

void checkGemmLowp(int64_t dtype) {
  cuda::Context &ctx = cuda::context("check");
  const char *name = dtype == OFLOW_DT_BF16 ? "bf16" : "f16";
  int cases = 0;
  double worstAll = 0;
  for (int64_t batch : {1, 3})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int64_t mis : {0, 1})
          for (auto [m, n, k] : {std::array<int64_t, 3>{5, 7, 3}, {64, 48, 96},
                                 {1, 33, 17}, {128, 80, 256}}) {
            int64_t lda = (ta ? m : k) + 2 - mis, ldb = (tb ? k : n) + 1, ldc = n + 3;
            int64_t rowsA = ta ? k : m, rowsB = tb ? n : k;
            int64_t sa = rowsA * lda + 5, sb = rowsB * ldb, sc = m * ldc + 1;
            auto a16 = randoms16(dtype, batch * sa, 1 + m),
                 b16 = randoms16(dtype, batch * sb, 2 + n);
            auto a = widened(dtype, a16), b = widened(dtype, b16);
            auto c = randoms(batch * sc, 3 + k);
            float alpha = 0.75f, beta = batch > 1 ? 0.0f : -0.5f;
            std::vector<float> want = c;
            // |alpha| sum |a b| + |beta c|: the scale of the rounding error.
            std::vector<float> scale(c.size()), absA(a.size()), absB(b.size());
            for (size_t i = 0; i < a.size(); ++i)
              absA[i] = std::fabs(a[i]);
            for (size_t i = 0; i < b.size(); ++i)
              absB[i] = std::fabs(b[i]);
            for (size_t i = 0; i < c.size(); ++i)
              scale[i] = std::fabs(beta * c[i]);
            for (int64_t i = 0; i < batch; ++i) {
              reference(ta, tb, m, n, k, alpha, a.data() + i * sa, lda,
                        b.data() + i * sb, ldb, beta, want.data() + i * sc, ldc);
              reference(ta, tb, m, n, k, std::fabs(alpha), absA.data() + i * sa, lda,
                        absB.data() + i * sb, ldb, 1.0f, scale.data() + i * sc, ldc);
            }
            uint16_t *da = toDevice16(a16, mis), *db = toDevice16(b16);
            float *dc = toDevice(c, mis);
            if (batch == 1)
              oflow_rt_gemm_lowp(dtype, ta, tb, m, n, k, alpha, da, lda, db, ldb, beta,
                                 dc, ldc);
            else
              oflow_rt_gemm_lowp_batched(dtype, batch, ta, tb, m, n, k, alpha, da, lda,
                                         sa, db, ldb, sb, beta, dc, ldc, sc);
            cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
            std::vector<float> got(c.size());
            cuda::check(cudaMemcpy(got.data(), dc, got.size() * 4, cudaMemcpyDeviceToHost),
                        "cudaMemcpy");
            double worst = 0;
            for (int64_t i = 0; i < batch; ++i)
              for (int64_t r = 0; r < m; ++r)
                for (int64_t j = 0; j < ldc; ++j) {
                  int64_t idx = i * sc + r * ldc + j;
                  if (j >= n) { // outside the matrix: untouched
                    if (got[idx] != c[idx])
                      worst = 1e9;
                    continue;
                  }
                  double rel = std::fabs(double(got[idx]) - want[idx]) /
                               (double(scale[idx]) + 1e-6);
                  worst = std::isnan(rel) ? 1e9 : std::max(worst, rel);
                }
            worstAll = std::max(worstAll, worst);
            expect(worst <= 1e-4,
                   std::string("gemm_lowp ") + name + " batch " + std::to_string(batch) +
                       " ta " + std::to_string(ta) + " tb " + std::to_string(tb) + " m " +
                       std::to_string(m) + " n " + std::to_string(n) + " k " +
                       std::to_string(k) + " misaligned " + std::to_string(mis) +
                       ": relative error " + std::to_string(worst));
            cudaFree(da - mis);
            cudaFree(db);
            cudaFree(dc - mis);
            ++cases;
          }
  // k = 0: C = beta C for beta 0: a 3x4 C at 0, then two 2x3 ones (ldc 4)
  // at 12 and 22.
  auto c = randoms(32, 9);
  float *dc = toDevice(c);
  uint16_t *dummy = toDevice16(std::vector<uint16_t>(4));
  oflow_rt_gemm_lowp(dtype, 0, 0, 3, 4, 0, 1.0f, dummy, 1, dummy, 4, 0.0f, dc, 4);
  oflow_rt_gemm_lowp_batched(dtype, 2, 1, 1, 2, 3, 0, 1.0f, dummy, 2, 0, dummy, 1, 0,
                             0.0f, dc + 12, 4, 10);
  cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  std::vector<float> got(32);
  cuda::check(cudaMemcpy(got.data(), dc, 128, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<bool> zeroed(32, false);
  for (int i = 0; i < 12; ++i)
    zeroed[i] = true;
  for (int base : {12, 22})
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 3; ++j)
        zeroed[base + r * 4 + j] = true;
  bool ok = true;
  for (int i = 0; i < 32; ++i)
    ok &= zeroed[i] ? got[i] == 0 : got[i] == c[i];
  expect(ok, std::string("gemm_lowp ") + name + " k = 0, beta 0 zeroes C");
  cudaFree(dc);
  cudaFree(dummy);
  std::printf("ok: gemm_lowp %s, %d cases (worst relative error %.3g)\n", name,
              cases + 1, worstAll);
}

// ---- collectives: member p's input is a known function of p -------------
template <typename T> T valueOf(int64_t p, int64_t i) {
  return static_cast<T>((p + 1) * 3 + (i % 13) - 4);
}

template <typename T>
void checkCollectivesT(int64_t dtype, const char *name, int64_t n, int64_t c) {
  cuda::Context &ctx = cuda::context("check");
  auto dev = [&](const std::vector<T> &v) {
    void *p = nullptr;
    cuda::check(cudaMalloc(&p, v.size() * sizeof(T) + 64), "cudaMalloc");
    cuda::check(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                "cudaMemcpy");
    return p;
  };
  auto host = [&](void *p, size_t count) {
    std::vector<T> v(count);
    cuda::check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
    cuda::check(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost),
                "cudaMemcpy");
    cudaFree(p);
    return v;
  };
  auto input = [&](int64_t p, int64_t count) {
    std::vector<T> v(count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = valueOf<T>(p, i);
    return v;
  };
  std::string tag = std::string(name) + " n=" + std::to_string(n);
  { // all_reduce, sum and max, in place and not
    int64_t count = 37;
    for (int64_t op : {OFLOW_RED_SUM, OFLOW_RED_MAX}) {
      void *in = dev(input(c, count)), *out = dev(std::vector<T>(count));
      oflow_rt_all_reduce(dtype, op, in, out, count, 0);
      auto got = host(out, count);
      oflow_rt_all_reduce(dtype, op, in, in, count, 0);
      auto inPlace = host(in, count);
      bool ok = got == inPlace;
      for (int64_t i = 0; i < count; ++i) {
        T want = valueOf<T>(0, i);
        for (int64_t p = 1; p < n; ++p)
          want = op == OFLOW_RED_SUM ? T(want + valueOf<T>(p, i))
                                     : std::max(want, valueOf<T>(p, i));
        ok &= got[i] == want;
      }
      expect(ok, "all_reduce " + tag + (op ? " max" : " sum"));
    }
  }
  for (int64_t outer : {1, 3}) { // all_gather and reduce_scatter
    int64_t chunk = 5;
    void *in = dev(input(c, outer * chunk)), *out = dev(std::vector<T>(n * outer * chunk));
    oflow_rt_all_gather(dtype, in, out, outer, chunk, 0);
    auto got = host(out, n * outer * chunk);
    cudaFree(in);
    bool ok = true;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < n; ++p)
        for (int64_t k = 0; k < chunk; ++k)
          ok &= got[(o * n + p) * chunk + k] == valueOf<T>(p, o * chunk + k);
    expect(ok, "all_gather " + tag + " outer " + std::to_string(outer));
    in = dev(input(c, outer * n * chunk));
    out = dev(std::vector<T>(outer * chunk));
    oflow_rt_reduce_scatter(dtype, OFLOW_RED_SUM, in, out, outer, chunk, 0);
    got = host(out, outer * chunk);
    cudaFree(in);
    ok = true;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < chunk; ++k) {
        T want = 0;
        for (int64_t p = 0; p < n; ++p)
          want = T(want + valueOf<T>(p, o * n * chunk + c * chunk + k));
        ok &= got[o * chunk + k] == want;
      }
    expect(ok, "reduce_scatter " + tag + " outer " + std::to_string(outer));
  }
  for (int s : {1, 3}) { // all_to_all
    int64_t d[5] = {2, 2 * n, 3, 2 * n, 2};
    int g = 4 - s;
    int64_t total = d[0] * d[1] * d[2] * d[3] * d[4];
    void *in = dev(input(c, total)), *out = dev(std::vector<T>(total));
    oflow_rt_all_to_all(dtype, in, out, d[0], d[1], d[2], d[3], d[4], s, 0);
    auto got = host(out, total);
    cudaFree(in);
    int64_t od[5] = {d[0], d[1], d[2], d[3], d[4]};
    od[s] /= n;
    od[g] *= n;
    bool ok = true;
    int64_t i[5];
    for (i[0] = 0; i[0] < od[0]; ++i[0])
      for (i[1] = 0; i[1] < od[1]; ++i[1])
        for (i[2] = 0; i[2] < od[2]; ++i[2])
          for (i[3] = 0; i[3] < od[3]; ++i[3])
            for (i[4] = 0; i[4] < od[4]; ++i[4]) {
              int64_t j[5] = {i[0], i[1], i[2], i[3], i[4]};
              int64_t p = i[g] / d[g];
              j[g] = i[g] % d[g];
              j[s] = c * (d[s] / n) + i[s];
              int64_t oi = (((i[0] * od[1] + i[1]) * od[2] + i[2]) * od[3] + i[3]) * od[4] + i[4];
              int64_t ii = (((j[0] * d[1] + j[1]) * d[2] + j[2]) * d[3] + j[3]) * d[4] + j[4];
              ok &= got[oi] == valueOf<T>(p, ii);
            }
    expect(ok, "all_to_all " + tag + " scatter dim " + std::to_string(s));
  }
}

void checkCollectives(int64_t n, int64_t c) {
  checkCollectivesT<float>(OFLOW_DT_F32, "f32", n, c);
  checkCollectivesT<double>(OFLOW_DT_F64, "f64", n, c);
  checkCollectivesT<int32_t>(OFLOW_DT_I32, "i32", n, c);
  checkCollectivesT<int64_t>(OFLOW_DT_I64, "i64", n, c);
  checkCollectivesT<int8_t>(OFLOW_DT_I8, "i8", n, c);
  std::printf("ok: collectives over NCCL, %lld rank%s (rank %lld)\n",
              static_cast<long long>(n), n == 1 ? "" : "s", static_cast<long long>(c));
}

// ---- oflow_rt_attention_fwd / _bwd ---------------------------------------
// Waits for the compute stream, at most `seconds`: a kernel that faults or
// never ends fails the check with a line instead of crashing or hanging it
// (the context is unusable after a fault, so the check ends there).
void syncOrFail(const std::string &what, double seconds = 120) {
  cudaStream_t stream = cuda::context("check").stream;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess)
      return;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (e != cudaErrorNotReady || waited > seconds) {
      std::printf("FAIL: %s: %s\n", what.c_str(),
                  e != cudaErrorNotReady
                      ? cuda::errorText(e, "cudaStreamQuery").c_str()
                      : ("still running after " + std::to_string(int(seconds)) + " s").c_str());
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

struct AttnCase {
  int64_t bh, tq, tk, d;
  bool causal;
  int64_t misalign; // floats before every tensor: 1 = only 4-byte aligned
};

// A device copy of `v` with `pad` floats before it and kGuard canaries after.
constexpr int64_t kGuard = 16;
constexpr float kCanary = 12345.0f;
struct DeviceTensor {
  float *base = nullptr, *data = nullptr;
  int64_t size = 0;
  DeviceTensor(const std::vector<float> &v, int64_t pad, bool poison) : size(int64_t(v.size())) {
    std::vector<float> host(pad + size + kGuard, kCanary);
    if (poison)
      std::fill(host.begin() + pad, host.begin() + pad + size, NAN);
    else
      std::copy(v.begin(), v.end(), host.begin() + pad);
    void *p = nullptr;
    cuda::check(cudaMalloc(&p, host.size() * 4), "cudaMalloc");
    base = static_cast<float *>(p);
    data = base + pad;
    cuda::check(cudaMemcpy(base, host.data(), host.size() * 4, cudaMemcpyHostToDevice),
                "cudaMemcpy");
  }
  ~DeviceTensor() { cudaFree(base); }
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;
  /// The values, and whether the canaries after them are intact.
  std::vector<float> read(bool *guardOk) const {
    std::vector<float> v(size + kGuard);
    cuda::check(cudaMemcpy(v.data(), data, v.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    bool ok = true;
    for (int64_t i = size; i < size + kGuard; ++i)
      ok &= v[i] == kCanary;
    *guardOk = ok;
    v.resize(size);
    return v;
  }
};

// Attention's inputs: q, k, v in [-2, 2), dout in [-1, 1).
std::vector<float> uniform(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * float(seed >> 8) * 0x1p-24f;
  }
  return v;
}

// Runs one case on the GPU and compares the batch-heads `heads` with the CPU
// reference; returns the worst error (max |diff| / max |ref| per output).
double checkAttentionCase(int64_t dtype, const AttnCase &c, const std::vector<int64_t> &heads) {
  const char *name = dtype == OFLOW_DT_BF16 ? "bf16" : "f16";
  std::string what = std::string("attention ") + name + " " + std::to_string(c.bh) + "x" +
                     std::to_string(c.tq) + "x" + std::to_string(c.tk) + "x" +
                     std::to_string(c.d) + (c.causal ? " causal" : "") +
                     (c.misalign ? " misaligned" : "");
  float scale = 1.0f / std::sqrt(float(c.d));
  int64_t nq = c.bh * c.tq * c.d, nk = c.bh * c.tk * c.d, nl = c.bh * c.tq;
  uint32_t seed = uint32_t(c.bh * 7 + c.tq * 131 + c.d);
  auto q = uniform(nq, seed + 1, -2, 2), k = uniform(nk, seed + 2, -2, 2),
       v = uniform(nk, seed + 3, -2, 2), dout = uniform(nq, seed + 4, -1, 1);
  int64_t m = c.misalign;
  DeviceTensor dQ(q, m, false), dK(k, m, false), dV(v, m, false), dDout(dout, m, false);
  DeviceTensor dOut(q, m, true), dLse(std::vector<float>(nl), m, true);
  DeviceTensor dDq(q, m, true), dDk(k, m, true), dDv(v, m, true);
  DeviceTensor dDelta(std::vector<float>(nl), m, true);
  oflow_rt_attention_fwd(dtype, c.causal, c.bh, c.tq, c.tk, c.d, scale, dQ.data, dK.data,
                         dV.data, dOut.data, dLse.data);
  oflow_rt_attention_bwd(dtype, c.causal, c.bh, c.tq, c.tk, c.d, scale, dQ.data, dK.data,
                         dV.data, dOut.data, dLse.data, dDout.data, dDq.data, dDk.data,
                         dDv.data, dDelta.data);
  syncOrFail(what);
  bool guards = true, ok;
  auto out = dOut.read(&ok);
  guards &= ok;
  auto lse = dLse.read(&ok);
  guards &= ok;
  auto dq = dDq.read(&ok);
  guards &= ok;
  auto dk = dDk.read(&ok);
  guards &= ok;
  auto dv = dDv.read(&ok);
  guards &= ok;
  expect(guards, what + ": a kernel wrote past an output");
  // Every element written (the outputs started as NaN), on every head.
  bool finite = true;
  for (const auto *o : {&out, &lse, &dq, &dk, &dv})
    for (float x : *o)
      finite &= std::isfinite(x);
  expect(finite, what + ": an output element is NaN or inf (never written?)");

  // The reference, on the sampled batch-heads (one thread each).
  attention::Head h{dtype, c.tq, c.tk, c.d, c.causal, scale};
  std::vector<float> rOut(nq), rLse(nl), rDq(nq), rDk(nk), rDv(nk), rDelta(nl);
  std::vector<std::thread> threads;
  for (int64_t b : heads)
    threads.emplace_back([&, b] {
      int64_t qo = b * c.tq * c.d, ko = b * c.tk * c.d, lo = b * c.tq;
      attention::forwardHead(h, &q[qo], &k[ko], &v[ko], &rOut[qo], &rLse[lo]);
      attention::backwardHead(h, &q[qo], &k[ko], &v[ko], &rOut[qo], &rLse[lo], &dout[qo],
                              &rDq[qo], &rDk[ko], &rDv[ko], &rDelta[lo]);
    });
  for (auto &t : threads)
    t.join();
  double tol = dtype == OFLOW_DT_BF16 ? 2e-2 : 5e-3, worst = 0;
  std::string worstText;
  struct Out {
    const char *name;
    const std::vector<float> &got, &want;
    int64_t perHead;
  };
  for (const Out &o : {Out{"out", out, rOut, c.tq * c.d}, Out{"lse", lse, rLse, c.tq},
                       Out{"dq", dq, rDq, c.tq * c.d}, Out{"dk", dk, rDk, c.tk * c.d},
                       Out{"dv", dv, rDv, c.tk * c.d}}) {
    double err = 0, scaleRef = 0;
    for (int64_t b : heads)
      for (int64_t i = b * o.perHead; i < (b + 1) * o.perHead; ++i) {
        double e = std::fabs(double(o.got[i]) - o.want[i]);
        err = std::isnan(e) ? INFINITY : std::max(err, e); // NaN: never written
        scaleRef = std::max(scaleRef, std::fabs(double(o.want[i])));
      }
    double rel = err / std::max(scaleRef, 1e-30);
    expect(rel <= tol, what + ": " + o.name + " differs from the reference by " +
                           std::to_string(rel) + " of its largest value (tolerance " +
                           std::to_string(tol) + ")");
    if (rel >= worst) {
      worst = rel;
      worstText = o.name;
    }
  }
  std::printf("  %s: worst %s, %.3g of max |ref|\n", what.c_str(), worstText.c_str(), worst);
  std::fflush(stdout);
  return worst;
}

// GPT-2 small's attention: fwd and bwd times (CUDA events, 20 calls after 3
// warm-up calls each).
void timeAttention(int64_t dtype, int64_t bh, int64_t t, int64_t d) {
  const char *name = dtype == OFLOW_DT_BF16 ? "bf16" : "f16";
  cudaStream_t stream = cuda::context("check").stream;
  int64_t n = bh * t * d;
  auto x = uniform(n, 99, -2, 2);
  DeviceTensor q(x, 0, false), k(x, 0, false), v(x, 0, false), dout(x, 0, false);
  DeviceTensor out(x, 0, true), dq(x, 0, true), dk(x, 0, true), dv(x, 0, true);
  DeviceTensor lse(std::vector<float>(bh * t), 0, true), delta(std::vector<float>(bh * t), 0, true);
  float scale = 1.0f / std::sqrt(float(d));
  auto fwd = [&] {
    oflow_rt_attention_fwd(dtype, 1, bh, t, t, d, scale, q.data, k.data, v.data, out.data,
                           lse.data);
  };
  auto bwd = [&] {
    oflow_rt_attention_bwd(dtype, 1, bh, t, t, d, scale, q.data, k.data, v.data, out.data,
                           lse.data, dout.data, dq.data, dk.data, dv.data, delta.data);
  };
  cudaEvent_t e0, e1;
  cuda::check(cudaEventCreate(&e0), "cudaEventCreate");
  cuda::check(cudaEventCreate(&e1), "cudaEventCreate");
  auto timeIt = [&](const std::function<void()> &call) {
    for (int i = 0; i < 3; ++i)
      call();
    syncOrFail(std::string("attention timing warm-up ") + name);
    const int reps = 20;
    cuda::check(cudaEventRecord(e0, stream), "cudaEventRecord");
    for (int i = 0; i < reps; ++i)
      call();
    cuda::check(cudaEventRecord(e1, stream), "cudaEventRecord");
    syncOrFail(std::string("attention timing ") + name);
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    return 1000.0 * ms / reps; // us per call
  };
  fwd();
  double fwdUs = timeIt(fwd), bwdUs = timeIt(bwd);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  // FLOPs: dense forward 4 bh t^2 d (Q K^T and P V), dense backward
  // 10 bh t^2 d (dV, dP, dQ, dK, and S recomputed once), causal half of it.
  double dense = double(bh) * t * t * d, fwdFlops = 4 * dense / 2, bwdFlops = 10 * dense / 2;
  std::printf("attention %s %lldx%lldx%lldx%lld causal: fwd %.1f us (%.1f TFLOP/s), bwd %.1f "
              "us (%.1f TFLOP/s) [FLOPs: fwd 4*bh*t*t*d, bwd 10*bh*t*t*d, halved for causal]\n",
              name, (long long)bh, (long long)t, (long long)t, (long long)d, fwdUs,
              fwdFlops / fwdUs * 1e-6, bwdUs, bwdFlops / bwdUs * 1e-6);
  std::fflush(stdout);
}

// An entry's attention calls captured into a CUDA graph (GraphReplay.h) and
// replayed give the eager calls' bits (the kernels are deterministic), with
// the outputs poisoned before the replay so that it must write them all.
void checkAttentionGraph(int64_t dtype) {
  cuda::Context &ctx = cuda::context("check");
  const int64_t bh = 3, t = 77, d = 48;
  int64_t n = bh * t * d;
  DeviceTensor q(uniform(n, 5, -2, 2), 0, false), k(uniform(n, 6, -2, 2), 0, false),
      v(uniform(n, 7, -2, 2), 0, false), dout(uniform(n, 8, -1, 1), 0, false);
  std::vector<float> zeros(n);
  DeviceTensor out(zeros, 0, true), dq(zeros, 0, true), dk(zeros, 0, true), dv(zeros, 0, true);
  DeviceTensor lse(std::vector<float>(bh * t), 0, true), delta(std::vector<float>(bh * t), 0, true);
  auto step = [&] {
    oflow_rt_attention_fwd(dtype, 1, bh, t, t, d, 0.2f, q.data, k.data, v.data, out.data,
                           lse.data);
    oflow_rt_attention_bwd(dtype, 1, bh, t, t, d, 0.2f, q.data, k.data, v.data, out.data,
                           lse.data, dout.data, dq.data, dk.data, dv.data, delta.data);
  };
  auto results = [&] {
    syncOrFail("attention graph replay");
    bool ok;
    std::vector<float> all;
    for (const DeviceTensor *x : {&out, &lse, &dq, &dk, &dv}) {
      auto part = x->read(&ok);
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  };
  step();
  std::vector<float> eager = results();
  EntryGraph g(cuda::cudaGraphs(ctx.stream), true);
  for (int call = 1; call <= 3; ++call)
    g.call(step);
  for (const DeviceTensor *x : {&out, &lse, &dq, &dk, &dv})
    cuda::check(cudaMemsetAsync(x->data, 0xFF, x->size * 4, ctx.stream), "cudaMemsetAsync");
  g.call(step); // replayed
  std::vector<float> replayed = results();
  bool same = replayed.size() == eager.size() &&
              std::memcmp(replayed.data(), eager.data(), eager.size() * 4) == 0;
  expect(g.replaying() && g.replays() == 2 && same,
         std::string("attention ") + (dtype == OFLOW_DT_BF16 ? "bf16" : "f16") +
             " in a CUDA graph: replaying " + std::to_string(g.replaying()) + ", replays " +
             std::to_string(g.replays()) + ", bits equal to eager calls " +
             std::to_string(same) + "; " + g.eagerReason());
}

void checkAttention() {
  const std::vector<AttnCase> cases = {
      {96, 1024, 1024, 64, true, 0}, // GPT-2 small: 8 x 12 heads, T 1024
      {3, 77, 77, 16, true, 0},      {2, 50, 130, 128, false, 0},
      {5, 64, 64, 32, true, 0},      {4, 200, 200, 100, true, 0},
      {2, 100, 100, 1, true, 0},     {3, 33, 70, 40, false, 1},
      {2, 130, 130, 64, true, 1},    {1, 1, 1, 8, true, 0},
  };
  int before = gFailures;
  double worst[2] = {0, 0};
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16})
    for (const AttnCase &c : cases) {
      std::vector<int64_t> heads;
      if (c.bh > 8)
        heads = {0, c.bh / 2, c.bh - 1}; // the reference is slow: 3 heads
      else
        for (int64_t b = 0; b < c.bh; ++b)
          heads.push_back(b);
      double w = checkAttentionCase(dtype, c, heads);
      worst[dtype == OFLOW_DT_F16] = std::max(worst[dtype == OFLOW_DT_F16], w);
    }
  if (gFailures != before)
    return;
  std::printf("ok: attention fwd/bwd against the reference, %zu cases x bf16/f16 (worst %.3g "
              "bf16, %.3g f16 of max |ref|)\n",
              cases.size(), worst[0], worst[1]);
  checkAttentionGraph(OFLOW_DT_BF16);
  checkAttentionGraph(OFLOW_DT_F16);
  if (gFailures != before)
    return;
  std::printf("ok: attention calls captured into a CUDA graph replay the eager calls' bits\n");
  for (int64_t dtype : {OFLOW_DT_BF16, OFLOW_DT_F16})
    timeAttention(dtype, 96, 1024, 64);
}

// ---- oflow_rt_conv2d_* ----------------------------------------------------
// Each geometry's four calls on device copies, against the definition in
// double; `workspaceBytes` 0 sends what needs workspace to the fallback, and
// `fallback` all of it. Ten more calls of each kind are timed and must
// reproduce the first results bit for bit (both paths are deterministic).
void checkConvCase(const oflow_test::conv::Geometry &g, int64_t workspaceBytes, bool fallback) {
  using namespace oflow_test::conv;
  cuda::forcedFallback() = fallback;
  cudaStream_t stream = cuda::context("check").stream;
  Problem p = problemFor(g);
  float *x = toDevice(p.x), *w = toDevice(p.w), *bias = toDevice(p.bias), *dy = toDevice(p.dy);
  std::vector<float> nan(std::max(p.x.size(), std::max(p.y.size(), p.w.size())), NAN);
  float *y = toDevice(std::vector<float>(nan.begin(), nan.begin() + p.y.size()));
  float *dx = toDevice(std::vector<float>(nan.begin(), nan.begin() + p.x.size()));
  float *dw = toDevice(std::vector<float>(nan.begin(), nan.begin() + p.w.size()));
  void *ws = nullptr;
  cuda::check(cudaMalloc(&ws, std::max<int64_t>(workspaceBytes, 1)), "cudaMalloc");
#define GEOMETRY                                                                      \
  g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, g.oh(), g.ow(), g.sh, g.sw, g.dh, g.dw, g.pt, \
      g.pl, g.pb, g.pr, g.groups, workspaceBytes
  const std::string path = fallback ? "im2col" : "cudnn";
  auto read = [&](float *got, size_t n) {
    std::vector<float> host(n);
    cuda::check(cudaMemcpy(host.data(), got, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
  };
  std::vector<float> firstY, firstDx, firstDw;
  auto compare = [&](const std::vector<double> &want, float *got, const char *what,
                     std::vector<float> *keep) {
    syncOrFail(g.name() + ": " + what);
    std::vector<float> host = read(got, want.size());
    if (keep)
      *keep = host;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(host[i] - want[i]) / (1 + std::fabs(want[i])));
    expect(worst <= 1e-4, "conv2d " + std::string(what) + " " + g.name() + " (" + path +
                              "), workspace " + std::to_string(workspaceBytes) + ": error " +
                              std::to_string(worst));
  };
  oflow_rt_conv2d_fwd(GEOMETRY, x, w, y, ws);
  compare(p.y, y, "fwd", &firstY);
  oflow_rt_conv2d_fwd_bias(GEOMETRY, x, w, bias, y, ws);
  compare(p.yb, y, "fwd_bias", nullptr);
  oflow_rt_conv2d_bwd_data(GEOMETRY, dy, w, dx, ws);
  compare(p.dx, dx, "bwd_data", &firstDx);
  oflow_rt_conv2d_bwd_filter(GEOMETRY, dy, x, dw, ws);
  compare(p.dw, dw, "bwd_filter", &firstDw);
  // Time per call, after the first (which chose the algorithms).
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float ms[3] = {0, 0, 0};
  for (int kind = 0; kind < 3; ++kind) {
    cudaEventRecord(start, stream);
    for (int i = 0; i < 10; ++i) {
      if (kind == 0)
        oflow_rt_conv2d_fwd(GEOMETRY, x, w, y, ws);
      else if (kind == 1)
        oflow_rt_conv2d_bwd_data(GEOMETRY, dy, w, dx, ws);
      else
        oflow_rt_conv2d_bwd_filter(GEOMETRY, dy, x, dw, ws);
    }
    cudaEventRecord(stop, stream);
    syncOrFail(g.name() + ": timing");
    cudaEventElapsedTime(&ms[kind], start, stop);
  }
#undef GEOMETRY
  auto same = [](const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
  };
  expect(same(firstY, read(y, firstY.size())) && same(firstDx, read(dx, firstDx.size())) &&
             same(firstDw, read(dw, firstDw.size())),
         "conv2d " + g.name() + " (" + path + "): a repeated call differs in its bits");
  std::printf("  conv %s (%s), workspace %lld: fwd %.1f us, bwd_data %.1f us, "
              "bwd_filter %.1f us\n",
              g.name().c_str(), path.c_str(), static_cast<long long>(workspaceBytes),
              ms[0] * 100, ms[1] * 100, ms[2] * 100);
  cuda::forcedFallback() = false;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (float *b : {x, w, bias, dy, y, dx, dw})
    cudaFree(b);
  cudaFree(ws);
}

void checkConv() {
  using oflow_test::conv::Geometry;
  // n c h w m kh kw sh sw dh dw pt pl pb pr groups (as ConvDnnlTest's, and a
  // ResNet-50 stage-1 3x3 at batch 8); asymmetric pads run the fallback.
  const Geometry cases[] = {
      {2, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    {2, 3, 16, 16, 4, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
      {2, 8, 8, 8, 16, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},   {2, 4, 8, 7, 6, 3, 3, 2, 2, 1, 2, 1, 0, 1, 2, 2},
      {1, 6, 7, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 6},    {2, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
      {1, 2, 8, 8, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1},    {8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {8, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16}};
  int before = gFailures;
  for (bool fallback : {false, true})
    for (const Geometry &g : cases)
      checkConvCase(g, int64_t(64) << 20, fallback);
  // No workspace: cuDNN's algorithms that need some are out, what is left
  // runs cuDNN's zero-workspace algorithm or the fallback, whose columns
  // then live in the runtime's own buffer.
  checkConvCase(cases[0], 0, false);
  checkConvCase(cases[7], 0, false);
  checkConvCase(cases[7], 0, true);
  if (gFailures == before)
    std::printf("ok: conv2d, %d cases\n", 2 * int(std::size(cases)) + 3);
}

void writeManifest(int64_t mesh) {
  std::string m = "oflow-manifest 1\nmode train\nmodel check\nbatch 4\n"
                  "state_bytes 64\nio_bytes 256\narena_bytes 64\nentry train\n"
                  "var w param f32 1 4 0 0\n"
                  "input x f32 1 4 0 normal\n"
                  "output train loss f32 0 64\n"
                  "output train out f32 1 4 128\n";
  if (mesh > 1)
    m += "mesh " + std::to_string(mesh) + "\n";
  std::snprintf(oflow_manifest_buffer(), 4096, "%s", m.c_str());
}
} // namespace

int main(int argc, char **argv) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
    return 0;
  }
  const char *ws = std::getenv("OMPI_COMM_WORLD_SIZE");
  int64_t world = ws ? std::atoll(ws) : 1;
  writeManifest(world);
  try {
    Program p(argc > 0 ? argv[0] : "oflow-cuda-runtime-check");
    checkProgram(p);
    if (gFailures == 0)
      checkGraphReplay();
    if (gFailures == 0) {
      checkGemm(false);
      checkGemm(true);
      checkGemmLowp(OFLOW_DT_BF16);
      checkGemmLowp(OFLOW_DT_F16);
      // The same cases again with every unbatched tensor-core GEMM (TF32,
      // bf16, f16) whose extents are odd run on zero-padded copies, as the
      // vocabulary's large GEMMs are: the copies in and out must keep the
      // numbers and leave the bytes between rows alone.
      cuda::GemmPadSettings saved = cuda::gemmPadSettings();
      cuda::gemmPadSettings().minMacs = 1;
      std::printf("padded extents (every odd-sized tensor-core GEMM):\n");
      checkGemm(false);
      checkGemm(true);
      checkGemmLowp(OFLOW_DT_BF16);
      checkGemmLowp(OFLOW_DT_F16);
      cuda::gemmPadSettings() = saved;
    }
    if (world == 1) {
      checkAttention();
      checkConv();
    }
    cuda::Context &ctx = cuda::context("check");
    if (world == 1) {
      // One-rank NCCL communicators, installed for mesh axis 0.
      ncclComm_t comm = nullptr;
      int dev = ctx.device;
      cuda::check(ncclCommInitAll(&comm, 1, &dev), "ncclCommInitAll");
      ctx.axisComms.assign(1, comm);
      checkCollectives(1, 0);
      ctx.axisComms.clear();
      ncclCommDestroy(comm);
    } else if (gFailures == 0) {
      checkCollectives(world, worldRank());
    }
  } catch (const Error &err) {
    std::printf("FAIL: %s\n", err.what());
    return 1;
  }
  finishDistributed();
  if (gFailures) {
    std::printf("%d checks failed\n", gFailures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
