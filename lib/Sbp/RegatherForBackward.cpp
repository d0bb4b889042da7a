//===- RegatherForBackward.cpp - ZeRO-3's gathers again in the backward ---===//
//
// See Passes.td. A gathered weight read by the forward and the backward
// pass is live across the forward/backward boundary, where the activations
// peak too; gathering it again for the backward pass trades one all-gather
// per weight for all of the weights' whole copies at that peak.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "OFlow/OFlowOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_REGATHERFORBACKWARD
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow {
namespace {

/// Copies each gathered weight's chain before its first use after
/// `boundary`.
void regather(Block &block, Operation *boundary) {
  SmallVector<Operation *> forward;
  for (Operation &op : block) {
    forward.push_back(&op);
    if (&op == boundary)
      break;
  }
  auto isBackward = [&](OpOperand &use) {
    Operation *top = block.findAncestorOpInBlock(*use.getOwner());
    return top && boundary->isBeforeInBlock(top);
  };
  // Last first: a chain's tail is copied whole before a value inside it
  // is looked at (which then has backward uses only if something else in
  // the backward pass reads it).
  for (Operation *op : llvm::reverse(forward)) {
    if (op->getNumResults() != 1)
      continue;
    Value value = op->getResult(0);
    Operation *first = nullptr;
    for (OpOperand &use : value.getUses())
      if (isBackward(use)) {
        Operation *top = block.findAncestorOpInBlock(*use.getOwner());
        if (!first || top->isBeforeInBlock(first))
          first = top;
      }
    if (!first)
      continue;
    SmallVector<Operation *> chain = of::getWeightGatherChain(op);
    if (chain.empty())
      continue;
    OpBuilder b(first);
    IRMapping map;
    for (Operation *link : chain) {
      Operation *copy = b.clone(*link, map);
      copy->setAttr("oflow.regather", b.getUnitAttr());
    }
    value.replaceUsesWithIf(map.lookup(value), isBackward);
  }
}

struct RegatherForBackwardPass
    : impl::RegatherForBackwardBase<RegatherForBackwardPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr("oflow.entry"))
        continue;
      if (Operation *boundary = of::getLossBoundary(func))
        regather(func.getBody().front(), boundary);
    }
  }
};

} // namespace
} // namespace oflow
