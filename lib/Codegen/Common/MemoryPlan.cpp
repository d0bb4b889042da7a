//===- MemoryPlan.cpp - greedy-by-size static buffer placement ------------===//
#include "oflow/Codegen/MemoryPlan.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace oflow {

MemoryPlan planMemory(const std::vector<BufferLifetime> &buffers,
                      int64_t alignment) {
  MemoryPlan plan;
  size_t n = buffers.size();
  plan.offsets.assign(n, 0);
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = llvm::alignTo(std::max<int64_t>(buffers[i].bytes, 1), alignment);
    plan.naive += sizes[i];
  }

  // Lower bound: sweep the lifetime boundaries.
  std::map<int64_t, int64_t> delta;
  for (size_t i = 0; i < n; ++i) {
    delta[buffers[i].first] += sizes[i];
    delta[buffers[i].last + 1] -= sizes[i];
  }
  int64_t live = 0;
  for (auto &[step, change] : delta) {
    live += change;
    plan.lowerBound = std::max(plan.lowerBound, live);
  }

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    int64_t la = buffers[a].last - buffers[a].first;
    int64_t lb = buffers[b].last - buffers[b].first;
    return la > lb;
  });

  std::vector<size_t> placed;
  for (size_t i : order) {
    // Address ranges of placed buffers that are live at the same time.
    std::vector<std::pair<int64_t, int64_t>> busy;
    // Two buffers may share bytes when one's lifetime ends before the
    // other's begins, in steps and, where both have levels, in levels the
    // same way round (the other way round, sharing would order them
    // against their levels).
    auto overlap = [&](const BufferLifetime &a, const BufferLifetime &b) {
      bool levels = a.firstLevel <= a.lastLevel && b.firstLevel <= b.lastLevel;
      bool before = a.last < b.first && (!levels || a.lastLevel < b.firstLevel);
      bool after = b.last < a.first && (!levels || b.lastLevel < a.firstLevel);
      return !before && !after;
    };
    for (size_t j : placed)
      if (overlap(buffers[j], buffers[i]))
        busy.push_back({plan.offsets[j], plan.offsets[j] + sizes[j]});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the buffer; else after the last.
    int64_t cursor = 0, best = -1, bestGap = INT64_MAX;
    for (auto [begin, end] : busy) {
      if (begin - cursor >= sizes[i] && begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    plan.offsets[i] = best >= 0 ? best : cursor;
    plan.peak = std::max(plan.peak, plan.offsets[i] + sizes[i]);
    placed.push_back(i);
  }
  return plan;
}

} // namespace oflow
