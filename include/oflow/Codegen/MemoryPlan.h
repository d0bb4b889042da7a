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

/// A buffer live from step `first` to step `last`, inclusive.
struct BufferLifetime {
  int64_t bytes;
  int64_t first;
  int64_t last;
};

struct MemoryPlan {
  std::vector<int64_t> offsets; ///< one per buffer, multiples of the alignment
  int64_t peak = 0;             ///< arena size: max over buffers of offset + bytes
  int64_t naive = 0;            ///< sum of all (aligned) buffer sizes
  int64_t lowerBound = 0;       ///< max over steps of the (aligned) bytes live
};

/// Places buffers so that two whose lifetimes overlap never share a byte.
/// Greedy by size: the largest buffer first, each at the lowest aligned
/// offset that fits between the buffers already placed that overlap it in
/// time. Deterministic (ties keep input order).
MemoryPlan planMemory(const std::vector<BufferLifetime> &buffers,
                      int64_t alignment);

} // namespace oflow

#endif
