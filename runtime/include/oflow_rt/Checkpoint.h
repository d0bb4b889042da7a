//===- oflow_rt/Checkpoint.h - save and resume the state buffer -*- C++ -*-===//
//
// File DIR/ckpt, little-endian:
//   "OFLOWCK1"             8-byte magic
//   u64 step               optimizer steps taken
//   u64 table_bytes        then the variable table, text, one line per var:
//                          `<escaped name> <kind> <dtype> <dims> <offset>`
//   u64 state_bytes        then the whole state buffer
//   u64 fnv1a64            of every byte before it
// Saving writes DIR/ckpt.tmp, fsyncs, renames, fsyncs DIR: a failed or
// interrupted save leaves the previous checkpoint as it was.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_CHECKPOINT_H
#define OFLOW_RT_CHECKPOINT_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <string>

namespace oflow_rt {

uint64_t fnv1a64(const void *data, uint64_t size, uint64_t hash = 0xcbf29ce484222325ULL);

/// The variable table a checkpoint records (and must match on resume).
std::string variableTable(const Manifest &m);

std::string checkpointPath(const std::string &dir);
void saveCheckpoint(const std::string &dir, const Manifest &m,
                    const uint8_t *state, int64_t step);
/// Checks magic, size, checksum and the variable table; fills `state`
/// (manifest.stateBytes) and returns the step. Errors name the file.
int64_t loadCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state);

} // namespace oflow_rt

#endif
