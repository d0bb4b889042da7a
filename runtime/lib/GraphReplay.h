//===- GraphReplay.h - replaying an entry's launches as one graph -*- C++ -*-===//
//
// Private to the runtime. A training step enqueues hundreds of kernels and
// library calls; launching each costs the host ~4 us, replaying them from a
// CUDA graph ~1 us. An entry's host code enqueues the same work with the
// same arguments every call (its buffers never move; scalars such as the
// learning rate and the step live in device memory), so it can be captured
// once and replayed. That is checked, not assumed:
//
//   call 1, call 2  run eagerly, each recording a LaunchTrace (every op's
//                   kind and argument bytes: kernel handle, grid, block,
//                   shared memory, parameter values; a GEMM's or a
//                   collective's arguments);
//   call 3          if the two traces are equal and hold nothing a graph
//                   cannot (synchronizations, allocations), is captured
//                   into a graph, its trace checked once more, and the
//                   graph is launched;
//   calls 4, ...    launch the graph; the host code does not run.
//
// Any difference, anything uncapturable or a failed capture sends the entry
// back to eager calls for good, with the reason kept for a one-line note.
// The policy is independent of CUDA: GraphBackend is CUDA graphs in
// liboflow_runtime_cuda.a and a fake in the tests.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_GRAPHREPLAY_H
#define OFLOW_RT_LIB_GRAPHREPLAY_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace oflow_rt {

/// What one entry call enqueued, in order.
class LaunchTrace {
public:
  /// Appends an op: its kind ("kernel", "gemm", ...) and argument bytes.
  void add(const char *kind, const void *bytes, size_t size);
  /// Notes an op a graph cannot hold ("cudaStreamSynchronize in
  /// mgpuMemFree"); the first reason is kept.
  void addUncapturable(const std::string &why);

  size_t size() const { return kinds.size(); }
  const std::string &uncapturable() const { return why; }
  /// The index of the first op that differs from `o`'s (the shorter
  /// trace's size when one is a prefix of the other), or npos when equal.
  size_t firstDifference(const LaunchTrace &o) const;
  /// "op 17 (kernel)" for messages.
  std::string describe(size_t op) const;

  /// The trace the runtime's enqueueing functions record into (null when
  /// none is being recorded: every eager call after the decision, and
  /// replays).
  static LaunchTrace *active();
  /// Records into `trace` while alive.
  class Scope {
  public:
    explicit Scope(LaunchTrace *trace);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    LaunchTrace *saved;
  };

private:
  std::vector<std::string> kinds;
  std::vector<size_t> ends; // end offset of each op's bytes
  std::string bytes;
  std::string why;
};

/// Notes, in the trace being recorded (if any), a call a graph cannot hold.
void noteUncapturable(const char *what);

/// The graph operations the policy needs, on the runtime's compute stream.
class GraphBackend {
public:
  virtual ~GraphBackend() = default;
  /// Work enqueued from now on is recorded, not run.
  virtual void beginCapture() = 0;
  /// Ends the capture and makes the graph launchable; false with `why` set
  /// when that failed (nothing captured has run, no graph is kept).
  virtual bool endCapture(std::string &why) = 0;
  /// Enqueues the graph's work.
  virtual void launch() = 0;
  /// Drops the graph.
  virtual void discard() = 0;
};

/// One entry's calls: eager, then captured once, then replayed (above).
class EntryGraph {
public:
  /// `enabled` false (--no-cuda-graph, OFLOW_CUDA_PROFILE): every call is
  /// eager and `reason` says why.
  EntryGraph(std::unique_ptr<GraphBackend> backend, bool enabled, std::string reason = "");

  /// Runs one call; `enqueue` runs the entry's host code.
  void call(const std::function<void()> &enqueue);

  bool replaying() const { return state == State::Replay; }
  /// Why the entry runs eagerly for good; empty while undecided or replaying.
  const std::string &eagerReason() const { return reason; }
  /// Calls that launched the graph (the capturing call included).
  int64_t replays() const { return launches; }
  /// Ops per call (of the recorded traces).
  size_t opsPerCall() const { return first.size(); }

private:
  enum class State { Record1, Record2, Capture, Replay, Eager };
  void giveUp(std::string why);

  std::unique_ptr<GraphBackend> backend;
  State state;
  std::string reason;
  LaunchTrace first;
  int64_t launches = 0;
};

} // namespace oflow_rt

#endif
