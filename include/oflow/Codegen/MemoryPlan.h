//===- MemoryPlan.h - static placement of buffers with lifetimes -*- C++ -*-===//
//
// Plain C++ (no IR): unit-tested alone, used by the oflow-plan-memory pass.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CODEGEN_MEMORYPLAN_H
#define OFLOW_CODEGEN_MEMORYPLAN_H

#include <cstdint>
#include <vector>

namespace oflow {

/// A buffer live from step `first` to step `last`, inclusive; optionally
/// also from dependence level `firstLevel` to `lastLevel` (none when
/// lastLevel < firstLevel): two buffers share bytes only when one ends
/// before the other begins in both orders, the same way round.
struct BufferLifetime {
  int64_t bytes;
  int64_t first;
  int64_t last;
  int64_t firstLevel = 0;
  int64_t lastLevel = -1;
};

struct MemoryPlan {
  std::vector<int64_t> offsets; ///< one per buffer, multiples of the alignment
  int64_t peak = 0;             ///< arena size: max over buffers of offset + bytes
  int64_t naive = 0;            ///< sum of all (aligned) buffer sizes
  int64_t lowerBound = 0;       ///< max over steps of the (aligned) bytes live
};

/// Places buffers so that two whose lifetimes overlap (in steps, or in
/// levels where both have them, or that are ordered one way in steps and
/// the other in levels) never share a byte.
/// Greedy by size: the largest buffer first, each at the lowest aligned
/// offset that fits between the buffers already placed that overlap it in
/// time. Deterministic (ties keep input order).
MemoryPlan planMemory(const std::vector<BufferLifetime> &buffers,
                      int64_t alignment);

} // namespace oflow

#endif
