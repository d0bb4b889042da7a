//===- Device.cpp - the device-independent part of Device.h ---------------===//
#include "oflow_rt/Device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace oflow_rt {

ByteRanges mergeRanges(ByteRanges r, int64_t mergeGap) {
  r.erase(std::remove_if(r.begin(), r.end(),
                         [](const auto &x) { return x.second <= 0; }),
          r.end());
  std::sort(r.begin(), r.end());
  ByteRanges out;
  for (const auto &[off, bytes] : r) {
    if (!out.empty() && off <= out.back().first + out.back().second + mergeGap) {
      int64_t end = std::max(out.back().first + out.back().second, off + bytes);
      out.back().second = end - out.back().first;
    } else {
      out.emplace_back(off, bytes);
    }
  }
  return out;
}

DeviceOptions deviceOptions(bool allowTf32Flag, bool noCudaGraphFlag) {
  DeviceOptions o;
  const char *env = std::getenv("OFLOW_ALLOW_TF32");
  o.allowTf32 = allowTf32Flag ||
                (env && (!std::strcmp(env, "1") || !std::strcmp(env, "true") ||
                         !std::strcmp(env, "yes")));
  const char *graphs = std::getenv("OFLOW_CUDA_GRAPH");
  o.cudaGraphs = !noCudaGraphFlag &&
                 !(graphs && (!std::strcmp(graphs, "0") || !std::strcmp(graphs, "false") ||
                              !std::strcmp(graphs, "no")));
  return o;
}

IoTransfers ioTransfers(const Manifest &m, const std::string &entry,
                        int64_t mergeGap) {
  ByteRanges in, out;
  for (const InputRecord &i : m.inputs)
    in.emplace_back(i.offset, i.localBytes());
  for (const ScalarRecord &s : m.scalars) {
    in.emplace_back(s.offset, dtypeSize(s.dtype));
    out.emplace_back(s.offset, dtypeSize(s.dtype));
  }
  // Every entry's outputs: a grads entry may write the train entry's loss.
  for (const OutputRecord &o : m.outputs)
    out.emplace_back(o.offset, o.localBytes());
  if (entry == "grads")
    for (const TensorSlot &g : m.grads)
      out.emplace_back(g.offset, g.localBytes());
  return {mergeRanges(std::move(in), mergeGap),
          mergeRanges(std::move(out), mergeGap)};
}

} // namespace oflow_rt
