//===- CollectiveWatchdogTest.cpp - --collective-timeout without mpirun ---===//
//
// The watchdog's decisions, its message, and its path for collectives on a
// device stream (NCCL's) through a fake stream whose communicators record
// their abort: NCCL refuses two ranks on one GPU, and CI has none. Each
// case that starts the watchdog runs in a death test's child process (the
// watchdog is one per process and ends it on a timeout). Under mpirun the
// heartbeats are drilled by test/e2e/distributed.py.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/CollectiveWatchdog.h"
#include "../../runtime/lib/MpiWorld.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace oflow_rt;
using namespace oflow_rt::detail;

namespace {

/// A device stream: mark() records the position of the work enqueued so
/// far; the "device" has run up to `done`. Aborting the communicators is
/// printed (the test reads it from stderr) and counted.
class FakeStream final : public StreamMarks {
public:
  void *mark() override { return reinterpret_cast<void *>(++enqueued); }
  bool passed(void *m) override {
    return reinterpret_cast<uintptr_t>(m) <= done.load();
  }
  void release(void *) override { ++released; }
  void abortCommunicators() override {
    ++aborts;
    std::fprintf(stderr, "fake ncclCommAbort\n");
  }
  uintptr_t enqueued = 0;
  std::atomic<uintptr_t> done{0};
  std::atomic<int> released{0}, aborts{0};
};

void sleepFor(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

PeerState peer(int64_t rank, double age, bool inCollective, std::string what = "",
               int64_t axis = -1, int64_t step = -1) {
  PeerState p;
  p.rank = rank;
  p.heard = true;
  p.age = age;
  p.inCollective = inCollective;
  p.what = std::move(what);
  p.axis = axis;
  p.step = step;
  return p;
}

} // namespace

TEST(CollectiveWatchdog, CollectiveText) {
  EXPECT_EQ(collectiveText("all_reduce", 1, 5), "all_reduce on mesh axis 1 in step 5");
  EXPECT_EQ(collectiveText("a barrier", -1, -1), "a barrier over all ranks before the first step");
}

TEST(CollectiveWatchdog, PeersNamedBySilenceThenWork) {
  std::vector<PeerState> peers = {
      peer(3, 12.5, false),                           // silent
      peer(1, 0.5, true, "all_reduce", 0, 7),         // waits with us
      peer(2, 0.4, false, "", -1, 7),                 // alive, computing
      peer(4, 0.3, true, "a gather to rank 0", -1, 7) // waits elsewhere
  };
  EXPECT_EQ(describePeers(peers, 10, "all_reduce", 0, 7),
            "rank 3 has sent no heartbeat for 12.5 s (stopped, dead, or its node hangs); "
            "rank 2 is alive in no collective (in step 7: computing, or hung in I/O); "
            "rank 4 waits in a gather to rank 0 over all ranks in step 7");
  peers.push_back(peer(0, 20, true, "all_reduce", 0, 7));
  EXPECT_EQ(describePeers({peers[0], peers[4]}, 10, "all_reduce", 0, 7),
            "ranks 0, 3 have sent no heartbeat for 12.5 s or more (stopped, dead, or "
            "their nodes hang)");
}

TEST(CollectiveWatchdog, NothingToSayWhenAllWaitTogether) {
  PeerState unheard;
  unheard.rank = 5;
  unheard.age = 1; // not heard from yet, nor silent long enough to say so
  EXPECT_EQ(describePeers({peer(1, 0.2, true, "all_reduce", 0, 2), unheard}, 10,
                          "all_reduce", 0, 2),
            "");
}

TEST(CollectiveWatchdogDeath, HostCollectiveTimesOut) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        startWatchdog(0.2, /*heartbeats=*/false);
        setCurrentStep(4);
        WatchedCollective w("a barrier", -1);
        sleepFor(10);
        std::_Exit(3);
      },
      testing::ExitedWithCode(1),
      "error: rank 0: a barrier over all ranks in step 4 has waited 0.2 s for the "
      "other ranks \\(--collective-timeout\\): a rank is stuck or gone; ending the job");
}

TEST(CollectiveWatchdogDeath, StuckStreamCollectiveAbortsTheCommunicators) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FakeStream stream;
        StreamCollectives collectives(stream);
        watchStream(&collectives);
        startWatchdog(0.3, /*heartbeats=*/false);
        setCurrentStep(3);
        collectives.begin("all_reduce", 1);
        collectives.end();
        stream.done = 1; // the device reached the all_reduce, never leaves it
        sleepFor(10);    // the host waits for the stream (as cudaStreamSynchronize)
        std::_Exit(3);
      },
      testing::ExitedWithCode(1),
      "error: rank 0: all_reduce on mesh axis 1 in step 3 has waited 0.3 s for the "
      "other ranks \\(--collective-timeout\\)[^\n]*\nfake ncclCommAbort");
}

TEST(CollectiveWatchdogDeath, BusyStreamAndFinishedCollectivesDoNotTimeOut) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FakeStream stream;
        StreamCollectives collectives(stream);
        watchStream(&collectives);
        startWatchdog(0.2, /*heartbeats=*/false);
        collectives.begin("all_gather", 0);
        collectives.end();
        // The stream is still busy with the work before the collective
        // (a long kernel): that is not waiting for peers.
        sleepFor(1.0);
        stream.done = 2; // through the collective
        for (int i = 0; i < 20; ++i) { // many collectives, each in time
          collectives.begin("reduce_scatter", 1);
          collectives.end();
          stream.done = stream.enqueued;
          sleepFor(0.05);
        }
        sleepFor(0.5);
        // Passed collectives were dropped (their marks released) as they went.
        std::_Exit(stream.aborts == 0 && stream.released >= 40 ? 0 : 4);
      },
      testing::ExitedWithCode(0), "");
}

TEST(CollectiveWatchdogDeath, NothingRecordedWithoutATimeout) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FakeStream stream;
        StreamCollectives collectives(stream);
        collectives.begin("all_reduce", 0);
        collectives.end();
        std::_Exit(stream.enqueued == 0 && !collectives.waiting() ? 0 : 4);
      },
      testing::ExitedWithCode(0), "");
}
