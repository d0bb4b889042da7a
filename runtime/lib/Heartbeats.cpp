//===- Heartbeats.cpp - the watchdog's heartbeats over MPI ----------------===//
#include "Heartbeats.h"
#include "MpiWorld.h"

#include <algorithm>
#include <cstring>

namespace oflow_rt::detail {

namespace {
constexpr int kTag = 7001;

/// One heartbeat on the wire (every rank runs the same executable).
struct Beat {
  int64_t step;
  int64_t axis;
  double waited;
  int32_t inCollective;
  char what[44];
};

struct Peer {
  bool heard = false;
  double at = 0; // the watchdog clock when its last heartbeat arrived
  Beat beat{};
};
} // namespace

struct Heartbeats::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  double started = 0;
  std::vector<Peer> peers;      // by rank
  std::vector<Beat> outgoing;   // one buffer per destination
  std::vector<MPI_Request> sends;
};

Heartbeats::Heartbeats(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}

std::unique_ptr<Heartbeats> Heartbeats::start(double now) {
  if (!isDistributed() || !mpiThreadsOk())
    return nullptr;
  auto impl = std::make_unique<Impl>();
  check(MPI_Comm_dup(MPI_COMM_WORLD, &impl->comm), "MPI_Comm_dup (heartbeats)");
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->size);
  impl->started = now;
  impl->peers.resize(impl->size);
  impl->outgoing.resize(impl->size);
  impl->sends.assign(impl->size, MPI_REQUEST_NULL);
  return std::unique_ptr<Heartbeats>(new Heartbeats(std::move(impl)));
}

Heartbeats::~Heartbeats() {
  Impl &h = *impl;
  // Every rank has stopped sending once all are past this barrier.
  MPI_Barrier(h.comm);
  bool pending = false;
  for (MPI_Request &r : h.sends) {
    int done = 1;
    if (r != MPI_REQUEST_NULL)
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) { // its buffer must outlive the send: leaked below
      MPI_Request_free(&r);
      pending = true;
    }
  }
  for (int more = 1; more;) { // heartbeats that arrived and were never read
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, h.comm, &more, &st);
    if (more) {
      Beat b;
      MPI_Recv(&b, sizeof b, MPI_BYTE, st.MPI_SOURCE, kTag, h.comm, MPI_STATUS_IGNORE);
    }
  }
  MPI_Comm_free(&h.comm);
  if (pending)
    (void)impl.release();
}

void Heartbeats::exchange(double now, const PeerState &mine) {
  Impl &h = *impl;
  Beat b{};
  b.step = mine.step;
  b.axis = mine.axis;
  b.waited = mine.waited;
  b.inCollective = mine.inCollective;
  std::strncpy(b.what, mine.what.c_str(), sizeof b.what - 1);
  for (int to = 0; to < h.size; ++to) {
    if (to == h.rank || (h.rank != 0 && to != 0))
      continue;
    // At most one heartbeat in flight per peer: one that does not take
    // them (stopped) costs nothing more.
    int done = 1;
    if (h.sends[to] != MPI_REQUEST_NULL)
      MPI_Test(&h.sends[to], &done, MPI_STATUS_IGNORE);
    if (!done)
      continue;
    h.outgoing[to] = b;
    MPI_Isend(&h.outgoing[to], sizeof(Beat), MPI_BYTE, to, kTag, h.comm, &h.sends[to]);
  }
  for (;;) {
    int more = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, h.comm, &more, &st);
    if (!more)
      break;
    Beat in;
    MPI_Recv(&in, sizeof in, MPI_BYTE, st.MPI_SOURCE, kTag, h.comm, MPI_STATUS_IGNORE);
    in.what[sizeof in.what - 1] = 0;
    Peer &p = h.peers[st.MPI_SOURCE];
    p.heard = true;
    p.at = now;
    p.beat = in;
  }
}

std::vector<PeerState> Heartbeats::peers(double now) const {
  const Impl &h = *impl;
  std::vector<PeerState> out;
  for (int r = 0; r < h.size; ++r) {
    if (r == h.rank || (h.rank != 0 && r != 0))
      continue;
    const Peer &p = h.peers[r];
    PeerState s;
    s.rank = r;
    s.heard = p.heard;
    s.age = now - (p.heard ? p.at : h.started);
    s.inCollective = p.heard && p.beat.inCollective;
    s.what = p.beat.what;
    s.axis = p.beat.axis;
    s.step = p.beat.step;
    s.waited = p.beat.waited;
    out.push_back(s);
  }
  return out;
}

} // namespace oflow_rt::detail
