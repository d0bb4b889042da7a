//===- OFlowSbpElementwise.cpp - SBP signatures of elementwise ops --------===//
//
// Elementwise ops split any result axis (operands broadcasting along it stay
// B). Partial inputs are allowed only where the op is linear in them (sum
// partials) or nondecreasing (max partials: f(max_d x_d) = max_d f(x_d)).
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

/// Split and broadcast signatures of `op` from its own shapes.
static SmallVector<SbpSignature> elementwise(Operation *op) {
  return getElementwiseSbpSignatures(
      op->getContext(), getShapes(op->getOperandTypes()),
      cast<RankedTensorType>(op->getResult(0).getType()).getShape());
}

/// Elementwise, plus `partial` -> `partial` for a unary op.
static SmallVector<SbpSignature> unaryWithPartial(Operation *op, SbpAttr partial) {
  SmallVector<SbpSignature> sigs = elementwise(op);
  sigs.push_back({{partial}, {partial}, ""});
  return sigs;
}

#define OFLOW_SBP_ELEMENTWISE(OP)                                              \
  SmallVector<SbpSignature> OP::getSbpCandidates(int64_t) {                    \
    return elementwise(getOperation());                                        \
  }
#define OFLOW_SBP_NONDECREASING(OP)                                            \
  SmallVector<SbpSignature> OP::getSbpCandidates(int64_t) {                    \
    return unaryWithPartial(getOperation(), sbpPMax(getContext()));            \
  }

// Neither linear nor nondecreasing.
OFLOW_SBP_ELEMENTWISE(RsqrtOp)
OFLOW_SBP_ELEMENTWISE(ReciprocalOp)
OFLOW_SBP_ELEMENTWISE(AbsOp)
OFLOW_SBP_ELEMENTWISE(NotOp)
OFLOW_SBP_ELEMENTWISE(GeluOp)
OFLOW_SBP_ELEMENTWISE(PowOp)
OFLOW_SBP_ELEMENTWISE(MinOp)
OFLOW_SBP_ELEMENTWISE(CompareOp)
// A float conversion rounds each partial term differently than their sum.
OFLOW_SBP_ELEMENTWISE(CastOp)

// Nondecreasing: max partials pass through.
OFLOW_SBP_NONDECREASING(ExpOp)
OFLOW_SBP_NONDECREASING(LogOp)
OFLOW_SBP_NONDECREASING(SqrtOp)
OFLOW_SBP_NONDECREASING(TanhOp)
OFLOW_SBP_NONDECREASING(SigmoidOp)
OFLOW_SBP_NONDECREASING(ReluOp)
OFLOW_SBP_NONDECREASING(ErfOp)

SmallVector<SbpSignature> NegOp::getSbpCandidates(int64_t) {
  return unaryWithPartial(getOperation(), sbpP(getContext()));
}

SmallVector<SbpSignature> AddOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext());
  sigs.push_back({{p, p}, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> SubOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext());
  sigs.push_back({{p, p}, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> MulOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext()), b = sbpB(getContext());
  sigs.push_back({{p, b}, {p}, ""});
  sigs.push_back({{b, p}, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> DivOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext()), b = sbpB(getContext());
  sigs.push_back({{p, b}, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> MaxOp::getSbpCandidates(int64_t) {
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr pmax = sbpPMax(getContext());
  sigs.push_back({{pmax, pmax}, {pmax}, ""});
  return sigs;
}

SmallVector<SbpSignature> WhereOp::getSbpCandidates(int64_t) {
  // Selecting is linear in the two value operands for a fixed condition.
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext()), b = sbpB(getContext());
  sigs.push_back({{b, p, p}, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> DropoutOp::getSbpCandidates(int64_t) {
  // With a fixed mask dropout is linear. Every device draws the same mask for
  // an element, keyed by its global index (oflow-partition tells a split
  // piece where it lies); the step (a scalar) is broadcast.
  SmallVector<SbpSignature> sigs = elementwise(getOperation());
  SbpAttr p = sbpP(getContext()), b = sbpB(getContext());
  SmallVector<SbpAttr> partial{p};
  partial.append(getNumOperands() - 1, b);
  sigs.push_back({partial, {p}, ""});
  return sigs;
}

SmallVector<SbpSignature> ExpandOp::getSbpCandidates(int64_t) {
  // Broadcasting to a shape: elementwise; copying a partial keeps it partial.
  SmallVector<SbpSignature> sigs = unaryWithPartial(getOperation(), sbpP(getContext()));
  sigs.push_back({{sbpPMax(getContext())}, {sbpPMax(getContext())}, ""});
  return sigs;
}
