//===- GraphReplayTest.cpp - capture and replay of an entry's launches ----===//
//
// The CUDA-graph policy (runtime/lib/GraphReplay.h) driven through a fake
// device: a "kernel" adds its parameter to one accumulator of device
// memory; while a capture is open it is recorded instead of run, and a
// graph launch runs what was recorded. Every test checks the device's
// numbers against the same calls run eagerly, and how often the entry's
// host code ran.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/GraphReplay.h"

#include <gtest/gtest.h>

#include <map>

using namespace oflow_rt;

namespace {

struct FakeDevice {
  std::map<int, double> memory;
  bool capturing = false;
  bool failCapture = false;
  std::vector<std::pair<int, double>> captured, graph;
  std::vector<std::string> events;

  /// Enqueues "memory[slot] += value", as mgpuLaunchKernel would.
  void launch(int slot, double value) {
    if (LaunchTrace *t = LaunchTrace::active()) {
      double args[2] = {static_cast<double>(slot), value}; // no padding bytes
      t->add("kernel", args, sizeof args);
    }
    if (capturing)
      captured.push_back({slot, value});
    else
      memory[slot] += value;
  }
  /// Something a graph cannot hold (a synchronization).
  void synchronize() {
    if (LaunchTrace *t = LaunchTrace::active())
      t->addUncapturable("cudaStreamSynchronize in mgpuMemFree");
  }
};

class FakeGraphs final : public GraphBackend {
public:
  explicit FakeGraphs(FakeDevice &d) : d(d) {}
  void beginCapture() override {
    d.events.push_back("begin");
    d.capturing = true;
    d.captured.clear();
  }
  bool endCapture(std::string &why) override {
    d.events.push_back("end");
    d.capturing = false;
    if (d.failCapture) {
      why = "cudaErrorStreamCaptureInvalidated";
      d.captured.clear();
      return false;
    }
    d.graph = d.captured;
    return true;
  }
  void launch() override {
    d.events.push_back("launch");
    for (auto [slot, value] : d.graph)
      d.memory[slot] += value;
  }
  void discard() override {
    d.events.push_back("discard");
    d.graph.clear();
  }

private:
  FakeDevice &d;
};

/// A step's host code: two kernels, the second's parameter from `lr(call)`.
struct Step {
  FakeDevice &d;
  std::function<double(int)> lr = [](int) { return 0.5; };
  std::function<bool(int)> syncs = [](int) { return false; };
  int hostRuns = 0;
  void operator()() {
    ++hostRuns;
    d.launch(0, 1.0);
    if (syncs(hostRuns))
      d.synchronize();
    d.launch(1, lr(hostRuns));
  }
};

EntryGraph graphOf(FakeDevice &d, bool enabled = true) {
  return EntryGraph(std::make_unique<FakeGraphs>(d), enabled, enabled ? "" : "--no-cuda-graph");
}

} // namespace

TEST(GraphReplay, SameWorkIsCapturedOnTheThirdCallThenReplayed) {
  FakeDevice d;
  Step step{d};
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 6; ++call)
    g.call(std::ref(step));
  EXPECT_TRUE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "");
  EXPECT_EQ(step.hostRuns, 3); // calls 1 and 2 eager, call 3 captured
  EXPECT_EQ(g.replays(), 4);
  EXPECT_EQ(g.opsPerCall(), 2u);
  EXPECT_EQ(d.events, (std::vector<std::string>{"begin", "end", "launch", "launch", "launch",
                                                "launch"}));
  EXPECT_DOUBLE_EQ(d.memory[0], 6.0); // as six eager calls
  EXPECT_DOUBLE_EQ(d.memory[1], 3.0);
}

TEST(GraphReplay, OtherArgumentsOnTheSecondCallStayEager) {
  FakeDevice d;
  Step step{d};
  step.lr = [](int call) { return 0.1 * call; }; // a host-side schedule
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 5; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "call 2 enqueued other work than call 1 (op 2 of 2 (kernel))");
  EXPECT_EQ(step.hostRuns, 5);
  EXPECT_TRUE(d.events.empty());
  EXPECT_NEAR(d.memory[1], 0.1 + 0.2 + 0.3 + 0.4 + 0.5, 1e-12);
}

TEST(GraphReplay, OtherWorkOnTheCapturingCallIsDiscardedAndRunEagerly) {
  FakeDevice d;
  Step step{d};
  step.lr = [](int call) { return call == 3 ? 2.0 : 0.5; };
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 4; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "call 3 enqueued other work than calls 1 and 2 (op 2 of 2 (kernel))");
  EXPECT_EQ(d.events, (std::vector<std::string>{"begin", "end", "discard"}));
  EXPECT_EQ(step.hostRuns, 5); // call 3's host code ran again, eagerly
  EXPECT_DOUBLE_EQ(d.memory[0], 4.0);
  // The captured 2.0 never ran; the host code's 4th and 5th runs gave 0.5.
  EXPECT_DOUBLE_EQ(d.memory[1], 4 * 0.5);
}

TEST(GraphReplay, UncapturableWorkStaysEager) {
  FakeDevice d;
  Step step{d};
  step.syncs = [](int) { return true; };
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 4; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "cudaStreamSynchronize in mgpuMemFree");
  EXPECT_EQ(step.hostRuns, 4);
  EXPECT_TRUE(d.events.empty());
  EXPECT_DOUBLE_EQ(d.memory[0], 4.0);
}

TEST(GraphReplay, UncapturableWorkOnTheSecondCallStaysEager) {
  FakeDevice d;
  Step step{d};
  step.syncs = [](int call) { return call == 2; };
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 3; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "cudaStreamSynchronize in mgpuMemFree");
  EXPECT_TRUE(d.events.empty());
}

TEST(GraphReplay, AFailedCaptureRunsTheCallEagerly) {
  FakeDevice d;
  d.failCapture = true;
  Step step{d};
  EntryGraph g = graphOf(d);
  for (int call = 1; call <= 4; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "the capture failed: cudaErrorStreamCaptureInvalidated");
  EXPECT_EQ(d.events, (std::vector<std::string>{"begin", "end"}));
  EXPECT_EQ(step.hostRuns, 5);
  EXPECT_DOUBLE_EQ(d.memory[0], 4.0); // no call lost, none doubled
  EXPECT_DOUBLE_EQ(d.memory[1], 2.0);
}

TEST(GraphReplay, DisabledIsEagerWithItsReason) {
  FakeDevice d;
  Step step{d};
  EntryGraph g = graphOf(d, /*enabled=*/false);
  for (int call = 1; call <= 3; ++call)
    g.call(std::ref(step));
  EXPECT_FALSE(g.replaying());
  EXPECT_EQ(g.eagerReason(), "--no-cuda-graph");
  EXPECT_EQ(step.hostRuns, 3);
  EXPECT_EQ(LaunchTrace::active(), nullptr);
}

TEST(GraphReplay, TracesCompareKindsAndBytes) {
  LaunchTrace a, b;
  int x = 1, y = 2;
  a.add("kernel", &x, sizeof x);
  b.add("kernel", &x, sizeof x);
  EXPECT_EQ(a.firstDifference(b), std::string::npos);
  a.add("gemm", &x, sizeof x);
  b.add("kernel", &x, sizeof x);
  EXPECT_EQ(a.firstDifference(b), 1u);
  LaunchTrace c;
  c.add("kernel", &x, sizeof x);
  EXPECT_EQ(a.firstDifference(c), 1u); // a prefix
  EXPECT_EQ(c.describe(1), "op 2 of 1 (none: it ended)");
  LaunchTrace e;
  e.add("kernel", &y, sizeof y);
  EXPECT_EQ(c.firstDifference(e), 0u);
}
