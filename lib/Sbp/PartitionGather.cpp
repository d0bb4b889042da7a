//===- PartitionGather.cpp - lookups in a row-split table -----------------===//
//
// A gather whose table is split along the gathered axis (a vocabulary-
// parallel embedding) runs locally on the rows each rank holds: indices
// outside them are masked to zero, so every rank holds a partial sum of the
// result. Its gradient likewise accumulates only the local rows. The
// planner picks these signatures ("indices outside the local rows masked,
// offset by rank"); this file gives them their meaning after partitioning,
// with ordinary oflow ops around the local gather and one rank-dependent
// offset (`oflow.shard_offset`).
//
//===----------------------------------------------------------------------===//
#include "PartitionGather.h"

#include "../Autodiff/GradRules.h"
#include "oflow/Sbp/SbpConversions.h"

using namespace mlir;
namespace of = mlir::oflow;
using ::oflow::autodiff::GradBuilder;

namespace oflow::sbp {
SmallVector<int64_t> splittingAxes(of::NdSbpAttr layout, int64_t axis) {
  SmallVector<int64_t> axes;
  for (auto [meshAxis, entry] : llvm::enumerate(layout.getEntries()))
    if (entry.isSplit() && entry.getAxis() == axis)
      axes.push_back(meshAxis);
  return axes;
}
} // namespace oflow::sbp

using ::oflow::sbp::splittingAxes;

namespace {

/// Local positions of `indices` in a table whose rows [offset, offset + rows)
/// this rank holds, out of `globalRows`: (safe index, in-range mask).
std::pair<Value, Value> localRows(GradBuilder &b, Value indices,
                                  ArrayRef<int64_t> meshAxes, int64_t rows,
                                  int64_t globalRows) {
  Type indexType = cast<RankedTensorType>(indices.getType()).getElementType();
  auto scalar = [&](int64_t v) {
    auto type = RankedTensorType::get({}, indexType);
    return b.op<of::ConstantOp>(cast<ElementsAttr>(
        DenseElementsAttr::get(type, ArrayRef<Attribute>{IntegerAttr::get(indexType, v)})));
  };
  Value offset = of::ShardOffsetOp::create(
      b.b, b.loc, RankedTensorType::get({}, b.b.getI64Type()),
      b.b.getDenseI64ArrayAttr(meshAxes), b.b.getI64IntegerAttr(rows));
  if (!indexType.isInteger(64))
    offset = of::CastOp::create(b.b, b.loc, offset, indexType);
  // ONNX counts negative indices from the end of the whole table.
  Value zero = scalar(0);
  Value wrapped = b.where(b.compare(of::ComparePredicate::lt, indices, zero),
                          b.add(indices, scalar(globalRows)), indices);
  Value local = b.sub(wrapped, offset);
  Value n = scalar(rows);
  // Below the piece: pushed to `rows`, so one comparison masks both sides.
  Value above = b.where(b.compare(of::ComparePredicate::lt, local, zero), n, local);
  Value mask = b.compare(of::ComparePredicate::lt, above, n);
  return {b.where(mask, above, zero), mask};
}

/// `mask` (shaped like the indices) reshaped to broadcast against a gather
/// result over `axis` of a rank-`dataRank` table.
Value maskForResult(GradBuilder &b, Value mask, int64_t axis, int64_t dataRank) {
  ArrayRef<int64_t> idx = cast<RankedTensorType>(mask.getType()).getShape();
  SmallVector<int64_t> shape(axis, 1);
  shape.append(idx.begin(), idx.end());
  shape.append(dataRank - axis - 1, 1);
  return b.reshape(mask, shape);
}

Value zeroLike(GradBuilder &b, Value like) {
  return b.scalarLike(0.0, like);
}

} // namespace

namespace oflow::sbp {

void partitionRowSplitGather(of::GatherOp op, const Mesh &mesh) {
  of::NdSbpAttr layout = getValueSbp(op.getData());
  auto data = cast<RankedTensorType>(op.getData().getType());
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + data.getRank() : op.getAxis();
  SmallVector<int64_t> meshAxes = layout ? splittingAxes(layout, axis)
                                         : SmallVector<int64_t>();
  if (meshAxes.empty())
    return;
  int64_t rows = data.getDimSize(axis), globalRows = rows;
  for (int64_t a : meshAxes)
    globalRows *= mesh.shape[a];
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  auto [safe, mask] = localRows(b, op.getIndices(), meshAxes, rows, globalRows);
  op.getIndicesMutable().assign(safe);
  builder.setInsertionPointAfter(op);
  Value masked = b.where(maskForResult(b, mask, axis, data.getRank()),
                         op.getResult(), zeroLike(b, op.getResult()));
  op.getResult().replaceAllUsesExcept(masked, masked.getDefiningOp());
  masked.getDefiningOp()->setAttr(of::OFlowDialect::kSbpAttrName,
                                  op->getAttr(of::OFlowDialect::kSbpAttrName));
}

void partitionRowSplitGatherBackward(of::GatherBackwardOp op,
                                     const Mesh &mesh) {
  of::NdSbpAttr layout = getValueSbp(op.getResult());
  int64_t rank = op.getDataShape().size();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  SmallVector<int64_t> meshAxes = layout ? splittingAxes(layout, axis)
                                         : SmallVector<int64_t>();
  if (meshAxes.empty())
    return;
  int64_t rows = op.getDataShape()[axis], globalRows = rows;
  for (int64_t a : meshAxes)
    globalRows *= mesh.shape[a];
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  auto [safe, mask] = localRows(b, op.getIndices(), meshAxes, rows, globalRows);
  Value grad = op.getGradOutput();
  op.getGradOutputMutable().assign(
      b.where(maskForResult(b, mask, axis, rank), grad, zeroLike(b, grad)));
  op.getIndicesMutable().assign(safe);
}

} // namespace oflow::sbp
