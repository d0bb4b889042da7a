//===- MergeSiblingReductions.cpp - sibling reductions as one loop nest ---===//
//
// Two reductions that walk the same loops over the same data read it twice:
// a batch norm's shifted sum and sum of squares, its backward pass's sum(g)
// and sum(g * xhat), a layer norm's two row sums. Elementwise fusion cannot
// join them (neither produces the other's input), so each stays its own
// pass over memory. Here they become one linalg.generic with the outputs of
// both: every point is loaded once and updates every accumulator, and each
// output still adds its own terms in its own order, so no result changes.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>

namespace oflow {
#define GEN_PASS_DEF_MERGESIBLINGREDUCTIONS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Whether every parallel loop of `op` comes before every reduction loop:
/// rows (a softmax's, a loss's total), which the GPU's warp-row strategy
/// runs, directly or once oflow-split-reductions has made partials of them.
bool isRowShaped(linalg::GenericOp op) {
  bool inReduction = false;
  for (utils::IteratorType it : op.getIteratorTypesArray()) {
    if (it == utils::IteratorType::parallel && inReduction)
      return false;
    inReduction |= it == utils::IteratorType::reduction;
  }
  return true;
}

/// Whether `op` may be merged: a reduction on tensors with static loops and
/// no discardable attributes (a mark another pass reads would be lost). With
/// `gpuStrategies`, not one a GPU strategy runs alone, each kernel one
/// output: rows (warp-row) and an innermost parallel loop (block-column).
/// What stays is a batch norm's [N, C, H, W] over N, H, W.
bool isCandidate(linalg::GenericOp op, bool gpuStrategies) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
      !op->getDiscardableAttrDictionary().empty())
    return false;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  if (gpuStrategies &&
      (op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
       isRowShaped(op)))
    return false;
  return true;
}

/// The loop extents and iterator kinds of `op`: only reductions with equal
/// signatures can merge, so candidates are compared within these groups.
std::vector<int64_t> loopSignature(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::vector<int64_t> key(ranges.begin(), ranges.end());
  for (utils::IteratorType it : op.getIteratorTypesArray())
    key.push_back(it == utils::IteratorType::reduction ? -1 : -2);
  return key;
}

/// Whether `a` and `b` read the same data: one input, through the same
/// indexing map, that every loop moves along (a permutation of the loops, a
/// point of it per iteration; or a pooling window's (n, c, y*s + kh, ...)),
/// what a pass over memory reads. A shared broadcast operand (a norm's
/// weight read by two micro-batches' sums) is no reason to merge: it would
/// tie together reductions of different data, and their schedules.
bool sharesData(linalg::GenericOp a, linalg::GenericOp b) {
  for (OpOperand *x : a.getDpsInputOperands()) {
    AffineMap map = a.getMatchingIndexingMap(x);
    if (map.getNumSymbols() != 0 ||
        !llvm::all_of(llvm::seq(map.getNumDims()),
                      [&](unsigned d) { return map.isFunctionOfDim(d); }))
      continue;
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() && map == b.getMatchingIndexingMap(y))
        return true;
  }
  return false;
}

/// Every value `op` reads: its operands and what its body captures.
SmallVector<Value> valuesRead(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  llvm::SetVector<Value> captured;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  values.append(captured.begin(), captured.end());
  return values;
}

/// Whether `op` only makes a fresh value: an empty tensor, a constant, or a
/// fill of one (a reduction's initial accumulator), so moving it earlier
/// changes nothing but where its buffer's life starts.
bool isInitMaker(Operation *op) {
  return isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(op) && isPure(op);
}

/// Whether the merge of `first` and the later `second` (same block) may
/// stand where `first` stands: everything `second` reads is defined before
/// `first`, or is made by init makers (isInitMaker) that can move there
/// (appended to `toMove`, operands first). Only `second`'s results,
/// reductions, are then made earlier: a max pool's backward arg-max joins
/// its forward maximum, and its positions are kept from the forward pass
/// instead of read again from the input. The other way round (the merge
/// where `second` stands) would keep what only `first` reads alive until
/// `second`: a whole activation, for a saving of one read of it.
bool canMergeAtFirst(linalg::GenericOp first, linalg::GenericOp second,
                     DominanceInfo &dominance, SmallVector<Operation *> &toMove) {
  std::function<bool(Value)> available = [&](Value v) {
    if (dominance.properlyDominates(v, first.getOperation()))
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != first->getBlock() || !isInitMaker(def))
      return false;
    if (llvm::is_contained(toMove, def))
      return true;
    if (!llvm::all_of(valuesRead(def), available))
      return false;
    toMove.push_back(def);
    return true;
  };
  toMove.clear();
  return llvm::all_of(valuesRead(second.getOperation()), available);
}

/// One generic doing what `first` and `second` do, where `first` stands;
/// their results are replaced by its.
linalg::GenericOp merge(linalg::GenericOp first, linalg::GenericOp second) {
  OpBuilder b(first);
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps, initMaps;
  // argOf[k][i]: the merged input position of input i of sibling k.
  SmallVector<SmallVector<unsigned>> argOf(2);
  linalg::GenericOp ops[2] = {first, second};
  for (auto [k, op] : llvm::enumerate(ops)) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      unsigned at = inputs.size();
      for (unsigned j = 0; j < inputs.size(); ++j)
        if (inputs[j] == in->get() && maps[j] == map)
          at = j;
      if (at == inputs.size()) {
        inputs.push_back(in->get());
        maps.push_back(map);
      }
      argOf[k].push_back(at);
    }
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    }
  }
  maps.append(initMaps);
  SmallVector<Type> resultTypes(first->getResultTypes());
  llvm::append_range(resultTypes, second->getResultTypes());
  Location loc = b.getFusedLoc({first.getLoc(), second.getLoc()});
  auto merged = linalg::GenericOp::create(b, loc, resultTypes, inputs, inits,
                                          maps, first.getIteratorTypesArray());
  Block *body = b.createBlock(&merged.getRegion());
  for (Value v : inputs)
    body->addArgument(getElementTypeOrSelf(v.getType()), loc);
  for (Value v : inits)
    body->addArgument(getElementTypeOrSelf(v.getType()), loc);
  SmallVector<Value> yielded;
  unsigned initBase = inputs.size();
  for (auto [k, op] : llvm::enumerate(ops)) {
    IRMapping mapping;
    Block *old = op.getBody();
    unsigned numInputs = op.getNumDpsInputs();
    for (unsigned i = 0; i < numInputs; ++i)
      mapping.map(old->getArgument(i), body->getArgument(argOf[k][i]));
    for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
      mapping.map(old->getArgument(numInputs + i),
                  body->getArgument(initBase + i));
    initBase += op.getNumDpsInits();
    for (Operation &inner : old->without_terminator())
      b.clone(inner, mapping);
    for (Value v : old->getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
  }
  linalg::YieldOp::create(b, loc, yielded);
  unsigned n = first->getNumResults();
  first->replaceAllUsesWith(merged->getResults().take_front(n));
  second->replaceAllUsesWith(merged->getResults().drop_front(n));
  first.erase();
  second.erase();
  return merged;
}

struct MergeSiblingReductionsPass
    : impl::MergeSiblingReductionsBase<MergeSiblingReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      // Candidates grouped by loop signature, each group in block order.
      std::map<std::vector<int64_t>, SmallVector<linalg::GenericOp>> groups;
      for (auto op : block->getOps<linalg::GenericOp>())
        if (isCandidate(op, gpuStrategies))
          groups[loopSignature(op)].push_back(op);
      // Each candidate takes in every later sibling it can, in order (a
      // merged op stays a candidate for the ones after it).
      for (auto &[signature, candidates] : groups)
        for (size_t i = 0; i < candidates.size(); ++i) {
          if (!candidates[i])
            continue;
          for (size_t j = i + 1; j < candidates.size(); ++j) {
            linalg::GenericOp a = candidates[i], b = candidates[j];
            SmallVector<Operation *> toMove;
            if (!b || !sharesData(a, b) || !canMergeAtFirst(a, b, dominance, toMove))
              continue;
            for (Operation *op : toMove)
              op->moveBefore(a);
            candidates[i] = merge(a, b);
            candidates[j] = nullptr;
          }
        }
    }
  }
};

} // namespace
} // namespace oflow
