//===- PartitionDropout.cpp - dropout masks of a rank's piece -------------===//
//
// Dropout draws each element's mask from its global row-major index (see
// oflow.dropout), so that every mesh and plan drops what one device drops.
// A rank holding a piece of a split tensor must know where the piece lies:
// after partitioning, the op gets the global shape and one offset per axis
// (`oflow.shard_offset` for split axes, 0 for the others).
//
//===----------------------------------------------------------------------===//
#include "PartitionGather.h"

#include "oflow/Sbp/SbpConversions.h"

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow::sbp {

void partitionSplitDropout(of::DropoutOp op, const Mesh &mesh) {
  of::NdSbpAttr layout = getValueSbp(op.getResult());
  if (!layout || !op.getStep() || !op.getOffsets().empty() ||
      op.getRatio().convertToDouble() == 0.0)
    return;
  auto local = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<SmallVector<int64_t>> meshAxes;
  bool split = false;
  for (int64_t axis = 0; axis < local.getRank(); ++axis) {
    meshAxes.push_back(splittingAxes(layout, axis));
    split |= !meshAxes.back().empty();
  }
  if (!split)
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  SmallVector<int64_t> global;
  SmallVector<Value> offsets;
  for (auto [axis, axes] : llvm::enumerate(meshAxes)) {
    int64_t piece = local.getDimSize(axis), size = piece;
    for (int64_t a : axes)
      size *= mesh.shape[a];
    global.push_back(size);
    if (axes.empty())
      offsets.push_back(of::ConstantOp::create(
          b, loc, DenseElementsAttr::get(i64, b.getI64IntegerAttr(0))));
    else
      offsets.push_back(of::ShardOffsetOp::create(
          b, loc, i64, b.getDenseI64ArrayAttr(axes),
          b.getI64IntegerAttr(piece)));
  }
  op.getOffsetsMutable().assign(offsets);
  op.setGlobalShape(global);
}

} // namespace oflow::sbp
