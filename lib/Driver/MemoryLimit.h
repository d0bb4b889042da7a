//===- MemoryLimit.h - per-device memory against --memory-limit -*- C++ -*-===//
#ifndef OFLOW_LIB_DRIVER_MEMORYLIMIT_H
#define OFLOW_LIB_DRIVER_MEMORYLIMIT_H

#include "oflow/Driver/Driver.h"
#include "oflow/Support/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace oflow {

/// What one device holds for the planned program, in bytes (after memory
/// planning: the static plan is exact for what oflow allocates).
struct MemoryUse {
  int64_t params = 0, optimizer = 0, otherState = 0; ///< variables by role
  int64_t stateAligned = 0;                          ///< the state buffer
  int64_t io = 0;                                    ///< inputs and outputs
  int64_t arena = 0;                                 ///< the largest entry's peak
  std::string arenaEntry;                            ///< that entry
  /// Weights all-gathered whole (ZeRO-3), over the entries: their bytes,
  /// and the most of them live at once (the memory plan's account).
  int64_t gatheredWeights = 0, gatheredWeightsPeak = 0;
  int64_t total() const { return stateAligned + io + arena; }
};
MemoryUse measureMemoryUse(mlir::ModuleOp module);

/// The limit in force, in bytes (0: none), and where it comes from:
/// --memory-limit, else the device's memory less 4 GiB (context, NCCL,
/// library workspaces), else none (the cpu profile: the host's memory).
struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;
};
MemoryLimit memoryLimitFor(const CompileOptions &options, const DeviceProfile &device);

/// One line saying what the plan needs against `limit` and, when it does
/// not fit, what dominates and what to do (`sharded`: splitting the
/// variables was tried already); empty when it fits.
std::string memoryLimitError(const MemoryUse &use, const MemoryLimit &limit,
                             bool sharded = false);

/// --emit=plan's record of the limit: `memory_limit bytes=... fits=...`.
std::string describeMemoryLimit(const MemoryUse &use, const MemoryLimit &limit);

} // namespace oflow

#endif // OFLOW_LIB_DRIVER_MEMORYLIMIT_H
