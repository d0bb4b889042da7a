//===- SbpConversions.h - IR attributes <-> the planner's value types -*- C++ -*-===//
//
// The cost model and boxing planner (CostModel.h, BoxingPlanner.h) work on
// plain values; the passes hold #oflow.mesh / #oflow.nd_sbp attributes.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_SBP_SBPCONVERSIONS_H
#define OFLOW_LIB_SBP_SBPCONVERSIONS_H

#include "OFlow/OFlowOps.h"
#include "oflow/Sbp/BoxingPlanner.h"
#include "oflow/Sbp/CostModel.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace oflow::sbp {

Sbp toPlanner(mlir::oflow::SbpAttr attr);
NdSbp toPlanner(mlir::oflow::NdSbpAttr attr);
/// The mesh with each axis's declared link (the default link otherwise).
Mesh toPlanner(mlir::oflow::MeshAttr mesh);

mlir::oflow::SbpAttr toAttr(mlir::MLIRContext *ctx, const Sbp &sbp);
mlir::oflow::NdSbpAttr toAttr(mlir::MLIRContext *ctx, const NdSbp &nd);

/// All-B on `numAxes` mesh axes.
mlir::oflow::NdSbpAttr broadcastNdSbp(mlir::MLIRContext *ctx, int64_t numAxes);

/// The link kind of --micro-batches' mesh axis: one device taking turns.
inline constexpr llvm::StringLiteral kSequentialLink = "sequential";

/// The index of the mesh's micro-batch axis (its last axis, when that axis's
/// link is `sequential`); std::nullopt when it has none.
std::optional<int64_t> microBatchAxis(mlir::oflow::MeshAttr mesh);

/// The module's unit attribute that asks gradients sharded over the mesh to
/// be accumulated as shards under --micro-batches (the driver sets it from
/// --micro-batch-gradients).
inline constexpr llvm::StringLiteral kScatterEachMicroBatchAttr =
    "oflow.scatter_each_micro_batch";

/// The entry on mesh axis `axis` of the nd-SBP `value` was given; null when
/// it has none or fewer axes.
mlir::oflow::SbpAttr getValueSbpOnAxis(mlir::Value value, int64_t axis);

/// Whether `op`, a reduce-scatter on another mesh axis than --micro-batches'
/// axis `microAxis`, scatters each micro-batch's partial value as it is made
/// (oflow-unroll-micro-batches runs it once per micro-batch and sums the
/// shards) instead of the sum over the micro-batches once: the module asks
/// for it (kScatterEachMicroBatchAttr), the input is partial on the micro
/// axis, made from a micro-batch's piece (an operand split on the axis) and
/// read by the reduce-scatter alone, and its result stays partial there.
/// FSDP and DeepSpeed's ZeRO-2 do this under gradient accumulation: no
/// accumulator of a sharded gradient is whole, for K times its
/// reduce-scatter.
bool scattersEachMicroBatch(mlir::Operation *op, int64_t microAxis);

/// `layout` without its entry on mesh axis `axis`.
mlir::oflow::NdSbpAttr dropMeshAxis(mlir::oflow::NdSbpAttr layout, int64_t axis);

/// An --sbp hint's layout: "S(0)" / "B" / "P" entries separated by ',', ';'
/// or '/', one per mesh axis of `numAxes`.
mlir::FailureOr<mlir::oflow::NdSbpAttr> parseLayoutText(mlir::MLIRContext *ctx,
                                                        llvm::StringRef text,
                                                        int64_t numAxes);

/// --shard-state's layout of a variable of `shape`: `base` (null: all B)
/// with each of its B mesh axes (but `microAxis`) splitting `shape` along
/// the first tensor axis it still divides (B where none does); with
/// `lastAxisOnly`, only the last mesh axis with devices on it (a node).
mlir::oflow::NdSbpAttr shardedLayout(mlir::oflow::MeshAttr mesh,
                                     std::optional<int64_t> microAxis,
                                     llvm::ArrayRef<int64_t> shape,
                                     mlir::oflow::NdSbpAttr base, bool lastAxisOnly);

/// How many pieces `layout`'s splits cut a tensor into on `mesh`.
int64_t splitPieces(mlir::oflow::MeshAttr mesh, mlir::oflow::NdSbpAttr layout);

/// Bytes of one element of a tensor value (bool = 1).
int64_t elementBytes(mlir::Type tensorType);

/// The nd-SBP a value was given: its defining op's `oflow.sbp` entry or its
/// function argument's attribute. Null when it has none.
mlir::oflow::NdSbpAttr getValueSbp(mlir::Value value);

/// Estimated seconds of `op`'s local compute with its operands and results
/// in the given layouts on `device` (roofline over the local shapes;
/// contractions count 2 FLOPs per multiply-add). The planner's choices and
/// --emit=simulate both price ops with it.
double opComputeSeconds(mlir::Operation *op, llvm::ArrayRef<mlir::oflow::NdSbpAttr> operands,
                        llvm::ArrayRef<mlir::oflow::NdSbpAttr> results, const Mesh &mesh,
                        const Device &device);

/// The values of `fn`'s body used only on the way to variable writes (an
/// optimizer update's math: a reduced gradient, the new moments): nothing
/// before the step's end waits for them, so their collectives can wait and
/// be fused (oflow-insert-boxing plans them without latencies,
/// oflow-bucket-collectives buckets their gathers).
llvm::DenseSet<mlir::Value> valuesOnlyFeedingState(mlir::FunctionOpInterface fn);

} // namespace oflow::sbp

#endif
