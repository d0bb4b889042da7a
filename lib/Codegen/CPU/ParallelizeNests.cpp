//===- ParallelizeNests.cpp - outlined nests as ranges for the threads ----===//
//
// See Passes.td (oflow-parallelize-nests). The CPU target runs each
// outlined nest whose outer loop is an scf.parallel on the runtime's
// threads: the function takes a range of the (collapsed) outer iterations,
// and oflow-lower-parallel-calls hands the ranges to the thread pool.
// Splitting iterations changes nothing any iteration computes, which is
// why losses are bit-identical at every thread count.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "oflow/Codegen/ParallelNests.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_PARALLELIZENESTS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Work counts saturate here (no overflow on huge nests).
constexpr int64_t kWorkCap = int64_t(1) << 50;

int64_t saturatingMul(int64_t a, int64_t b) {
  return (b != 0 && a > kWorkCap / b) ? kWorkCap : a * b;
}

/// Trip counts of a loop's dimensions, if all are constants.
std::optional<SmallVector<int64_t>> tripCounts(ValueRange lbs, ValueRange ubs,
                                               ValueRange steps) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    trips.push_back(*u > *l ? (*u - *l + *s - 1) / *s : 0);
  }
  return trips;
}

/// The elements `op` produces: its vector results' (or, for stores, the
/// stored vector's) lanes, else 1.
int64_t elements(Operation &op) {
  int64_t n = 1;
  auto count = [&](Type t) {
    if (auto v = dyn_cast<VectorType>(t))
      n = std::max(n, v.getNumElements());
  };
  for (Type t : op.getResultTypes())
    count(t);
  if (op.getNumResults() == 0)
    for (Type t : op.getOperandTypes())
      count(t);
  return n;
}

} // namespace

int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>() || op.hasTrait<OpTrait::ConstantLike>())
      continue;
    int64_t w = 0;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto trips = tripCounts(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      w = saturatingMul(trips ? (*trips)[0] : 1, estimateWork(*loop.getBody()));
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      w = estimateWork(*loop.getBody());
      if (auto trips = tripCounts(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        for (int64_t t : *trips)
          w = saturatingMul(w, t);
    } else if (op.getNumRegions() > 0) {
      // scf.if and the like: the costlier branch.
      for (Region &region : op.getRegions())
        for (Block &b : region)
          w = std::max(w, estimateWork(b));
    } else {
      w = elements(op);
    }
    work = std::min(kWorkCap, work + w);
  }
  return work;
}

namespace {

/// The one scf.parallel `fn` consists of (besides pure leaves), if `fn` is
/// an outlined nest this pass handles.
scf::ParallelOp soleParallelNest(func::FuncOp fn) {
  if (fn.isExternal() || !fn.isPrivate() || fn.getNumResults() != 0 ||
      !fn.getBody().hasOneBlock())
    return {};
  scf::ParallelOp nest;
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (nest)
        return {};
      nest = loop;
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return {};
  }
  if (!nest || nest.getNumReductions() != 0 ||
      !tripCounts(nest.getLowerBound(), nest.getUpperBound(), nest.getStep()))
    return {};
  return nest;
}

struct ParallelizeNestsPass : impl::ParallelizeNestsBase<ParallelizeNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // One walk for the users of every function (not one per nest).
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (func::FuncOp fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      scf::ParallelOp nest = soleParallelNest(fn);
      if (!nest)
        continue;
      ArrayRef<Operation *> uses = users.getUsers(fn);
      if (uses.empty() || llvm::any_of(uses, [](Operation *u) { return !isa<func::CallOp>(u); }))
        continue;
      parallelize(fn, nest, uses);
    }
  }

  void parallelize(func::FuncOp fn, scf::ParallelOp nest, ArrayRef<Operation *> uses) {
    int64_t total = estimateWork(fn.getBody().front());
    if (total < minWork)
      return;
    SmallVector<int64_t> trips =
        *tripCounts(nest.getLowerBound(), nest.getUpperBound(), nest.getStep());
    // The leading dimensions to split across threads, as one.
    unsigned outer = 1;
    int64_t iterations = trips[0];
    while (outer < trips.size() && iterations < minIterations)
      iterations = saturatingMul(iterations, trips[outer++]);
    if (iterations < 2)
      return;

    IRRewriter rewriter(fn.getContext());
    Location loc = nest.getLoc();
    if (outer > 1) {
      // scf's collapse normalizes the merged dimensions: 0..iterations step 1.
      std::vector<unsigned> merged;
      for (unsigned d = 0; d < outer; ++d)
        merged.push_back(d);
      SmallVector<std::vector<unsigned>> groups{merged};
      for (unsigned d = outer; d < trips.size(); ++d)
        groups.push_back({d});
      Block *block = nest->getBlock();
      collapseParallelLoops(rewriter, nest, groups);
      nest = *block->getOps<scf::ParallelOp>().begin();
    }
    int64_t perIteration = std::max<int64_t>(1, total / iterations);
    int64_t grain = std::max<int64_t>(1, (chunkWork + perIteration - 1) / perIteration);

    // (begin, end) lead the parameters; the loop's first dimension runs
    // over lb + [begin, end) * step.
    Block &body = fn.getBody().front();
    Type index = rewriter.getIndexType();
    if (failed(fn.insertArguments({0, 0}, {index, index}, {nullptr, nullptr}, {loc, loc}))) {
      fn.emitError("cannot add the iteration range parameters");
      return signalPassFailure();
    }
    Value begin = body.getArgument(0), end = body.getArgument(1);
    rewriter.setInsertionPoint(nest);
    Value lb = nest.getLowerBound()[0], step = nest.getStep()[0];
    auto scaled = [&](Value i) -> Value {
      if (isConstantIntValue(step, 1) && isConstantIntValue(lb, 0))
        return i;
      Value offset = arith::MulIOp::create(rewriter, loc, i, step);
      return arith::AddIOp::create(rewriter, loc, lb, offset);
    };
    Value newLb = scaled(begin), newUb = scaled(end);
    rewriter.modifyOpInPlace(nest, [&] {
      nest.getLowerBoundMutable().slice(0, 1).assign(newLb);
      nest.getUpperBoundMutable().slice(0, 1).assign(newUb);
    });
    fn->setAttr(kParallelIterationsAttr, rewriter.getI64IntegerAttr(iterations));
    fn->setAttr(kParallelGrainAttr, rewriter.getI64IntegerAttr(grain));

    for (Operation *user : uses) {
      auto call = cast<func::CallOp>(user);
      rewriter.setInsertionPoint(call);
      SmallVector<Value> operands{
          arith::ConstantIndexOp::create(rewriter, call.getLoc(), 0),
          arith::ConstantIndexOp::create(rewriter, call.getLoc(), iterations)};
      llvm::append_range(operands, call.getOperands());
      rewriter.modifyOpInPlace(call, [&] { call->setOperands(operands); });
    }
  }
};

} // namespace
} // namespace oflow
