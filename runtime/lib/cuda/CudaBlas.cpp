//===- CudaBlas.cpp - abi.h's GEMMs over cuBLASLt (CUDA target) -----------===//
//
// Row-major C[m][n] = alpha op(A) op(B) + beta C is column-major
// C^T[n][m] = alpha op(B)^T op(A)^T + beta C^T: one cuBLASLt matmul with the
// operands swapped, each matrix described as it is stored (col-major view of
// a row-major matrix = its transpose, same leading dimension). Batches are
// strided (CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, in elements).
// fp32 compute unless --allow-tf32 / OFLOW_ALLOW_TF32=1. oflow_rt_gemm_lowp*:
// A and B CUDA_R_16BF or CUDA_R_16F, C/D CUDA_R_32F, CUBLAS_COMPUTE_32F
// (tensor cores, f32 accumulation; --allow-tf32 does not apply). Descriptors
// and the heuristic's algorithm are cached per (A/B dtype, shape, leading
// dims, strides, pointer alignments, tf32). Everything is enqueued on the
// compute stream.
//
//===----------------------------------------------------------------------===//
#include "../GraphReplay.h"
#include "CudaContext.h"
#include "Profile.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/abi.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>

namespace oflow_rt::cuda {
namespace {

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

// 0 trans_a, 1 trans_b, 2 m, 3 n, 4 k, 5 lda, 6 ldb, 7 ldc, 8 batch,
// 9-11 strides of A, B, C (0 unbatched), 12-14 alignments of A, B, C,
// 15 tf32, 16 the dtype of A and B (OFLOW_DT_F32, _BF16 or _F16).
using Key = std::array<int64_t, 17>;

// The largest power of two (up to 256) dividing the address of every
// matrix of the batch.
uint32_t alignmentOf(const void *p, int64_t batch, int64_t stride,
                     size_t elemBytes) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  if (batch > 1)
    v |= static_cast<uintptr_t>(stride) * elemBytes;
  uint32_t a = 256;
  while (a > 1 && v % a)
    a /= 2;
  return a;
}

const char *dtypeText(int64_t dtype) {
  return dtype == OFLOW_DT_BF16 ? "bf16" : dtype == OFLOW_DT_F16 ? "f16" : "f32";
}

// The abi.h function a plan serves, for messages.
const char *callerOf(const Key &k) {
  return k[16] == OFLOW_DT_F32 ? "oflow_rt_sgemm" : "oflow_rt_gemm_lowp";
}

cudaDataType_t cudaTypeOf(int64_t dtype) {
  return dtype == OFLOW_DT_BF16 ? CUDA_R_16BF
         : dtype == OFLOW_DT_F16 ? CUDA_R_16F
                                 : CUDA_R_32F;
}

std::string shapeText(const Key &k) {
  return std::string("dtype_ab=") + dtypeText(k[16]) + " trans_a=" + std::to_string(k[0]) + " trans_b=" + std::to_string(k[1]) +
         " m=" + std::to_string(k[2]) + " n=" + std::to_string(k[3]) +
         " k=" + std::to_string(k[4]) + " lda=" + std::to_string(k[5]) +
         " ldb=" + std::to_string(k[6]) + " ldc=" + std::to_string(k[7]) +
         " batch=" + std::to_string(k[8]);
}

void lt(cublasStatus_t s, const char *call, const Key &k) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fatal(std::string(callerOf(k)) + ": " + call + " failed: " +
          cublasLtGetStatusName(s) + ": " + cublasLtGetStatusString(s) + " (" +
          shapeText(k) + ")");
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, uint64_t rows,
                              uint64_t cols, int64_t ld, int32_t batch,
                              int64_t stride, const Key &k) {
  cublasLtMatrixLayout_t l = nullptr;
  lt(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld),
     "cublasLtMatrixLayoutCreate", k);
  if (batch > 1) {
    lt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                        &batch, sizeof batch),
       "cublasLtMatrixLayoutSetAttribute", k);
    lt(cublasLtMatrixLayoutSetAttribute(
           l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
       "cublasLtMatrixLayoutSetAttribute", k);
  }
  return l;
}

const Plan &planFor(Context &ctx, const Key &k) {
  static std::map<Key, Plan> *cache = new std::map<Key, Plan>;
  if (auto it = cache->find(k); it != cache->end())
    return it->second;
  int64_t ta = k[0], tb = k[1], m = k[2], n = k[3], kk = k[4];
  int64_t lda = k[5], ldb = k[6], ldc = k[7];
  int32_t batch = static_cast<int32_t>(k[8]);
  Plan p;
  cublasComputeType_t compute =
      k[15] ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  lt(cublasLtMatmulDescCreate(&p.op, compute, CUDA_R_32F),
     "cublasLtMatmulDescCreate", k);
  // Column-major: the first operand is row-major B, the second row-major A.
  cublasOperation_t opFirst = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst,
                                    sizeof opFirst),
     "cublasLtMatmulDescSetAttribute", k);
  lt(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                    &opSecond, sizeof opSecond),
     "cublasLtMatmulDescSetAttribute", k);
  cudaDataType_t ab = cudaTypeOf(k[16]);
  p.a = tb ? layout(ab, kk, n, ldb, batch, k[10], k)
           : layout(ab, n, kk, ldb, batch, k[10], k);
  p.b = ta ? layout(ab, m, kk, lda, batch, k[9], k)
           : layout(ab, kk, m, lda, batch, k[9], k);
  p.c = layout(CUDA_R_32F, n, m, ldc, batch, k[11], k);
  cublasLtMatmulPreference_t pref = nullptr;
  lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", k);
  uint64_t ws = ctx.workspaceBytes;
  lt(cublasLtMatmulPreferenceSetAttribute(
         pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
     "cublasLtMatmulPreferenceSetAttribute", k);
  // The pointers' real alignments (slices of the arena need not be
  // 256-byte aligned, which the heuristic assumes otherwise).
  uint32_t alignFirst = static_cast<uint32_t>(k[13]);
  uint32_t alignSecond = static_cast<uint32_t>(k[12]);
  uint32_t alignC = static_cast<uint32_t>(k[14]);
  lt(cublasLtMatmulPreferenceSetAttribute(
         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignFirst, 4),
     "cublasLtMatmulPreferenceSetAttribute", k);
  lt(cublasLtMatmulPreferenceSetAttribute(
         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignSecond, 4),
     "cublasLtMatmulPreferenceSetAttribute", k);
  lt(cublasLtMatmulPreferenceSetAttribute(
         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC, 4),
     "cublasLtMatmulPreferenceSetAttribute", k);
  lt(cublasLtMatmulPreferenceSetAttribute(
         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC, 4),
     "cublasLtMatmulPreferenceSetAttribute", k);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  lt(cublasLtMatmulAlgoGetHeuristic(ctx.lt, p.op, p.a, p.b, p.c, p.c, pref, 1,
                                    &result, &found),
     "cublasLtMatmulAlgoGetHeuristic", k);
  cublasLtMatmulPreferenceDestroy(pref);
  if (found < 1)
    fatal(std::string(callerOf(k)) + ": cuBLASLt has no algorithm for " +
          shapeText(k));
  p.algo = result.algo;
  return cache->emplace(k, p).first->second;
}

void matmul(Context &ctx, int64_t dtype, int64_t batch, int64_t ta, int64_t tb,
            int64_t m, int64_t n, int64_t k, float alpha, const void *a,
            int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb,
            float beta, float *c, int64_t ldc, int64_t sc);

} // namespace

// An extent that is not a multiple of 16 bytes' worth of elements (a
// vocabulary of 50257) keeps cuBLASLt's tensor-core GEMMs off their fast
// kernels: on an H200, GPT-2's three vocabulary GEMMs took 4.6-5.1 ms each
// in bf16 and 4.8-6.1 ms in TF32, against 0.79-0.90 and 1.6-1.9 ms with the
// extent padded to 50304 (bench/gpu_check.py calibrate, 2026-12-04). Padding
// only the rows' pitch, not the extent, did not help (7.1 ms either way).
// So a large unbatched tensor-core GEMM (bf16, f16, or f32 with
// --allow-tf32) with such an extent runs on copies whose odd extents are
// padded to a multiple of 64 with zeros (the padded part of k adds zero
// products; the padded rows and columns of C are dropped): A and B are
// copied in when an extent of theirs is padded, C in (beta != 0) and out.
// Off with OFLOW_GEMM_PAD=0; the scratch is at most OFLOW_GEMM_PAD_MAX_MB
// (default 4096) and is sized on an entry's first, uncaptured call: a GEMM
// that would need more (or more while a CUDA graph is being captured) runs
// unpadded.
GemmPadSettings &gemmPadSettings() {
  static GemmPadSettings settings = [] {
    GemmPadSettings p;
    if (const char *v = std::getenv("OFLOW_GEMM_PAD"))
      p.enabled = std::string(v) != "0";
    if (const char *v = std::getenv("OFLOW_GEMM_PAD_MAX_MB"))
      p.maxBytes = static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20;
    return p;
  }();
  return settings;
}

namespace {

// A row-major matrix as stored (`rows` rows of `cols` elements, `ld`
// apart) and the extents its padded copy has.
struct Stored {
  const void *data;
  int64_t rows, cols, ld;
  int64_t paddedRows, paddedCols;
  size_t elemBytes;
  bool padded() const { return paddedRows != rows || paddedCols != cols; }
  size_t paddedBytes() const {
    return (static_cast<size_t>(paddedRows) * paddedCols * elemBytes + 255) / 256 * 256;
  }
};

// Copies `s` into `dst` (its padded extents, `paddedCols` apart) and zeroes
// the padding.
void copyIn(Context &ctx, void *dst, const Stored &s, const char *label) {
  ProfileScope scope(ctx.stream, label);
  size_t e = s.elemBytes, pitch = s.paddedCols * e;
  check(cudaMemcpy2DAsync(dst, pitch, s.data, s.ld * e, s.cols * e, s.rows,
                          cudaMemcpyDeviceToDevice, ctx.stream),
        "cudaMemcpy2DAsync (a GEMM operand's padded copy)");
  char *d = static_cast<char *>(dst);
  if (s.paddedCols > s.cols)
    check(cudaMemset2DAsync(d + s.cols * e, pitch, 0, (s.paddedCols - s.cols) * e,
                            s.rows, ctx.stream),
          "cudaMemset2DAsync (a GEMM operand's padding)");
  if (s.paddedRows > s.rows)
    check(cudaMemsetAsync(d + s.rows * pitch, 0, (s.paddedRows - s.rows) * pitch,
                          ctx.stream),
          "cudaMemsetAsync (a GEMM operand's padding)");
}

bool padOddExtents(Context &ctx, int64_t dtype, int64_t ta, int64_t tb, int64_t m,
                   int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
                   const void *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  const GemmPadSettings &settings = gemmPadSettings();
  if (!settings.enabled || m * n * k < settings.minMacs)
    return false;
  // Only the tensor-core paths care: fp32 SGEMM without TF32 ran as fast on
  // the vocabulary as padded (12.0-12.9 ms either way).
  if (dtype == OFLOW_DT_F32 && !ctx.allowTf32)
    return false;
  size_t abBytes = dtype == OFLOW_DT_F32 ? sizeof(float) : 2;
  int64_t multiple = static_cast<int64_t>(16 / abBytes);
  auto pad = [&](int64_t e) { return e % multiple ? (e + 63) / 64 * 64 : e; };
  int64_t pm = pad(m), pn = pad(n), pk = pad(k);
  if (pm == m && pn == n && pk == k)
    return false;
  Stored sa{a, ta ? k : m, ta ? m : k, lda, ta ? pk : pm, ta ? pm : pk, abBytes};
  Stored sb{b, tb ? n : k, tb ? k : n, ldb, tb ? pn : pk, tb ? pk : pn, abBytes};
  Stored sc{c, m, n, ldc, pm, pn, sizeof(float)};
  size_t bytes = (sa.padded() ? sa.paddedBytes() : 0) +
                 (sb.padded() ? sb.paddedBytes() : 0) +
                 (sc.padded() ? sc.paddedBytes() : 0);
  if (bytes > settings.maxBytes)
    return false;
  if (bytes > ctx.gemmScratchBytes) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(ctx.stream, &status), "cudaStreamIsCapturing");
    if (status != cudaStreamCaptureStatusNone)
      return false; // no allocation inside a capture
    void *grown = nullptr;
    try {
      grown = allocate(bytes, "the padded GEMM operands' scratch");
    } catch (const Error &) {
      return false; // the unpadded GEMM needs no memory
    }
    // The old scratch stays allocated until shutdown: a CUDA graph captured
    // from another entry may still copy through it.
    if (ctx.gemmScratch)
      ctx.retiredGemmScratch.emplace_back(ctx.gemmScratch, ctx.gemmScratchBytes);
    ctx.gemmScratch = grown;
    ctx.gemmScratchBytes = bytes;
  }
  char *next = static_cast<char *>(ctx.gemmScratch);
  auto place = [&](const Stored &s, int64_t &ld) -> void * {
    if (!s.padded())
      return const_cast<void *>(s.data);
    void *p = next;
    next += s.paddedBytes();
    ld = s.paddedCols;
    return p;
  };
  int64_t lda2 = lda, ldb2 = ldb, ldc2 = ldc;
  void *a2 = place(sa, lda2), *b2 = place(sb, ldb2);
  float *c2 = static_cast<float *>(place(sc, ldc2));
  if (sa.padded())
    copyIn(ctx, a2, sa, "gemm pad A");
  if (sb.padded())
    copyIn(ctx, b2, sb, "gemm pad B");
  if (sc.padded() && beta != 0.0f)
    copyIn(ctx, c2, sc, "gemm pad C in");
  matmul(ctx, dtype, 1, ta, tb, pm, pn, pk, alpha, a2, lda2, 0, b2, ldb2, 0, beta,
         c2, ldc2, 0);
  if (sc.padded()) {
    ProfileScope scope(ctx.stream, "gemm pad C out");
    check(cudaMemcpy2DAsync(c, ldc * sizeof(float), c2, ldc2 * sizeof(float),
                            n * sizeof(float), m, cudaMemcpyDeviceToDevice, ctx.stream),
          "cudaMemcpy2DAsync (a GEMM result's padded copy)");
  }
  return true;
}

// dtype: of A and B (OFLOW_DT_F32, _BF16 or _F16); C is always f32.
void gemm(int64_t dtype, int64_t batch, int64_t ta, int64_t tb, int64_t m,
          int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
          int64_t sa, const void *b, int64_t ldb, int64_t sb, float beta,
          float *c, int64_t ldc, int64_t sc) {
  bool lowp = dtype != OFLOW_DT_F32;
  const char *caller = lowp ? "oflow_rt_gemm_lowp" : "oflow_rt_sgemm";
  Context &ctx = context(caller);
  if (LaunchTrace *t = LaunchTrace::active()) {
    uint32_t alphaBits, betaBits;
    std::memcpy(&alphaBits, &alpha, 4);
    std::memcpy(&betaBits, &beta, 4);
    int64_t args[18] = {dtype, batch, ta, tb, m, n, k, alphaBits,
                        reinterpret_cast<int64_t>(a), lda, sa,
                        reinterpret_cast<int64_t>(b), ldb, sb, betaBits,
                        reinterpret_cast<int64_t>(c), ldc, sc};
    t->add("gemm", args, sizeof args);
  }
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  if (k <= 0) { // C = beta * C: only beta 0 and 1 occur
    if (beta == 1.0f)
      return;
    if (beta != 0.0f)
      fatal(std::string(caller) + " with k = 0 and beta = " +
            std::to_string(beta) + " (only 0 and 1 are supported)");
    for (int64_t i = 0; i < batch; ++i)
      check(cudaMemset2DAsync(c + i * sc, ldc * sizeof(float), 0,
                              n * sizeof(float), m, ctx.stream),
            lowp ? "cudaMemset2DAsync (oflow_rt_gemm_lowp, k = 0)"
                 : "cudaMemset2DAsync (oflow_rt_sgemm, k = 0)");
    return;
  }
  if (batch > INT32_MAX)
    fatal(std::string(caller) + "_batched: batch " + std::to_string(batch) +
          " exceeds cuBLASLt's limit");
  if (batch == 1 && padOddExtents(ctx, dtype, ta, tb, m, n, k, alpha, a, lda, b,
                                  ldb, beta, c, ldc))
    return;
  matmul(ctx, dtype, batch, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta,
         c, ldc, sc);
}

void matmul(Context &ctx, int64_t dtype, int64_t batch, int64_t ta, int64_t tb,
            int64_t m, int64_t n, int64_t k, float alpha, const void *a,
            int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb,
            float beta, float *c, int64_t ldc, int64_t sc) {
  bool lowp = dtype != OFLOW_DT_F32;
  size_t abBytes = lowp ? 2 : sizeof(float);
  Key key = {ta != 0, tb != 0, m, n, k, lda, ldb, ldc, batch,
             batch > 1 ? sa : 0, batch > 1 ? sb : 0, batch > 1 ? sc : 0,
             alignmentOf(a, batch, sa, abBytes), alignmentOf(b, batch, sb, abBytes),
             alignmentOf(c, batch, sc, sizeof(float)), lowp ? 0 : ctx.allowTf32,
             dtype};
  const Plan &p = planFor(ctx, key);
  std::string label;
  if (profiling())
    label = std::string(lowp ? "gemm " : "gemm") + (lowp ? dtypeText(dtype) : "") +
            " " + (ta ? "T" : "N") + (tb ? "T" : "N") + " " +
            std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
            (batch > 1 ? " x" + std::to_string(batch) : "");
  ProfileScope scope(ctx.stream, label);
  lt(cublasLtMatmul(ctx.lt, p.op, &alpha, b, p.a, a, p.b, &beta, c, p.c, c,
                    p.c, &p.algo, ctx.workspace, ctx.workspaceBytes, ctx.stream),
     "cublasLtMatmul", key);
}
} // namespace
} // namespace oflow_rt::cuda

extern "C" void oflow_rt_sgemm(int64_t trans_a, int64_t trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c,
                               int64_t ldc) {
  oflow_rt::cuda::gemm(OFLOW_DT_F32, 1, trans_a, trans_b, m, n, k, alpha, a,
                       lda, 0, b, ldb, 0, beta, c, ldc, 0);
}

extern "C" void oflow_rt_sgemm_batched(
    int64_t batch, int64_t trans_a, int64_t trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const float *a, int64_t lda, int64_t stride_a,
    const float *b, int64_t ldb, int64_t stride_b, float beta, float *c,
    int64_t ldc, int64_t stride_c) {
  oflow_rt::cuda::gemm(OFLOW_DT_F32, batch, trans_a, trans_b, m, n, k, alpha,
                       a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                       stride_c);
}

namespace {
void checkLowpDtype(int64_t dtype, const char *caller) {
  if (dtype != OFLOW_DT_BF16 && dtype != OFLOW_DT_F16)
    oflow_rt::cuda::fatal(std::string(caller) + ": dtype_ab " +
                          std::to_string(dtype) +
                          " is neither OFLOW_DT_BF16 (5) nor OFLOW_DT_F16 (6)");
}
} // namespace

extern "C" void oflow_rt_gemm_lowp(int64_t dtype_ab, int64_t trans_a,
                                   int64_t trans_b, int64_t m, int64_t n,
                                   int64_t k, float alpha, const void *a,
                                   int64_t lda, const void *b, int64_t ldb,
                                   float beta, float *c, int64_t ldc) {
  checkLowpDtype(dtype_ab, "oflow_rt_gemm_lowp");
  oflow_rt::cuda::gemm(dtype_ab, 1, trans_a, trans_b, m, n, k, alpha, a, lda,
                       0, b, ldb, 0, beta, c, ldc, 0);
}

extern "C" void oflow_rt_gemm_lowp_batched(
    int64_t dtype_ab, int64_t batch, int64_t trans_a, int64_t trans_b,
    int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
    int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, float beta,
    float *c, int64_t ldc, int64_t stride_c) {
  checkLowpDtype(dtype_ab, "oflow_rt_gemm_lowp_batched");
  oflow_rt::cuda::gemm(dtype_ab, batch, trans_a, trans_b, m, n, k, alpha, a,
                       lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c);
}

// GPU kernels use no host threads.
extern "C" void oflow_rt_set_threads(int64_t) {}
