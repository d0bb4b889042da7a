//===- Pipelines.h - oflow-compile's pass pipelines -------------*- C++ -*-===//
#ifndef OFLOW_LIB_DRIVER_PIPELINES_H
#define OFLOW_LIB_DRIVER_PIPELINES_H

#include "oflow/Driver/Driver.h"
#include "oflow/Support/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::oflow {
class MeshAttr;
} // namespace mlir::oflow

namespace oflow {

/// Makes every dialect and interface model the pipelines need available.
void registerPipelineDialects(mlir::MLIRContext &context);

// registerPipelinePasses(): in oflow/Driver/Driver.h (the tool calls it too).

/// Import -> training graph (train: loss, autodiff, optimizer step and
/// gradient entries; infer: the inference entry).
mlir::LogicalResult addTrainingPasses(mlir::PassManager &pm,
                                      const CompileOptions &options);

/// Training graph -> program interface bound, linalg on tensors.
/// The convolution library --conv and the target choose: "dnnl", "cudnn",
/// or "" (im2col).
std::string convLibraryOf(const CompileOptions &options);

mlir::LogicalResult addLinalgPasses(mlir::PassManager &pm,
                                    const CompileOptions &options);

/// The global batch: the leading dim of the program's inputs (0 if none).
int64_t programBatch(mlir::ModuleOp module);

/// SBP choice, boxing and bucketing on the training graph (stage 3-4).
void addSbpPasses(mlir::PassManager &pm, const CompileOptions &options);
/// Global to local shapes (stage 5), and with --micro-batches the micro
/// axis turned into time (after recomputation, which it copies per lane).
void addPartitionPasses(mlir::PassManager &pm, const CompileOptions &options);

/// --emit=plan: tensors, layouts and collectives (after boxing, before
/// partitioning) and the per-device memory (after memory planning).
std::string describeSbpPlan(mlir::ModuleOp module, llvm::StringRef device);
std::string describeMemoryPlan(mlir::ModuleOp module);
/// `report` (formatSimulation's) with what oflow-recompute copied in each
/// entry (the module's `oflow.recompute`) added to its compute: the
/// entry's line gains recomputed_ops, recomputed_flops and
/// recompute_seconds, and its step_seconds includes them.
std::string addRecomputeToSimulation(llvm::StringRef report, mlir::ModuleOp module,
                                     const DeviceProfile &profile, llvm::StringRef precision);

/// An entry's predicted step after boxing, before partitioning: each op
/// priced as the planner prices it, each collective by the boxing planner's
/// step costs (the micro-batch axis, which is time, is left out).
struct EntryEstimate {
  struct Axis {
    int64_t collectives = 0, bytes = 0; ///< bytes per device
    double seconds = 0;
  };
  std::string entry;
  int64_t ops = 0;
  double computeSeconds = 0;
  /// Where computeSeconds comes from: "ops" (each op priced as the planner
  /// prices it) or "kernels" (the lowered program's launches priced by the
  /// per-kernel model, kernelModelCompute; `launches` of them).
  std::string computeModel = "ops";
  int64_t launches = 0;
  std::map<int64_t, Axis> axes; ///< by mesh axis
  int64_t collectives() const {
    int64_t n = 0;
    for (auto &[a, v] : axes)
      n += v.collectives;
    return n;
  }
  int64_t bytes() const {
    int64_t n = 0;
    for (auto &[a, v] : axes)
      n += v.bytes;
    return n;
  }
  double commSeconds() const {
    double s = 0;
    for (auto &[a, v] : axes)
      s += v.seconds;
    return s;
  }
  /// Compute and collectives in sequence, as the runtime runs them.
  double stepSeconds() const { return computeSeconds + commSeconds(); }
};
std::vector<EntryEstimate> estimateEntries(mlir::ModuleOp module, const DeviceProfile &profile,
                                           llvm::StringRef precision);
/// What oflow-recompute's copies in `entry` cost (the module's
/// `oflow.recompute`, after memory planning); 0 without them.
double recomputeSeconds(mlir::ModuleOp module, llvm::StringRef entry,
                        const DeviceProfile &profile, llvm::StringRef precision);

/// --emit=simulate's lines for `entries` (estimateEntries', after boxing,
/// the train entry's compute possibly the kernel model's) on the mesh
/// `meshAttr`: per entry the predicted compute, each mesh axis's
/// collectives (bytes per device, alpha-beta seconds) and the step.
std::string formatSimulation(mlir::oflow::MeshAttr meshAttr,
                             llvm::ArrayRef<EntryEstimate> entries,
                             const DeviceProfile &profile, llvm::StringRef precision);

/// What the per-kernel model (--emit=kernels) predicts for an entry's
/// compute: the launches of the program as the CUDA target lowers it.
struct KernelCompute {
  double seconds = 0;
  int64_t launches = 0; ///< generated kernels and library calls, collectives left out
};
/// `module` after memory planning: a copy holding only `entry`'s function
/// has its kernels formed and outlined as the CUDA codegen does, and every
/// launch but the collectives (the links' alpha-beta prices those) is
/// priced by the per-kernel model on `profile` (a GPU's). Issue #15 asks
/// for one cost function: this is the one --emit=kernels reports and the
/// GPU check compares with measured steps.
mlir::FailureOr<KernelCompute> kernelModelCompute(mlir::ModuleOp module, llvm::StringRef entry,
                                                  const DeviceProfile &profile,
                                                  mlir::TimingScope &timing);
/// --emit=plan-json's layouts (after boxing): {"variables": {symbol:
/// "[S(0), B]"}, "inputs": {name: layout}, "mesh": [sizes]}.
llvm::json::Object describeSbpPlanJson(mlir::ModuleOp module);
/// Writes `text` to the output file (or stdout for "-").
mlir::LogicalResult writeText(const std::string &text,
                              const CompileOptions &options, mlir::Location loc);

/// Manifest records describing the optimizer and schedule, from what
/// oflow-build-train-step recorded in the IR (`oflow.optimizer`), and the
/// base learning rate it chose (the `lr` scalar's default).
struct TrainingDescription {
  std::vector<std::string> lines;
  std::optional<double> lr;
};
TrainingDescription describeTraining(mlir::ModuleOp module);

} // namespace oflow

#endif
