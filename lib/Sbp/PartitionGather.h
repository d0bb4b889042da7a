//===- PartitionGather.h - lookups in a row-split table ---------*- C++ -*-===//
#ifndef OFLOW_LIB_SBP_PARTITIONGATHER_H
#define OFLOW_LIB_SBP_PARTITIONGATHER_H

#include "OFlow/OFlowOps.h"
#include "oflow/Sbp/CostModel.h"

namespace oflow::sbp {

/// The mesh axes that split tensor axis `axis` in `layout`, in order.
llvm::SmallVector<int64_t> splittingAxes(mlir::oflow::NdSbpAttr layout,
                                         int64_t axis);

/// After partitioning (local types): a dropout whose result is split learns
/// the global shape and where this rank's piece starts along each axis, so
/// that it draws the mask of the global elements it holds. No-op otherwise.
void partitionSplitDropout(mlir::oflow::DropoutOp op, const Mesh &mesh);

/// After partitioning (local types): a gather whose table is split along the
/// gathered axis looks up only local rows, masking the others to zero (its
/// result is a partial sum). No-op for other gathers.
void partitionRowSplitGather(mlir::oflow::GatherOp op, const Mesh &mesh);
/// Its gradient: only the indices of local rows accumulate.
void partitionRowSplitGatherBackward(mlir::oflow::GatherBackwardOp op,
                                     const Mesh &mesh);

/// The signature note (SbpSignature::collective) of these, which the planner
/// may use because this file implements it.
inline constexpr const char *kMaskRowsNote = mlir::oflow::kMaskRowsCollective;

} // namespace oflow::sbp

#endif
