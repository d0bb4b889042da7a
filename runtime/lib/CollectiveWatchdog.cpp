//===- CollectiveWatchdog.cpp - --collective-timeout ----------------------===//
//
// See CollectiveWatchdog.h. The thread wakes every nap (1 s, less for short
// timeouts), finds what this rank waits in (a host collective first, else
// the oldest collective its device stream is in), exchanges heartbeats, and
// decides:
//   - rank 0 ends the job when it, or any rank by its heartbeat, has waited
//     the timeout, naming the ranks that hold the others up;
//   - another rank that has waited the timeout leaves that to rank 0 while
//     rank 0's heartbeats arrive (so the job ends with the one message that
//     knows every rank), and ends the job itself when rank 0 is silent or
//     has not acted after a grace of a few naps.
// Ending the job: the message on stderr, the stream's communicators aborted
// (the GPU stops waiting), MPI_Abort.
//
//===----------------------------------------------------------------------===//
#include "CollectiveWatchdog.h"
#include "Heartbeats.h"
#include "MpiWorld.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace oflow_rt {
namespace detail {
namespace {

std::atomic<double> gTimeout{0};
std::atomic<int64_t> gStep{-1};
// The host collective in progress: a sequence number (0 for none), its
// name and mesh axis (-1: all ranks).
std::atomic<uint64_t> gSerial{0};
std::atomic<const char *> gWhat{nullptr};
std::atomic<int64_t> gAxis{-1};
uint64_t gCount = 0; // host collectives started (main thread only)

std::mutex gStreamMutex; // guards gStream against watchStream(nullptr)
StreamCollectives *gStream = nullptr;

// Never destroyed: a rank that exits without stopping it must not terminate.
std::thread *gThread = nullptr;
std::atomic<bool> gStop{false};
// Never destroyed, like the thread that may be waiting on them at exit.
std::mutex &gSleepMutex = *new std::mutex;
std::condition_variable &gWake = *new std::condition_variable;
// A raw pointer, deleted only by stopWatchdog: a process that exits without
// it must not reach MPI from a static destructor.
Heartbeats *gBeats = nullptr;

/// Stream collectives' serials, apart from the host's.
constexpr uint64_t kStreamSerial = uint64_t(1) << 63;

struct Current {
  uint64_t serial = 0; // 0: in no collective
  std::string what;
  int64_t axis = -1, step = -1;
};

Current current() {
  Current c;
  c.step = gStep.load();
  if (uint64_t s = gSerial.load()) {
    const char *what = gWhat.load();
    c.serial = s;
    c.what = what ? what : "a collective";
    c.axis = gAxis.load();
    return c;
  }
  std::lock_guard<std::mutex> lock(gStreamMutex);
  if (gStream)
    if (auto w = gStream->waiting()) {
      c.serial = kStreamSerial | w->serial;
      c.what = w->what;
      c.axis = w->axis;
      c.step = w->step;
    }
  return c;
}

[[noreturn]] void endJob(const std::string &line) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  {
    std::lock_guard<std::mutex> lock(gStreamMutex);
    if (gStream)
      gStream->backend().abortCommunicators();
  }
  // MPI_Abort from this thread needs MPI_THREAD_MULTIPLE; without it the
  // rank exits and mpirun ends the job when it sees a rank gone.
  if (isDistributed() && mpiThreadsOk())
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

std::string timeoutLine(int64_t subject, const Current &c, double timeout,
                        const std::string &why) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout);
  std::string who = subject == worldRank() ? "" : "rank " + std::to_string(subject) + "'s ";
  return "error: rank " + std::to_string(worldRank()) + ": " + who +
         collectiveText(c.what, c.axis, c.step) + " has waited " + secs +
         " s for the other ranks (--collective-timeout): " +
         (why.empty() ? "a rank is stuck or gone" : why) + "; ending the job";
}

/// Time is counted by the watchdog's own wake-ups, each worth at most twice
/// its requested sleep: a job suspended as a whole (SIGSTOP to every rank,
/// a debugger) does not time out the moment it continues.
void watch() {
  double clock = 0, waited = 0;
  uint64_t watched = 0;
  while (!gStop.load()) {
    double timeout = gTimeout.load();
    double nap = std::min(1.0, std::max(0.05, timeout / 20));
    auto before = std::chrono::steady_clock::now();
    {
      // Woken early by stopWatchdog, so a clean exit does not wait a nap.
      std::unique_lock<std::mutex> lock(gSleepMutex);
      gWake.wait_for(lock, std::chrono::duration<double>(nap), [] { return gStop.load(); });
    }
    if (gStop.load())
      return;
    double slept = std::min(
        2 * nap,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
    clock += slept;
    Current c = current();
    if (c.serial != watched) {
      watched = c.serial;
      waited = 0;
    } else if (c.serial) {
      waited += slept;
    }
    PeerState mine;
    mine.rank = worldRank();
    mine.heard = true;
    mine.inCollective = c.serial != 0;
    mine.what = c.what;
    mine.axis = c.axis;
    mine.step = c.step;
    mine.waited = waited;
    std::vector<PeerState> peers;
    if (gBeats) {
      gBeats->exchange(clock, mine);
      peers = gBeats->peers(clock);
    }
    // Silent: no heartbeat for several naps and half the timeout (at most
    // 10 s), so a briefly descheduled thread is not taken for a stopped rank.
    double silentAfter = std::max(4 * nap, std::min(timeout / 2, 10.0));
    bool timedOut = c.serial && waited >= timeout;
    if (!gBeats || mine.rank == 0) {
      if (timedOut)
        endJob(timeoutLine(mine.rank, c, timeout,
                           describePeers(peers, silentAfter, c.what, c.axis, c.step)));
      for (const PeerState &p : peers) {
        if (!p.inCollective || p.waited < timeout)
          continue;
        std::vector<PeerState> all = peers;
        all.push_back(mine);
        Current theirs{1, p.what, p.axis, p.step};
        endJob(timeoutLine(p.rank, theirs, timeout,
                           describePeers(all, silentAfter, p.what, p.axis, p.step)));
      }
      continue;
    }
    if (!timedOut)
      continue;
    bool rootSilent = !peers.empty() && peers.front().age > silentAfter;
    double grace = std::max(2.0, 4 * nap);
    if (rootSilent || waited >= timeout + grace)
      endJob(timeoutLine(mine.rank, c, timeout,
                         rootSilent ? describePeers(peers, silentAfter, c.what, c.axis, c.step)
                                    : ""));
  }
}

std::string rankList(const std::vector<int64_t> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

} // namespace

std::string collectiveText(const std::string &what, int64_t axis, int64_t step) {
  std::string where = axis < 0 ? "over all ranks" : "on mesh axis " + std::to_string(axis);
  std::string at = step < 0 ? "before the first step" : "in step " + std::to_string(step);
  return what + " " + where + " " + at;
}

std::string describePeers(const std::vector<PeerState> &peers, double silentAfter,
                          const std::string &what, int64_t axis, int64_t step) {
  std::vector<PeerState> sorted = peers;
  std::sort(sorted.begin(), sorted.end(),
            [](const PeerState &a, const PeerState &b) { return a.rank < b.rank; });
  std::vector<int64_t> silent;
  double quiet = 1e300;
  std::vector<std::string> busy, elsewhere;
  for (const PeerState &p : sorted) {
    if (p.age > silentAfter) {
      silent.push_back(p.rank);
      quiet = std::min(quiet, p.age);
    } else if (!p.heard) {
      continue; // not heard yet, not silent long enough to say so
    } else if (!p.inCollective) {
      busy.push_back("rank " + std::to_string(p.rank) + " is alive in no collective (" +
                     (p.step < 0 ? std::string("before the first step")
                                 : "in step " + std::to_string(p.step)) +
                     ": computing, or hung in I/O)");
    } else if (p.what != what || p.axis != axis || p.step != step) {
      elsewhere.push_back("rank " + std::to_string(p.rank) + " waits in " +
                          collectiveText(p.what, p.axis, p.step));
    }
  }
  std::vector<std::string> parts;
  if (!silent.empty()) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", quiet);
    parts.push_back(rankList(silent) + (silent.size() == 1 ? " has" : " have") +
                    " sent no heartbeat for " + secs + " s" +
                    (silent.size() == 1 ? " (stopped, dead, or its node hangs)"
                                        : " or more (stopped, dead, or their nodes hang)"));
  }
  parts.insert(parts.end(), busy.begin(), busy.end());
  parts.insert(parts.end(), elsewhere.begin(), elsewhere.end());
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? "; " : "") + parts[i];
  return s;
}

StreamCollectives::~StreamCollectives() {
  std::lock_guard<std::mutex> lock(mutex);
  for (Entry &e : entries) {
    marks.release(e.before);
    marks.release(e.after);
  }
}

void StreamCollectives::begin(const char *what, int64_t axis) {
  if (gTimeout.load() <= 0)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  dropPassedLocked();
  entries.push_back({++count, what, axis, gStep.load(), marks.mark(), nullptr});
}

void StreamCollectives::end() {
  if (gTimeout.load() <= 0)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (!it->after) {
      it->after = marks.mark();
      return;
    }
}

void StreamCollectives::dropPassedLocked() {
  while (!entries.empty() && entries.front().after &&
         marks.passed(entries.front().after)) {
    marks.release(entries.front().before);
    marks.release(entries.front().after);
    entries.pop_front();
  }
}

std::optional<StreamCollectives::Waiting> StreamCollectives::waiting() {
  std::lock_guard<std::mutex> lock(mutex);
  dropPassedLocked();
  if (entries.empty() || !marks.passed(entries.front().before))
    return std::nullopt;
  const Entry &e = entries.front();
  return Waiting{e.serial, e.what, e.axis, e.step};
}

void watchStream(StreamCollectives *stream) {
  std::lock_guard<std::mutex> lock(gStreamMutex);
  gStream = stream;
}

void startWatchdog(double seconds, bool heartbeats) {
  if (seconds <= 0)
    return;
  bool running = gTimeout.exchange(seconds) > 0;
  if (running)
    return;
  if (heartbeats)
    gBeats = Heartbeats::start(0).release();
  gStop.store(false);
  gThread = new std::thread(watch);
}

void stopWatchdog() {
  if (!gThread)
    return;
  {
    std::lock_guard<std::mutex> lock(gSleepMutex);
    gStop.store(true);
  }
  gWake.notify_all();
  gThread->join();
  delete gThread;
  gThread = nullptr;
  delete gBeats;
  gBeats = nullptr;
  gTimeout.store(0);
}

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

void setCollectiveTimeout(double seconds) {
  if (!isDistributed() || seconds <= 0)
    return;
  detail::startWatchdog(seconds, /*heartbeats=*/true);
}

void setCurrentStep(int64_t step) { detail::gStep.store(step); }

} // namespace oflow_rt
