//===- OFlowSbpPool.cpp - SBP signatures of pooling and batch norm --------===//
//
// NCHW ops that work per sample and per channel split the batch and channel
// axes freely. Batch norm in training mode normalizes over batch and space,
// so splitting those needs its statistics all-reduced (SyncBatchNorm).
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// B, S(0) and S(1) through a one-operand NCHW op, plus `partial` through.
static SmallVector<SbpSignature> perSampleAndChannel(MLIRContext *ctx,
                                                     SbpAttr partial) {
  SmallVector<SbpSignature> sigs{{{sbpB(ctx)}, {sbpB(ctx)}, ""},
                                 {{sbpS(ctx, 0)}, {sbpS(ctx, 0)}, ""},
                                 {{sbpS(ctx, 1)}, {sbpS(ctx, 1)}, ""}};
  sigs.push_back({{partial}, {partial}, ""});
  return sigs;
}

SmallVector<SbpSignature> MaxPool2dOp::getSbpCandidates(int64_t) {
  return perSampleAndChannel(getContext(), sbpPMax(getContext()));
}

SmallVector<SbpSignature> AvgPool2dOp::getSbpCandidates(int64_t) {
  return perSampleAndChannel(getContext(), sbpP(getContext()));
}

SmallVector<SbpSignature> AvgPool2dBackwardOp::getSbpCandidates(int64_t) {
  return perSampleAndChannel(getContext(), sbpP(getContext()));
}

SmallVector<SbpSignature> GlobalAvgPoolOp::getSbpCandidates(int64_t) {
  // A split spatial axis leaves each device a partial mean.
  MLIRContext *ctx = getContext();
  SmallVector<SbpSignature> sigs = perSampleAndChannel(ctx, sbpP(ctx));
  for (int64_t axis = 2, e = shapeOf(getInput()).size(); axis < e; ++axis)
    sigs.push_back({{sbpS(ctx, axis)}, {sbpP(ctx)}, "division by the global count"});
  return sigs;
}

SmallVector<SbpSignature> MaxPool2dBackwardOp::getSbpCandidates(int64_t) {
  // The input only routes the gradient: linear in grad_output.
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  return {{{b, b}, {b}, ""},
          {{sbpS(ctx, 0), sbpS(ctx, 0)}, {sbpS(ctx, 0)}, ""},
          {{sbpS(ctx, 1), sbpS(ctx, 1)}, {sbpS(ctx, 1)}, ""},
          {{p, b}, {p}, ""}};
}

/// Batch norm operands: input, then per-channel [C] parameters.
static SbpSignature batchNorm(SbpAttr input, SbpAttr params, unsigned numParams,
                              ArrayRef<SbpAttr> results, StringRef collective) {
  SbpSignature sig{{input}, SmallVector<SbpAttr>(results), collective.str()};
  sig.operands.append(numParams, params);
  return sig;
}

SmallVector<SbpSignature> BatchNormInferenceOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx);
  SmallVector<SbpSignature> sigs{batchNorm(b, b, 4, {b}, ""),
                                 batchNorm(sbpS(ctx, 1), sbpS(ctx, 0), 4,
                                           {sbpS(ctx, 1)}, "")};
  for (int64_t axis = 0, e = shapeOf(getInput()).size(); axis < e; ++axis)
    if (axis != 1)
      sigs.push_back(batchNorm(sbpS(ctx, axis), b, 4, {sbpS(ctx, axis)}, ""));
  return sigs;
}

SmallVector<SbpSignature> BatchNormStatisticsOp::getSbpCandidates(int64_t) {
  // Per channel: whole or split channels only (on a mesh, oflow-decompose-
  // for-sbp turns the op into sums whose partial results all-reduce).
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), c = sbpS(ctx, 0);
  return {{{b}, {b, b}, ""}, {{sbpS(ctx, 1)}, {c, c}, ""}};
}

SmallVector<SbpSignature> BatchNormTrainingOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), c = sbpS(ctx, 0);
  SmallVector<SbpSignature> sigs{batchNorm(b, b, 4, {b, b, b}, ""),
                                 batchNorm(sbpS(ctx, 1), c, 4, {sbpS(ctx, 1), c, c}, "")};
  for (int64_t axis = 0, e = shapeOf(getInput()).size(); axis < e; ++axis)
    if (axis != 1)
      sigs.push_back(batchNorm(sbpS(ctx, axis), b, 4, {sbpS(ctx, axis), b, b},
                               "all-reduce of the batch statistics"));
  return sigs;
}
