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

static constexpr const char *kMaskRows =
    "indices outside the local rows masked, offset by rank";

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
