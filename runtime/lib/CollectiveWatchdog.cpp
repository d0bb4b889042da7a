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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace oflow_rt {
namespace {

std::atomic<double> gTimeout{0};
std::atomic<int64_t> gStep{-1};
// The collective in progress: a sequence number (0 for none), its name and
// mesh axis (-1: all ranks).
std::atomic<uint64_t> gSerial{0};
std::atomic<const char *> gWhat{nullptr};
std::atomic<int64_t> gAxis{-1};
uint64_t gCount = 0; // collectives started (main thread only)

/// Time is counted by the watchdog's own wake-ups, each worth at most twice
/// its requested sleep: a job suspended as a whole (SIGSTOP to every rank,
/// a debugger) does not time out the moment it continues.
void watch() {
  uint64_t watched = 0;
  double waited = 0;
  for (;;) {
    double timeout = gTimeout.load();
    double nap = std::min(1.0, std::max(0.05, timeout / 20));
    auto before = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(nap));
    double slept = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    uint64_t serial = gSerial.load();
    if (!serial || serial != watched) {
      watched = serial;
      waited = 0;
      continue;
    }
    waited += std::min(slept, 2 * nap);
    if (waited < timeout)
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
    // Not MPI_Abort: MPI runs single-threaded here and the main thread is
    // inside a call. mpirun ends the job when a rank exits.
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

WatchedCollective::WatchedCollective(const char *what, int64_t axis)
    : savedSerial(gSerial.load()), savedWhat(gWhat.load()), savedAxis(gAxis.load()) {
  gWhat.store(what);
  gAxis.store(axis);
  gSerial.store(++gCount);
}

WatchedCollective::~WatchedCollective() {
  // An enclosing watched collective, if any, is watched again (afresh).
  gWhat.store(savedWhat);
  gAxis.store(savedAxis);
  gSerial.store(savedSerial ? ++gCount : 0);
}

} // namespace detail
} // namespace oflow_rt
