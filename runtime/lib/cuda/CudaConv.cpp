//===- CudaConv.cpp - abi.h's convolutions on the GPU ---------------------===//
//
// Host side of oflow_rt_conv2d_{fwd,fwd_bias,bwd_data,bwd_filter} for
// liboflow_runtime_cuda.a: cuDNN (Cudnn.h: loaded at the first call,
// deterministic algorithms within the call's workspace) on the compute
// stream, or, where cuDNN is missing (one warning) or has no algorithm for a
// geometry (one note per geometry), the fallback: ConvFallback.cu's im2col /
// col2im kernels and cuBLASLt GEMMs per image, batched over the groups, the
// columns in the call's workspace (or the runtime's scratch when they do
// not fit). Every call is recorded in the CUDA-graph trace with its
// arguments, like a GEMM, and timed by OFLOW_CUDA_PROFILE under one label
// ("conv fwd 8x3x32x32 -> 16 k3x3 cudnn").
//
//===----------------------------------------------------------------------===//
#include "../GraphReplay.h"
#include "ConvFallbackParams.h"
#include "CudaConv.h"
#include "CudaContext.h"
#include "Cudnn.h"
#include "Profile.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/abi.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

extern "C" const unsigned char oflow_conv_fatbin[];
extern "C" const size_t oflow_conv_fatbin_size;

namespace oflow_rt::cuda {
namespace {

/// cuDNN for the process: null when it could not be loaded or started.
struct CudnnState {
  std::unique_ptr<CudnnApi> api;
  cudnnHandle_t handle = nullptr;
  std::unique_ptr<CudnnConvolutions> convolutions;
  std::set<std::pair<int, ConvGeometry>> noted; // fallbacks already noted
};

CudnnState *cudnnState(Context &ctx) {
  static CudnnState *state = [&]() -> CudnnState * {
    std::string why;
    std::unique_ptr<CudnnApi> api = CudnnApi::loadDefault(why);
    cudnnHandle_t handle = nullptr;
    if (api) {
      cudnnStatus_t s = api->cudnnCreate(&handle);
      if (s == CUDNN_STATUS_SUCCESS)
        s = api->cudnnSetStream(handle, ctx.stream);
      if (s != CUDNN_STATUS_SUCCESS) {
        why = std::string("cudnnCreate failed (") + api->cudnnGetErrorString(s) + ")";
        if (handle)
          api->cudnnDestroy(handle);
        api.reset();
      }
    }
    if (!api) {
      if (isRoot())
        std::fprintf(stderr,
                     "warning: cuDNN is not available (%s); convolutions run as oflow's "
                     "im2col kernels and cuBLASLt GEMMs\n",
                     why.c_str());
      return nullptr;
    }
    auto *s = new CudnnState;
    s->api = std::move(api);
    s->handle = handle;
    s->convolutions =
        std::make_unique<CudnnConvolutions>(*s->api, handle, ctx.allowTf32);
    return s;
  }();
  return state;
}

const char *nameOf(ConvKind kind, bool bias) {
  switch (kind) {
  case ConvKind::Forward: return bias ? "oflow_rt_conv2d_fwd_bias" : "oflow_rt_conv2d_fwd";
  case ConvKind::BackwardData: return "oflow_rt_conv2d_bwd_data";
  case ConvKind::BackwardFilter: return "oflow_rt_conv2d_bwd_filter";
  }
  return "oflow_rt_conv2d";
}

std::string label(ConvKind kind, bool bias, const ConvGeometry &g, const char *how) {
  const char *k = kind == ConvKind::Forward        ? (bias ? "fwd_bias" : "fwd")
                  : kind == ConvKind::BackwardData ? "bwd_data"
                                                   : "bwd_filter";
  std::string s = std::string("conv ") + k + " " + std::to_string(g[0]) + "x" +
                  std::to_string(g[1]) + "x" + std::to_string(g[2]) + "x" +
                  std::to_string(g[3]) + " -> " + std::to_string(g[4]) + " k" +
                  std::to_string(g[5]) + "x" + std::to_string(g[6]);
  if (g[17] > 1)
    s += " g" + std::to_string(g[17]);
  return s + " " + how;
}

/// Records the call's arguments in the trace GraphReplay compares.
void trace(ConvKind kind, bool bias, const ConvGeometry &g, int64_t workspaceBytes,
           std::initializer_list<const void *> ptrs) {
  LaunchTrace *t = LaunchTrace::active();
  if (!t)
    return;
  std::string bytes(reinterpret_cast<const char *>(g.data()), sizeof(int64_t) * g.size());
  int64_t head[3] = {int64_t(kind), int64_t(bias), workspaceBytes};
  bytes.append(reinterpret_cast<const char *>(head), sizeof head);
  for (const void *p : ptrs)
    bytes.append(reinterpret_cast<const char *>(&p), sizeof p);
  t->add("conv2d", bytes.data(), bytes.size());
}

//===----------------------------------------------------------------------===//
// The fallback
//===----------------------------------------------------------------------===//

void *convModule() {
  static void *module = mgpuModuleLoad(const_cast<unsigned char *>(oflow_conv_fatbin),
                                       oflow_conv_fatbin_size);
  return module;
}

void launch(Context &ctx, const char *fn, const char *kernel, OflowConvParams &p) {
  static std::mutex mutex;
  static auto *kernels = new std::map<std::string, const void *>;
  const void *f;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const void *&slot = (*kernels)[kernel];
    if (!slot)
      slot = mgpuModuleGetFunction(convModule(), kernel);
    f = slot;
  }
  if (p.count <= 0)
    return;
  constexpr int64_t kThreads = 256;
  int64_t blocks = std::min<int64_t>((p.count + kThreads - 1) / kThreads, 65536);
  void *args[] = {&p};
  cudaError_t e = cudaLaunchKernel(f, dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                                   args, 0, ctx.stream);
  if (e != cudaSuccess)
    fatal(std::string(fn) + ": " + errorText(e, "cudaLaunchKernel"));
}

OflowConvParams paramsOf(const ConvGeometry &g) {
  OflowConvParams p;
  std::memset(&p, 0, sizeof p);
  p.c = g[1];
  p.h = g[2];
  p.w = g[3];
  p.kh = g[5];
  p.kw = g[6];
  p.oh = g[7];
  p.ow = g[8];
  p.strideH = g[9];
  p.strideW = g[10];
  p.dilationH = g[11];
  p.dilationW = g[12];
  p.padTop = g[13];
  p.padLeft = g[14];
  return p;
}

/// The columns of one image: the call's workspace where they fit, else the
/// runtime's columns buffer, grown outside CUDA-graph captures only (the
/// buffer it replaces stays allocated until exit: a graph captured from
/// another entry may still write it).
float *columns(Context &ctx, const char *fn, const ConvGeometry &g, void *workspace,
               int64_t workspaceBytes) {
  size_t bytes = size_t(g[1] * g[5] * g[6] * g[7] * g[8]) * sizeof(float);
  if (workspace && workspaceBytes >= 0 && size_t(workspaceBytes) >= bytes)
    return static_cast<float *>(workspace);
  if (bytes > ctx.convColumnsBytes) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(ctx.stream, &status), "cudaStreamIsCapturing");
    if (status != cudaStreamCaptureStatusNone)
      fatal(std::string(fn) + ": the im2col fallback's columns (" + std::to_string(bytes) +
            " bytes) would grow inside a CUDA-graph capture; run with --no-cuda-graph or "
            "compile with a larger --cudnn-workspace-mb");
    void *grown = nullptr;
    try {
      grown = allocate(bytes, "the convolution fallback's columns");
    } catch (const Error &e) {
      fatal(std::string(fn) + ": " + e.what());
    }
    if (ctx.convColumns)
      ctx.retiredGemmScratch.emplace_back(ctx.convColumns, ctx.convColumnsBytes);
    ctx.convColumns = grown;
    ctx.convColumnsBytes = bytes;
  }
  return static_cast<float *>(ctx.convColumns);
}

void fallback(Context &ctx, ConvKind kind, const ConvGeometry &g, const float *a,
              const float *b, const float *bias, float *out, void *workspace,
              int64_t workspaceBytes) {
  const char *fn = nameOf(kind, bias != nullptr);
  const int64_t n = g[0], c = g[1], h = g[2], w = g[3], m = g[4], groups = g[17];
  const int64_t mg = m / groups, kg = c / groups * g[5] * g[6], positions = g[7] * g[8];
  if (n == 0) { // only the filter gradient has something to write: zeros
    check(cudaMemsetAsync(out, 0, size_t(m * kg) * sizeof(float), ctx.stream),
          "cudaMemsetAsync (oflow_rt_conv2d_bwd_filter, no images)");
    return;
  }
  float *col = columns(ctx, fn, g, workspace, workspaceBytes);
  OflowConvParams p = paramsOf(g);
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
    case ConvKind::Forward:
      p.in = a + i * c * h * w; // x
      p.out = col;
      p.count = c * g[5] * g[6] * positions;
      launch(ctx, fn, "oflow_conv_im2col", p);
      // y_i[grp] = w[grp] col[grp]
      oflow_rt_sgemm_batched(groups, 0, 0, mg, positions, kg, 1.0f, b, kg, mg * kg, col,
                             positions, kg * positions, 0.0f, out + i * m * positions,
                             positions, mg * positions);
      break;
    case ConvKind::BackwardData:
      // col[grp] = w[grp]^T dy_i[grp], then dx_i = col2im(col)
      oflow_rt_sgemm_batched(groups, 1, 0, kg, positions, mg, 1.0f, b, kg, mg * kg,
                             a + i * m * positions, positions, mg * positions, 0.0f, col,
                             positions, kg * positions);
      p.in = col;
      p.out = out + i * c * h * w;
      p.count = c * h * w;
      launch(ctx, fn, "oflow_conv_col2im", p);
      break;
    case ConvKind::BackwardFilter:
      p.in = b + i * c * h * w; // x
      p.out = col;
      p.count = c * g[5] * g[6] * positions;
      launch(ctx, fn, "oflow_conv_im2col", p);
      // dw[grp] (+)= dy_i[grp] col[grp]^T, the images summed in order
      oflow_rt_sgemm_batched(groups, 0, 1, mg, kg, positions, 1.0f, a + i * m * positions,
                             positions, mg * positions, col, positions, kg * positions,
                             i == 0 ? 0.0f : 1.0f, out, kg, mg * kg);
      break;
    }
  }
  if (bias) {
    OflowConvParams q = paramsOf(g);
    q.out = out;
    q.bias = bias;
    q.count = n * m * positions;
    q.plane = positions;
    q.m = m;
    launch(ctx, fn, "oflow_conv_bias", q);
  }
}

void convolveOrThrow(ConvKind kind, const ConvGeometry &g, int64_t workspaceBytes,
                     const float *a, const float *b, const float *bias, float *out,
                     void *workspace) {
  const char *fn = nameOf(kind, bias != nullptr);
  Context &ctx = context(fn);
  trace(kind, bias != nullptr, g, workspaceBytes, {a, b, bias, out, workspace});
  // Images may be 0; extents, strides, dilations and groups are positive,
  // pads not negative.
  bool valid = g[0] >= 0 && g[17] >= 1;
  for (size_t i = 1; i <= 12; ++i)
    valid = valid && g[i] >= 1;
  for (size_t i = 13; i <= 16; ++i)
    valid = valid && g[i] >= 0;
  if (!valid)
    fatal("invalid geometry: " + describeConv(fn, g));
  if (g[1] % g[17] || g[4] % g[17])
    fatal("the channels do not divide into the groups: " + describeConv(fn, g));
  if (g[0] == 0 && kind != ConvKind::BackwardFilter)
    return; // no images: nothing to write
  if (CudnnState *cudnn = g[0] > 0 && !forcedFallback() ? cudnnState(ctx) : nullptr) {
    std::string why;
    bool ran = false;
    {
      std::string text;
      if (profiling())
        text = label(kind, bias != nullptr, g, "cudnn");
      ProfileScope scope(ctx.stream, text);
      try {
        ran = cudnn->convolutions->run(kind, g, a, b, bias, out, workspace,
                                       workspaceBytes > 0 ? size_t(workspaceBytes) : 0, why);
      } catch (const Error &e) {
        fatal(e.what());
      }
    }
    if (ran)
      return;
    if (cudnn->noted.insert({int(kind), g}).second && isRoot())
      std::fprintf(stderr, "note: %s runs as im2col + GEMMs: %s\n",
                   describeConv(fn, g).c_str(), why.c_str());
  }
  std::string text;
  if (profiling())
    text = label(kind, bias != nullptr, g, "im2col");
  ProfileScope scope(ctx.stream, text);
  fallback(ctx, kind, g, a, b, bias, out, workspace, workspaceBytes);
}

/// No exception crosses the C boundary: any ends the run with its message.
void convolve(ConvKind kind, const ConvGeometry &g, int64_t workspaceBytes, const float *a,
              const float *b, const float *bias, float *out, void *workspace) {
  try {
    convolveOrThrow(kind, g, workspaceBytes, a, b, bias, out, workspace);
  } catch (const std::exception &e) {
    fatal(std::string(nameOf(kind, bias != nullptr)) + ": " + e.what());
  } catch (...) {
    fatal(std::string(nameOf(kind, bias != nullptr)) + ": unknown error");
  }
}

} // namespace

bool &forcedFallback() {
  static bool forced = false;
  return forced;
}

} // namespace oflow_rt::cuda

using namespace oflow_rt::cuda;

#define OFLOW_RT_CONV_GEOMETRY_VALUES                                          \
  ConvGeometry {                                                               \
    n, c, h, w, m, kh, kw, oh, ow, stride_h, stride_w, dilation_h, dilation_w, \
        pad_top, pad_left, pad_bottom, pad_right, groups                       \
  }

extern "C" void oflow_rt_conv2d_fwd(OFLOW_RT_CONV_GEOMETRY, const float *x,
                                    const float *weight, float *y, void *workspace) {
  convolve(ConvKind::Forward, OFLOW_RT_CONV_GEOMETRY_VALUES, workspace_bytes, x, weight,
           nullptr, y, workspace);
}

extern "C" void oflow_rt_conv2d_fwd_bias(OFLOW_RT_CONV_GEOMETRY, const float *x,
                                         const float *weight, const float *bias, float *y,
                                         void *workspace) {
  convolve(ConvKind::Forward, OFLOW_RT_CONV_GEOMETRY_VALUES, workspace_bytes, x, weight,
           bias, y, workspace);
}

extern "C" void oflow_rt_conv2d_bwd_data(OFLOW_RT_CONV_GEOMETRY, const float *dy,
                                         const float *weight, float *dx, void *workspace) {
  convolve(ConvKind::BackwardData, OFLOW_RT_CONV_GEOMETRY_VALUES, workspace_bytes, dy,
           weight, nullptr, dx, workspace);
}

extern "C" void oflow_rt_conv2d_bwd_filter(OFLOW_RT_CONV_GEOMETRY, const float *dy,
                                           const float *x, float *dweight,
                                           void *workspace) {
  convolve(ConvKind::BackwardFilter, OFLOW_RT_CONV_GEOMETRY_VALUES, workspace_bytes, dy, x,
           nullptr, dweight, workspace);
}
