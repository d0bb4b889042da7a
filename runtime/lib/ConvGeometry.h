//===- ConvGeometry.h - abi.h's convolution geometry ------------*- C++ -*-===//
//
// Private to the runtime: the 18 geometry arguments of oflow_rt_conv2d_*
// (abi.h) as one value, and their text in error messages, shared by the CPU
// archive's oneDNN convolutions and the CUDA archive's cuDNN ones.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_CONVGEOMETRY_H
#define OFLOW_RT_LIB_CONVGEOMETRY_H

#include <array>
#include <cstdint>
#include <string>

namespace oflow_rt {

/// n, c, h, w, m, kh, kw, oh, ow, stride_h, stride_w, dilation_h,
/// dilation_w, pad_top, pad_left, pad_bottom, pad_right, groups.
using ConvGeometry = std::array<int64_t, 18>;

/// "oflow_rt_conv2d_fwd (n=8 c=3 ... groups=1)" for messages.
inline std::string describeConv(const std::string &function, const ConvGeometry &g) {
  static const char *names[] = {"n",          "c",          "h",          "w",
                                "m",          "kh",         "kw",         "oh",
                                "ow",         "stride_h",   "stride_w",   "dilation_h",
                                "dilation_w", "pad_top",    "pad_left",   "pad_bottom",
                                "pad_right",  "groups"};
  std::string s = function + " (";
  for (size_t i = 0; i < g.size(); ++i)
    s += (i ? " " : "") + std::string(names[i]) + "=" + std::to_string(g[i]);
  return s + ")";
}

} // namespace oflow_rt

#endif
