//===- ExactPlannerTest.cpp - the integer program against brute force ----===//
//
// Random layout-choice problems small enough to enumerate: the exact planner
// (eliminations + CBC) must find the enumeration's optimum, with and without
// ties, with forbidden choices and pairs; the greedy gap is reported.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/ExactPlanner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace oflow::sbp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// `nodes` nodes with 2-4 choices; each pair joined with probability
/// `density`; costs in microseconds to milliseconds like boxing times, a
/// few forbidden.
PlanProblem randomProblem(std::mt19937 &rng, int nodes, double density,
                          bool withTies) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> choices(2, 4);
  PlanProblem p;
  std::vector<int> counts;
  for (int n = 0; n < nodes; ++n) {
    int c = choices(rng);
    // Tied nodes need the same number of choices: pair node n with n - 3.
    if (withTies && n >= 3 && n % 3 == 0)
      c = counts[n - 3];
    counts.push_back(c);
    std::vector<double> cost;
    for (int k = 0; k < c; ++k)
      cost.push_back(unit(rng) < 0.1 && k > 0 ? kInf : 1e-5 * unit(rng));
    p.addNode(cost);
  }
  for (int a = 0; a < nodes; ++a)
    for (int b = a + 1; b < nodes; ++b) {
      if (unit(rng) >= density)
        continue;
      PlanProblem::Edge e{a, b, {}};
      for (int i = 0; i < counts[a]; ++i)
        for (int j = 0; j < counts[b]; ++j)
          // Same index is usually free (no boxing), others cost.
          e.cost.push_back(i == j && unit(rng) < 0.7 ? 0
                           : unit(rng) < 0.05         ? kInf
                                                      : 1e-3 * unit(rng));
      p.edges.push_back(std::move(e));
    }
  if (withTies)
    for (int n = 3; n < nodes; n += 3)
      p.ties.push_back({n - 3, n});
  return p;
}

void expectOptimal(const PlanProblem &p, const char *what, int seed,
                   double &greedyGap, int &solverUsed) {
  PlanSolution brute = solveByEnumeration(p);
  std::string error;
  std::optional<PlanSolution> exact = solveExactly(p, {}, error);
  if (!std::isfinite(brute.seconds)) {
    EXPECT_FALSE(exact) << what << " seed " << seed;
    return;
  }
  ASSERT_TRUE(exact) << what << " seed " << seed << ": " << error;
  EXPECT_TRUE(exact->optimal);
  EXPECT_NEAR(exact->seconds, brute.seconds, 1e-9 + 1e-7 * brute.seconds)
      << what << " seed " << seed;
  EXPECT_NEAR(evaluate(p, exact->choice), exact->seconds, 1e-12);
  for (const std::vector<int> &group : p.ties)
    for (int n : group)
      EXPECT_EQ(exact->choice[n], exact->choice[group[0]]);
  solverUsed += exact->solverNodes > 0;
  if (p.ties.empty()) {
    PlanSolution greedy = solveGreedily(p);
    if (std::isfinite(greedy.seconds))
      greedyGap = std::max(greedyGap, greedy.seconds / brute.seconds - 1);
  }
}

TEST(ExactPlannerTest, EqualsEnumerationOnSparseGraphs) {
  // Chains and trees: mostly eliminated exactly before the solver.
  double gap = 0;
  int solverUsed = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    expectOptimal(randomProblem(rng, 8, 0.3, false), "sparse", seed, gap, solverUsed);
  }
  std::printf("[ greedy ] worst gap on sparse graphs: %.1f%%\n", 100 * gap);
}

TEST(ExactPlannerTest, EqualsEnumerationOnDenseGraphs) {
  // Most nodes keep degree 3 or more: CBC solves them.
  double gap = 0;
  int solverUsed = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(1000 + seed);
    expectOptimal(randomProblem(rng, 7, 0.8, false), "dense", seed, gap, solverUsed);
  }
  EXPECT_GT(solverUsed, 30);
  std::printf("[ greedy ] worst gap on dense graphs: %.1f%%\n", 100 * gap);
}

TEST(ExactPlannerTest, EqualsEnumerationWithTies) {
  double gap = 0;
  int solverUsed = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(2000 + seed);
    expectOptimal(randomProblem(rng, 9, 0.5, true), "tied", seed, gap, solverUsed);
  }
}

/// Memory rows over random sets of nodes, each choice taking 0-100 MiB,
/// with limits from tight (often infeasible) to loose.
void addMemoryRows(std::mt19937 &rng, PlanProblem &p, int rows) {
  std::uniform_real_distribution<double> unit(0, 1);
  for (int r = 0; r < rows; ++r) {
    PlanProblem::MemoryRow row;
    double smallest = 0;
    for (size_t n = 0; n < p.nodeCost.size(); ++n) {
      if (unit(rng) < 0.5)
        continue;
      std::vector<double> bytes;
      for (size_t c = 0; c < p.nodeCost[n].size(); ++c)
        bytes.push_back(std::floor(100 * unit(rng)) * 1048576.0);
      smallest += *std::min_element(bytes.begin(), bytes.end());
      row.terms.emplace_back(static_cast<int>(n), std::move(bytes));
    }
    row.limit = smallest + 120 * 1048576.0 * unit(rng);
    p.memory.push_back(std::move(row));
  }
}

TEST(ExactPlannerTest, EqualsEnumerationUnderMemoryRows) {
  double gap = 0;
  int solverUsed = 0, infeasible = 0;
  for (int seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(3000 + seed);
    PlanProblem p = randomProblem(rng, 8, seed % 2 ? 0.3 : 0.7, seed % 3 == 0);
    addMemoryRows(rng, p, 1 + seed % 3);
    PlanSolution brute = solveByEnumeration(p);
    infeasible += !std::isfinite(brute.seconds);
    expectOptimal(p, "memory", seed, gap, solverUsed);
    std::string error;
    if (std::optional<PlanSolution> exact = solveExactly(p, {}, error)) {
      EXPECT_TRUE(fitsMemory(p, exact->choice)) << "seed " << seed;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(infeasible, 0);
  EXPECT_LT(infeasible, 50);
}

TEST(ExactPlannerTest, MemoryRowForcesTheSlowerSmallerChoice) {
  // Two chained nodes: choice 0 is faster and larger. A row over both at
  // 150 MiB allows one of them to stay large.
  PlanProblem p;
  p.addNode({1.0, 2.0});
  p.addNode({1.0, 1.5});
  p.edges.push_back({0, 1, {0, 0, 0, 0}});
  double mib = 1048576.0;
  p.memory.push_back({{{0, {100 * mib, 50 * mib}}, {1, {100 * mib, 50 * mib}}}, 150 * mib});
  std::string error;
  std::optional<PlanSolution> exact = solveExactly(p, {}, error);
  ASSERT_TRUE(exact) << error;
  EXPECT_EQ(exact->choice, (std::vector<int>{0, 1}));
  p.memory[0].limit = 90 * mib;
  EXPECT_FALSE(solveExactly(p, {}, error));
  EXPECT_NE(error.find("memory"), std::string::npos) << error;
}

TEST(ExactPlannerTest, GreedyIsMyopicWhereTheExactPlanIsNot) {
  // 0 -> 1 -> 2: choice 1 of node 0 is a little dearer, but the only one
  // from which node 2's cheap choice is reachable without boxing; greedy
  // takes choice 0 and pays the boxing at the end.
  PlanProblem p;
  p.addNode({1.0, 1.1});
  p.addNode({0.0, 0.0});
  p.addNode({5.0, 0.0});
  p.edges.push_back({0, 1, {0, 1, 1, 0}});
  p.edges.push_back({1, 2, {0, 1, 1, 0}});
  std::string error;
  std::optional<PlanSolution> exact = solveExactly(p, {}, error);
  ASSERT_TRUE(exact) << error;
  EXPECT_EQ(exact->choice, (std::vector<int>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(exact->seconds, 1.1);
  PlanSolution greedy = solveGreedily(p);
  EXPECT_EQ(greedy.choice, (std::vector<int>{0, 0, 1}));
  EXPECT_DOUBLE_EQ(greedy.seconds, 2.0);
}

TEST(ExactPlannerTest, StartFromAKnownChoice) {
  std::mt19937 rng(7);
  PlanProblem p = randomProblem(rng, 7, 0.9, false);
  PlanSolution greedy = solveGreedily(p);
  ExactOptions options;
  options.start = greedy.choice;
  std::string error;
  std::optional<PlanSolution> exact = solveExactly(p, options, error);
  ASSERT_TRUE(exact) << error;
  EXPECT_LE(exact->seconds, greedy.seconds + 1e-12);
  EXPECT_NEAR(exact->seconds, solveByEnumeration(p).seconds, 1e-12);
}

TEST(ExactPlannerTest, NothingAllowedIsAnError) {
  PlanProblem p;
  p.addNode({kInf, kInf});
  std::string error;
  EXPECT_FALSE(solveExactly(p, {}, error));
  EXPECT_FALSE(error.empty());
}

} // namespace
