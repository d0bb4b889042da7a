//===- Heartbeats.h - the watchdog's heartbeats over MPI ---------*- C++ -*-===//
//
// Private to the runtime (CollectiveWatchdog.cpp). Each rank's watchdog
// thread sends rank 0 what it is doing (which collective it waits in, for
// how long, in which step) every nap; rank 0 sends its own to every rank.
// The messages go over a communicator of their own (a duplicate of
// MPI_COMM_WORLD), from the watchdog's thread, so MPI must run in
// MPI_THREAD_MULTIPLE. A rank that stops (SIGSTOP, a node that hangs) stops
// sending; one busy or hung in computation or I/O keeps sending, outside any
// collective.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_HEARTBEATS_H
#define OFLOW_RT_LIB_HEARTBEATS_H

#include "CollectiveWatchdog.h"

#include <memory>

namespace oflow_rt::detail {

class Heartbeats {
public:
  /// Collective over every rank (duplicates MPI_COMM_WORLD); null when MPI
  /// does not run or runs without MPI_THREAD_MULTIPLE. `now`: the
  /// watchdog's clock.
  static std::unique_ptr<Heartbeats> start(double now);
  ~Heartbeats();

  /// This rank's state, sent now; then every heartbeat that has arrived is
  /// taken in. From the watchdog's thread only.
  void exchange(double now, const PeerState &mine);
  /// What this rank knows of the others: rank 0 of every rank, the others
  /// of rank 0 alone.
  std::vector<PeerState> peers(double now) const;

private:
  struct Impl;
  explicit Heartbeats(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace oflow_rt::detail

#endif
