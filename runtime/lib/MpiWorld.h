//===- MpiWorld.h - Distributed.cpp's internals for the collectives -*- C++ -*-===//
//
// Private to the runtime's sources: what the target-specific collectives
// (CollectivesMpi.cpp, CollectivesNccl.cpp) and devices need from the MPI
// world that Distributed.cpp starts.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_MPIWORLD_H
#define OFLOW_RT_LIB_MPIWORLD_H

#include "oflow_rt/Distributed.h"

#define OMPI_SKIP_MPICXX 1 // the C API only: no libmpi_cxx
#include <mpi.h>

#include <cstdint>
#include <string>

namespace oflow_rt::detail {

/// Errors inside calls from generated code (C frames: no exceptions through
/// them): prints `error: rank r: <why>` and ends every rank.
[[noreturn]] void fatal(const std::string &why);
/// Ends the run on an MPI error code.
void check(int rc, const char *what);
MPI_Datatype mpiType(int64_t dtype, int64_t *elemSize);
MPI_Op mpiOp(int64_t op);
/// An element count that one MPI call can take, else fatal.
int countOf(int64_t n, const char *what);
/// The size of mesh axis `axis` (1 without a mesh); fatal when out of range.
int64_t axisSize(int64_t axis, const char *what);
/// Whether a collective on `axis` needs MPI (MPI runs, axis size > 1).
bool useMpi(int64_t axis, const char *what);
/// The communicator of mesh axis `axis` (MPI running).
MPI_Comm axisComm(int64_t axis);
/// Whether MPI runs in MPI_THREAD_MULTIPLE, so the watchdog's thread may
/// call it (heartbeats, MPI_Abort).
bool mpiThreadsOk();

/// Marks the collective `what` on mesh axis `axis` (-1: all ranks) as in
/// progress while alive, for the --collective-timeout watchdog.
class WatchedCollective {
public:
  WatchedCollective(const char *what, int64_t axis);
  ~WatchedCollective();
  WatchedCollective(const WatchedCollective &) = delete;
  WatchedCollective &operator=(const WatchedCollective &) = delete;

private:
  uint64_t savedSerial;
  const char *savedWhat;
  int64_t savedAxis;
};

/// This process's place among the ranks of its node (OpenMPI's
/// OMPI_COMM_WORLD_LOCAL_RANK/SIZE, else MPI's shared-memory split, else
/// 0 of 1): a GPU rank uses the GPU of its local rank.
struct LocalRank {
  int64_t rank = 0, size = 1;
};
LocalRank localRank();
/// The library threads (OpenBLAS, oneDNN) a rank uses without --threads:
/// the cores this process may run on (its affinity mask) divided by the
/// ranks on its node, at least 1; OMP_NUM_THREADS, when set, instead.
int64_t defaultThreads();

} // namespace oflow_rt::detail

#endif
