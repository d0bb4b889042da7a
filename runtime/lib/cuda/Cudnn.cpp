//===- Cudnn.cpp - abi.h's convolutions through cuDNN ---------------------===//
//
// See Cudnn.h.
//
//===----------------------------------------------------------------------===//
#include "Cudnn.h"

#include "oflow_rt/Error.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace oflow_rt::cuda {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

std::unique_ptr<CudnnApi> CudnnApi::load(const std::string &path, std::string &why) {
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    why = e ? e : path + ": cannot be loaded";
    return nullptr;
  }
  auto api = std::make_unique<CudnnApi>();
  api->handle = lib;
#define OFLOW_CUDNN_RESOLVE(name)                                              \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(lib, #name));        \
  if (!api->name) {                                                            \
    why = path + " has no " #name;                                             \
    dlclose(lib);                                                              \
    return nullptr;                                                            \
  }
  OFLOW_CUDNN_FUNCTIONS(OFLOW_CUDNN_RESOLVE)
#undef OFLOW_CUDNN_RESOLVE
  // The *_v7 algorithm queries and group counts exist from cuDNN 8 on; the
  // legacy convolution API oflow calls is still in cuDNN 9.
  if (api->cudnnGetVersion() < 8000) {
    why = path + " is cuDNN " + api->versionText() + ", older than 8.0";
    dlclose(lib);
    return nullptr;
  }
  return api;
}

std::unique_ptr<CudnnApi> CudnnApi::loadDefault(std::string &why) {
  if (const char *off = std::getenv("OFLOW_CUDNN"); off && std::string(off) == "0") {
    why = "OFLOW_CUDNN=0";
    return nullptr;
  }
  if (const char *path = std::getenv("OFLOW_CUDNN_LIBRARY"); path && *path)
    return load(path, why);
  std::string first;
  for (const char *name : {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}) {
    if (auto api = load(name, why))
      return api;
    if (first.empty())
      first = why;
  }
  why = first;
  return nullptr;
}

std::string CudnnApi::versionText() const {
  // 9.19.0 is 91900 from cuDNN 9 on, 8.9.7 is 8907 before.
  size_t v = cudnnGetVersion();
  size_t major = v >= 90000 ? v / 10000 : v / 1000;
  size_t minor = v >= 90000 ? v / 100 % 100 : v / 100 % 10;
  size_t patch = v % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

//===----------------------------------------------------------------------===//
// Descriptors and algorithms
//===----------------------------------------------------------------------===//

struct CudnnConvolutions::Plan {
  const CudnnApi *api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Choice choice;
  std::string why; // set when there is no algorithm
  ~Plan() {
    if (!api)
      return;
    for (cudnnTensorDescriptor_t t : {x, y, bias})
      if (t)
        api->cudnnDestroyTensorDescriptor(t);
    if (w)
      api->cudnnDestroyFilterDescriptor(w);
    if (conv)
      api->cudnnDestroyConvolutionDescriptor(conv);
  }
};

namespace {

const char *functionOf(ConvKind kind) {
  switch (kind) {
  case ConvKind::Forward: return "oflow_rt_conv2d_fwd";
  case ConvKind::BackwardData: return "oflow_rt_conv2d_bwd_data";
  case ConvKind::BackwardFilter: return "oflow_rt_conv2d_bwd_filter";
  }
  return "oflow_rt_conv2d";
}

/// Throws oflow_rt::Error for a failed cuDNN call.
void check(const CudnnApi &api, cudnnStatus_t status, const char *call, ConvKind kind,
           const ConvGeometry &g) {
  if (status == CUDNN_STATUS_SUCCESS)
    return;
  throw Error(std::string(call) + " failed (" + api.cudnnGetErrorString(status) +
              ") for " + describeConv(functionOf(kind), g));
}

/// The first result of a *_v7 query that is usable: supported,
/// deterministic, of an allowed math type, within the workspace. Math: FMA
/// only unless TF32 is allowed (tensor-core math on f32 data is TF32; a
/// result ranked for another math type than the descriptor's would run as
/// something else), and never ALLOW_CONVERSION (f32 data through f16).
template <typename Perf>
const Perf *pick(const std::vector<Perf> &results, bool allowTf32, size_t workspaceBytes,
                 std::string &why) {
  size_t smallest = SIZE_MAX;
  bool nonDeterministic = false, otherMath = false;
  for (const Perf &p : results) {
    if (p.status != CUDNN_STATUS_SUCCESS)
      continue;
    if (p.determinism != CUDNN_DETERMINISTIC) {
      nonDeterministic = true;
      continue;
    }
    bool mathOk = allowTf32 ? p.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                            : p.mathType == CUDNN_FMA_MATH;
    if (!mathOk) {
      otherMath = true;
      continue;
    }
    if (p.memory > workspaceBytes) {
      smallest = std::min(smallest, p.memory);
      continue;
    }
    return &p;
  }
  if (smallest != SIZE_MAX)
    why = "its deterministic algorithms need " + std::to_string(smallest) +
          " bytes of workspace, the call has " + std::to_string(workspaceBytes) +
          " (--cudnn-workspace-mb)";
  else if (otherMath)
    why = std::string("cuDNN offers no deterministic algorithm with ") +
          (allowTf32 ? "TF32 or FMA" : "FMA (TF32 off)") + " math for it";
  else if (nonDeterministic)
    why = "cuDNN offers only non-deterministic algorithms for it";
  else
    why = "cuDNN offers no algorithm for it";
  return nullptr;
}

/// cuDNN's legacy descriptors take int extents and tensors of fewer than
/// 2^31 elements.
bool fitsInt(const ConvGeometry &g) {
  for (int64_t v : g)
    if (v < 0 || v > INT_MAX)
      return false;
  const int64_t n = g[0], c = g[1], h = g[2], w = g[3], m = g[4];
  const int64_t cg = g[17] > 0 ? c / g[17] : c;
  for (int64_t elements : {n * c * h * w, n * m * g[7] * g[8], m * cg * g[5] * g[6]})
    if (elements > INT_MAX)
      return false;
  return true;
}

} // namespace

CudnnConvolutions::CudnnConvolutions(const CudnnApi &api, cudnnHandle_t handle,
                                     bool allowTf32)
    : api(api), handle(handle), allowTf32(allowTf32) {}

CudnnConvolutions::~CudnnConvolutions() = default;

const CudnnConvolutions::Plan *CudnnConvolutions::planFor(ConvKind kind,
                                                          const ConvGeometry &g,
                                                          size_t workspaceBytes,
                                                          std::string &why) {
  auto key = std::make_tuple(kind, g, workspaceBytes);
  if (auto it = plans.find(key); it != plans.end()) {
    why = it->second->why;
    return why.empty() ? it->second.get() : nullptr;
  }
  auto plan = std::make_unique<Plan>();
  Plan &p = *plan;
  p.api = &api;
  const int n = int(g[0]), c = int(g[1]), h = int(g[2]), w = int(g[3]), m = int(g[4]),
            kh = int(g[5]), kw = int(g[6]), oh = int(g[7]), ow = int(g[8]),
            groups = int(g[17]);
  auto decline = [&](std::string text) {
    p.why = std::move(text);
    why = p.why;
    plans.emplace(key, std::move(plan));
    return nullptr;
  };
  if (!fitsInt(g))
    return decline("an extent or a tensor's elements are past cuDNN's int");
  if (g[13] != g[15] || g[14] != g[16])
    return decline("its pads are asymmetric (cuDNN takes one pad per dimension)");
  if (groups < 1 || c % groups || m % groups)
    return decline("its channels do not divide into its groups");
  const char *fn = functionOf(kind);
  auto ok = [&](cudnnStatus_t s, const char *call) { check(api, s, call, kind, g); };
  ok(api.cudnnCreateTensorDescriptor(&p.x), "cudnnCreateTensorDescriptor");
  ok(api.cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w),
     "cudnnSetTensor4dDescriptor (input)");
  ok(api.cudnnCreateTensorDescriptor(&p.y), "cudnnCreateTensorDescriptor");
  ok(api.cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, m, oh, ow),
     "cudnnSetTensor4dDescriptor (output)");
  ok(api.cudnnCreateTensorDescriptor(&p.bias), "cudnnCreateTensorDescriptor");
  ok(api.cudnnSetTensor4dDescriptor(p.bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, m, 1, 1),
     "cudnnSetTensor4dDescriptor (bias)");
  ok(api.cudnnCreateFilterDescriptor(&p.w), "cudnnCreateFilterDescriptor");
  ok(api.cudnnSetFilter4dDescriptor(p.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, m, c / groups,
                                    kh, kw),
     "cudnnSetFilter4dDescriptor");
  ok(api.cudnnCreateConvolutionDescriptor(&p.conv), "cudnnCreateConvolutionDescriptor");
  // ONNX's Conv is a cross-correlation (the kernel is not flipped).
  ok(api.cudnnSetConvolution2dDescriptor(p.conv, int(g[13]), int(g[14]), int(g[9]),
                                         int(g[10]), int(g[11]), int(g[12]),
                                         CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
     "cudnnSetConvolution2dDescriptor");
  ok(api.cudnnSetConvolutionGroupCount(p.conv, groups), "cudnnSetConvolutionGroupCount");
  cudnnMathType_t math = allowTf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  ok(api.cudnnSetConvolutionMathType(p.conv, math), "cudnnSetConvolutionMathType");
  // The compiler's output extent must be cuDNN's (floor division, as ONNX).
  int dims[4] = {0, 0, 0, 0};
  ok(api.cudnnGetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &dims[0], &dims[1], &dims[2],
                                               &dims[3]),
     "cudnnGetConvolution2dForwardOutputDim");
  if (dims[0] != n || dims[1] != m || dims[2] != oh || dims[3] != ow)
    throw Error(std::string(fn) + ": cuDNN's output would be " + std::to_string(dims[0]) +
                "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + "x" +
                std::to_string(dims[3]) + ", the program's is " + std::to_string(n) + "x" +
                std::to_string(m) + "x" + std::to_string(oh) + "x" + std::to_string(ow) +
                " for " + describeConv(fn, g));
  int returned = 0;
  std::string reason;
  auto choose = [&](const auto &results) {
    if (const auto *perf = pick(results, allowTf32, workspaceBytes, reason)) {
      p.choice.algorithm = int(perf->algo);
      p.choice.workspaceBytes = perf->memory;
      // With TF32 allowed, run the math type the heuristic ranked.
      p.choice.math = allowTf32 ? perf->mathType : math;
      return true;
    }
    return false;
  };
  bool found = false;
  switch (kind) {
  case ConvKind::Forward: {
    std::vector<cudnnConvolutionFwdAlgoPerf_t> r(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    ok(api.cudnnGetConvolutionForwardAlgorithm_v7(handle, p.x, p.w, p.conv, p.y, int(r.size()),
                                                  &returned, r.data()),
       "cudnnGetConvolutionForwardAlgorithm_v7");
    r.resize(std::max(0, std::min(returned, int(r.size()))));
    found = choose(r);
    break;
  }
  case ConvKind::BackwardData: {
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> r(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    ok(api.cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, p.w, p.y, p.conv, p.x,
                                                       int(r.size()), &returned, r.data()),
       "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    r.resize(std::max(0, std::min(returned, int(r.size()))));
    found = choose(r);
    break;
  }
  case ConvKind::BackwardFilter: {
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> r(
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    ok(api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, p.x, p.y, p.conv, p.w,
                                                         int(r.size()), &returned, r.data()),
       "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    r.resize(std::max(0, std::min(returned, int(r.size()))));
    found = choose(r);
    break;
  }
  }
  if (!found)
    return decline(reason);
  if (p.choice.math != math)
    ok(api.cudnnSetConvolutionMathType(p.conv, p.choice.math), "cudnnSetConvolutionMathType");
  const Plan *result = plan.get();
  plans.emplace(key, std::move(plan));
  why.clear();
  return result;
}

bool CudnnConvolutions::run(ConvKind kind, const ConvGeometry &g, const void *a,
                            const void *b, const void *bias, void *out, void *workspace,
                            size_t workspaceBytes, std::string &why) {
  const Plan *p = planFor(kind, g, workspace ? workspaceBytes : 0, why);
  if (!p)
    return false;
  const float one = 1.0f, zero = 0.0f;
  void *ws = p->choice.workspaceBytes ? workspace : nullptr;
  size_t wsBytes = p->choice.workspaceBytes ? workspaceBytes : 0;
  switch (kind) {
  case ConvKind::Forward:
    check(api,
          api.cudnnConvolutionForward(handle, &one, p->x, a, p->w, b, p->conv,
                                      cudnnConvolutionFwdAlgo_t(p->choice.algorithm), ws,
                                      wsBytes, &zero, p->y, out),
          "cudnnConvolutionForward", kind, g);
    if (bias)
      check(api, api.cudnnAddTensor(handle, &one, p->bias, bias, &one, p->y, out),
            "cudnnAddTensor", kind, g);
    break;
  case ConvKind::BackwardData:
    check(api,
          api.cudnnConvolutionBackwardData(handle, &one, p->w, b, p->y, a, p->conv,
                                           cudnnConvolutionBwdDataAlgo_t(p->choice.algorithm),
                                           ws, wsBytes, &zero, p->x, out),
          "cudnnConvolutionBackwardData", kind, g);
    break;
  case ConvKind::BackwardFilter:
    check(api,
          api.cudnnConvolutionBackwardFilter(
              handle, &one, p->x, b, p->y, a, p->conv,
              cudnnConvolutionBwdFilterAlgo_t(p->choice.algorithm), ws, wsBytes, &zero, p->w,
              out),
          "cudnnConvolutionBackwardFilter", kind, g);
    break;
  }
  return true;
}

CudnnConvolutions::Choice CudnnConvolutions::choiceFor(ConvKind kind,
                                                       const ConvGeometry &g) const {
  for (const auto &[key, plan] : plans)
    if (std::get<0>(key) == kind && std::get<1>(key) == g && plan->why.empty())
      return plan->choice;
  return {};
}

} // namespace oflow_rt::cuda
