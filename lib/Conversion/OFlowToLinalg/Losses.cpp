//===- Losses.cpp - classification and regression losses -------------------===//
//
// softmax_cross_entropy is nll_loss of log_softmax (built as oflow ops that
// the conversion lowers in turn). nll_loss picks -input[n, label] per sample
// with tensor.extract; ignored labels contribute 0 and `mean` divides by the
// number of labels not ignored (PyTorch cross_entropy, ONNX). The backward
// ops weight each sample by grad_loss (/ count for mean, 0 when ignored).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// True unless `label` equals the ignore index (always true without one).
Value isCounted(OpBuilder &b, Location loc, Value label,
                std::optional<int64_t> ignoreIndex) {
  if (!ignoreIndex)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  Value ignore = scalarConstant(b, loc, label.getType(),
                                static_cast<double>(*ignoreIndex));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, label, ignore);
}

/// The labels' dims inside a loop nest over the scores [N, C, d...]: all
/// but the class dim 1.
AffineMap labelMap(MLIRContext *ctx, int64_t scoreRank) {
  return dropDimsMap(ctx, scoreRank, {1});
}

SmallVector<int64_t> allDims(int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(d);
  return dims;
}

/// The number of counted labels as a rank-0 tensor of `t`.
Value countLabels(OpBuilder &b, Location loc, Value labels, Type t,
                  std::optional<int64_t> ignoreIndex) {
  int64_t rank = tensorType(labels).getRank();
  return reduceGeneric(
      b, loc, labels, shapeOf(labels), allDims(rank), scalarConstant(b, loc, t, 0),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value one = scalarConstant(nb, l, t, 1), zero = scalarConstant(nb, l, t, 0);
        Value inc = arith::SelectOp::create(nb, l, isCounted(nb, l, a[0], ignoreIndex),
                                            one, zero);
        return arith::AddFOp::create(nb, l, a[1], inc);
      });
}

Value sumAll(OpBuilder &b, Location loc, Value x) {
  Type t = elementTypeOf(x);
  return reduceGeneric(b, loc, x, shapeOf(x), allDims(tensorType(x).getRank()),
                       scalarConstant(b, loc, t, 0),
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(nb, l, a[1], a[0]);
                       });
}

/// Rank-0 x / rank-0 y.
Value divideScalars(OpBuilder &b, Location loc, Value x, Value y) {
  return broadcastGeneric(b, loc, {}, elementTypeOf(x), ValueRange{x, y},
                          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return arith::DivFOp::create(nb, l, a[0], a[1]);
                          });
}

/// Applies a loss reduction to per-sample losses; `count` (rank 0) is the
/// mean's divisor.
Value reduceLoss(OpBuilder &b, Location loc, Value perSample,
                 of::LossReduction reduction, function_ref<Value()> count) {
  if (reduction == of::LossReduction::none)
    return perSample;
  Value sum = sumAll(b, loc, perSample);
  if (reduction == of::LossReduction::sum)
    return sum;
  return divideScalars(b, loc, sum, count());
}

struct NllLossLowering : OpConversionPattern<of::NllLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::NllLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), labels = adaptor.getLabels();
    Type t = elementTypeOf(input);
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    int64_t classes = shapeOf(input)[1];
    int64_t rank = tensorType(labels).getRank();
    Value perSample = broadcastGeneric(
        rewriter, loc, shapeOf(labels), t, labels,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value counted = isCounted(b, l, a[0], ignore);
          // An ignored label may be any value: read class 0 instead.
          Value cls = arith::SelectOp::create(b, l, counted, toIndex(b, l, a[0]),
                                              indexConstant(b, l, 0));
          cls = arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, cls, indexConstant(b, l, 0)),
              indexConstant(b, l, classes - 1));
          SmallVector<Value> at = {linalg::IndexOp::create(b, l, 0), cls};
          for (int64_t d = 1; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value v = tensor::ExtractOp::create(b, l, input, at);
          return arith::SelectOp::create(b, l, counted,
                                         arith::NegFOp::create(b, l, v),
                                         scalarConstant(b, l, t, 0));
        });
    Value loss = reduceLoss(rewriter, loc, perSample, op.getReduction(), [&] {
      return countLabels(rewriter, loc, labels, t, ignore);
    });
    rewriter.replaceOp(op, loss);
    return success();
  }
};

struct SoftmaxCrossEntropyLowering
    : OpConversionPattern<of::SoftmaxCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logp = of::LogSoftmaxOp::create(rewriter, loc, adaptor.getLogits(),
                                          /*axis=*/1);
    rewriter.replaceOpWithNewOp<of::NllLossOp>(
        op, logp, adaptor.getLabels(), op.getReduction(),
        op.getIgnoreIndexAttr());
    return success();
  }
};

/// d(loss)/d(input) of both class losses: (softmax(input) if `withSoftmax`)
/// minus onehot(label), times the sample's weight.
template <typename OpT, bool withSoftmax>
struct ClassLossBackwardLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput(), labels = adaptor.getLabels();
    Value gradLoss = adaptor.getGradLoss();
    Type t = elementTypeOf(input);
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    of::LossReduction reduction = op.getReduction();

    // Per-sample weight: 0 when ignored, else grad_loss (/ count for mean).
    SmallVector<Value> inputs = {labels, gradLoss};
    if (reduction == of::LossReduction::mean)
      inputs.push_back(countLabels(rewriter, loc, labels, t, ignore));
    Value weight = broadcastGeneric(
        rewriter, loc, shapeOf(labels), t, inputs,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value w = a[1];
          if (a.size() > 2)
            w = arith::DivFOp::create(b, l, w, a[2]);
          return arith::SelectOp::create(b, l, isCounted(b, l, a[0], ignore), w,
                                         scalarConstant(b, l, t, 0));
        });

    int64_t rank = tensorType(input).getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap perSample = labelMap(ctx, rank);
    SmallVector<Value> operands = {labels, weight};
    SmallVector<AffineMap> maps = {perSample, perSample};
    if constexpr (withSoftmax) {
      operands.push_back(of::SoftmaxOp::create(rewriter, loc, input, 1));
      maps.push_back(id);
    }
    Value grad = parallelGeneric(
        rewriter, loc, shapeOf(input), t, operands, maps,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value cls = linalg::IndexOp::create(b, l, 1);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            toIndex(b, l, a[0]), cls);
          Value onehot = arith::SelectOp::create(
              b, l, hit, scalarConstant(b, l, t, 1), scalarConstant(b, l, t, 0));
          Value g = a.size() > 2 ? Value(arith::SubFOp::create(b, l, a[2], onehot))
                                 : Value(arith::NegFOp::create(b, l, onehot));
          return arith::MulFOp::create(b, l, g, a[1]);
        });
    rewriter.replaceOp(op, grad);
    return success();
  }
};

struct MseLossLowering : OpConversionPattern<of::MseLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::MseLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Type t = elementTypeOf(x);
    Value sq = broadcastGeneric(
        rewriter, loc, shapeOf(x), t, ValueRange{x, adaptor.getTarget()},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value d = arith::SubFOp::create(b, l, a[0], a[1]);
          return arith::MulFOp::create(b, l, d, d);
        });
    Value loss = reduceLoss(rewriter, loc, sq, op.getReduction(), [&] {
      return filledTensor(rewriter, loc, {},
                          scalarConstant(rewriter, loc, t,
                                         tensorType(x).getNumElements()));
    });
    rewriter.replaceOp(op, loss);
    return success();
  }
};

} // namespace

void populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<NllLossLowering, SoftmaxCrossEntropyLowering, MseLossLowering,
               ClassLossBackwardLowering<of::SoftmaxCrossEntropyBackwardOp, true>,
               ClassLossBackwardLowering<of::NllLossBackwardOp, false>>(
      patterns.getContext());
}

} // namespace oflow::lowering
