//===- OFlowSbpState.cpp - SBP signatures of constants and variables ------===//
//
// Values the program holds (constants, weights, variables) may be stored
// whole or split on any axis: each device reads or writes only its piece.
// Partial is never stored: a partial gradient or update is reduced first.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

/// B and every S(i) of a tensor of rank `rank`, as operand or result.
static SmallVector<SbpSignature> storedAs(MLIRContext *ctx, Type type,
                                          bool asOperand) {
  SmallVector<SbpSignature> sigs;
  auto add = [&](SbpAttr sbp) {
    SbpSignature sig;
    (asOperand ? sig.operands : sig.results).push_back(sbp);
    sigs.push_back(std::move(sig));
  };
  add(sbpB(ctx));
  for (int64_t axis = 0, e = cast<RankedTensorType>(type).getRank(); axis < e; ++axis)
    add(sbpS(ctx, axis));
  return sigs;
}

SmallVector<SbpSignature> ConstantOp::getSbpCandidates(int64_t) {
  return storedAs(getContext(), getType(), /*asOperand=*/false);
}
SmallVector<SbpSignature> WeightOp::getSbpCandidates(int64_t) {
  return storedAs(getContext(), getType(), /*asOperand=*/false);
}
SmallVector<SbpSignature> ReadVariableOp::getSbpCandidates(int64_t) {
  return storedAs(getContext(), getType(), /*asOperand=*/false);
}
SmallVector<SbpSignature> WriteVariableOp::getSbpCandidates(int64_t) {
  return storedAs(getContext(), getValue().getType(), /*asOperand=*/true);
}
SmallVector<SbpSignature> GradientOp::getSbpCandidates(int64_t) {
  return storedAs(getContext(), getGrad().getType(), /*asOperand=*/true);
}
