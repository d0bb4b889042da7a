//===- BoxingPlannerTest.cpp - SBP cost model and boxing planner ----------===//
//
// The one-axis conversion table of DESIGN.md (kinds and bytes exactly),
// validity, 2-D plans that must route around strided steps, link awareness
// and determinism.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/BoxingPlanner.h"
#include "oflow/Sbp/CostModel.h"

#include "gtest/gtest.h"

#include <string>

using namespace oflow::sbp;

namespace {

NdSbp nd(llvm::StringRef text) {
  std::optional<NdSbp> parsed = parseNdSbp(text);
  EXPECT_TRUE(parsed) << text.str();
  return parsed ? *parsed : NdSbp{};
}

Mesh mesh(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<const char *> links = {}) {
  Mesh m;
  m.shape.assign(shape.begin(), shape.end());
  for (const char *name : links)
    m.links.push_back(*linkByName(name));
  return m;
}

/// "all-gather@1 96; local-slice@1 0": kind, mesh axis and bytes per step.
std::string summary(const BoxingPlan &plan) {
  std::string out;
  for (const BoxingStep &s : plan.steps) {
    if (!out.empty())
      out += "; ";
    out += str(s.kind).str() + (s.max ? "(max)" : "") + "@" +
           std::to_string(s.meshAxis) + " " + std::to_string(s.bytesPerDevice);
  }
  return out;
}

std::string plan(const Mesh &m, llvm::ArrayRef<int64_t> shape, llvm::StringRef from,
                 llvm::StringRef to) {
  std::optional<BoxingPlan> p = planBoxing(m, shape, 4, nd(from), nd(to));
  return p ? summary(*p) : "none";
}

/// Every step is a plain one-axis step (no strided piece, valid layouts)
/// and the steps chain from `from` to `to` with the totals adding up.
void expectWellFormed(const Mesh &m, llvm::ArrayRef<int64_t> shape,
                      const NdSbp &from, const NdSbp &to, const BoxingPlan &p) {
  NdSbp cur = from;
  int64_t bytes = 0;
  double seconds = 0;
  for (const BoxingStep &s : p.steps) {
    EXPECT_EQ(str(s.from), str(cur));
    std::optional<BoxingStep> again =
        planOneAxisStep(m, shape, 4, s.from, s.to, s.meshAxis);
    ASSERT_TRUE(again) << s.str();
    EXPECT_EQ(again->str(), s.str());
    bytes += s.bytesPerDevice;
    seconds += s.seconds;
    cur = s.to;
  }
  EXPECT_EQ(str(cur), str(to));
  EXPECT_EQ(bytes, p.bytesPerDevice);
  EXPECT_DOUBLE_EQ(seconds, p.seconds);
}

TEST(CostModelTest, ParsesAndPrints) {
  EXPECT_EQ(str(nd("[S(0), B]")), "[S(0), B]");
  EXPECT_EQ(str(nd("[P, P(max)]")), "[P(sum), P(max)]");
  EXPECT_FALSE(parseNdSbp("[S(x), B]"));
  EXPECT_FALSE(parseSbp("Q"));
}

TEST(CostModelTest, ValidityAndLocalShape) {
  Mesh m22 = mesh({2, 2});
  // Two mesh axes splitting axis 0 need it divisible by 4, not just by 2.
  EXPECT_TRUE(isValidLayout(m22, {8, 12}, nd("[S(0), S(0)]")));
  EXPECT_FALSE(isValidLayout(m22, {6, 12}, nd("[S(0), S(0)]")));
  EXPECT_TRUE(isValidLayout(m22, {6, 12}, nd("[S(0), S(1)]")));
  EXPECT_FALSE(isValidLayout(m22, {8, 12}, nd("[S(2), B]")));
  EXPECT_FALSE(isValidLayout(m22, {8, 12}, nd("[B]")));
  EXPECT_FALSE(isValidLayout(m22, {8, 12}, nd("[P(sum), P(max)]")));
  EXPECT_EQ(localShape(m22, {8, 12}, nd("[S(0), S(0)]")),
            (llvm::SmallVector<int64_t>{2, 12}));
  EXPECT_EQ(localShape(m22, {8, 12}, nd("[S(1), P]")),
            (llvm::SmallVector<int64_t>{8, 6}));
}

TEST(CostModelTest, ComputeSecondsIsMonotonic) {
  Device cpu = deviceFor(*oflow::builtinDeviceProfile("cpu"), "fp32");
  Device h200 = deviceFor(*oflow::builtinDeviceProfile("h200"), "bf16");
  for (Device d : {cpu, h200}) {
    double prev = computeSeconds(d, 0, 0);
    EXPECT_EQ(prev, 0);
    for (double x = 1e3; x < 1e15; x *= 10) {
      double t = computeSeconds(d, x, x / 8);
      EXPECT_GT(t, prev);
      EXPECT_GE(computeSeconds(d, x, x), t);
      prev = t;
    }
  }
  EXPECT_LT(computeSeconds(h200, 1e12, 1e9), computeSeconds(cpu, 1e12, 1e9));
  // The planner's CPU rank is what it has always been; a GPU's GEMM rate
  // follows the precision.
  EXPECT_EQ(cpu.flopsPerSecond, 100e9);
  EXPECT_EQ(cpu.bytesPerSecond, 20e9);
  EXPECT_EQ(h200.flopsPerSecond, 650e12);
  EXPECT_EQ(deviceFor(*oflow::builtinDeviceProfile("h200"), "fp32").flopsPerSecond, 50e12);
  // Convolutions run in fp32 on both targets whatever the GEMMs' precision.
  EXPECT_EQ(h200.convFlopsPerSecond, 50e12);
  EXPECT_EQ(cpu.convFlopsPerSecond, 100e9);
}

TEST(CostModelTest, LinksDefaultToLocal) {
  Mesh m = mesh({8, 4}, {"ib"});
  EXPECT_EQ(m.link(0).bytesPerSecond, linkByName("ib")->bytesPerSecond);
  EXPECT_EQ(m.link(1).bytesPerSecond, linkByName("local")->bytesPerSecond);
  EXPECT_FALSE(linkByName("carrier-pigeon"));
}

// Mesh 4, [8, 12] f32: T = 384 bytes, n = 4.
TEST(BoxingPlannerTest, OneDimensionalTable) {
  Mesh m = mesh({4});
  struct Case {
    const char *from, *to, *expected;
  } cases[] = {
      {"B", "S(0)", "local-slice@0 0"},
      {"B", "S(1)", "local-slice@0 0"},
      {"B", "P(sum)", "broadcast-to-partial@0 0"},
      {"B", "P(max)", "broadcast-to-partial(max)@0 0"},
      {"S(0)", "B", "all-gather@0 288"},           // 3/4 * 384
      {"S(0)", "S(1)", "all-to-all@0 72"},         // 3/16 * 384
      {"S(0)", "P(sum)", "split-to-partial@0 0"},
      {"S(1)", "B", "all-gather@0 288"},
      {"S(1)", "S(0)", "all-to-all@0 72"},
      {"S(1)", "P(sum)", "split-to-partial@0 0"},
      {"P(sum)", "B", "all-reduce@0 576"},         // 2 * 3/4 * 384
      {"P(sum)", "S(0)", "reduce-scatter@0 288"},
      {"P(sum)", "S(1)", "reduce-scatter@0 288"},
      {"P(max)", "B", "all-reduce(max)@0 576"},
      {"P(max)", "S(0)", "reduce-scatter(max)@0 288"},
      {"P(max)", "S(1)", "reduce-scatter(max)@0 288"},
      // No direct form: through B.
      {"S(0)", "P(max)", "all-gather@0 288; broadcast-to-partial(max)@0 0"},
      {"P(sum)", "P(max)", "all-reduce@0 576; broadcast-to-partial(max)@0 0"},
      // Each device's piece of the max, zero-padded, sums to the max.
      {"P(max)", "P(sum)", "reduce-scatter(max)@0 288; split-to-partial@0 0"},
      {"B", "B", ""},
      {"P(max)", "P(max)", ""},
  };
  for (const Case &c : cases)
    EXPECT_EQ(plan(m, {8, 12}, c.from, c.to), c.expected)
        << c.from << " -> " << c.to;
}

TEST(BoxingPlannerTest, StepSecondsAreAlphaBeta) {
  Mesh m = mesh({4}, {"nvlink"});
  std::optional<BoxingPlan> p = planBoxing(m, {8, 12}, 4, nd("[P]"), nd("[B]"));
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->seconds, 10e-6 + 576 / 370e9);
  EXPECT_EQ(p->steps[0].str(), "all-reduce on mesh axis 0: [P(sum)] -> [B], 576 B/device");
  p = planBoxing(m, {8, 12}, 4, nd("[B]"), nd("[S(0)]"));
  EXPECT_EQ(p->seconds, 0);
}

// Fewer elements than devices cannot be cut into ring blocks: recursive
// doubling sends the whole piece log2(n) times (what OpenMPI's ring falls
// back to, and what the traffic test counts under mpirun).
TEST(BoxingPlannerTest, TinyAllReduceIsRecursiveDoubling) {
  auto bytes = [](Mesh m, llvm::ArrayRef<int64_t> shape) {
    return planBoxing(m, shape, 4, nd("[P]"), nd("[B]"))->bytesPerDevice;
  };
  EXPECT_EQ(bytes(mesh({4}), {}), 2 * 4);        // a scalar: 2 rounds
  EXPECT_EQ(bytes(mesh({4}), {3}), 2 * 12);       // 3 < 4 elements
  EXPECT_EQ(bytes(mesh({4}), {4}), 2 * 3 * 16 / 4); // a ring again
  EXPECT_EQ(bytes(mesh({8}), {2}), 3 * 8);
  EXPECT_EQ(bytes(mesh({6}), {1}), 3 * 4);        // ceil(log2 6) rounds
  EXPECT_EQ(bytes(mesh({2}), {1}), 4);            // both forms agree on 2
}

TEST(BoxingPlannerTest, InvalidLayoutsHaveNoPlan) {
  Mesh m = mesh({4});
  EXPECT_EQ(plan(m, {6, 8}, "B", "S(0)"), "none"); // 6 % 4 != 0
  EXPECT_EQ(plan(m, {6, 8}, "S(0)", "B"), "none");
  EXPECT_EQ(plan(m, {6, 8}, "B", "S(2)"), "none"); // no axis 2
  EXPECT_EQ(plan(m, {6, 8}, "B", "S(1)"), "local-slice@0 0");
  EXPECT_EQ(plan(mesh({2, 2}), {6, 8}, "[B, B]", "[S(0), S(0)]"), "none");
  EXPECT_EQ(plan(mesh({2, 2}), {8, 8}, "[P, B]", "[P(sum), P(max)]"), "none");
  EXPECT_EQ(plan(m, {-1, 8}, "B", "S(1)"), "none"); // dynamic dimension
  EXPECT_FALSE(planBoxing(m, {8, 8}, 0, nd("[B]"), nd("[S(0)]")));
}

TEST(BoxingPlannerTest, StridedStepsAreRoutedAround) {
  Mesh m = mesh({2, 2});
  // Changing the outer axis while the inner one splits the same tensor axis
  // would leave strided pieces: not a plain step.
  EXPECT_FALSE(planOneAxisStep(m, {8, 12}, 4, nd("[S(0), S(0)]"),
                               nd("[B, S(0)]"), 0));
  EXPECT_FALSE(planOneAxisStep(m, {8, 12}, 4, nd("[B, S(0)]"),
                               nd("[S(0), S(0)]"), 0));
  EXPECT_TRUE(planOneAxisStep(m, {8, 12}, 4, nd("[S(0), B]"),
                              nd("[S(0), S(0)]"), 1));
  // Gather the inner axis (T = 384 / 2), then the outer, then slice again.
  EXPECT_EQ(plan(m, {8, 12}, "[S(0), S(0)]", "[B, S(0)]"),
            "all-gather@1 96; all-gather@0 192; local-slice@1 0");
  // Building [S(0), S(0)] from B slices the outer axis first.
  EXPECT_EQ(plan(m, {8, 12}, "[B, B]", "[S(0), S(0)]"),
            "local-slice@0 0; local-slice@1 0");
  Mesh m42 = mesh({4, 2});
  EXPECT_EQ(plan(m42, {8, 12}, "[S(0), S(0)]", "[B, S(0)]"),
            "all-gather@1 48; all-gather@0 288; local-slice@1 0");
}

TEST(BoxingPlannerTest, TwoDimensionalTable) {
  Mesh m22 = mesh({2, 2}), m42 = mesh({4, 2});
  // Two all-reduces over the whole 384 bytes: 384 + 384 on 2x2.
  std::optional<BoxingPlan> p =
      planBoxing(m22, {8, 12}, 4, nd("[P, P]"), nd("[B, B]"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].kind, BoxingKind::AllReduce);
  EXPECT_EQ(p->steps[1].kind, BoxingKind::AllReduce);
  EXPECT_NE(p->steps[0].meshAxis, p->steps[1].meshAxis);
  EXPECT_EQ(p->bytesPerDevice, 768);
  EXPECT_DOUBLE_EQ(p->seconds, 2 * (2e-6 + 384 / 10e9));
  // 4x2: 2*3/4*384 + 2*1/2*384.
  p = planBoxing(m42, {8, 12}, 4, nd("[P, P]"), nd("[B, B]"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bytesPerDevice, 576 + 384);
  EXPECT_EQ(p->steps.size(), 2u);

  EXPECT_EQ(plan(m22, {8, 12}, "[S(0), B]", "[B, S(0)]"),
            "all-gather@0 192; local-slice@1 0");
  // The other axis's split halves T: reduce-scatter of 192 bytes on 2.
  EXPECT_EQ(plan(m22, {8, 12}, "[P, S(1)]", "[S(0), S(1)]"),
            "reduce-scatter@0 96");
  EXPECT_EQ(plan(m42, {8, 12}, "[P, S(1)]", "[S(0), S(1)]"),
            "reduce-scatter@0 144"); // 3/4 * 192
  EXPECT_EQ(plan(m42, {8, 12}, "[S(0), B]", "[S(0), S(1)]"),
            "local-slice@1 0");
  // A partial sum never meets a partial max in one layout: reduce first.
  EXPECT_EQ(plan(m22, {8, 12}, "[P, B]", "[B, P(max)]"),
            "all-reduce@0 384; broadcast-to-partial(max)@1 0");
}

TEST(BoxingPlannerTest, LargeTensorsUseHierarchicalAllReduce) {
  // 4 MiB: bandwidth dominates, so reduce-scatter, all-reduce the quarter...
  // beats two full all-reduces (6 MiB vs 8 MiB per device on 2x2).
  std::optional<BoxingPlan> p =
      planBoxing(mesh({2, 2}), {1024, 1024}, 4, nd("[P, P]"), nd("[B, B]"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->steps.size(), 3u);
  EXPECT_EQ(p->bytesPerDevice, 3 * (1 << 21));
  EXPECT_EQ(p->steps.front().kind, BoxingKind::ReduceScatter);
  EXPECT_EQ(p->steps.back().kind, BoxingKind::AllGather);
}

TEST(BoxingPlannerTest, SlowAxisCostsMore) {
  Mesh m = mesh({8, 4}, {"ib", "nvlink"});
  // 4 MiB: large enough that IB's bandwidth, not its 46 us, dominates (at
  // 256 KiB the direct all-reduce is as fast).
  llvm::SmallVector<int64_t> shape{64, 16384};
  std::optional<BoxingStep> slow = planOneAxisStep(
      m, shape, 4, nd("[P, B]"), nd("[B, B]"), 0);
  std::optional<BoxingStep> fast = planOneAxisStep(
      m, shape, 4, nd("[B, P]"), nd("[B, B]"), 1);
  ASSERT_TRUE(slow && fast);
  EXPECT_GT(slow->seconds, 3 * fast->seconds);
  // The planner uses the fast axis to shrink what crosses the slow one:
  // slice on NVLink, all-reduce a quarter over IB, all-gather on NVLink.
  std::optional<BoxingPlan> p =
      planBoxing(m, shape, 4, nd("[P, B]"), nd("[B, B]"));
  ASSERT_TRUE(p);
  EXPECT_LT(p->seconds, slow->seconds);
  EXPECT_EQ(summary(*p), "local-slice@1 0; all-reduce@0 1835008; all-gather@1 3145728");
}

// Slicing a value into the micro-batches means it was computed for all of
// them at once (their activations alive together): priced like a join.
TEST(BoxingPlannerTest, SlicingIntoMicroBatchesCostsAJoin) {
  Mesh m = mesh({2, 4}, {"nvlink", "sequential"});
  std::optional<BoxingStep> slice =
      planOneAxisStep(m, {64, 32}, 4, nd("[S(0), B]"), nd("[S(0), S(0)]"), 1);
  ASSERT_TRUE(slice);
  EXPECT_EQ(slice->bytesPerDevice, 0);
  EXPECT_DOUBLE_EQ(slice->seconds, 1.0);
  std::optional<BoxingStep> parallel = planOneAxisStep(
      mesh({2, 4}, {"nvlink", "nvlink"}), {64, 32}, 4, nd("[S(0), B]"), nd("[S(0), S(0)]"), 1);
  ASSERT_TRUE(parallel);
  EXPECT_EQ(parallel->seconds, 0);
}

TEST(BoxingPlannerTest, SequentialAxisDividesNoCollective) {
  // --micro-batches' axis: its "devices" are one device taking turns. A
  // collective on another axis of a value split over it runs once per turn
  // on its piece: the whole value's bytes, a latency per turn.
  Mesh m = mesh({8, 4}, {"ib", "sequential"});
  llvm::SmallVector<int64_t> shape{64, 16384};
  std::optional<BoxingStep> whole =
      planOneAxisStep(m, shape, 4, nd("[P, B]"), nd("[B, B]"), 0);
  std::optional<BoxingStep> turns =
      planOneAxisStep(m, shape, 4, nd("[P, S(0)]"), nd("[B, S(0)]"), 0);
  ASSERT_TRUE(whole && turns);
  EXPECT_EQ(turns->bytesPerDevice, whole->bytesPerDevice);
  EXPECT_DOUBLE_EQ(turns->seconds, whole->seconds + 3 * 46e-6);
  // On a parallel axis the same split quarters what crosses IB.
  Mesh parallel = mesh({8, 4}, {"ib", "nvlink"});
  std::optional<BoxingStep> quarter =
      planOneAxisStep(parallel, shape, 4, nd("[P, S(0)]"), nd("[B, S(0)]"), 0);
  ASSERT_TRUE(quarter);
  EXPECT_EQ(quarter->bytesPerDevice * 4, whole->bytesPerDevice);
  // So summing the micro-batches' gradients shrinks nothing that crosses
  // the network: the planner sums them first (a local all-reduce), then
  // all-reduces once, instead of splitting the reduction over the turns.
  std::optional<BoxingPlan> p = planBoxing(m, shape, 4, nd("[P, P]"), nd("[B, B]"));
  ASSERT_TRUE(p);
  EXPECT_EQ(summary(*p), "all-reduce@1 6291456; all-reduce@0 7340032");
  int64_t networkBytes = 0;
  for (const BoxingStep &s : p->steps)
    networkBytes += s.meshAxis == 0 ? s.bytesPerDevice : 0;
  EXPECT_EQ(networkBytes, whole->bytesPerDevice);
  // Joining the turns (all-gather on the sequential axis) would keep every
  // micro-batch's activations alive together: priced as a last resort.
  std::optional<BoxingStep> join =
      planOneAxisStep(m, shape, 4, nd("[B, S(0)]"), nd("[B, B]"), 1);
  ASSERT_TRUE(join);
  EXPECT_GE(join->seconds, 1.0);
  std::optional<BoxingStep> sum =
      planOneAxisStep(m, shape, 4, nd("[B, P]"), nd("[B, B]"), 1);
  ASSERT_TRUE(sum);
  EXPECT_LT(sum->seconds, 1e-3);
  // The same join in two steps: S -> P(sum) (each turn's piece padded with
  // zeros) and the sum; and a reduce-scatter, the sum over every turn
  // sliced into them. Both wait for every micro-batch: priced as joins.
  std::optional<BoxingStep> toPartial =
      planOneAxisStep(m, shape, 4, nd("[B, S(0)]"), nd("[B, P]"), 1);
  ASSERT_TRUE(toPartial);
  EXPECT_EQ(toPartial->kind, BoxingKind::SplitToPartial);
  EXPECT_GE(toPartial->seconds, 1.0);
  std::optional<BoxingStep> scatter =
      planOneAxisStep(m, shape, 4, nd("[B, P]"), nd("[B, S(0)]"), 1);
  ASSERT_TRUE(scatter);
  EXPECT_EQ(scatter->kind, BoxingKind::ReduceScatter);
  EXPECT_GE(scatter->seconds, 1.0);
  // A whole plan from split to whole on the sequential axis finds no way
  // around the price.
  std::optional<BoxingPlan> around = planBoxing(m, shape, 4, nd("[B, S(0)]"), nd("[B, B]"));
  ASSERT_TRUE(around);
  EXPECT_GE(around->seconds, 1.0);
}

TEST(BoxingPlannerTest, EveryPairIsWellFormedAndDeterministic) {
  const char *entries[] = {"B", "S(0)", "S(1)", "P(sum)", "P(max)"};
  for (Mesh m : {mesh({2, 2}), mesh({4, 2}), mesh({8, 4}, {"ib", "nvlink"})}) {
    llvm::SmallVector<int64_t> shape{16, 32};
    int planned = 0;
    for (const char *a0 : entries)
      for (const char *a1 : entries)
        for (const char *b0 : entries)
          for (const char *b1 : entries) {
            NdSbp from = nd(std::string(a0) + "," + a1);
            NdSbp to = nd(std::string(b0) + "," + b1);
            std::optional<BoxingPlan> p = planBoxing(m, shape, 4, from, to);
            bool valid = isValidLayout(m, shape, from) && isValidLayout(m, shape, to);
            ASSERT_EQ(bool(p), valid) << str(from) << " -> " << str(to);
            if (!p)
              continue;
            ++planned;
            expectWellFormed(m, shape, from, to, *p);
            std::optional<BoxingPlan> again = planBoxing(m, shape, 4, from, to);
            EXPECT_EQ(again->str(), p->str());
            // Never worse than the direct step, where there is one.
            for (int64_t a = 0; a < 2; ++a)
              if (auto direct = planOneAxisStep(m, shape, 4, from, to, a)) {
                EXPECT_LE(p->seconds, direct->seconds * (1 + 1e-9));
              }
          }
    EXPECT_GT(planned, 300);
  }
}

} // namespace
