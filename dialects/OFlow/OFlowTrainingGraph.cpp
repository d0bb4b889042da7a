//===- OFlowTrainingGraph.cpp - where a training entry's forward part ends ===//
//
// A training entry is one block: the forward ops, the op that reduces an
// activation to the loss, then the backward ops and the optimizer. Passes
// that move work across that boundary (recomputation, gathering weights
// again for the backward pass) find it here, one way.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

static bool isScalar(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 0;
}

Operation *mlir::oflow::getLossBoundary(FunctionOpInterface fn) {
  if (fn.isExternal() || !fn.getFunctionBody().hasOneBlock())
    return nullptr;
  Block &block = fn.getFunctionBody().front();
  SmallVector<Value> work;
  Operation *ret = block.getTerminator();
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto name = fn.getResultAttrOfType<StringAttr>(i, "oflow.name");
        name && name.getValue() == "loss")
      work.push_back(ret->getOperand(i));
  // Back from the loss through scalar ops and collectives (the loss's
  // all-reduce, its division by the count) to the last op with a tensor
  // operand: the loss function's own op.
  Operation *boundary = nullptr;
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block || !seen.insert(def).second)
      continue;
    if (getBoxingMeshAxis(def)) {
      unsigned index = cast<OpResult>(v).getResultNumber();
      work.push_back(def->getOperand(
          def->getNumOperands() == def->getNumResults() ? index : 0));
      continue;
    }
    if (llvm::all_of(def->getOperands(), isScalar)) {
      llvm::append_range(work, def->getOperands());
      continue;
    }
    if (!boundary || boundary->isBeforeInBlock(def))
      boundary = def;
  }
  return boundary;
}

SmallVector<Operation *> mlir::oflow::getWeightGatherChain(Operation *op,
                                                          unsigned maxOps) {
  SmallVector<Operation *> chain;
  bool gathers = false;
  for (Operation *cur = op; !isa<ReadVariableOp>(cur);) {
    if (chain.size() == maxOps || cur->getNumOperands() != 1 ||
        cur->getNumResults() != 1 || cur->getNumRegions() ||
        !isMemoryEffectFree(cur))
      return {};
    gathers |= isa<AllGatherOp>(cur);
    chain.push_back(cur);
    cur = cur->getOperand(0).getDefiningOp();
    if (!cur || cur->getBlock() != op->getBlock())
      return {};
  }
  if (!gathers)
    return {};
  std::reverse(chain.begin(), chain.end());
  return chain;
}
