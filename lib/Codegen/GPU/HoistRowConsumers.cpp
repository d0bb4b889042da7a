//===- HoistRowConsumers.cpp - row-wise consumers next to their reduction --===//
//
// oflow-gpu-row-reductions makes a row reduction and the row-wise generics
// that follow it one warp-per-row kernel, but only generics that come next
// in program order: autodiff puts a layer norm's weight and bias gradients
// (column sums, split into partials and a fold) between the norm's row
// statistics and its input gradient, and after bufferization the memory
// plan may reuse the bytes of those partials for the input gradient, so the
// kernel formation can no longer look past them. Here, on tensors, where
// moving a pure op is free, the row-wise consumers move up next to the
// reduction. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

namespace oflow {
#define GEN_PASS_DEF_HOISTROWCONSUMERS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// How far past a reduction its consumers are looked for (top-level ops
/// with regions or memory effects; views and constants are not counted).
constexpr unsigned kLookahead = 24;

/// Whether `op` is a generic on tensors over `rows` x `cols` that
/// oflow-gpu-row-reductions would add to the reduction's group: elementwise
/// over rows and columns, over the rows alone, or another reduction of the
/// same rows.
bool runsOverRows(linalg::GenericOp op, ArrayRef<int64_t> rows, ArrayRef<int64_t> cols,
                  int64_t maxChain) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() == 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (op.getNumReductionLoops()) {
    std::optional<WarpRowReduction> r = matchWarpRowReduction(op, maxChain);
    return r && r->rows == rows && r->cols == cols;
  }
  SmallVector<int64_t> all(rows);
  llvm::append_range(all, cols);
  return ranges == ArrayRef<int64_t>(all) || ranges == rows;
}

/// Ops without effects or regions that may move with a consumer (its
/// `outs` tensor.empty, an init fill, reshapes of its operands).
bool movesAlong(Operation *op) {
  return isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             arith::ConstantOp, linalg::FillOp>(op) &&
         isMemoryEffectFree(op); // a fill on tensors included
}

/// Collects into `chain` (producers first) the ops after `at` that `v`
/// needs and that may move along; false if `v` needs another op after `at`.
bool collectProducers(Value v, Operation *at, SmallVectorImpl<Operation *> &chain,
                      unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != at->getBlock() || !at->isBeforeInBlock(def) ||
      llvm::is_contained(chain, def))
    return true; // defined before `at` (or already collected)
  if (depth > 3 || !movesAlong(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectProducers(operand, at, chain, depth + 1))
      return false;
  chain.push_back(def);
  return true;
}

struct HoistRowConsumersPass : impl::HoistRowConsumersBase<HoistRowConsumersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    SmallVector<linalg::GenericOp> reductions;
    for (Operation &op : body)
      if (auto g = dyn_cast<linalg::GenericOp>(op);
          g && g.hasPureTensorSemantics() && matchWarpRowReduction(g, maxChain))
        reductions.push_back(g);
    for (linalg::GenericOp reduction : reductions) {
      std::optional<WarpRowReduction> shape = matchWarpRowReduction(reduction, maxChain);
      Operation *at = reduction;
      unsigned looked = 0;
      for (Operation *next = reduction->getNextNode(); next && looked < kLookahead;) {
        Operation *following = next->getNextNode();
        auto g = dyn_cast<linalg::GenericOp>(next);
        if (!g) {
          if (next->getNumRegions() || !isMemoryEffectFree(next))
            ++looked;
          next = following;
          continue;
        }
        ++looked;
        SmallVector<Operation *> chain;
        // Its operands and what its body reads from outside (a gather's
        // table).
        llvm::SetVector<Value> used(g->getOperands().begin(), g->getOperands().end());
        getUsedValuesDefinedAbove(g->getRegions(), used);
        if (runsOverRows(g, shape->rows, shape->cols, maxChain) &&
            llvm::all_of(used, [&](Value v) { return collectProducers(v, at, chain); })) {
          for (Operation *producer : chain) {
            producer->moveAfter(at);
            at = producer;
          }
          g->moveAfter(at);
          at = g;
        }
        next = following;
      }
    }
  }
};

} // namespace
} // namespace oflow
