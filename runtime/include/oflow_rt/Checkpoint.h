//===- oflow_rt/Checkpoint.h - save and resume the state, sharded -*- C++ -*-===//
//
// A checkpoint is a directory: shard files, one per rank that holds a piece
// nobody else's duplicates, and the index DIR/ckpt, written last by rank 0.
// Everything is little-endian; every file ends with the fnv1a64 of all its
// bytes before it.
//
//   DIR/ckpt: "OFLOWCK2", u64 step, u64 text_bytes, text:
//     mesh <n0> ...                         the mesh that saved it ("mesh 1")
//     var <escaped name> <kind> <dtype> <dims>   one per program variable,
//                                           in its own shape (a view= var's view)
//     store <var index> <rank> <dims>      a var stored flat (view=): the dims
//                                           its pieces index
//     shard <file> <bytes>                  then its pieces, in file order:
//     piece <var index> <offsets...> <sizes...>  a block of the global tensor
//   DIR/ckpt-<step>-<nonce>-r<rank>of<n>: "OFLOWSH1", u64 step, the pieces'
//     bytes (row-major, each its block), u64 fnv1a64.
//
// Pieces hold GLOBAL blocks, so a resume on another mesh or plan reshards:
// each rank copies the overlap of every piece with its own block (between a
// flat store and another shape: the elements at the same row-major index,
// copyOverlapViews). Shard
// names carry a nonce (the hash of the index they replace), so a save never
// touches the files the current index names: a save that dies half-way
// leaves the previous checkpoint whole; stale shards go once the new index
// is in place. Offsets in the state buffer are not recorded: plans differ.
// The single-file format of before ("OFLOWCK1", one device) still resumes.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_CHECKPOINT_H
#define OFLOW_RT_CHECKPOINT_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace oflow_rt {

uint64_t fnv1a64(const void *data, uint64_t size, uint64_t hash = 0xcbf29ce484222325ULL);

/// The variable table a checkpoint records (and must match on resume).
std::string variableTable(const Manifest &m);

std::string checkpointPath(const std::string &dir);

/// Collective over every rank: saves `state` (this rank's buffer).
void saveCheckpoint(const std::string &dir, const Manifest &m,
                    const uint8_t *state, int64_t step);
/// Collective: fills this rank's `state` pieces; returns the step. Errors
/// (naming the file) end the job on every rank.
int64_t loadCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state);

// The steps of a save, for any rank given its coordinates (unit tests run
// them for several simulated ranks in one process).
/// What the next save's shard names carry (hash of the index in DIR).
uint64_t checkpointNonce(const std::string &dir);
/// Writes the shard of the rank at `coords` (no file when it holds only
/// duplicates).
void writeShard(const std::string &dir, const Manifest &m, const uint8_t *state,
                int64_t step, uint64_t nonce, const std::vector<int64_t> &coords);
/// Writes DIR/ckpt naming every rank's shard, then removes stale shards.
void writeCheckpointIndex(const std::string &dir, const Manifest &m,
                          int64_t step, uint64_t nonce);
/// Reads the pieces that overlap the blocks of the rank at `coords`.
int64_t readCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state, const std::vector<int64_t> &coords);

} // namespace oflow_rt

#endif
