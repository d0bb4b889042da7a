//===- LinalgGrad.cpp - gradients of matmul, gemm, conv and pooling -------===//
#include "GradRules.h"

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {
namespace {

/// Gradients of Y = op(A) @ op(B) where op transposes the last two dims when
/// the flag is set. Each is again one matmul with transpose flags (no
/// explicit transposes): dA = g @ op(B)^T, or its transpose when A was
/// transposed; likewise dB. Broadcast batch dims are summed by the caller.
Value matmulGradA(GradBuilder &b, Value g, Value bMat, bool ta, bool tb) {
  if (!ta)
    return b.op<MatmulOp>(g, bMat, false, !tb);
  return b.op<MatmulOp>(bMat, g, tb, true);
}

Value matmulGradB(GradBuilder &b, Value g, Value aMat, bool ta, bool tb) {
  if (!tb)
    return b.op<MatmulOp>(aMat, g, !ta, false);
  return b.op<MatmulOp>(g, aMat, true, ta);
}

/// dB of X [..., M, K] @ W [K, N] (a weight shared by every batch): the sum
/// over the batch of X^T @ g is one GEMM contracting over batch and rows,
/// X as [B*M, K] and g as [B*M, N] (what PyTorch's linear backward does),
/// rather than a batched GEMM, its [..., K, N] result and a reduction.
Value sharedWeightGrad(GradBuilder &b, Value g, Value x, bool tb) {
  ArrayRef<int64_t> xs = shapeOf(x), gs = shapeOf(g);
  int64_t rows = ShapedType::getNumElements(xs.drop_back());
  Value x2 = b.reshape(x, {rows, xs.back()});
  Value g2 = b.reshape(g, {rows, gs.back()});
  return matmulGradB(b, g2, x2, /*ta=*/false, tb);
}

void registerMatmul(GradRegistry &r) {
  r.add<MatmulOp>([](MatmulOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad(), x = op.getLhs(), y = op.getRhs();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    if (a.needs(0))
      a.set(0, b.reduceTo(matmulGradA(b, g, y, ta, tb), shapeOf(x)));
    if (a.needs(1)) {
      bool shared = shapeOf(y).size() == 2 && shapeOf(x).size() > 2 && !ta &&
                    !ShapedType::isDynamicShape(shapeOf(x)) &&
                    !ShapedType::isDynamicShape(shapeOf(g));
      a.set(1, shared ? sharedWeightGrad(b, g, x, tb)
                      : b.reduceTo(matmulGradB(b, g, x, ta, tb), shapeOf(y)));
    }
    return success();
  });
  // alpha * op(A) @ op(B) + beta * C, C broadcast to [M, N].
  r.add<GemmOp>([](GemmOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    if (a.needs(0) || a.needs(1)) {
      Value ga = b.scale(g, alpha);
      if (a.needs(0))
        a.set(0, matmulGradA(b, ga, op.getB(), ta, tb));
      if (a.needs(1))
        a.set(1, matmulGradB(b, ga, op.getA(), ta, tb));
    }
    if (a.needs(2))
      a.set(2, b.reduceTo(b.scale(g, beta), shapeOf(op.getC())));
    return success();
  });
}

void registerConvPool(GradRegistry &r) {
  r.add<Conv2dOp>([](Conv2dOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad();
    if (a.needs(0))
      a.set(0, b.op<Conv2dBackwardInputOp>(
                   g, op.getWeight(), shapeOf(op.getInput()), op.getStrides(),
                   op.getPads(), op.getDilations(), op.getGroups()));
    if (a.needs(1))
      a.set(1, b.op<Conv2dBackwardFilterOp>(
                   g, op.getInput(), shapeOf(op.getWeight()), op.getStrides(),
                   op.getPads(), op.getDilations(), op.getGroups()));
    if (a.needs(2))
      a.set(2, b.sum(g, {0, 2, 3}, /*keepdims=*/false));
    return success();
  });
  // conv2d_backward_input as a forward op (ONNX ConvTranspose): it is linear
  // in both operands, and its adjoints are the convolution itself and the
  // filter gradient with the roles of gradient and input swapped.
  r.add<Conv2dBackwardInputOp>([](Conv2dBackwardInputOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value g = a.grad();
    if (a.needs(0))
      a.set(0, b.op<Conv2dOp>(g, op.getWeight(), Value(), op.getStrides(),
                              op.getPads(),
                              op.getDilations(), op.getGroups()));
    if (a.needs(1))
      a.set(1, b.op<Conv2dBackwardFilterOp>(
                   op.getGradOutput(), g, shapeOf(op.getWeight()),
                   op.getStrides(), op.getPads(), op.getDilations(),
                   op.getGroups()));
    return success();
  });
  r.add<MaxPool2dOp>([](MaxPool2dOp op, GradArgs &a) {
    a.set(0, a.b.op<MaxPool2dBackwardOp>(
                 a.grad(), op.getInput(), op.getKernel(), op.getStrides(),
                 op.getPads(), op.getCeilMode(), op.getDilationsAttr()));
    return success();
  });
  r.add<AvgPool2dOp>([](AvgPool2dOp op, GradArgs &a) {
    a.set(0, a.b.op<AvgPool2dBackwardOp>(a.grad(), shapeOf(op.getInput()),
                                         op.getKernel(), op.getStrides(),
                                         op.getPads(), op.getCeilMode(),
                                         op.getCountIncludePad()));
    return success();
  });
  // Each input element gets 1/(spatial size) of its channel's gradient.
  r.add<GlobalAvgPoolOp>([](GlobalAvgPoolOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    ArrayRef<int64_t> in = shapeOf(op.getInput());
    int64_t count = 1;
    for (int64_t d : in.drop_front(2))
      count *= d;
    a.set(0, b.expand(b.scale(a.grad(), 1.0 / static_cast<double>(count)), in));
    return success();
  });
}

/// Fused attention: one backward op for all three operands, which
/// recomputes the probabilities from the forward op's logsumexp. The
/// logsumexp (result 1) is a statistic, not a value the loss reads.
void registerAttention(GradRegistry &r) {
  r.add<AttentionOp>(
      [](AttentionOp op, GradArgs &a) {
        Value g = a.grad(0);
        if (!g)
          return success();
        auto grads = AttentionBackwardOp::create(
            a.b.b, a.b.loc, op.getQuery(), op.getKey(), op.getValue(),
            op.getOutput(), op.getLogsumexp(), g, op.getScaleAttr(),
            op.getCausalAttr(), op.getOperandTypeAttr());
        a.set(0, grads.getGradQuery());
        a.set(1, grads.getGradKey());
        a.set(2, grads.getGradValue());
        return success();
      },
      /*inactiveOperands=*/0, /*inactiveResults=*/0b10);
}

} // namespace

void registerLinalgGradRules(GradRegistry &registry) {
  registerMatmul(registry);
  registerAttention(registry);
  registerConvPool(registry);
}

} // namespace oflow::autodiff
