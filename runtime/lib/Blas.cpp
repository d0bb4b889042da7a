//===- Blas.cpp - GEMM for generated code, over OpenBLAS ------------------===//
//
// oflow_rt_sgemm*: cblas_sgemm. oflow_rt_gemm_lowp* (bf16/f16 A and B, f32
// C): the op(A) and op(B) regions the GEMM reads are widened (exactly) into
// dense f32 scratch buffers, one pair per thread, reused across calls (they
// grow, never shrink), then the same cblas_sgemm.
//
// Losses must not depend on `--threads`, and OpenBLAS's own threading does
// not give the same bits as one thread (its multi-threaded sgemm takes other
// kernels: 0.3.21 on an AVX-512 CPU differs in every GPT-example shape). So
// OpenBLAS always runs on one thread here, and a GEMM is cut into pieces of C
// (row or column blocks) by its shape alone; the threads take whole pieces.
// Each piece is then the same single-threaded call at every thread count.
//
//===----------------------------------------------------------------------===//
#include "HalfFloat.h"
#include "MpiWorld.h"
#include "oflow_rt/abi.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace {
/// Below this many multiply-adds a GEMM is one piece: threads would cost
/// more than they save.
constexpr int64_t kMinParallelMacs = int64_t(1) << 20;
/// Rows (or columns) of C per piece, at least: each piece repacks the other
/// operand, which stays cheap against 2 x 64 FLOPs per packed element.
constexpr int64_t kMinPieceExtent = 64;
constexpr int64_t kMaxPieces = 64;

/// C cut along its rows (`alongRows`) or columns into `count` pieces of
/// `extent` (the last one shorter).
struct Pieces {
  bool alongRows = true;
  int64_t count = 1;
  int64_t extent = 0;
};

/// A function of the shape only: never of the thread count.
Pieces piecesFor(int64_t m, int64_t n, int64_t k) {
  Pieces p;
  p.alongRows = m >= n;
  int64_t whole = p.alongRows ? m : n;
  p.extent = whole;
  if (m * n * std::max<int64_t>(k, 1) < kMinParallelMacs)
    return p;
  int64_t count = std::clamp<int64_t>(whole / kMinPieceExtent, 1, kMaxPieces);
  // Extents in multiples of 16 (whole kernel tiles), the count re-derived.
  p.extent = (whole + count - 1) / count;
  p.extent = (p.extent + 15) / 16 * 16;
  p.count = (whole + p.extent - 1) / p.extent;
  return p;
}

/// Piece `i` of C = alpha op(A) op(B) + beta C, on the calling thread only.
void gemmPiece(const Pieces &p, int64_t i, bool ta, bool tb, int64_t m, int64_t n,
               int64_t k, float alpha, const float *a, int64_t lda, const float *b,
               int64_t ldb, float beta, float *c, int64_t ldc) {
  int64_t begin = i * p.extent;
  int64_t size = std::min(p.extent, (p.alongRows ? m : n) - begin);
  if (size <= 0)
    return;
  if (p.alongRows) {
    // Rows of op(A): rows of A, or columns of the stored (k x m) A.
    a += ta ? begin : begin * lda;
    c += begin * ldc;
    m = size;
  } else {
    // Columns of op(B): columns of B, or rows of the stored (n x k) B.
    b += tb ? begin * ldb : begin;
    c += begin;
    n = size;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

/// OpenBLAS (its OpenMP build) takes as many threads as omp_get_max_threads()
/// outside a parallel region, whatever openblas_set_num_threads said; this
/// holds it to one for a scope.
class OneBlasThread {
public:
  OneBlasThread() : saved_(omp_get_max_threads()) {
    if (saved_ != 1)
      omp_set_num_threads(1);
  }
  ~OneBlasThread() {
    if (saved_ != 1)
      omp_set_num_threads(saved_);
  }

private:
  int saved_;
};

/// Runs `run(t)` for t in [0, tasks) in ranges on the threads
/// (oflow_rt_parallel_for: the generated nests' pool), OpenBLAS on one thread
/// in each.
template <typename Run>
void runPieces(int64_t tasks, Run run) {
  auto task = [](void *ctx, int64_t begin, int64_t end) {
    // A worker of a parallel region is held to one thread by
    // omp_in_parallel(); a range run on the calling thread is held here.
    std::optional<OneBlasThread> one;
    if (!omp_in_parallel())
      one.emplace();
    for (int64_t t = begin; t < end; ++t)
      (*static_cast<Run *>(ctx))(t);
  };
  oflow_rt_parallel_for(task, &run, tasks, /*grain=*/1);
}
} // namespace

extern "C" void oflow_rt_sgemm(int64_t trans_a, int64_t trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c,
                               int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  Pieces p = piecesFor(m, n, k);
  runPieces(p.count, [&](int64_t i) {
    gemmPiece(p, i, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

extern "C" void oflow_rt_sgemm_batched(
    int64_t batch, int64_t trans_a, int64_t trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const float *a, int64_t lda, int64_t stride_a,
    const float *b, int64_t ldb, int64_t stride_b, float beta, float *c,
    int64_t ldc, int64_t stride_c) {
  if (batch <= 0 || m <= 0 || n <= 0)
    return;
  Pieces p = piecesFor(m, n, k);
  runPieces(batch * p.count, [&](int64_t t) {
    int64_t i = t / p.count;
    gemmPiece(p, t % p.count, trans_a, trans_b, m, n, k, alpha, a + i * stride_a,
              lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  });
}

namespace {
using oflow_rt::detail::bf16ToFloat;
using oflow_rt::detail::f16ToFloat;

void checkDtype(int64_t dtype, const char *caller) {
  if (dtype != OFLOW_DT_BF16 && dtype != OFLOW_DT_F16)
    oflow_rt::detail::fatal(std::string(caller) + ": dtype_ab " +
                            std::to_string(dtype) +
                            " is neither OFLOW_DT_BF16 (5) nor OFLOW_DT_F16 (6)");
}

// A stored row-major rows x cols matrix (leading dim ld) as a dense f32 one
// (leading dim max(cols, 1), which cblas accepts even for cols = 0).
struct Widened {
  std::vector<float> data;
  int64_t ld = 1;
};

template <float (*Convert)(uint16_t)>
void widenRows(const uint16_t *src, int64_t rows, int64_t cols, int64_t ld,
               float *dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *s = src + r * ld;
    float *d = dst + r * cols;
    for (int64_t j = 0; j < cols; ++j)
      d[j] = Convert(s[j]);
  }
}

const float *widen(Widened &w, int64_t dtype, const void *src, int64_t rows,
                   int64_t cols, int64_t ld) {
  rows = std::max<int64_t>(rows, 0);
  cols = std::max<int64_t>(cols, 0);
  w.ld = std::max<int64_t>(cols, 1);
  size_t need = static_cast<size_t>(rows * cols);
  if (w.data.size() < need)
    w.data.resize(need);
  const uint16_t *s = static_cast<const uint16_t *>(src);
  if (dtype == OFLOW_DT_BF16)
    widenRows<bf16ToFloat>(s, rows, cols, ld, w.data.data());
  else
    widenRows<f16ToFloat>(s, rows, cols, ld, w.data.data());
  return w.data.data();
}

thread_local Widened tlA, tlB;

void gemmLowp(int64_t dtype, int64_t batch, int64_t ta, int64_t tb, int64_t m,
              int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
              int64_t sa, const void *b, int64_t ldb, int64_t sb, float beta,
              float *c, int64_t ldc, int64_t sc) {
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  // The stored matrices: A is m x k (k x m transposed), B k x n (n x k).
  int64_t rowsA = ta ? k : m, colsA = ta ? m : k;
  int64_t rowsB = tb ? n : k, colsB = tb ? k : n;
  const auto *a16 = static_cast<const uint16_t *>(a);
  const auto *b16 = static_cast<const uint16_t *>(b);
  const float *wa = nullptr, *wb = nullptr;
  for (int64_t i = 0; i < batch; ++i) {
    // A stride of 0 (an operand shared by the batch) is widened once.
    if (i == 0 || sa != 0)
      wa = widen(tlA, dtype, a16 + i * sa, rowsA, colsA, lda);
    if (i == 0 || sb != 0)
      wb = widen(tlB, dtype, b16 + i * sb, rowsB, colsB, ldb);
    oflow_rt_sgemm(ta, tb, m, n, k, alpha, wa, tlA.ld, wb, tlB.ld, beta,
                   c + i * sc, ldc);
  }
}
} // namespace

extern "C" void oflow_rt_gemm_lowp(int64_t dtype_ab, int64_t trans_a,
                                   int64_t trans_b, int64_t m, int64_t n,
                                   int64_t k, float alpha, const void *a,
                                   int64_t lda, const void *b, int64_t ldb,
                                   float beta, float *c, int64_t ldc) {
  checkDtype(dtype_ab, "oflow_rt_gemm_lowp");
  gemmLowp(dtype_ab, 1, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0,
           beta, c, ldc, 0);
}

extern "C" void oflow_rt_gemm_lowp_batched(
    int64_t dtype_ab, int64_t batch, int64_t trans_a, int64_t trans_b,
    int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
    int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, float beta,
    float *c, int64_t ldc, int64_t stride_c) {
  checkDtype(dtype_ab, "oflow_rt_gemm_lowp_batched");
  gemmLowp(dtype_ab, batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a,
           b, ldb, stride_b, beta, c, ldc, stride_c);
}

extern "C" void oflow_rt_set_threads(int64_t threads) {
  // The GEMMs' pieces, the generated nests (Parallel.cpp) and oneDNN's
  // convolutions (ConvDnnl.cpp) all run on libgomp's threads; OpenBLAS
  // itself stays on one (runPieces).
  openblas_set_num_threads(1);
  omp_set_num_threads(static_cast<int>(threads));
}
