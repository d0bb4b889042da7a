//===- ConvDnnl.cpp - 2-D convolutions for generated code, over oneDNN ----===//
//
// oflow_rt_conv2d_*: oneDNN 2.6's convolution primitives through its C API
// (the runtime is built without exceptions, which dnnl.hpp throws). Each
// distinct (kind, geometry) gets its primitive on its first call; the
// program calls the same few geometries every step, so creation (oneDNN's
// JIT) happens in the first step only. Buffers are plain NCHW / OIHW
// (GOIHW with groups): the arena holds dense row-major tensors, and
// reordering into blocked layouts around every call would cost what the
// blocked kernels gain at these sizes.
//
// Scratchpads are user-managed: one buffer, grown to the largest any
// primitive asks for, shared by all (the step is sequential).
//
//===----------------------------------------------------------------------===//
#include "MpiWorld.h"
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

/// n, c, h, w, m, kh, kw, oh, ow, stride_h, stride_w, dilation_h,
/// dilation_w, pad_top, pad_left, pad_bottom, pad_right, groups.
using Geometry = std::array<int64_t, 18>;

std::string describe(Kind kind, const Geometry &g) {
  static const char *names[] = {"n", "c", "h", "w", "m", "kh", "kw",
                                "oh", "ow", "stride_h", "stride_w",
                                "dilation_h", "dilation_w", "pad_top",
                                "pad_left", "pad_bottom", "pad_right",
                                "groups"};
  std::string s = kindName(kind);
  s += " (";
  for (size_t i = 0; i < g.size(); ++i)
    s += (i ? " " : "") + std::string(names[i]) + "=" + std::to_string(g[i]);
  return s + ")";
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

/// One created primitive and the memory objects its calls point at the
/// program's buffers.
struct Conv {
  dnnl_primitive_t primitive = nullptr;
  std::vector<int> argKinds;            // DNNL_ARG_* in call-argument order
  std::vector<dnnl_memory_t> memories;  // one per argKinds entry
  dnnl_memory_t scratchpad = nullptr;
  dnnl_memory_desc_t scratchpadDesc{};
};

struct Descs {
  dnnl_memory_desc_t src, weights, bias, dst;
};

Descs plainDescs(const Geometry &g, Kind kind) {
  const int64_t n = g[0], c = g[1], h = g[2], w = g[3], m = g[4], kh = g[5],
                kw = g[6], oh = g[7], ow = g[8], groups = g[17];
  Descs d{};
  dnnl_dims_t src = {n, c, h, w}, dst = {n, m, oh, ow}, bias = {m};
  check(dnnl_memory_desc_init_by_tag(&d.src, 4, src, dnnl_f32, dnnl_nchw),
        "memory_desc_init (src)", kind, g);
  check(dnnl_memory_desc_init_by_tag(&d.dst, 4, dst, dnnl_f32, dnnl_nchw),
        "memory_desc_init (dst)", kind, g);
  check(dnnl_memory_desc_init_by_tag(&d.bias, 1, bias, dnnl_f32, dnnl_a),
        "memory_desc_init (bias)", kind, g);
  if (groups == 1) {
    dnnl_dims_t wd = {m, c, kh, kw};
    check(dnnl_memory_desc_init_by_tag(&d.weights, 4, wd, dnnl_f32, dnnl_oihw),
          "memory_desc_init (weights)", kind, g);
  } else {
    dnnl_dims_t wd = {groups, m / groups, c / groups, kh, kw};
    check(dnnl_memory_desc_init_by_tag(&d.weights, 5, wd, dnnl_f32, dnnl_goihw),
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

Conv create(Kind kind, const Geometry &g) {
  Runtime &rt = runtime();
  Descs d = plainDescs(g, kind);
  dnnl_primitive_attr_t attr;
  check(dnnl_primitive_attr_create(&attr), "primitive_attr_create", kind, g);
  check(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
        "set_scratchpad_mode", kind, g);

  // The backward primitives take the forward one as a hint.
  dnnl_primitive_desc_t hint = nullptr;
  if (kind == Kind::BackwardData || kind == Kind::BackwardFilter) {
    dnnl_convolution_desc_t fwd = convDesc(g, kind, d, /*forwardHint=*/true);
    check(dnnl_primitive_desc_create(&hint, &fwd, nullptr, rt.engine, nullptr),
          "primitive_desc_create (forward hint)", kind, g);
  }
  dnnl_convolution_desc_t cd = convDesc(g, kind, d, /*forwardHint=*/false);
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
    if (rt.scratchpad.size() < scratchBytes)
      rt.scratchpad.resize(scratchBytes);
    check(dnnl_memory_create(&conv.scratchpad, &conv.scratchpadDesc, rt.engine,
                             DNNL_MEMORY_NONE),
          "memory_create (scratchpad)", kind, g);
  }

  auto add = [&](int arg, const dnnl_memory_desc_t &md) {
    dnnl_memory_t mem;
    check(dnnl_memory_create(&mem, &md, rt.engine, DNNL_MEMORY_NONE),
          "memory_create", kind, g);
    conv.argKinds.push_back(arg);
    conv.memories.push_back(mem);
  };
  switch (kind) {
  case Kind::Forward:
  case Kind::ForwardBias:
    add(DNNL_ARG_SRC, d.src);
    add(DNNL_ARG_WEIGHTS, d.weights);
    if (kind == Kind::ForwardBias)
      add(DNNL_ARG_BIAS, d.bias);
    add(DNNL_ARG_DST, d.dst);
    break;
  case Kind::BackwardData:
    add(DNNL_ARG_DIFF_DST, d.dst);
    add(DNNL_ARG_WEIGHTS, d.weights);
    add(DNNL_ARG_DIFF_SRC, d.src);
    break;
  case Kind::BackwardFilter:
    add(DNNL_ARG_DIFF_DST, d.dst);
    add(DNNL_ARG_SRC, d.src);
    add(DNNL_ARG_DIFF_WEIGHTS, d.weights);
    break;
  }
  dnnl_primitive_desc_destroy(pd);
  if (hint)
    dnnl_primitive_desc_destroy(hint);
  dnnl_primitive_attr_destroy(attr);
  return conv;
}

void run(Kind kind, const Geometry &g, std::initializer_list<const void *> buffers) {
  static std::map<std::pair<Kind, Geometry>, Conv> cache;
  auto it = cache.find({kind, g});
  if (it == cache.end())
    it = cache.emplace(std::make_pair(kind, g), create(kind, g)).first;
  Conv &conv = it->second;
  Runtime &rt = runtime();
  std::vector<dnnl_exec_arg_t> args;
  size_t i = 0;
  for (const void *buffer : buffers) {
    check(dnnl_memory_set_data_handle(conv.memories[i],
                                      const_cast<void *>(buffer)),
          "memory_set_data_handle", kind, g);
    args.push_back({conv.argKinds[i], conv.memories[i]});
    ++i;
  }
  if (conv.scratchpad) {
    check(dnnl_memory_set_data_handle(conv.scratchpad, rt.scratchpad.data()),
          "memory_set_data_handle (scratchpad)", kind, g);
    args.push_back({DNNL_ARG_SCRATCHPAD, conv.scratchpad});
  }
  check(dnnl_primitive_execute(conv.primitive, rt.stream,
                               static_cast<int>(args.size()), args.data()),
        "primitive_execute", kind, g);
  check(dnnl_stream_wait(rt.stream), "stream_wait", kind, g);
}

} // namespace

#define OFLOW_RT_CONV_GEOMETRY_VALUES                                          \
  Geometry {                                                                   \
    n, c, h, w, m, kh, kw, oh, ow, stride_h, stride_w, dilation_h, dilation_w, \
        pad_top, pad_left, pad_bottom, pad_right, groups                       \
  }

extern "C" void oflow_rt_conv2d_fwd(OFLOW_RT_CONV_GEOMETRY, const float *x,
                                    const float *weight, float *y) {
  run(Kind::Forward, OFLOW_RT_CONV_GEOMETRY_VALUES, {x, weight, y});
}

extern "C" void oflow_rt_conv2d_fwd_bias(OFLOW_RT_CONV_GEOMETRY,
                                         const float *x, const float *weight,
                                         const float *bias, float *y) {
  run(Kind::ForwardBias, OFLOW_RT_CONV_GEOMETRY_VALUES, {x, weight, bias, y});
}

extern "C" void oflow_rt_conv2d_bwd_data(OFLOW_RT_CONV_GEOMETRY,
                                         const float *dy, const float *weight,
                                         float *dx) {
  run(Kind::BackwardData, OFLOW_RT_CONV_GEOMETRY_VALUES, {dy, weight, dx});
}

extern "C" void oflow_rt_conv2d_bwd_filter(OFLOW_RT_CONV_GEOMETRY,
                                           const float *dy, const float *x,
                                           float *dweight) {
  run(Kind::BackwardFilter, OFLOW_RT_CONV_GEOMETRY_VALUES, {dy, x, dweight});
}
