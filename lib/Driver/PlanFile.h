//===- PlanFile.h - plans as files: --emit=plan-json, --plan ----*- C++ -*-===//
#ifndef OFLOW_LIB_DRIVER_PLANFILE_H
#define OFLOW_LIB_DRIVER_PLANFILE_H

#include "MemoryLimit.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace oflow {

/// The plan file: the layouts of describeSbpPlanJson, the shard-state that
/// produced them and the memory they need, e.g.
///
///   {"format": "oflow-plan", "version": 1, "mesh": [4],
///    "shard_state": "optimizer", "recompute": "selective", "micro_batches": 2,
///    "variables": {"fc1.weight": "[B]", "fc1.weight.exp_avg": "[S(0)]"},
///    "inputs": {"x": "[S(0)]"},
///    "memory": {"peak_bytes_per_device": 134080, "limit_bytes": 153600}}
///
/// Hand plans are written in the same form (`memory` and `shard_state` are
/// then left out: they are reports, not inputs). `recompute` is an input:
/// what --recompute would say (none when left out); so is `micro_batches`
/// (--micro-batches; 1 when left out), whose mesh axis the layouts leave out;
/// `reshard_after_forward` (--reshard-after-forward yes|no; the compile's
/// default when left out), `micro_batch_gradients` (sharded or whole, as
/// --micro-batch-gradients), `tensor_parallel` (none or cost, as
/// --tensor-parallel: whether ops may use parameters split) and
/// `stored_flat` (the variables whose layouts split their flat view
/// [g, n/g], g = gcd(elements, devices)).
std::string planJson(llvm::json::Object layouts, llvm::StringRef shardState,
                     llvm::StringRef recompute, bool reshardAfterForward,
                     llvm::StringRef tensorParallel, const MemoryUse &use,
                     const MemoryLimit &limit);

/// What a plan file says to compile: the --sbp hints and --recompute.
struct PlanFile {
  std::vector<std::string> hints;
  std::string recompute = "none";
  int64_t microBatches = 1;
  std::optional<bool> reshardAfterForward;
  /// "micro_batch_gradients": sharded or whole (--micro-batch-gradients).
  std::string microBatchGradients;
  /// "tensor_parallel": none or cost (--tensor-parallel).
  std::string tensorParallel;
  /// "stored_flat": the variables stored as [g, n/g] (oflow-flatten-state),
  /// which their layouts split.
  std::vector<std::string> flat;
};

/// The --sbp hints that compile `path`'s plan exactly (one per variable and
/// input, names matched literally); an error naming the file for anything
/// malformed, a plan for another mesh than `mesh`, or a name `module` lacks.
llvm::Expected<PlanFile> readPlanFile(llvm::StringRef path,
                                                      llvm::ArrayRef<int64_t> mesh,
                                                      mlir::ModuleOp module);

} // namespace oflow

#endif // OFLOW_LIB_DRIVER_PLANFILE_H
