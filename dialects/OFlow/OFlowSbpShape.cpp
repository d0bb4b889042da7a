//===- OFlowSbpShape.cpp - SBP signatures of shape ops and gather ---------===//
//
// Ops that only move elements keep a split when the moved axis stays a
// contiguous block per device, and keep partials (no arithmetic).
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Reshape-like ops are row-major reshapes of their input.
static SmallVector<SbpSignature> reshapeOf(Operation *op) {
  return getReshapeSbpSignatures(op->getContext(), shapeOf(op->getOperand(0)),
                                 shapeOf(op->getResult(0)));
}

SmallVector<SbpSignature> ReshapeOp::getSbpCandidates(int64_t) {
  return reshapeOf(getOperation());
}
SmallVector<SbpSignature> FlattenOp::getSbpCandidates(int64_t) {
  return reshapeOf(getOperation());
}
SmallVector<SbpSignature> SqueezeOp::getSbpCandidates(int64_t) {
  return reshapeOf(getOperation());
}
SmallVector<SbpSignature> UnsqueezeOp::getSbpCandidates(int64_t) {
  return reshapeOf(getOperation());
}

SmallVector<SbpSignature> TransposeOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SmallVector<SbpSignature> sigs{{{sbpB(ctx)}, {sbpB(ctx)}, ""}};
  for (auto [axis, source] : llvm::enumerate(getPerm()))
    sigs.push_back({{sbpS(ctx, source)}, {sbpS(ctx, axis)}, ""});
  sigs.push_back({{sbpP(ctx)}, {sbpP(ctx)}, ""});
  sigs.push_back({{sbpPMax(ctx)}, {sbpPMax(ctx)}, ""});
  return sigs;
}

static constexpr const char *kMaskRows = kMaskRowsCollective;

/// Gather: output = data[:axis] + indices + data[axis+1:].
SmallVector<SbpSignature> GatherOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  int64_t dataRank = shapeOf(getData()).size();
  int64_t indexRank = shapeOf(getIndices()).size();
  int64_t axis = getAxis() < 0 ? getAxis() + dataRank : getAxis();
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""}};
  for (int64_t k = 0; k < dataRank; ++k) {
    if (k == axis) // A row-split table: each device looks up the rows it has.
      sigs.push_back({{sbpS(ctx, k), b}, {p}, kMaskRows});
    else
      sigs.push_back({{sbpS(ctx, k), b},
                      {sbpS(ctx, k < axis ? k : k - 1 + indexRank)}, ""});
  }
  for (int64_t i = 0; i < indexRank; ++i)
    sigs.push_back({{b, sbpS(ctx, i)}, {sbpS(ctx, axis + i)}, ""});
  sigs.push_back({{p, b}, {p}, ""});
  return sigs;
}

/// Gather's gradient: scatter-adds grad_output slices into rows of data_shape.
SmallVector<SbpSignature> GatherBackwardOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  int64_t dataRank = getDataShape().size();
  int64_t indexRank = shapeOf(getIndices()).size();
  int64_t axis = getAxis() < 0 ? getAxis() + dataRank : getAxis();
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""}};
  for (int64_t k = 0; k < dataRank; ++k) {
    if (k == axis) // Each device accumulates only the rows it holds.
      sigs.push_back({{b, b}, {sbpS(ctx, k)}, kMaskRows});
    else
      sigs.push_back({{sbpS(ctx, k < axis ? k : k - 1 + indexRank), b},
                      {sbpS(ctx, k)}, ""});
  }
  // Split samples: each device adds its own samples' rows, a partial sum.
  for (int64_t i = 0; i < indexRank; ++i)
    sigs.push_back({{sbpS(ctx, axis + i), sbpS(ctx, i)}, {p}, ""});
  sigs.push_back({{p, b}, {p}, ""});
  return sigs;
}

/// Axes that `op` keeps whole (input dim == result dim) can stay split: the
/// op moves or picks elements only along the other axes.
static SmallVector<SbpSignature> keepWholeAxes(Operation *op,
                                               ArrayRef<int64_t> inShape,
                                               ArrayRef<int64_t> outShape,
                                               bool maxPartial) {
  MLIRContext *ctx = op->getContext();
  unsigned numOperands = op->getNumOperands(), numResults = op->getNumResults();
  auto uniform = [&](SbpAttr sbp, SbpAttr result) {
    return SbpSignature{SmallVector<SbpAttr>(numOperands, sbp),
                        SmallVector<SbpAttr>(numResults, result), ""};
  };
  SmallVector<SbpSignature> sigs{uniform(sbpB(ctx), sbpB(ctx))};
  for (auto [axis, dims] : llvm::enumerate(llvm::zip_equal(inShape, outShape)))
    if (std::get<0>(dims) == std::get<1>(dims))
      sigs.push_back(uniform(sbpS(ctx, axis), sbpS(ctx, axis)));
  sigs.push_back(uniform(sbpP(ctx), sbpP(ctx)));
  if (maxPartial)
    sigs.push_back(uniform(sbpPMax(ctx), sbpPMax(ctx)));
  return sigs;
}

SmallVector<SbpSignature> SliceOp::getSbpCandidates(int64_t) {
  // A whole axis taken with stride -1 is reversed: its pieces swap devices.
  SmallVector<SbpSignature> sigs = keepWholeAxes(
      getOperation(), shapeOf(getInput()), shapeOf(getOutput()), /*maxPartial=*/true);
  ArrayRef<int64_t> strides = getStrides();
  llvm::erase_if(sigs, [&](const SbpSignature &sig) {
    SbpAttr result = sig.results[0];
    return result.isSplit() && strides[result.getAxis()] != 1;
  });
  return sigs;
}

SmallVector<SbpSignature> SliceBackwardOp::getSbpCandidates(int64_t) {
  // Pads with zeros: fine for sums, not for maxima (0 may beat the others).
  return keepWholeAxes(getOperation(), shapeOf(getGradOutput()),
                       shapeOf(getGradInput()), /*maxPartial=*/false);
}

/// Splits every axis of the result but `axis` (on which the pieces differ).
static SmallVector<SbpSignature> allButAxis(Operation *op, ArrayRef<int64_t> shape,
                                            int64_t axis) {
  SmallVector<SbpSignature> sigs =
      keepWholeAxes(op, shape, shape, /*maxPartial=*/true);
  SbpAttr split = sbpS(op->getContext(), axis);
  llvm::erase_if(sigs, [&](const SbpSignature &sig) {
    return !sig.results.empty() && sig.results[0] == split;
  });
  return sigs;
}

SmallVector<SbpSignature> ConcatOp::getSbpCandidates(int64_t) {
  ArrayRef<int64_t> shape = shapeOf(getOutput());
  int64_t rank = shape.size();
  return allButAxis(getOperation(), shape, getAxis() < 0 ? getAxis() + rank : getAxis());
}

SmallVector<SbpSignature> SplitOp::getSbpCandidates(int64_t) {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  int64_t rank = shape.size();
  return allButAxis(getOperation(), shape, getAxis() < 0 ? getAxis() + rank : getAxis());
}

SmallVector<SbpSignature> TriluOp::getSbpCandidates(int64_t) {
  // Masks by position in the last two axes: those stay whole; linear.
  ArrayRef<int64_t> shape = shapeOf(getInput());
  SmallVector<SbpSignature> sigs =
      keepWholeAxes(getOperation(), shape, shape, /*maxPartial=*/false);
  int64_t rank = shape.size();
  MLIRContext *ctx = getContext();
  llvm::erase_if(sigs, [&](const SbpSignature &sig) {
    return sig.results[0] == sbpS(ctx, rank - 1) || sig.results[0] == sbpS(ctx, rank - 2);
  });
  return sigs;
}
