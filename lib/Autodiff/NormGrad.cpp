//===- NormGrad.cpp - gradients of reductions, softmax and normalizations -===//
//
// Normalizations recompute their statistics from the forward input (the
// forward ops return only the normalized tensor); canonicalization/CSE may
// later share them with the forward computation.
//
//===----------------------------------------------------------------------===//
#include "GradRules.h"

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {
namespace {

/// The result gradient of a reduction, shaped as with keepdims.
template <typename OpT> Value keptGrad(OpT op, GradArgs &a) {
  return a.b.reshape(a.grad(), keptShape(shapeOf(op.getInput()), op.getAxes()));
}

int64_t countOver(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t axis : axes)
    n *= shape[axis];
  return n;
}

void registerReductions(GradRegistry &r) {
  r.add<ReduceSumOp>([](ReduceSumOp op, GradArgs &a) {
    a.set(0, a.b.expand(keptGrad(op, a), shapeOf(op.getInput())));
    return success();
  });
  r.add<ReduceMeanOp>([](ReduceMeanOp op, GradArgs &a) {
    ArrayRef<int64_t> in = shapeOf(op.getInput());
    double n = static_cast<double>(countOver(in, op.getAxes()));
    a.set(0, a.b.expand(a.b.scale(keptGrad(op, a), 1.0 / n), in));
    return success();
  });
  // torch.amax: the gradient is shared evenly among the tied maxima.
  r.add<ReduceMaxOp>([](ReduceMaxOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput();
    SmallVector<int64_t> kept = keptShape(shapeOf(x), op.getAxes());
    Value isMax =
        b.compare(ComparePredicate::eq, x, b.reshape(op.getOutput(), kept));
    Value mask = b.op<CastOp>(isMax, tensorType(x).getElementType());
    Value count = b.sum(mask, op.getAxes(), /*keepdims=*/true);
    a.set(0, b.mul(b.div(keptGrad(op, a), count), mask));
    return success();
  });
}

void registerSoftmax(GradRegistry &r) {
  // y * (g - sum(g * y))
  r.add<SoftmaxOp>([](SoftmaxOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput(), g = a.grad();
    int64_t axis = op.getAxis();
    Value dot = b.sum(b.mul(g, y), {axis}, /*keepdims=*/true);
    a.set(0, b.mul(y, b.sub(g, dot)));
    return success();
  });
  // g - exp(y) * sum(g)
  r.add<LogSoftmaxOp>([](LogSoftmaxOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput(), g = a.grad();
    int64_t axis = op.getAxis();
    Value total = b.sum(g, {axis}, /*keepdims=*/true);
    a.set(0, b.sub(g, b.mul(b.op<ExpOp>(y), total)));
    return success();
  });
}

/// Normalized input and 1/std over `axes` (biased variance), kept dims.
struct Normalized {
  Value xhat, rstd;
};

Normalized normalize(GradBuilder &b, Value x, ArrayRef<int64_t> axes,
                     double epsilon) {
  Value centered = b.sub(x, b.meanKeep(x, axes));
  Value var = b.meanKeep(b.mul(centered, centered), axes);
  Value rstd = b.op<RsqrtOp>(b.add(var, b.scalarLike(epsilon, x)));
  return {b.mul(centered, rstd), rstd};
}

/// dx of xhat-normalization given d(xhat): the standard full backward,
/// rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
Value normalizeGrad(GradBuilder &b, const Normalized &n, Value dxhat,
                    ArrayRef<int64_t> axes) {
  Value meanD = b.meanKeep(dxhat, axes);
  Value meanDX = b.meanKeep(b.mul(dxhat, n.xhat), axes);
  return b.mul(n.rstd, b.sub(b.sub(dxhat, meanD), b.mul(n.xhat, meanDX)));
}

/// A per-channel [C] vector shaped to broadcast over [N, C, d...].
Value channelShaped(GradBuilder &b, Value v, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[1] = shapeOf(v)[0];
  return b.reshape(v, shape);
}

void registerNorms(GradRegistry &r) {
  r.add<LayerNormOp>([](LayerNormOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput(), g = a.grad();
    int64_t rank = tensorType(x).getRank(), axis = op.getAxis();
    SmallVector<int64_t> normAxes, outerAxes;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? outerAxes : normAxes).push_back(d);
    Normalized n = normalize(b, x, normAxes, op.getEpsilon().convertToDouble());
    if (a.needs(0))
      a.set(0, normalizeGrad(b, n, b.mul(g, op.getScale()), normAxes));
    if (a.needs(1))
      a.set(1, b.sum(b.mul(g, n.xhat), outerAxes, /*keepdims=*/false));
    if (a.needs(2))
      a.set(2, b.sum(g, outerAxes, /*keepdims=*/false));
    return success();
  });
  // Batch statistics (biased variance); the running statistics (operands 3
  // and 4, results 1 and 2) are buffers and carry no gradient. The
  // statistics come from batch_norm_statistics, which lowers to the forward
  // pass's own loops (CSE shares them), and the backward needs two sums,
  // sum(g) and sum(g * xhat), in the op's statistics type (f64 for f32), for
  // all three gradients:
  //   dbias = sum(g), dscale = sum(g * xhat),
  //   dx = scale * rstd * (g - sum(g) / count - xhat * sum(g * xhat) / count).
  // dx is PyTorch's CPU kernel's form: per channel (statistics type, then
  // rounded once) a = scale * rstd, k = rstd * sum(g * xhat) / count and
  // mean(g); per element, in f32 for f32 and narrower data (vector lanes,
  // no f64 and no square root per element):
  //   dx = (g - mean(g) - (x - mean) * k) * a.
  r.add<BatchNormTrainingOp>(
      [](BatchNormTrainingOp op, GradArgs &a) {
        GradBuilder &b = a.b;
        Value g = a.grad(0);
        if (!g)
          return success();
        Type type = tensorType(op.getInput()).getElementType();
        Type wide = BatchNormTrainingOp::getStatisticsType(type);
        Type compute = BatchNormTrainingOp::getElementwiseType(type);
        auto stats = BatchNormStatisticsOp::create(b.b, b.loc, op.getInput());
        Value x = b.convert(op.getInput(), wide);
        Value gw = b.convert(g, wide);
        int64_t rank = tensorType(x).getRank(), channels = shapeOf(x)[1];
        SmallVector<int64_t> axes = axesExcept(rank, {1});
        double count = 1;
        for (int64_t axis : axes)
          count *= double(shapeOf(x)[axis]);
        Value mean = stats.getMean(), var = stats.getVariance();
        Value rstd = b.op<RsqrtOp>(
            b.add(var, b.scalarLike(op.getEpsilon().convertToDouble(), var)));
        Value xhat = b.mul(b.sub(x, channelShaped(b, mean, rank)),
                           channelShaped(b, rstd, rank));
        Value sumG, sumGX;
        if (a.needs(0) || a.needs(2))
          sumG = b.reshape(b.sum(gw, axes, /*keepdims=*/false), {channels});
        if (a.needs(0) || a.needs(1))
          sumGX = b.reshape(b.sum(b.mul(gw, xhat), axes, /*keepdims=*/false),
                            {channels});
        if (a.needs(0)) {
          // Per channel, rounded to the elementwise type, then broadcast.
          auto perChannel = [&](Value v) {
            return channelShaped(b, b.convert(v, compute), rank);
          };
          Value scale = b.convert(op.getScale(), wide);
          Value coef = perChannel(b.mul(scale, rstd));
          Value k = perChannel(b.scale(b.mul(rstd, sumGX), 1.0 / count));
          Value meanG = perChannel(b.scale(sumG, 1.0 / count));
          Value xc = b.convert(op.getInput(), compute);
          Value dx = b.sub(b.sub(b.convert(g, compute), meanG),
                           b.mul(b.sub(xc, perChannel(mean)), k));
          a.set(0, b.convert(b.mul(dx, coef), type));
        }
        if (a.needs(1))
          a.set(1, b.convert(sumGX, type));
        if (a.needs(2))
          a.set(2, b.convert(sumG, type));
        return success();
      },
      /*inactiveOperands=*/0b11000, /*inactiveResults=*/0b110);
  // y = (x - mean) * rstd * scale + bias with given statistics, which are
  // buffers (running statistics) and carry no gradient.
  r.add<BatchNormInferenceOp>(
      [](BatchNormInferenceOp op, GradArgs &a) {
        GradBuilder &b = a.b;
        Value x = op.getInput(), g = a.grad();
        int64_t rank = tensorType(x).getRank();
        SmallVector<int64_t> axes = axesExcept(rank, {1});
        Value var = op.getVariance();
        Value rstd = b.op<RsqrtOp>(
            b.add(var, b.scalarLike(op.getEpsilon().convertToDouble(), var)));
        Value rstdC = channelShaped(b, rstd, rank);
        if (a.needs(0))
          a.set(0,
                b.mul(g, b.mul(channelShaped(b, op.getScale(), rank), rstdC)));
        if (a.needs(1)) {
          Value xhat =
              b.mul(b.sub(x, channelShaped(b, op.getMean(), rank)), rstdC);
          a.set(1, b.sum(b.mul(g, xhat), axes, /*keepdims=*/false));
        }
        if (a.needs(2))
          a.set(2, b.sum(g, axes, /*keepdims=*/false));
        return success();
      },
      /*inactiveOperands=*/0b11000);
}

} // namespace

void registerNormGradRules(GradRegistry &registry) {
  registerReductions(registry);
  registerSoftmax(registry);
  registerNorms(registry);
}

} // namespace oflow::autodiff
