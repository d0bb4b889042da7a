//===- LossGrad.cpp - gradients of the loss ops ---------------------------===//
//
// Labels are integer tensors and never differentiated; the class losses use
// their backward ops (which also apply ignore_index and the mean's count).
//
//===----------------------------------------------------------------------===//
#include "GradRules.h"

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {
namespace {

template <typename BackwardOp, typename OpT> Value classLossGrad(OpT op, GradArgs &a) {
  return a.b.op<BackwardOp>(op->getOperand(0), op.getLabels(), a.grad(),
                            op.getReduction(), op.getIgnoreIndexAttr());
}

} // namespace

void registerLossGradRules(GradRegistry &r) {
  r.add<SoftmaxCrossEntropyOp>([](SoftmaxCrossEntropyOp op, GradArgs &a) {
    a.set(0, classLossGrad<SoftmaxCrossEntropyBackwardOp>(op, a));
    return success();
  });
  r.add<NllLossOp>([](NllLossOp op, GradArgs &a) {
    a.set(0, classLossGrad<NllLossBackwardOp>(op, a));
    return success();
  });
  // d/dinput = 2 (input - target) * g (/ numel for mean); d/dtarget = -that.
  r.add<MseLossOp>([](MseLossOp op, GradArgs &a) {
    GradBuilder &b = a.b;
    Value x = op.getInput(), t = op.getTarget();
    double factor = 2.0;
    if (op.getReduction() == LossReduction::mean)
      factor /= static_cast<double>(tensorType(x).getNumElements());
    Value dx = b.mul(b.scale(b.sub(x, t), factor), a.grad());
    a.set(0, dx);
    if (a.needs(1))
      a.set(1, b.neg(dx));
    return success();
  });
}

} // namespace oflow::autodiff
