//===- MemoryPlanTest.cpp - the static arena planner ----------------------===//
#include "oflow/Codegen/MemoryPlan.h"

#include <gtest/gtest.h>

using oflow::BufferLifetime;
using oflow::planMemory;

namespace {

/// No two buffers that are live at the same step share a byte.
void expectNoOverlap(const std::vector<BufferLifetime> &b,
                     const oflow::MemoryPlan &plan) {
  for (size_t i = 0; i < b.size(); ++i)
    for (size_t j = i + 1; j < b.size(); ++j) {
      bool timeOverlap = b[i].first <= b[j].last && b[j].first <= b[i].last;
      bool spaceOverlap = plan.offsets[i] < plan.offsets[j] + b[j].bytes &&
                          plan.offsets[j] < plan.offsets[i] + b[i].bytes;
      EXPECT_FALSE(timeOverlap && spaceOverlap) << i << " and " << j;
    }
}

TEST(MemoryPlan, DisjointLifetimesShareBytes) {
  std::vector<BufferLifetime> b = {{1000, 0, 1}, {1000, 2, 3}, {1000, 4, 5}};
  auto plan = planMemory(b, 64);
  EXPECT_EQ(plan.peak, 1024);
  EXPECT_EQ(plan.naive, 3 * 1024);
  EXPECT_EQ(plan.lowerBound, 1024);
  expectNoOverlap(b, plan);
}

TEST(MemoryPlan, OverlappingLifetimesDoNot) {
  std::vector<BufferLifetime> b = {{64, 0, 5}, {128, 1, 2}, {64, 2, 6}};
  auto plan = planMemory(b, 64);
  EXPECT_EQ(plan.lowerBound, 256);
  EXPECT_EQ(plan.peak, 256);
  expectNoOverlap(b, plan);
  for (int64_t o : plan.offsets)
    EXPECT_EQ(o % 64, 0);
}

TEST(MemoryPlan, InclusiveEndsConflict) {
  // A buffer allocated at the step where another is last read must not
  // take its bytes: the op reads one while writing the other.
  std::vector<BufferLifetime> b = {{64, 0, 3}, {64, 3, 4}};
  auto plan = planMemory(b, 64);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(MemoryPlan, LevelsMustAgreeWithStepsToShare) {
  // In steps 0 ends before 1 begins; in levels they overlap (independent
  // chains at the same levels): no sharing, or the second chain would wait
  // for the first.
  std::vector<BufferLifetime> b = {{64, 0, 1, 0, 1}, {64, 2, 3, 0, 1}};
  EXPECT_NE(planMemory(b, 64).offsets[0], planMemory(b, 64).offsets[1]);
  // Ordered the other way round in levels: no sharing either.
  b = {{64, 0, 1, 2, 3}, {64, 2, 3, 0, 1}};
  EXPECT_NE(planMemory(b, 64).offsets[0], planMemory(b, 64).offsets[1]);
  // The same way round in both: shared.
  b = {{64, 0, 1, 0, 1}, {64, 2, 3, 2, 3}};
  EXPECT_EQ(planMemory(b, 64).offsets[0], planMemory(b, 64).offsets[1]);
  // Without levels only the steps count.
  b = {{64, 0, 1}, {64, 2, 3, 0, 1}};
  EXPECT_EQ(planMemory(b, 64).offsets[0], planMemory(b, 64).offsets[1]);
}

TEST(MemoryPlan, RandomPlansAreValidAndNearTheBound) {
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> b;
    for (int i = 0; i < 60; ++i) {
      int64_t first = next() % 100;
      b.push_back({int64_t(next() % 5000) + 1, first, first + int64_t(next() % 20)});
    }
    auto plan = planMemory(b, 64);
    expectNoOverlap(b, plan);
    EXPECT_GE(plan.peak, plan.lowerBound);
    EXPECT_LE(plan.peak, plan.naive);
  }
}

} // namespace
