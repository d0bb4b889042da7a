//===- OFlowSbpReduce.cpp - SBP signatures of reductions, norms, losses ---===//
//
// Reducing over a split axis leaves partial results (P(sum) for sums and
// means, P(max) for max); normalizations split only the axes they do not
// normalize; losses split their sample axes and reduce them to partials.
// Means divide by the global count, never the local one.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static constexpr const char *kGlobalCount = "division by the global count";

SmallVector<SbpSignature> ReduceSumOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = getReductionSbpSignatures(
      getContext(), shapeOf(getInput()), getAxes(), getKeepdims(), sbpP(getContext()));
  sigs.push_back({{sbpP(getContext())}, {sbpP(getContext())}, ""});
  return sigs;
}

SmallVector<SbpSignature> ReduceMeanOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs =
      getReductionSbpSignatures(getContext(), shapeOf(getInput()), getAxes(),
                                getKeepdims(), sbpP(getContext()), kGlobalCount);
  sigs.push_back({{sbpP(getContext())}, {sbpP(getContext())}, ""});
  return sigs;
}

SmallVector<SbpSignature> ReduceMaxOp::getSbpCandidates(int64_t) {
  SbpAttr pmax = sbpPMax(getContext());
  SmallVector<SbpSignature> sigs = getReductionSbpSignatures(
      getContext(), shapeOf(getInput()), getAxes(), getKeepdims(), pmax);
  sigs.push_back({{pmax}, {pmax}, ""});
  return sigs;
}

/// Split on every axis but the normalized one.
static SmallVector<SbpSignature> softmaxLike(MLIRContext *ctx, int64_t rank,
                                             int64_t normAxis) {
  SmallVector<SbpSignature> sigs{{{sbpB(ctx)}, {sbpB(ctx)}, ""}};
  for (int64_t axis = 0; axis < rank; ++axis)
    if (axis != normAxis)
      sigs.push_back({{sbpS(ctx, axis)}, {sbpS(ctx, axis)}, ""});
  return sigs;
}

SmallVector<SbpSignature> SoftmaxOp::getSbpCandidates(int64_t) {
  int64_t rank = shapeOf(getInput()).size();
  return softmaxLike(getContext(), rank, getAxis() < 0 ? getAxis() + rank : getAxis());
}

SmallVector<SbpSignature> LogSoftmaxOp::getSbpCandidates(int64_t) {
  int64_t rank = shapeOf(getInput()).size();
  return softmaxLike(getContext(), rank, getAxis() < 0 ? getAxis() + rank : getAxis());
}

/// Attention works per (batch, head) row block: every operand and result
/// split alike on one leading axis, or all whole. `operands` and `results`
/// count the tensors; the logsumexp-shaped ones share the leading axes.
static SmallVector<SbpSignature> attentionLike(MLIRContext *ctx, int64_t rank,
                                               unsigned operands,
                                               unsigned results) {
  auto all = [&](SbpAttr sbp) {
    return SbpSignature{SmallVector<SbpAttr>(operands, sbp),
                        SmallVector<SbpAttr>(results, sbp), ""};
  };
  SmallVector<SbpSignature> sigs{all(sbpB(ctx))};
  for (int64_t axis = 0; axis + 2 < rank; ++axis)
    sigs.push_back(all(sbpS(ctx, axis)));
  return sigs;
}

SmallVector<SbpSignature> AttentionOp::getSbpCandidates(int64_t) {
  return attentionLike(getContext(), shapeOf(getQuery()).size(), 3, 2);
}

SmallVector<SbpSignature> AttentionBackwardOp::getSbpCandidates(int64_t) {
  return attentionLike(getContext(), shapeOf(getQuery()).size(), 6, 3);
}

SmallVector<SbpSignature> LayerNormOp::getSbpCandidates(int64_t) {
  // Normalizes the axes from `axis` on; scale and bias cover exactly those.
  MLIRContext *ctx = getContext();
  int64_t rank = shapeOf(getInput()).size();
  int64_t first = getAxis() < 0 ? getAxis() + rank : getAxis();
  unsigned numParams = getBias() ? 2 : 1;
  SmallVector<SbpSignature> sigs;
  auto add = [&](SbpAttr x) {
    SbpSignature sig{{x}, {x}, ""};
    sig.operands.append(numParams, sbpB(ctx));
    sigs.push_back(std::move(sig));
  };
  add(sbpB(ctx));
  for (int64_t axis = 0; axis < first; ++axis)
    add(sbpS(ctx, axis));
  return sigs;
}

/// Sample axes of a loss: input axis 0 and 2.. (1 is the class axis) match
/// labels axis 0 and 1.. .
static SmallVector<std::pair<int64_t, int64_t>> sampleAxes(int64_t inputRank) {
  SmallVector<std::pair<int64_t, int64_t>> axes{{0, 0}};
  for (int64_t axis = 2; axis < inputRank; ++axis)
    axes.push_back({axis, axis - 1});
  return axes;
}

/// The note for a mean over a split sample axis: with ignored labels the
/// count is data-dependent and must be all-reduced.
static std::string meanNote(LossReduction reduction, bool ignoring) {
  if (reduction != LossReduction::mean)
    return "";
  return ignoring ? "all-reduce of the count of labels not ignored" : kGlobalCount;
}

/// Forward classification loss ([N, C, d...], labels [N, d...]).
static SmallVector<SbpSignature>
classificationLoss(MLIRContext *ctx, int64_t inputRank, LossReduction reduction,
                   bool ignoring, SbpSignature classSplit) {
  SbpAttr b = sbpB(ctx);
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""}};
  for (auto [in, label] : sampleAxes(inputRank)) {
    if (reduction == LossReduction::none)
      sigs.push_back({{sbpS(ctx, in), sbpS(ctx, label)}, {sbpS(ctx, label)}, ""});
    else
      sigs.push_back({{sbpS(ctx, in), sbpS(ctx, label)}, {sbpP(ctx)},
                      meanNote(reduction, ignoring)});
  }
  sigs.push_back(std::move(classSplit));
  return sigs;
}

SmallVector<SbpSignature> SoftmaxCrossEntropyOp::getSbpCandidates(int64_t) {
  // Vocabulary-parallel: split classes need the softmax's max and sum.
  MLIRContext *ctx = getContext();
  SbpSignature classSplit{
      {sbpS(ctx, 1), sbpB(ctx)}, {sbpB(ctx)},
      "all-reduce of the per-sample max, sum of exponentials and target logit"};
  return classificationLoss(ctx, shapeOf(getLogits()).size(), getReduction(),
                            getIgnoreIndex().has_value(), classSplit);
}

SmallVector<SbpSignature> NllLossOp::getSbpCandidates(int64_t) {
  // Split classes: each device picks the targets it holds; the rest are 0.
  MLIRContext *ctx = getContext();
  SbpSignature classSplit{{sbpS(ctx, 1), sbpB(ctx)}, {sbpP(ctx)},
                          "labels outside the local classes masked, offset by rank"};
  return classificationLoss(ctx, shapeOf(getInput()).size(), getReduction(),
                            getIgnoreIndex().has_value(), classSplit);
}

SmallVector<SbpSignature> MseLossOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx);
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""}};
  int64_t rank = shapeOf(getInput()).size();
  for (int64_t axis = 0; axis < rank; ++axis) {
    SbpAttr s = sbpS(ctx, axis);
    if (getReduction() == LossReduction::none)
      sigs.push_back({{s, s}, {s}, ""});
    else
      sigs.push_back({{s, s}, {sbpP(ctx)}, meanNote(getReduction(), false)});
  }
  return sigs;
}

/// Loss gradients: input [N, C, d...], labels [N, d...], grad_loss (scalar,
/// or like labels for `none`) -> grad_input like input. Linear in grad_loss.
static SmallVector<SbpSignature>
lossBackward(MLIRContext *ctx, int64_t inputRank, LossReduction reduction,
             bool ignoring, SbpSignature classSplit) {
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  SmallVector<SbpSignature> sigs{{{b, b, b}, {b}, ""}, {{b, b, p}, {p}, ""}};
  for (auto [in, label] : sampleAxes(inputRank)) {
    SbpAttr grad = reduction == LossReduction::none ? sbpS(ctx, label) : b;
    sigs.push_back({{sbpS(ctx, in), sbpS(ctx, label), grad},
                    {sbpS(ctx, in)},
                    meanNote(reduction, ignoring)});
  }
  sigs.push_back(std::move(classSplit));
  return sigs;
}

SmallVector<SbpSignature> SoftmaxCrossEntropyBackwardOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpSignature classSplit{{sbpS(ctx, 1), sbpB(ctx), sbpB(ctx)},
                          {sbpS(ctx, 1)},
                          "all-reduce of the per-sample max and sum of exponentials"};
  return lossBackward(ctx, shapeOf(getInput()).size(), getReduction(),
                      getIgnoreIndex().has_value(), classSplit);
}

SmallVector<SbpSignature> NllLossBackwardOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpSignature classSplit{{sbpS(ctx, 1), sbpB(ctx), sbpB(ctx)},
                          {sbpS(ctx, 1)},
                          "labels outside the local classes masked, offset by rank"};
  return lossBackward(ctx, shapeOf(getInput()).size(), getReduction(),
                      getIgnoreIndex().has_value(), classSplit);
}
