//===- DuplicateInitFills.cpp - a fill per destination --------------------===//
//
// A matmul or reduction writes into its init tensor in place. When CSE has
// merged the zero fills of many of them into one, bufferization keeps that
// one filled buffer and copies it into every destination: memory traffic of
// a fill plus one copy per use, instead of a fill per use. Giving each
// destination its own fill (on its own tensor.empty, which CSE then no
// longer sees as one value once bufferized) lets bufferization fill each
// destination in place, and each fill moves to just before its destination,
// where a GEMM takes it as beta = 0. Bare tensor.empty destinations (also
// through a reshape) are shared by at most 32 each.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace oflow {
#define GEN_PASS_DEF_DUPLICATEINITFILLS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Whether `use` is a destination its owner writes in place.
bool isInit(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

/// Moves a fill whose one use is a destination (and its own tensor.empty)
/// to just before that op: what runs between them (the bf16 rounding of a
/// GEMM's operands, other layers) would otherwise keep the GEMM from
/// taking the zero fill as beta = 0 (oflow-linalg-to-blas), and the fill
/// would be a kernel of its own writing the whole output once more.
void sinkToSoleInit(linalg::FillOp fill, tensor::EmptyOp empty) {
  Value filled = fill->getResult(0);
  if (!filled.hasOneUse() || !isInit(*filled.getUses().begin()))
    return;
  Operation *owner = filled.getUses().begin()->getOwner();
  if (owner->getBlock() != fill->getBlock() || fill->getNextNode() == owner)
    return;
  fill->moveBefore(owner);
  if (empty && empty->hasOneUse() && empty->getBlock() == fill->getBlock() &&
      empty->getNumOperands() == 0)
    empty->moveBefore(fill);
}

struct DuplicateInitFillsPass
    : impl::DuplicateInitFillsBase<DuplicateInitFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    DenseMap<Operation *, unsigned> order;
    getOperation().walk([&](Operation *op) {
      order[op] = order.size();
      auto fill = dyn_cast<linalg::FillOp>(op);
      if (fill && fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      Value filled = fill->getResult(0);
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : filled.getUses())
        if (isInit(use))
          inits.push_back(&use);
      llvm::sort(inits, [&](OpOperand *a, OpOperand *b) {
        return order.lookup(a->getOwner()) < order.lookup(b->getOwner());
      });
      // The first destination keeps the original when nothing else reads it.
      if (!inits.empty() && inits.size() == llvm::range_size(filled.getUses()))
        inits.erase(inits.begin());
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      for (OpOperand *use : inits) {
        OpBuilder b(use->getOwner());
        IRMapping mapping;
        if (empty)
          mapping.map(empty.getResult(), b.clone(*empty)->getResult(0));
        Operation *copy = b.clone(*fill, mapping);
        use->set(copy->getResult(0));
      }
      sinkToSoleInit(fill, empty);
    }
    // Bare tensor.empty destinations: CSE merges those of one type into one
    // value, and one-shot bufferization's analysis compares every pair of
    // in-place writes into it, quadratic in its uses (--micro-batches 8 gave
    // one empty tensor 160 destinations). Each run of kMaxShared
    // destinations, in program order, gets its own: the analysis stays
    // linear, and the runs keep what sharing gives (one buffer that ops
    // with disjoint lifetimes write in turn).
    // The same for an empty tensor seen through a reshape (the flat
    // optimizer state of oflow-flatten-state: a [1, 2] piece of every
    // padded bias, collapsed to [2]).
    constexpr size_t kMaxShared = 32;
    SmallVector<Operation *> shared; // tensor.empty, or a reshape of one
    order.clear(); // the fills above added ops (a fill of a reshaped empty)
    getOperation().walk([&](Operation *op) {
      order[op] = order.size();
      bool emptyOrView =
          isa<tensor::EmptyOp>(op) ||
          (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) &&
           op->getOperand(0).getDefiningOp<tensor::EmptyOp>());
      if (emptyOrView && !op->use_empty() &&
          static_cast<size_t>(llvm::range_size(op->getUses())) > kMaxShared)
        shared.push_back(op);
    });
    for (Operation *op : shared) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : op->getUses())
        if (isInit(use) && use.getOwner()->getBlock() == op->getBlock())
          inits.push_back(&use);
      llvm::sort(inits, [&](OpOperand *a, OpOperand *b) {
        return order.lookup(a->getOwner()) < order.lookup(b->getOwner());
      });
      Value current;
      for (size_t i = kMaxShared; i < inits.size(); ++i) {
        if (i % kMaxShared == 0) {
          OpBuilder b(inits[i]->getOwner());
          IRMapping mapping;
          if (Operation *empty = op->getNumOperands() ? op->getOperand(0).getDefiningOp()
                                                      : nullptr)
            mapping.map(empty->getResult(0), b.clone(*empty)->getResult(0));
          current = b.clone(*op, mapping)->getResult(0);
        }
        inits[i]->set(current);
      }
    }
  }
};

} // namespace
} // namespace oflow
