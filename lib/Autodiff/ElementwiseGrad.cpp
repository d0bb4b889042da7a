//===- ElementwiseGrad.cpp - gradients of element-wise ops ----------------===//
//
// Formulas follow PyTorch's autograd (tools/autograd/derivatives.yaml) so the
// gradients match torch's, ties and zeros included: relu'(0) = 0, abs'(0) = 0,
// max/min split the gradient of ties in half (torch.maximum), pow's exponent
// gradient is 0 where base = 0 and exponent >= 0.
//
//===----------------------------------------------------------------------===//
#include "GradRules.h"

#include <cmath>

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {
namespace {

using P = ComparePredicate;

/// Sets the gradients of a broadcasting binary op from full-shape gradients,
/// built by `dlhs` / `drhs` only when wanted (lhs first: a stable IR order).
template <typename L, typename R>
void setBinary(Operation *op, GradArgs &a, L dlhs, R drhs) {
  if (a.needs(0))
    a.set(0, a.b.reduceTo(dlhs(), shapeOf(op->getOperand(0))));
  if (a.needs(1))
    a.set(1, a.b.reduceTo(drhs(), shapeOf(op->getOperand(1))));
}

/// The gradient of max (isMax) or min w.r.t. `self` against `other`: all of
/// it where self wins, half of it on ties (as torch.maximum / torch.minimum).
Value extremumGrad(GradBuilder &b, Value g, Value self, Value other,
                   bool isMax) {
  Value zero = b.scalarLike(0.0, g);
  Value wins = b.compare(isMax ? P::gt : P::lt, self, other);
  Value ties = b.compare(P::eq, self, other);
  Value half = b.scale(g, 0.5);
  return b.where(wins, g, b.where(ties, half, zero));
}

void registerUnary(GradRegistry &r) {
  r.add<NegOp>([](NegOp op, GradArgs &a) {
    a.set(0, a.b.neg(a.grad()));
    return success();
  });
  r.add<ExpOp>([](ExpOp op, GradArgs &a) {
    a.set(0, a.b.mul(a.grad(), op.getOutput()));
    return success();
  });
  r.add<LogOp>([](LogOp op, GradArgs &a) {
    a.set(0, a.b.div(a.grad(), op.getInput()));
    return success();
  });
  // torch: grad / (2 * result)
  r.add<SqrtOp>([](SqrtOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    a.set(0, b.div(a.grad(), b.scale(op.getOutput(), 2.0)));
    return success();
  });
  // torch: -0.5 * grad * result^3
  r.add<RsqrtOp>([](RsqrtOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput();
    Value y3 = b.mul(b.mul(y, y), y);
    a.set(0, b.mul(b.scale(a.grad(), -0.5), y3));
    return success();
  });
  // torch: -grad * result^2
  r.add<ReciprocalOp>([](ReciprocalOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput();
    a.set(0, b.mul(b.neg(a.grad()), b.mul(y, y)));
    return success();
  });
  r.add<TanhOp>([](TanhOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput();
    a.set(0, b.mul(a.grad(), b.sub(b.scalarLike(1.0, y), b.mul(y, y))));
    return success();
  });
  r.add<SigmoidOp>([](SigmoidOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput();
    a.set(0, b.mul(b.mul(a.grad(), b.sub(b.scalarLike(1.0, y), y)), y));
    return success();
  });
  // threshold_backward(grad, result, 0): zero where the result is <= 0.
  r.add<ReluOp>([](ReluOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value y = op.getOutput();
    Value positive = b.compare(P::gt, y, b.scalarLike(0.0, y));
    a.set(0, b.where(positive, a.grad(), b.scalarLike(0.0, y)));
    return success();
  });
  // 2 / sqrt(pi) * exp(-x^2)
  r.add<ErfOp>([](ErfOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput();
    Value e = b.op<ExpOp>(b.neg(b.mul(x, x)));
    a.set(0, b.mul(b.scale(a.grad(), 2.0 / std::sqrt(M_PI)), e));
    return success();
  });
  // grad * sign(x), sign(0) = 0.
  r.add<AbsOp>([](AbsOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput(), g = a.grad();
    Value zero = b.scalarLike(0.0, x);
    Value pos = b.compare(P::gt, x, zero), negative = b.compare(P::lt, x, zero);
    a.set(0, b.where(pos, g, b.where(negative, b.neg(g), zero)));
    return success();
  });
  r.add<GeluOp>([](GeluOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput(), g = a.grad();
    if (op.getApproximate() == GeluApproximation::none) {
      // cdf + x * pdf, pdf = exp(-x^2 / 2) / sqrt(2 pi).
      Value cdf = b.scale(
          b.add(b.scalarLike(1.0, x), b.op<ErfOp>(b.scale(x, M_SQRT1_2))), 0.5);
      Value pdf = b.scale(b.op<ExpOp>(b.scale(b.mul(x, x), -0.5)),
                          0.5 * M_2_SQRTPI * M_SQRT1_2);
      a.set(0, b.mul(g, b.add(cdf, b.mul(x, pdf))));
      return success();
    }
    // torch's gelu_backward, approximate = "tanh".
    const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
    Value xSq = b.mul(x, x), xCube = b.mul(xSq, x);
    Value inner = b.scale(b.add(x, b.scale(xCube, kKappa)), kBeta);
    Value t = b.op<TanhOp>(inner);
    Value one = b.scalarLike(1.0, x);
    Value left = b.scale(x, 0.5);
    Value leftDerivative = b.scale(b.add(one, t), 0.5);
    Value tanhDerivative = b.sub(one, b.mul(t, t));
    Value innerDerivative =
        b.scale(b.add(one, b.scale(xSq, 3.0 * kKappa)), kBeta);
    Value rightDerivative = b.mul(b.mul(left, tanhDerivative), innerDerivative);
    a.set(0, b.mul(g, b.add(leftDerivative, rightDerivative)));
    return success();
  });
  r.add<CastOp>([](CastOp op, GradArgs &a) {
    // Only float -> float casts are active (others have an integer side).
    a.set(0,
          a.b.op<CastOp>(a.grad(), tensorType(op.getInput()).getElementType()));
    return success();
  });
  r.add<DropoutOp>([](DropoutOp op, GradArgs &a) -> LogicalResult {
    // Linear for its fixed mask, which the same (seed, step, element) draws
    // again: the gradient is the same dropout of the incoming gradient.
    if (op.getRatio().convertToDouble() == 0.0) {
      a.set(0, a.grad());
      return success();
    }
    a.set(0, DropoutOp::create(a.b.b, a.b.loc, a.grad(), op.getStep(),
                               op.getOffsets(), op.getRatioAttr(),
                               op.getSeedAttr(), op.getGlobalShapeAttr()));
    return success();
  });
}

void registerBinary(GradRegistry &r) {
  r.add<AddOp>([](AddOp op, GradArgs &a) {
    setBinary(
        op, a, [&] { return a.grad(); }, [&] { return a.grad(); });
    return success();
  });
  r.add<SubOp>([](SubOp op, GradArgs &a) {
    setBinary(
        op, a, [&] { return a.grad(); }, [&] { return a.b.neg(a.grad()); });
    return success();
  });
  r.add<MulOp>([](MulOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad();
    setBinary(
        op, a, [&] { return b.mul(g, op.getRhs()); },
        [&] { return b.mul(g, op.getLhs()); });
    return success();
  });
  // torch: grad / other, -grad * self / (other * other)
  r.add<DivOp>([](DivOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), x = op.getLhs(), y = op.getRhs();
    setBinary(
        op, a, [&] { return b.div(g, y); },
        [&] { return b.div(b.mul(b.neg(g), x), b.mul(y, y)); });
    return success();
  });
  // torch pow_backward_self / pow_backward_exponent.
  r.add<PowOp>([](PowOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), x = op.getLhs(), e = op.getRhs();
    setBinary(
        op, a,
        [&] {
          // Zero where the exponent is 0 (x^-1 may be inf there).
          Value zero = b.scalarLike(0.0, g);
          Value d = b.mul(e, b.op<PowOp>(x, b.sub(e, b.scalarLike(1.0, e))));
          return b.where(b.compare(P::eq, e, b.scalarLike(0.0, e)), zero,
                         b.mul(g, d));
        },
        [&] {
          // Zero where base == 0 and exponent >= 0 (log(0) would give nan).
          Value zero = b.scalarLike(0.0, g);
          Value baseZero = b.compare(P::eq, x, b.scalarLike(0.0, x));
          Value expNonNeg = b.compare(P::ge, e, b.scalarLike(0.0, e));
          Value gd = b.mul(g, b.mul(op.getOutput(), b.op<LogOp>(x)));
          return b.where(baseZero, b.where(expNonNeg, zero, gd), gd);
        });
    return success();
  });
  r.add<MaxOp>([](MaxOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), x = op.getLhs(), y = op.getRhs();
    setBinary(
        op, a, [&] { return extremumGrad(b, g, x, y, true); },
        [&] { return extremumGrad(b, g, y, x, true); });
    return success();
  });
  r.add<MinOp>([](MinOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), x = op.getLhs(), y = op.getRhs();
    setBinary(
        op, a, [&] { return extremumGrad(b, g, x, y, false); },
        [&] { return extremumGrad(b, g, y, x, false); });
    return success();
  });
  // The condition is boolean: never differentiated.
  r.add<WhereOp>([](WhereOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), c = op.getCondition();
    Value zero = b.scalarLike(0.0, g);
    if (a.needs(1))
      a.set(1, b.reduceTo(b.where(c, g, zero), shapeOf(op.getLhs())));
    if (a.needs(2))
      a.set(2, b.reduceTo(b.where(c, zero, g), shapeOf(op.getRhs())));
    return success();
  });
}

} // namespace

void registerElementwiseGradRules(GradRegistry &registry) {
  registerUnary(registry);
  registerBinary(registry);
}

} // namespace oflow::autodiff
