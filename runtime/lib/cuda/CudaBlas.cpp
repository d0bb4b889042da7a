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
#include "oflow_rt/abi.h"

#include <array>
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
