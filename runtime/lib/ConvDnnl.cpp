//===- ConvDnnl.cpp - 2-D convolutions for generated code, over oneDNN ----===//
//
// oflow_rt_conv2d_*: oneDNN 2.6's convolution primitives through its C API
// (the runtime is built without exceptions, which dnnl.hpp throws). Each
// distinct (kind, geometry) gets its primitive on its first call; the
// program calls the same few geometries every step, so creation (oneDNN's
// JIT) happens in the first step only. Buffers are plain NCHW / OIHW
// (GOIHW with groups) in the arena; where oneDNN's fast kernels want
// blocked layouts and the weights are no larger than the activations, each
// call reorders its operands into blocked copies and its result back (the
// reorders are created with the primitive).
//
// Scratchpads are user-managed: one buffer, grown to the largest any
// primitive asks for, shared by all (the step is sequential). So are the
// blocked copies: one buffer per argument position, shared by every
// primitive, since a copy lives only during its call. (Each primitive kept
// its own: ResNet-18 at 224x224, batch 32, held 1.1 GiB of them beside an
// 0.8 GiB memory plan.)
//
//===----------------------------------------------------------------------===//
#include "MpiWorld.h"
#include "ConvGeometry.h"
#include "oflow_rt/abi.h"

#include <dnnl.h>
#include <dnnl_debug.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

enum class Kind { Forward, ForwardBias, BackwardData, BackwardFilter };

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::Forward:
    return "oflow_rt_conv2d_fwd";
  case Kind::ForwardBias:
    return "oflow_rt_conv2d_fwd_bias";
  case Kind::BackwardData:
    return "oflow_rt_conv2d_bwd_data";
  case Kind::BackwardFilter:
    return "oflow_rt_conv2d_bwd_filter";
  }
  return "oflow_rt_conv2d";
}

using Geometry = oflow_rt::ConvGeometry;

std::string describe(Kind kind, const Geometry &g) {
  return oflow_rt::describeConv(kindName(kind), g);
}

void check(dnnl_status_t status, const char *what, Kind kind,
           const Geometry &g) {
  if (status == dnnl_success)
    return;
  oflow_rt::detail::fatal("oneDNN " + std::string(what) + " failed (" +
                          dnnl_status2str(status) + ") for " +
                          describe(kind, g));
}

struct Runtime {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::vector<char> scratchpad;
  /// The blocked copies of the argument in each position of a call.
  std::array<std::vector<char>, 4> blocked;
};

Runtime &runtime() {
  static Runtime rt = [] {
    Runtime r;
    if (dnnl_engine_create(&r.engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&r.stream, r.engine, dnnl_stream_default_flags) !=
            dnnl_success)
      oflow_rt::detail::fatal("oneDNN: cannot create the CPU engine and stream");
    return r;
  }();
  return rt;
}

/// One argument of a created primitive: the memory object the call points
/// at the program's buffer and, where oneDNN chose a blocked layout, the
/// reorder between that buffer and the primitive's own copy.
struct Arg {
  int kind = 0;                   // DNNL_ARG_*
  bool output = false;
  dnnl_memory_t user = nullptr;   // plain layout, the program's buffer
  dnnl_memory_t inner = nullptr;  // the primitive's layout (== user if same)
  dnnl_primitive_t reorder = nullptr;
  size_t innerBytes = 0;          // inner's size when it differs
};

/// One created primitive and its arguments in call order.
struct Conv {
  dnnl_primitive_t primitive = nullptr;
  std::vector<std::unique_ptr<Arg>> args;
  dnnl_memory_t scratchpad = nullptr;
  dnnl_memory_desc_t scratchpadDesc{};
  size_t scratchpadBytes = 0;
};

struct Descs {
  dnnl_memory_desc_t src, weights, bias, dst;
};

/// The buffers' descriptors: plain NCHW / OIHW (GOIHW), or with `any`
/// the same shapes in whatever layout oneDNN prefers.
Descs descsOf(const Geometry &g, Kind kind, bool any) {
  const int64_t n = g[0], c = g[1], h = g[2], w = g[3], m = g[4], kh = g[5],
                kw = g[6], oh = g[7], ow = g[8], groups = g[17];
  Descs d{};
  dnnl_dims_t src = {n, c, h, w}, dst = {n, m, oh, ow}, bias = {m};
  check(dnnl_memory_desc_init_by_tag(&d.src, 4, src, dnnl_f32,
                                     any ? dnnl_format_tag_any : dnnl_nchw),
        "memory_desc_init (src)", kind, g);
  check(dnnl_memory_desc_init_by_tag(&d.dst, 4, dst, dnnl_f32,
                                     any ? dnnl_format_tag_any : dnnl_nchw),
        "memory_desc_init (dst)", kind, g);
  check(dnnl_memory_desc_init_by_tag(&d.bias, 1, bias, dnnl_f32, dnnl_a),
        "memory_desc_init (bias)", kind, g);
  if (groups == 1) {
    dnnl_dims_t wd = {m, c, kh, kw};
    check(dnnl_memory_desc_init_by_tag(&d.weights, 4, wd, dnnl_f32,
                                       any ? dnnl_format_tag_any : dnnl_oihw),
          "memory_desc_init (weights)", kind, g);
  } else {
    dnnl_dims_t wd = {groups, m / groups, c / groups, kh, kw};
    check(dnnl_memory_desc_init_by_tag(&d.weights, 5, wd, dnnl_f32,
                                       any ? dnnl_format_tag_any : dnnl_goihw),
          "memory_desc_init (weights)", kind, g);
  }
  return d;
}

dnnl_convolution_desc_t convDesc(const Geometry &g, Kind kind, const Descs &d,
                                 bool forwardHint) {
  // oneDNN's dilation counts the gaps: 0 is a dense kernel.
  dnnl_dims_t strides = {g[9], g[10]}, dilates = {g[11] - 1, g[12] - 1},
              padL = {g[13], g[14]}, padR = {g[15], g[16]};
  dnnl_convolution_desc_t cd;
  if (kind == Kind::Forward || kind == Kind::ForwardBias || forwardHint) {
    check(dnnl_dilated_convolution_forward_desc_init(
              &cd, dnnl_forward_training, dnnl_convolution_direct, &d.src,
              &d.weights, kind == Kind::ForwardBias ? &d.bias : nullptr, &d.dst,
              strides, dilates, padL, padR),
          "convolution_forward_desc_init", kind, g);
  } else if (kind == Kind::BackwardData) {
    check(dnnl_dilated_convolution_backward_data_desc_init(
              &cd, dnnl_convolution_direct, &d.src, &d.weights, &d.dst,
              strides, dilates, padL, padR),
          "convolution_backward_data_desc_init", kind, g);
  } else {
    check(dnnl_dilated_convolution_backward_weights_desc_init(
              &cd, dnnl_convolution_direct, &d.src, &d.weights, nullptr,
              &d.dst, strides, dilates, padL, padR),
          "convolution_backward_weights_desc_init", kind, g);
  }
  return cd;
}

/// The layout oneDNN's primitive wants for argument `arg` (a query of pd).
const dnnl_memory_desc_t *chosenDesc(const_dnnl_primitive_desc_t pd, int arg) {
  return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
}

Conv create(Kind kind, const Geometry &g) {
  Runtime &rt = runtime();
  Descs plain = descsOf(g, kind, /*any=*/false);
  // oneDNN's direct kernels want blocked layouts (nChw16c, OIhw16i16o),
  // so the primitive chooses its operands' layouts and each call reorders
  // into and out of them. Measured on ResNet-18 (32x32, batch 8, one
  // thread): 101 ms per step, against 120 ms with plain layouts everywhere
  // (GEMM-based kernels) and 138 ms with plain layouts only where the
  // weights outweigh the activations (the last stage's 9 MiB over 1x1
  // pixels, where the weights' reorders take 2 ms each).
  Descs any = descsOf(g, kind, /*any=*/true);
  dnnl_primitive_attr_t attr;
  check(dnnl_primitive_attr_create(&attr), "primitive_attr_create", kind, g);
  check(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
        "set_scratchpad_mode", kind, g);

  // The backward primitives take the forward one as a hint.
  dnnl_primitive_desc_t hint = nullptr;
  if (kind == Kind::BackwardData || kind == Kind::BackwardFilter) {
    dnnl_convolution_desc_t fwd = convDesc(g, kind, any, /*forwardHint=*/true);
    check(dnnl_primitive_desc_create(&hint, &fwd, nullptr, rt.engine, nullptr),
          "primitive_desc_create (forward hint)", kind, g);
  }
  dnnl_convolution_desc_t cd = convDesc(g, kind, any, /*forwardHint=*/false);
  dnnl_primitive_desc_t pd;
  check(dnnl_primitive_desc_create(&pd, &cd, attr, rt.engine, hint),
        "primitive_desc_create", kind, g);
  Conv conv;
  check(dnnl_primitive_create(&conv.primitive, pd), "primitive_create", kind, g);

  const dnnl_memory_desc_t *scratch =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  size_t scratchBytes = scratch ? dnnl_memory_desc_get_size(scratch) : 0;
  if (scratchBytes) {
    conv.scratchpadDesc = *scratch;
    conv.scratchpadBytes = scratchBytes;
    check(dnnl_memory_create(&conv.scratchpad, &conv.scratchpadDesc, rt.engine,
                             DNNL_MEMORY_NONE),
          "memory_create (scratchpad)", kind, g);
  }

  // Each argument: the program's plain buffer, and where the primitive
  // wants another layout, its own copy and the reorder into or out of it
  // (created here, once, like the primitive).
  auto add = [&](int argKind, const dnnl_memory_desc_t &userDesc, bool output) {
    auto arg = std::make_unique<Arg>();
    arg->kind = argKind;
    arg->output = output;
    check(dnnl_memory_create(&arg->user, &userDesc, rt.engine, DNNL_MEMORY_NONE),
          "memory_create", kind, g);
    const dnnl_memory_desc_t *inner = chosenDesc(pd, argKind);
    if (!inner || dnnl_memory_desc_equal(inner, &userDesc)) {
      arg->inner = arg->user;
    } else {
      arg->innerBytes = dnnl_memory_desc_get_size(inner);
      check(dnnl_memory_create(&arg->inner, inner, rt.engine, DNNL_MEMORY_NONE),
            "memory_create (blocked copy)", kind, g);
      const dnnl_memory_desc_t *from = output ? inner : &userDesc;
      const dnnl_memory_desc_t *to = output ? &userDesc : inner;
      dnnl_primitive_desc_t rpd;
      check(dnnl_reorder_primitive_desc_create(&rpd, from, rt.engine, to,
                                               rt.engine, nullptr),
            "reorder_primitive_desc_create", kind, g);
      check(dnnl_primitive_create(&arg->reorder, rpd), "primitive_create (reorder)",
            kind, g);
      dnnl_primitive_desc_destroy(rpd);
    }
    conv.args.push_back(std::move(arg));
  };
  switch (kind) {
  case Kind::Forward:
  case Kind::ForwardBias:
    add(DNNL_ARG_SRC, plain.src, false);
    add(DNNL_ARG_WEIGHTS, plain.weights, false);
    if (kind == Kind::ForwardBias)
      add(DNNL_ARG_BIAS, plain.bias, false);
    add(DNNL_ARG_DST, plain.dst, true);
    break;
  case Kind::BackwardData:
    add(DNNL_ARG_DIFF_DST, plain.dst, false);
    add(DNNL_ARG_WEIGHTS, plain.weights, false);
    add(DNNL_ARG_DIFF_SRC, plain.src, true);
    break;
  case Kind::BackwardFilter:
    add(DNNL_ARG_DIFF_DST, plain.dst, false);
    add(DNNL_ARG_SRC, plain.src, false);
    add(DNNL_ARG_DIFF_WEIGHTS, plain.weights, true);
    break;
  }
  dnnl_primitive_desc_destroy(pd);
  if (hint)
    dnnl_primitive_desc_destroy(hint);
  dnnl_primitive_attr_destroy(attr);
  return conv;
}

void reorder(Arg &arg, Kind kind, const Geometry &g) {
  dnnl_exec_arg_t args[2] = {
      {DNNL_ARG_FROM, arg.output ? arg.inner : arg.user},
      {DNNL_ARG_TO, arg.output ? arg.user : arg.inner}};
  check(dnnl_primitive_execute(arg.reorder, runtime().stream, 2, args),
        "primitive_execute (reorder)", kind, g);
}

/// Runs the primitive of `kind` and `g` on `buffers`; its scratchpad is
/// the call's workspace where that is large enough (the memory plan's
/// bytes), else the runtime's own buffer, grown to the largest needed.
void run(Kind kind, const Geometry &g, std::initializer_list<const void *> buffers,
         void *workspace, int64_t workspaceBytes) {
  static std::map<std::pair<Kind, Geometry>, Conv> cache;
  auto it = cache.find({kind, g});
  if (it == cache.end())
    it = cache.emplace(std::make_pair(kind, g), create(kind, g)).first;
  Conv &conv = it->second;
  Runtime &rt = runtime();
  std::vector<dnnl_exec_arg_t> args;
  size_t i = 0;
  for (const void *buffer : buffers) {
    Arg &arg = *conv.args[i++];
    check(dnnl_memory_set_data_handle(arg.user, const_cast<void *>(buffer)),
          "memory_set_data_handle", kind, g);
    if (arg.reorder) {
      std::vector<char> &copy = rt.blocked[i - 1];
      if (copy.size() < arg.innerBytes)
        copy.resize(arg.innerBytes);
      check(dnnl_memory_set_data_handle(arg.inner, copy.data()),
            "memory_set_data_handle (blocked copy)", kind, g);
    }
    if (arg.reorder && !arg.output)
      reorder(arg, kind, g);
    args.push_back({arg.kind, arg.inner});
  }
  if (conv.scratchpad) {
    void *scratch = workspace;
    if (!workspace || workspaceBytes < 0 ||
        static_cast<size_t>(workspaceBytes) < conv.scratchpadBytes) {
      if (rt.scratchpad.size() < conv.scratchpadBytes)
        rt.scratchpad.resize(conv.scratchpadBytes);
      scratch = rt.scratchpad.data();
    }
    check(dnnl_memory_set_data_handle(conv.scratchpad, scratch),
          "memory_set_data_handle (scratchpad)", kind, g);
    args.push_back({DNNL_ARG_SCRATCHPAD, conv.scratchpad});
  }
  check(dnnl_primitive_execute(conv.primitive, rt.stream,
                               static_cast<int>(args.size()), args.data()),
        "primitive_execute", kind, g);
  for (auto &arg : conv.args)
    if (arg->reorder && arg->output)
      reorder(*arg, kind, g);
  check(dnnl_stream_wait(rt.stream), "stream_wait", kind, g);
}

} // namespace

#define OFLOW_RT_CONV_GEOMETRY_VALUES                                          \
  Geometry {                                                                   \
    n, c, h, w, m, kh, kw, oh, ow, stride_h, stride_w, dilation_h, dilation_w, \
        pad_top, pad_left, pad_bottom, pad_right, groups                       \
  }

extern "C" void oflow_rt_conv2d_fwd(OFLOW_RT_CONV_GEOMETRY, const float *x,
                                    const float *weight, float *y,
                                    void *workspace) {
  run(Kind::Forward, OFLOW_RT_CONV_GEOMETRY_VALUES, {x, weight, y}, workspace,
      workspace_bytes);
}

extern "C" void oflow_rt_conv2d_fwd_bias(OFLOW_RT_CONV_GEOMETRY,
                                         const float *x, const float *weight,
                                         const float *bias, float *y,
                                         void *workspace) {
  run(Kind::ForwardBias, OFLOW_RT_CONV_GEOMETRY_VALUES, {x, weight, bias, y},
      workspace, workspace_bytes);
}

extern "C" void oflow_rt_conv2d_bwd_data(OFLOW_RT_CONV_GEOMETRY,
                                         const float *dy, const float *weight,
                                         float *dx, void *workspace) {
  run(Kind::BackwardData, OFLOW_RT_CONV_GEOMETRY_VALUES, {dy, weight, dx},
      workspace, workspace_bytes);
}

extern "C" void oflow_rt_conv2d_bwd_filter(OFLOW_RT_CONV_GEOMETRY,
                                           const float *dy, const float *x,
                                           float *dweight, void *workspace) {
  run(Kind::BackwardFilter, OFLOW_RT_CONV_GEOMETRY_VALUES, {dy, x, dweight},
      workspace, workspace_bytes);
}
