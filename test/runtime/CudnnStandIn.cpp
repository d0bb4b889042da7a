//===- CudnnStandIn.cpp - the cuDNN functions oflow calls, on the CPU -----===//
//
// A shared library with the signatures of cuDNN's own header (cudnn.h), so
// that the runtime's cuDNN code (runtime/lib/cuda/Cudnn.cpp) can be loaded
// against it and run on a machine without a GPU or cuDNN. "Device" pointers
// are host pointers. It checks what a real cuDNN would refuse (descriptors
// that disagree, a workspace smaller than the algorithm needs, a missing
// handle) and computes what cuDNN documents: NCHW float tensors, KCRS
// filters with c/groups channels, symmetric pads, cross-correlation or
// convolution (flipped kernel) mode, out = alpha * result + beta * out.
//
// Its algorithm heuristic is fixed and adversarial: each list starts with
// what oflow must not take by default (f16 conversion, tensor-core math on
// f32 data, i.e. TF32, results ranked for the default math, or a
// non-deterministic algorithm) and the deterministic FMA algorithms need
// workspace, so the tests see the choice. The oflowStandIn*
// functions let the tests read the last call and inject failures.
//
//===----------------------------------------------------------------------===//
#include <cudnn.h>

#include <cstdint>
#include <cstring>
#include <vector>

struct cudnnContext {
  cudaStream_t stream = nullptr;
};
struct cudnnTensorStruct {
  bool set = false;
  int n = 0, c = 0, h = 0, w = 0;
};
struct cudnnFilterStruct {
  bool set = false;
  int k = 0, c = 0, h = 0, w = 0;
};
struct cudnnConvolutionStruct {
  bool set = false;
  int padH = 0, padW = 0, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace {

size_t gVersion = 91900;
cudnnStatus_t gFailNext = CUDNN_STATUS_SUCCESS;
int gLastAlgorithm = -1;
int gLastMath = -1;
size_t gLastWorkspaceBytes = 0;
int gCalls = 0;

// The stand-in's algorithms: {algorithm, deterministic, workspace, math}.
struct Algo {
  int algo;
  cudnnDeterminism_t det;
  size_t memory;
  cudnnMathType_t math;
};
// Forward: what oflow must not take by default first, all deterministic
// and without workspace: an f16-converting one, a tensor-core (TF32) one and
// one ranked for the default math (TF32 allowed on Ampere); then implicit
// precomputed GEMM (FMA, 1 KiB) and implicit GEMM (FMA, no workspace).
const Algo kForward[] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_DETERMINISTIC, 0, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION},
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, CUDNN_DETERMINISTIC, 0, CUDNN_TENSOR_OP_MATH},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_DETERMINISTIC, 0, CUDNN_DEFAULT_MATH},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_DETERMINISTIC, 1024, CUDNN_FMA_MATH},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_DETERMINISTIC, 0, CUDNN_FMA_MATH}};
// Backward data: the atomic algorithm 0 first, then algorithm 1 (2 KiB).
const Algo kBackwardData[] = {
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_NON_DETERMINISTIC, 0, CUDNN_FMA_MATH},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_DETERMINISTIC, 2048, CUDNN_FMA_MATH}};
// Backward filter: algorithms 0 and 3 (atomics) first, then 1 (4 KiB).
const Algo kBackwardFilter[] = {
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_NON_DETERMINISTIC, 0, CUDNN_FMA_MATH},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, CUDNN_NON_DETERMINISTIC, 0, CUDNN_FMA_MATH},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_DETERMINISTIC, 4096, CUDNN_FMA_MATH}};

template <typename Perf, size_t N>
cudnnStatus_t heuristic(const Algo (&list)[N], int requested, int *returned, Perf *perf) {
  if (!returned || !perf || requested < 1)
    return CUDNN_STATUS_BAD_PARAM;
  int count = 0;
  for (const Algo &a : list) {
    if (count == requested)
      break;
    Perf p;
    std::memset(&p, 0, sizeof p);
    p.algo = decltype(p.algo)(a.algo);
    p.status = CUDNN_STATUS_SUCCESS;
    p.time = float(count + 1);
    p.memory = a.memory;
    p.determinism = a.det;
    p.mathType = a.math;
    perf[count++] = p;
  }
  *returned = count;
  return CUDNN_STATUS_SUCCESS;
}

template <size_t N> const Algo *find(const Algo (&list)[N], int algo) {
  for (const Algo &a : list)
    if (a.algo == algo)
      return &a;
  return nullptr;
}

/// The output extent cuDNN computes.
int outExtent(int in, int pad, int k, int dilation, int stride) {
  return (in + 2 * pad - (dilation * (k - 1) + 1)) / stride + 1;
}

/// Whether x, w, y and the convolution agree as cuDNN requires.
bool consistent(const cudnnTensorStruct *x, const cudnnFilterStruct *w,
                const cudnnConvolutionStruct *conv, const cudnnTensorStruct *y) {
  if (!x || !w || !conv || !y || !x->set || !w->set || !conv->set || !y->set)
    return false;
  if (conv->groups < 1 || x->c != w->c * conv->groups || w->k % conv->groups || y->c != w->k ||
      y->n != x->n)
    return false;
  return y->h == outExtent(x->h, conv->padH, w->h, conv->dilationH, conv->strideH) &&
         y->w == outExtent(x->w, conv->padW, w->w, conv->dilationW, conv->strideW);
}

/// Calls visit(xIndex, wIndex, yIndex) for every product of the
/// convolution that reads a real input element.
template <typename F>
void forEachProduct(const cudnnTensorStruct *x, const cudnnFilterStruct *w,
                    const cudnnConvolutionStruct *cv, const cudnnTensorStruct *y, F visit) {
  const int kg = w->k / cv->groups;
  for (int n = 0; n < x->n; ++n)
    for (int k = 0; k < w->k; ++k)
      for (int oy = 0; oy < y->h; ++oy)
        for (int ox = 0; ox < y->w; ++ox)
          for (int ci = 0; ci < w->c; ++ci)
            for (int r = 0; r < w->h; ++r)
              for (int s = 0; s < w->w; ++s) {
                int iy = oy * cv->strideH - cv->padH + r * cv->dilationH;
                int ix = ox * cv->strideW - cv->padW + s * cv->dilationW;
                if (iy < 0 || iy >= x->h || ix < 0 || ix >= x->w)
                  continue;
                int c = (k / kg) * w->c + ci;
                // Convolution mode flips the kernel.
                int fr = cv->mode == CUDNN_CONVOLUTION ? w->h - 1 - r : r;
                int fs = cv->mode == CUDNN_CONVOLUTION ? w->w - 1 - s : s;
                size_t xi = ((size_t(n) * x->c + c) * x->h + iy) * x->w + ix;
                size_t wi = ((size_t(k) * w->c + ci) * w->h + fr) * w->w + fs;
                size_t yi = ((size_t(n) * y->c + k) * y->h + oy) * y->w + ox;
                visit(xi, wi, yi);
              }
}

/// out = alpha * result + beta * out, element by element.
void blend(const void *alpha, const void *beta, const std::vector<double> &result, void *out) {
  float a = *static_cast<const float *>(alpha), b = *static_cast<const float *>(beta);
  float *o = static_cast<float *>(out);
  for (size_t i = 0; i < result.size(); ++i)
    o[i] = float(a * result[i] + (b == 0.0f ? 0.0 : double(b) * o[i]));
}

/// The checks every execution shares; records the call.
cudnnStatus_t execution(cudnnHandle_t handle, const cudnnConvolutionStruct *conv,
                        const Algo *algo, void *workspace, size_t workspaceBytes) {
  if (!handle || !algo)
    return CUDNN_STATUS_BAD_PARAM;
  if (algo->memory > workspaceBytes || (algo->memory && !workspace))
    return CUDNN_STATUS_BAD_PARAM;
  ++gCalls;
  gLastAlgorithm = algo->algo;
  gLastMath = conv->math;
  gLastWorkspaceBytes = workspaceBytes;
  if (gFailNext != CUDNN_STATUS_SUCCESS) {
    cudnnStatus_t s = gFailNext;
    gFailNext = CUDNN_STATUS_SUCCESS;
    return s;
  }
  return CUDNN_STATUS_SUCCESS;
}

size_t elements(const cudnnTensorStruct *t) { return size_t(t->n) * t->c * t->h * t->w; }
size_t elements(const cudnnFilterStruct *f) { return size_t(f->k) * f->c * f->h * f->w; }

} // namespace

extern "C" {

// Test controls.
void oflowStandInSetVersion(size_t v) { gVersion = v; }
void oflowStandInFailNext(int status) { gFailNext = cudnnStatus_t(status); }
int oflowStandInLastAlgorithm() { return gLastAlgorithm; }
int oflowStandInLastMath() { return gLastMath; }
size_t oflowStandInLastWorkspaceBytes() { return gLastWorkspaceBytes; }
int oflowStandInCalls() { return gCalls; }

size_t cudnnGetVersion(void) { return gVersion; }

const char *cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
  case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
  case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
  case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
  case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
  default: return "CUDNN_STATUS_(other)";
  }
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  if (!handle)
    return CUDNN_STATUS_BAD_PARAM;
  *handle = new cudnnContext;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete handle;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (!handle)
    return CUDNN_STATUS_BAD_PARAM;
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) {
  *d = new cudnnTensorStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w) {
  // The legacy descriptors' limit: fewer than 2^31 elements.
  if (!d || format != CUDNN_TENSOR_NCHW || type != CUDNN_DATA_FLOAT || n < 1 || c < 1 ||
      h < 1 || w < 1 || int64_t(n) * c * h * w > INT32_MAX)
    return CUDNN_STATUS_BAD_PARAM;
  *d = {true, n, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) {
  *d = new cudnnFilterStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h,
                                         int w) {
  if (!d || format != CUDNN_TENSOR_NCHW || type != CUDNN_DATA_FLOAT || k < 1 || c < 1 ||
      h < 1 || w < 1)
    return CUDNN_STATUS_BAD_PARAM;
  *d = {true, k, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  *d = new cudnnConvolutionStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int padH,
                                              int padW, int u, int v, int dilationH,
                                              int dilationW, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  if (!d || padH < 0 || padW < 0 || u < 1 || v < 1 || dilationH < 1 || dilationW < 1 ||
      computeType != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_BAD_PARAM;
  d->set = true;
  d->padH = padH;
  d->padW = padW;
  d->strideH = u;
  d->strideW = v;
  d->dilationH = dilationH;
  d->dilationW = dilationW;
  d->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (!d || groups < 1)
    return CUDNN_STATUS_BAD_PARAM;
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t math) {
  if (!d)
    return CUDNN_STATUS_BAD_PARAM;
  d->math = math;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t conv,
                                                    const cudnnTensorDescriptor_t x,
                                                    const cudnnFilterDescriptor_t w, int *n,
                                                    int *c, int *h, int *wo) {
  if (!conv || !x || !w || !conv->set || !x->set || !w->set ||
      x->c != w->c * conv->groups)
    return CUDNN_STATUS_BAD_PARAM;
  *n = x->n;
  *c = w->k;
  *h = outExtent(x->h, conv->padH, w->h, conv->dilationH, conv->strideH);
  *wo = outExtent(x->w, conv->padW, w->w, conv->dilationW, conv->strideW);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
    int *returned, cudnnConvolutionFwdAlgoPerf_t *perf) {
  if (!handle || !consistent(x, w, conv, y))
    return CUDNN_STATUS_BAD_PARAM;
  return heuristic(kForward, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx,
    const int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf) {
  if (!handle || !consistent(dx, w, conv, dy))
    return CUDNN_STATUS_BAD_PARAM;
  return heuristic(kBackwardData, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw,
    const int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf) {
  if (!handle || !consistent(x, dw, conv, dy))
    return CUDNN_STATUS_BAD_PARAM;
  return heuristic(kBackwardFilter, requested, returned, perf);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                      const cudnnTensorDescriptor_t xd, const void *x,
                                      const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t conv,
                                      cudnnConvolutionFwdAlgo_t algo, void *workspace,
                                      size_t workspaceBytes, const void *beta,
                                      const cudnnTensorDescriptor_t yd, void *y) {
  if (!consistent(xd, wd, conv, yd) || !x || !w || !y)
    return CUDNN_STATUS_BAD_PARAM;
  if (cudnnStatus_t s = execution(handle, conv, find(kForward, algo), workspace, workspaceBytes))
    return s;
  std::vector<double> out(elements(yd));
  const float *xv = static_cast<const float *>(x), *wv = static_cast<const float *>(w);
  forEachProduct(xd, wd, conv, yd,
                 [&](size_t xi, size_t wi, size_t yi) { out[yi] += double(xv[xi]) * wv[wi]; });
  blend(alpha, beta, out, y);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                           const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t conv,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *workspace,
                                           size_t workspaceBytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx) {
  if (!consistent(dxd, wd, conv, dyd) || !w || !dy || !dx)
    return CUDNN_STATUS_BAD_PARAM;
  if (cudnnStatus_t s =
          execution(handle, conv, find(kBackwardData, algo), workspace, workspaceBytes))
    return s;
  std::vector<double> out(elements(dxd));
  const float *dyv = static_cast<const float *>(dy), *wv = static_cast<const float *>(w);
  forEachProduct(dxd, wd, conv, dyd, [&](size_t xi, size_t wi, size_t yi) {
    out[xi] += double(dyv[yi]) * wv[wi];
  });
  blend(alpha, beta, out, dx);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xd, const void *x,
                                             const cudnnTensorDescriptor_t dyd, const void *dy,
                                             const cudnnConvolutionDescriptor_t conv,
                                             cudnnConvolutionBwdFilterAlgo_t algo,
                                             void *workspace, size_t workspaceBytes,
                                             const void *beta, const cudnnFilterDescriptor_t dwd,
                                             void *dw) {
  if (!consistent(xd, dwd, conv, dyd) || !x || !dy || !dw)
    return CUDNN_STATUS_BAD_PARAM;
  if (cudnnStatus_t s =
          execution(handle, conv, find(kBackwardFilter, algo), workspace, workspaceBytes))
    return s;
  std::vector<double> out(elements(dwd));
  const float *dyv = static_cast<const float *>(dy), *xv = static_cast<const float *>(x);
  forEachProduct(xd, dwd, conv, dyd, [&](size_t xi, size_t wi, size_t yi) {
    out[wi] += double(dyv[yi]) * xv[xi];
  });
  blend(alpha, beta, out, dw);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha,
                             const cudnnTensorDescriptor_t ad, const void *a, const void *beta,
                             const cudnnTensorDescriptor_t cd, void *c) {
  // Broadcast of a per-channel [1, C, 1, 1] tensor, the only form oflow uses.
  if (!handle || !ad || !cd || !ad->set || !cd->set || !a || !c || ad->n != 1 ||
      ad->c != cd->c || ad->h != 1 || ad->w != 1)
    return CUDNN_STATUS_BAD_PARAM;
  std::vector<double> out(elements(cd));
  const float *av = static_cast<const float *>(a);
  const size_t plane = size_t(cd->h) * cd->w;
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = av[i / plane % cd->c];
  float b = *static_cast<const float *>(beta);
  float *cv = static_cast<float *>(c);
  float al = *static_cast<const float *>(alpha);
  for (size_t i = 0; i < out.size(); ++i)
    cv[i] = float(al * out[i] + double(b) * cv[i]);
  return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
