//===- Reductions.cpp - reductions, softmax and normalisations -------------===//
//
// Reductions are linalg.generics with reduction iterators into a filled
// accumulator (0 for sums, -inf / the smallest integer for max) of the shape
// without the reduced dims; keepdims is a tensor.expand_shape afterwards.
// Consumers read the reduced values through projections that drop the
// reduced dims, so elementwise fusion sees ordinary broadcasts.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

int64_t product(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  return n;
}

Value sumOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims) {
  Type t = elementTypeOf(x);
  return reduceGeneric(b, loc, x, shapeOf(x), dims, scalarConstant(b, loc, t, 0),
                       [](OpBuilder &nb, Location nloc, ValueRange a) {
                         return addValues(nb, nloc, a[1], a[0]);
                       });
}

Value maxOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims) {
  return reduceGeneric(b, loc, x, shapeOf(x), dims,
                       lowestValue(b, loc, elementTypeOf(x)),
                       [](OpBuilder &nb, Location nloc, ValueRange a) {
                         return maxValues(nb, nloc, a[1], a[0]);
                       });
}

/// Divides every element of `sum` by `count` (signed integer division
/// truncates, as ONNX ReduceMean on integers).
Value divideBy(OpBuilder &b, Location loc, Value sum, int64_t count) {
  Type t = elementTypeOf(sum);
  return broadcastGeneric(
      b, loc, shapeOf(sum), t, sum,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value c = scalarConstant(nb, nloc, t, static_cast<double>(count));
        if (isa<FloatType>(t))
          return arith::DivFOp::create(nb, nloc, a[0], c);
        return arith::DivSIOp::create(nb, nloc, a[0], c);
      });
}

template <typename OpT>
struct ReduceLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getInput();
    if (failed(checkArithType(op, elementTypeOf(x))))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> axes = op.getAxes();
    Value r;
    if constexpr (std::is_same_v<OpT, of::ReduceMaxOp>) {
      r = maxOver(rewriter, loc, x, axes);
    } else {
      r = sumOver(rewriter, loc, x, axes);
      if constexpr (std::is_same_v<OpT, of::ReduceMeanOp>)
        r = divideBy(rewriter, loc, r, product(shapeOf(x), axes));
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, r,
                                     op.getOutput().getType().getShape()));
    return success();
  }
};

struct GlobalAvgPoolLowering : OpConversionPattern<of::GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getInput();
    SmallVector<int64_t> dims;
    for (int64_t d = 2; d < tensorType(x).getRank(); ++d)
      dims.push_back(d);
    Location loc = op.getLoc();
    Value mean = divideBy(rewriter, loc, sumOver(rewriter, loc, x, dims),
                          product(shapeOf(x), dims));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, mean,
                                     op.getOutput().getType().getShape()));
    return success();
  }
};

/// softmax and log_softmax, numerically stable: the row maximum is
/// subtracted before exponentiating.
template <typename OpT>
struct SoftmaxLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isLog = std::is_same_v<OpT, of::LogSoftmaxOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput();
    ArrayRef<int64_t> shape = shapeOf(x);
    Type t = elementTypeOf(x);
    int64_t rank = shape.size(), axis = op.getAxis();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = dropDimsMap(ctx, rank, {axis});

    Value max = maxOver(rewriter, loc, x, {axis});
    // sum(exp(x - max)) in one reduction.
    Value sum = reduceGeneric(
        rewriter, loc, ValueRange{x, max}, {id, row}, shape, {axis},
        scalarConstant(rewriter, loc, t, 0),
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          return arith::AddFOp::create(b, l, a[2], e);
        });
    Value result = parallelGeneric(
        rewriter, loc, shape, t, ValueRange{x, max, sum}, {id, row, row},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
          if constexpr (isLog)
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, a[2]));
          return arith::DivFOp::create(b, l, math::ExpOp::create(b, l, shifted),
                                       a[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// mean and biased variance of `x` over `dims` (two passes: the mean, then
/// the mean squared deviation, which is more accurate than E[x^2]-E[x]^2).
std::pair<Value, Value> meanAndVariance(OpBuilder &b, Location loc, Value x,
                                        ArrayRef<int64_t> dims) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size(), count = product(shape, dims);
  Type t = elementTypeOf(x);
  Value mean = divideBy(b, loc, sumOver(b, loc, x, dims), count);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value sq = reduceGeneric(
      b, loc, ValueRange{x, mean}, {id, dropDimsMap(ctx, rank, dims)}, shape,
      dims, scalarConstant(b, loc, t, 0),
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
        return arith::AddFOp::create(nb, l, a[2],
                                     arith::MulFOp::create(nb, l, d, d));
      });
  return {mean, divideBy(b, loc, sq, count)};
}

/// (x - mean) / sqrt(var + eps) * scale + bias, with mean and var read
/// through `statMap`, scale and bias through `paramMap` (bias optional).
Value normalize(OpBuilder &b, Location loc, Value x, Value mean, Value var,
                Value scale, Value bias, AffineMap statMap, AffineMap paramMap,
                double epsilon) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type t = elementTypeOf(x);
  AffineMap id = AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext());
  SmallVector<Value> inputs = {x, mean, var, scale};
  SmallVector<AffineMap> maps = {id, statMap, statMap, paramMap};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(paramMap);
  }
  return parallelGeneric(
      b, loc, shape, t, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value eps = scalarConstant(nb, l, t, epsilon);
        // 1 / sqrt rather than math.rsqrt: PyTorch's formula, and no
        // rsqrtf needed where math lowers to libm.
        Value std = math::SqrtOp::create(nb, l,
                                         arith::AddFOp::create(nb, l, a[2], eps));
        Value rstd = arith::DivFOp::create(nb, l, scalarConstant(nb, l, t, 1.0), std);
        Value y = arith::MulFOp::create(
            nb, l, arith::SubFOp::create(nb, l, a[0], a[1]), rstd);
        y = arith::MulFOp::create(nb, l, y, a[3]);
        return a.size() > 4 ? Value(arith::AddFOp::create(nb, l, y, a[4])) : y;
      });
}

struct LayerNormLowering : OpConversionPattern<of::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput();
    int64_t rank = tensorType(x).getRank();
    SmallVector<int64_t> dims;
    for (int64_t d = op.getAxis(); d < rank; ++d)
      dims.push_back(d);
    auto [mean, var] = meanAndVariance(rewriter, loc, x, dims);
    SmallVector<int64_t> leading;
    for (int64_t d = 0; d < op.getAxis(); ++d)
      leading.push_back(d);
    Value y = normalize(rewriter, loc, x, mean, var, adaptor.getScale(),
                        adaptor.getBias(), dropDimsMap(ctx, rank, dims),
                        dropDimsMap(ctx, rank, leading),
                        op.getEpsilon().convertToDouble());
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// The dims batch normalisation reduces over: all but the channels (dim 1).
SmallVector<int64_t> batchNormDims(int64_t rank) {
  SmallVector<int64_t> dims = {0};
  for (int64_t d = 2; d < rank; ++d)
    dims.push_back(d);
  return dims;
}

AffineMap channelMap(MLIRContext *ctx, int64_t rank) {
  return AffineMap::get(rank, 0, getAffineDimExpr(1, ctx), ctx);
}

struct BatchNormInferenceLowering
    : OpConversionPattern<of::BatchNormInferenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::BatchNormInferenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getInput();
    AffineMap c = channelMap(rewriter.getContext(), tensorType(x).getRank());
    rewriter.replaceOp(
        op, normalize(rewriter, op.getLoc(), x, adaptor.getMean(),
                      adaptor.getVariance(), adaptor.getScale(),
                      adaptor.getBias(), c, c,
                      op.getEpsilon().convertToDouble()));
    return success();
  }
};

/// `x` with its float elements extended or truncated to `type`.
Value convertFloats(OpBuilder &b, Location loc, Value x, Type type) {
  Type from = elementTypeOf(x);
  if (from == type)
    return x;
  return broadcastGeneric(
      b, loc, shapeOf(x), type, x,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
          return arith::ExtFOp::create(nb, l, type, a[0]);
        return arith::TruncFOp::create(nb, l, type, a[0]);
      });
}

/// Batch statistics of `input` in the statistics type: mean and biased
/// variance over all dims but 1, as [C]. batch_norm_training and
/// batch_norm_statistics both lower through here, so that their loops are
/// identical and CSE keeps one copy (the gradient's statistics are the
/// forward pass's).
///
/// One pass over the data (issue #17): the two sums are siblings over the
/// same loops and inputs, which oflow-merge-sibling-reductions makes one
/// loop nest, so the input is read once (the layer-norm style mean, then
/// mean squared deviation, reads it twice). They are sums of the data
/// shifted by one of its own values per channel, k = x[0, c, 0, ...]
/// (the "shifted data" algorithm): with s1 = sum(x - k), s2 = sum((x - k)^2)
/// over n values, mean = k + s1 / n and var = s2 / n - (s1 / n)^2. E[x^2] -
/// E[x]^2 without the shift loses the variance to cancellation when the
/// mean is large against the spread; with k a sample, |mean - k| is of the
/// order of the spread. The sums accumulate in the statistics type (f64 for
/// f32 data), so what cancellation remains costs bits far below f32's.
std::pair<Value, Value> batchNormStatistics(OpBuilder &b, Location loc,
                                            Value input) {
  Type t = of::BatchNormTrainingOp::getStatisticsType(elementTypeOf(input));
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = shapeOf(input);
  int64_t rank = shape.size();
  SmallVector<int64_t> dims = batchNormDims(rank);
  int64_t count = product(shape, dims);
  // k: the first value of every channel, as [C] in the statistics type.
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes(rank, b.getIndexAttr(1)), strides(rank, b.getIndexAttr(1));
  sizes[1] = b.getIndexAttr(shape[1]);
  auto sliceType = RankedTensorType::get({shape[1]}, elementTypeOf(input));
  Value first = tensor::ExtractSliceOp::create(b, loc, sliceType, input, offsets,
                                               sizes, strides);
  Value shift = convertFloats(b, loc, first, t);
  Value x = convertFloats(b, loc, input, t);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap c = channelMap(ctx, rank);
  auto shiftedSum = [&](bool squared) {
    return reduceGeneric(
        b, loc, ValueRange{x, shift}, {id, c}, shape, dims,
        scalarConstant(b, loc, t, 0),
        [squared](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
          if (squared)
            d = arith::MulFOp::create(nb, l, d, d);
          return arith::AddFOp::create(nb, l, a[2], d);
        });
  };
  Value s1 = shiftedSum(false), s2 = shiftedSum(true);
  auto perChannel = [&](ValueRange operands, auto body) {
    return broadcastGeneric(b, loc, {shape[1]}, t, operands, body);
  };
  Value mean = perChannel(
      ValueRange{shift, s1}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value n = scalarConstant(nb, l, t, static_cast<double>(count));
        return arith::AddFOp::create(nb, l, a[0], arith::DivFOp::create(nb, l, a[1], n));
      });
  // Rounding can leave a constant channel's variance a hair below zero.
  Value var = perChannel(
      ValueRange{s1, s2}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value n = scalarConstant(nb, l, t, static_cast<double>(count));
        Value m1 = arith::DivFOp::create(nb, l, a[0], n);
        Value m2 = arith::DivFOp::create(nb, l, a[1], n);
        Value v = arith::SubFOp::create(nb, l, m2, arith::MulFOp::create(nb, l, m1, m1));
        return arith::MaximumFOp::create(nb, l, v, scalarConstant(nb, l, t, 0));
      });
  return {mean, var};
}

struct BatchNormStatisticsLowering
    : OpConversionPattern<of::BatchNormStatisticsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::BatchNormStatisticsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [mean, var] =
        batchNormStatistics(rewriter, op.getLoc(), adaptor.getInput());
    rewriter.replaceOp(op, {mean, var});
    return success();
  }
};

/// Statistics, running-statistics update and normalization in the op's
/// statistics type (f64 for f32, see the op's description). The
/// normalization is PyTorch's CPU kernel's form, per channel
/// alpha = scale / sqrt(var + eps) and beta = bias - mean * alpha, then
/// y = x * alpha + beta per element: no square root or division per element.
/// The per-element product stays in the statistics type: rounding alpha and
/// beta to f32 first (PyTorch's own float path) moved RegNetX-400MF's
/// near-dead channels' gradients past twice PyTorch's float32 noise against
/// its float64 reference (e2e-torchvision-regnet_x_400mf-cpu).
struct BatchNormTrainingLowering
    : OpConversionPattern<of::BatchNormTrainingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::BatchNormTrainingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type type = elementTypeOf(adaptor.getInput());
    Type t = of::BatchNormTrainingOp::getStatisticsType(type);
    auto widen = [&](Value v) { return convertFloats(rewriter, loc, v, t); };
    Value input = adaptor.getInput();
    ArrayRef<int64_t> shape = shapeOf(input);
    int64_t rank = shape.size();
    int64_t count = product(shape, batchNormDims(rank));
    auto [mean, var] = batchNormStatistics(rewriter, loc, input);
    double epsilon = op.getEpsilon().convertToDouble();
    Value alpha = broadcastGeneric(
        rewriter, loc, {shape[1]}, t, ValueRange{widen(adaptor.getScale()), var},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          // 1 / sqrt rather than math.rsqrt: PyTorch's formula.
          Value std = math::SqrtOp::create(
              b, l, arith::AddFOp::create(b, l, a[1], scalarConstant(b, l, t, epsilon)));
          return arith::DivFOp::create(b, l, a[0], std);
        });
    Value beta = broadcastGeneric(
        rewriter, loc, {shape[1]}, t,
        ValueRange{widen(adaptor.getBias()), mean, alpha},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::SubFOp::create(b, l, a[0],
                                       arith::MulFOp::create(b, l, a[1], a[2]));
        });
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap c = channelMap(ctx, rank);
    Value y = parallelGeneric(
        rewriter, loc, shape, type,
        ValueRange{input, alpha, beta}, {id, c, c},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value x = a[0];
          if (type != t)
            x = arith::ExtFOp::create(b, l, t, x);
          Value r = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, a[1]),
                                          a[2]);
          if (type != t)
            r = arith::TruncFOp::create(b, l, type, r);
          return r;
        });
    // running = running * momentum + batch * (1 - momentum); the running
    // variance takes the unbiased batch variance (ONNX, PyTorch).
    double momentum = op.getMomentum().convertToDouble();
    double unbias = count > 1 ? static_cast<double>(count) / (count - 1) : 1.0;
    auto update = [&](Value running, Value batch, double batchScale) {
      running = widen(running);
      return broadcastGeneric(
          rewriter, loc, shapeOf(running), t, ValueRange{running, batch},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value keep = arith::MulFOp::create(
                b, l, a[0], scalarConstant(b, l, t, momentum));
            Value add = arith::MulFOp::create(
                b, l, a[1],
                scalarConstant(b, l, t, batchScale * (1.0 - momentum)));
            return arith::AddFOp::create(b, l, keep, add);
          });
    };
    Value runningMean = update(adaptor.getRunningMean(), mean, 1.0);
    Value runningVar = update(adaptor.getRunningVar(), var, unbias);
    auto narrow = [&](Value v) { return convertFloats(rewriter, loc, v, type); };
    rewriter.replaceOp(op, {y, narrow(runningMean), narrow(runningVar)});
    return success();
  }
};

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<of::ReduceSumOp>, ReduceLowering<of::ReduceMeanOp>,
               ReduceLowering<of::ReduceMaxOp>, GlobalAvgPoolLowering,
               SoftmaxLowering<of::SoftmaxOp>,
               SoftmaxLowering<of::LogSoftmaxOp>, LayerNormLowering,
               BatchNormInferenceLowering, BatchNormStatisticsLowering,
               BatchNormTrainingLowering>(
      patterns.getContext());
}

} // namespace oflow::lowering
