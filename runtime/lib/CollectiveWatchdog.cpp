//===- CollectiveWatchdog.cpp - --collective-timeout ----------------------===//
//
// MPI does not time out: when one rank stops (SIGSTOP, a hung device, a
// deadlocked filesystem) every other rank waits in its next collective
// forever. A rank that died is noticed by mpirun; a stuck one is not. Each
// rank therefore marks the collective it is in (WatchedCollective), and a
// thread of its own ends the job with oflow's message, naming the
// collective, its mesh axis and the step, once one has waited longer than
// the timeout.
//
//===----------------------------------------------------------------------===//
#include "MpiWorld.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace oflow_rt {
namespace {

std::atomic<double> gTimeout{0};
std::atomic<int64_t> gStep{-1};
// The collective in progress: its start (steady clock, ns; 0 for none),
// name and mesh axis (-1: all ranks).
std::atomic<int64_t> gStartNs{0};
std::atomic<const char *> gWhat{nullptr};
std::atomic<int64_t> gAxis{-1};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void watch() {
  for (;;) {
    double timeout = gTimeout.load();
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::min(1.0, std::max(0.05, timeout / 20))));
    int64_t start = gStartNs.load();
    if (!start || nowNs() - start < timeout * 1e9)
      continue;
    const char *what = gWhat.load();
    int64_t axis = gAxis.load(), step = gStep.load();
    std::string where = axis < 0 ? "over all ranks" : "on mesh axis " + std::to_string(axis);
    std::string at = step < 0 ? "before the first step" : "in step " + std::to_string(step);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "error: rank %lld: %s %s %s has waited %g s for the other ranks "
                 "(--collective-timeout): a rank is stuck or gone; ending the job\n",
                 static_cast<long long>(worldRank()), what ? what : "a collective",
                 where.c_str(), at.c_str(), timeout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }
}

} // namespace

void setCollectiveTimeout(double seconds) {
  if (!isDistributed() || seconds <= 0)
    return;
  bool started = gTimeout.exchange(seconds) > 0;
  if (!started)
    std::thread(watch).detach();
}

void setCurrentStep(int64_t step) { gStep.store(step); }

namespace detail {

WatchedCollective::WatchedCollective(const char *what, int64_t axis) {
  gWhat.store(what);
  gAxis.store(axis);
  gStartNs.store(nowNs());
}

WatchedCollective::~WatchedCollective() { gStartNs.store(0); }

} // namespace detail
} // namespace oflow_rt
