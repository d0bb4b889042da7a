//===- ParallelTest.cpp - oflow_rt_parallel_for's split of the iterations -===//
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace {
struct Record {
  std::mutex lock;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<int> hits;
};

void recordRange(void *ctx, int64_t begin, int64_t end) {
  auto *r = static_cast<Record *>(ctx);
  std::lock_guard<std::mutex> guard(r->lock);
  r->ranges.push_back({begin, end});
  for (int64_t i = begin; i < end; ++i)
    ++r->hits[i];
}

// The sorted ranges one oflow_rt_parallel_for call handed out; `hits`
// counts how often each iteration ran.
std::vector<std::pair<int64_t, int64_t>> run(int64_t iterations, int64_t grain,
                                             std::vector<int> *hits = nullptr) {
  Record r;
  r.hits.assign(iterations, 0);
  oflow_rt_parallel_for(recordRange, &r, iterations, grain);
  std::sort(r.ranges.begin(), r.ranges.end());
  if (hits)
    *hits = r.hits;
  return r.ranges;
}

class ParallelFor : public ::testing::Test {
protected:
  void TearDown() override { oflow_rt_set_threads(1); }
};

TEST_F(ParallelFor, EveryIterationOnceInContiguousRanges) {
  for (int threads : {1, 2, 3, 4}) {
    oflow_rt_set_threads(threads);
    for (int64_t iterations : {1, 2, 7, 64, 1000}) {
      std::vector<int> hits;
      auto ranges = run(iterations, 1, &hits);
      for (int hit : hits)
        ASSERT_EQ(hit, 1) << threads << " threads, " << iterations << " iterations";
      ASSERT_EQ(ranges.size(), static_cast<size_t>(std::min<int64_t>(threads, iterations)));
      for (size_t i = 1; i < ranges.size(); ++i)
        EXPECT_EQ(ranges[i - 1].second, ranges[i].first);
    }
  }
}

TEST_F(ParallelFor, GrainLimitsTheThreads) {
  oflow_rt_set_threads(4);
  // 10 iterations of at least 4 each: 2 ranges; under one grain: one call.
  EXPECT_EQ(run(10, 4).size(), 2u);
  EXPECT_EQ(run(3, 4), (std::vector<std::pair<int64_t, int64_t>>{{0, 3}}));
  EXPECT_TRUE(run(0, 1).empty());
}

void nested(void *ctx, int64_t begin, int64_t end) {
  auto *inner = static_cast<std::atomic<int> *>(ctx);
  // A task that itself calls parallel_for (a library inside a nest) runs
  // its inner loop on its own thread in one call.
  if (run(8, 1).size() == 1)
    inner->fetch_add(static_cast<int>(end - begin));
}

TEST_F(ParallelFor, NestedCallsRunSerially) {
  oflow_rt_set_threads(2);
  std::atomic<int> inner{0};
  oflow_rt_parallel_for(nested, &inner, 4, 1);
  EXPECT_EQ(inner.load(), 4);
}
} // namespace
