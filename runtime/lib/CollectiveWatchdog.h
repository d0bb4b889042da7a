//===- CollectiveWatchdog.h - --collective-timeout's parts -------*- C++ -*-===//
//
// Private to the runtime. MPI and NCCL never time out: when one rank stops,
// the others wait in their next collective forever. The watchdog is a
// thread that times the collective each rank waits in and ends the job with
// oflow's message once one has waited longer than --collective-timeout.
// Two kinds of waiting are watched:
//   - host collectives (MPI, the CPU target and the runtime's own
//     agreements): the calling thread is inside the call, marked by
//     WatchedCollective (MpiWorld.h);
//   - collectives enqueued on a device stream (NCCL, the CUDA target): the
//     host has moved on and blocks later, wherever it waits for the stream.
//     StreamCollectives records a mark on the stream before and after each
//     one; a collective waits from when the stream passes its first mark
//     until it passes its second.
// With MPI running, each rank's watchdog also exchanges heartbeats with
// rank 0 on a communicator of their own, so the message names the ranks
// that are silent (stopped, or hung where not even a thread runs) or that
// are alive outside any collective.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_COLLECTIVEWATCHDOG_H
#define OFLOW_RT_LIB_COLLECTIVEWATCHDOG_H

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace oflow_rt::detail {

/// What a device stream offers the watchdog (CUDA events and NCCL
/// communicators on the GPU; a fake in the tests). passed() and release()
/// are called from the watchdog's thread.
class StreamMarks {
public:
  virtual ~StreamMarks() = default;
  /// A mark recorded on the stream after the work enqueued so far.
  virtual void *mark() = 0;
  /// Whether the stream has run past `m` (never blocks).
  virtual bool passed(void *m) = 0;
  virtual void release(void *m) = 0;
  /// Ends the communicators so that the device stops waiting for peers
  /// (ncclCommAbort); called once, before the job ends on a timeout.
  virtual void abortCommunicators() = 0;
};

/// The collectives enqueued on one stream, oldest first.
class StreamCollectives {
public:
  explicit StreamCollectives(StreamMarks &marks) : marks(marks) {}
  ~StreamCollectives();
  /// Around each enqueued collective: begin() before, end() after. Nothing
  /// is recorded while no watchdog runs.
  void begin(const char *what, int64_t axis);
  void end();

  struct Waiting {
    uint64_t serial; // distinct per collective
    const char *what;
    int64_t axis, step;
  };
  /// The oldest collective the stream has reached and not passed (those
  /// passed are dropped).
  std::optional<Waiting> waiting();
  StreamMarks &backend() { return marks; }

private:
  struct Entry {
    uint64_t serial;
    const char *what;
    int64_t axis, step;
    void *before, *after;
  };
  void dropPassedLocked();
  StreamMarks &marks;
  std::mutex mutex;
  std::deque<Entry> entries;
  uint64_t count = 0;
};

/// The stream the watchdog also watches (null: none). The caller keeps it
/// alive until it unregisters it.
void watchStream(StreamCollectives *stream);

/// Starts the watchdog thread (or changes its timeout). `heartbeats`: with
/// MPI running in MPI_THREAD_MULTIPLE, exchange heartbeats with rank 0.
void startWatchdog(double seconds, bool heartbeats);
/// Stops and joins the thread, ending the heartbeats (before MPI_Finalize).
void stopWatchdog();

/// What a rank last told about itself in a heartbeat.
struct PeerState {
  int64_t rank = 0;
  bool heard = false;    // a heartbeat has arrived
  double age = 0;        // seconds since the last one (or since the start)
  bool inCollective = false;
  std::string what;      // the collective it waits in
  int64_t axis = -1, step = -1;
  double waited = 0;     // how long it has waited there
};
/// The part of the timeout message that names the ranks holding the others
/// up: those silent for more than `silentAfter` seconds, then those alive
/// outside any collective, then those waiting in a collective other than
/// (what, axis, step). Empty when every rank waits in that one.
std::string describePeers(const std::vector<PeerState> &peers, double silentAfter,
                          const std::string &what, int64_t axis, int64_t step);
/// "all_reduce on mesh axis 1 in step 5" (axis -1: over all ranks; step -1:
/// before the first step).
std::string collectiveText(const std::string &what, int64_t axis, int64_t step);

} // namespace oflow_rt::detail

#endif
