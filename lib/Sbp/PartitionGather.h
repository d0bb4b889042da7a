//===- PartitionGather.h - lookups in a row-split table ---------*- C++ -*-===//
#ifndef OFLOW_LIB_SBP_PARTITIONGATHER_H
#define OFLOW_LIB_SBP_PARTITIONGATHER_H

#include "OFlow/OFlowOps.h"
#include "oflow/Sbp/CostModel.h"

namespace oflow::sbp {

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
