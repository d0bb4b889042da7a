//===- oflow_rt/Distributed.h - the ranks of a mesh program -----*- C++ -*-===//
//
// A program whose manifest has a `mesh` of more than one device runs as one
// process per device under mpirun. This is the only part of the runtime
// that knows MPI: start-up (the world size must be the mesh size, checked
// from the launcher's environment before MPI_Init so a wrong launch fails
// fast and never hangs), one communicator per mesh axis for abi.h's
// collectives, and the few whole-world steps the runtime itself needs
// (gathers to rank 0, agreement, abort). Without a mesh nothing here calls
// MPI: rank 0 of 1, coordinates all 0.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_DISTRIBUTED_H
#define OFLOW_RT_DISTRIBUTED_H

#include "oflow_rt/Layout.h"
#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace oflow_rt {

/// Records the mesh; with more than one device, checks the launch and
/// starts MPI. `exe` is argv[0], for the "run it as mpirun -np N" hint.
/// `noMpi` (--help) records the mesh but starts nothing: this is rank 0.
void startDistributed(const Manifest &m, const std::string &exe, bool noMpi);
/// MPI_Finalize after a clean run (nothing when MPI never started).
void finishDistributed();
/// After an error was printed: ends every rank (MPI_Abort) so none hangs in
/// a collective. Returns only when MPI never started.
void abortDistributed(int code);

/// --collective-timeout: with MPI running, a collective that has waited
/// `seconds` (> 0) for the other ranks ends the job with a message naming
/// it, its mesh axis and the step set last (setCurrentStep).
void setCollectiveTimeout(double seconds);
void setCurrentStep(int64_t step);

/// Whether MPI runs (a mesh of more than one device).
bool isDistributed();
int64_t worldRank();
int64_t worldSize();
/// Rank 0 alone logs and writes whole-tensor files.
inline bool isRoot() { return worldRank() == 0; }
/// This rank's mesh coordinates and the mesh (empty without a mesh).
const std::vector<int64_t> &meshCoords();
const std::vector<int64_t> &meshShape();

/// The block of `s` this rank holds.
Block myBlock(const TensorSlot &s);
/// Copies this rank's piece of the global tensor `global` into `local`.
void copyMyPiece(const TensorSlot &s, const uint8_t *global, uint8_t *local);

/// Collective over all ranks: the global tensor of `s` assembled from each
/// rank's `local` piece; rank 0 gets it, the others an empty vector.
std::vector<uint8_t> gatherToRoot(const TensorSlot &s, const uint8_t *local);
/// Collective: true when `ok` on every rank.
bool allRanksOk(bool ok);
/// Collective: the largest `v` over ranks.
int64_t maxOverRanks(int64_t v);
/// Collective: rank 0's `v` on every rank.
uint64_t broadcastFromRoot(uint64_t v);
void barrier();

} // namespace oflow_rt

#endif
