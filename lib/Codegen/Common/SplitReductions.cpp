//===- SplitReductions.cpp - long reductions -> partials plus folds -------===//
//
// A reduction into few outputs becomes
//
//   partial[k, out...] = reduce over the rest  (k x more outputs, 1/k the loop)
//   out[out...]        = combine(out, reduce over k of partial)
//
// by splitting one reduction loop of extent N into k x N/k (k divides N): the
// outer part becomes a new, outermost parallel loop. Two reasons to split:
//
//  * Occupancy (GPU, `target-threads`): each output element is one thread. A
//    bias or layer-norm gradient reduces 8192 rows into 768 outputs: 768
//    threads, each walking 8192 rows, on a chip that wants ~100k threads in
//    flight. k is the largest divisor up to the thread target, else the
//    smallest up to 8x it.
//  * Accuracy (every target, `max-chain`): a float sum accumulated in one
//    sequential chain of n adds has an error that grows like n ulps, and
//    systematically so when the terms are alike: a batch-norm bias gradient
//    after a global average pool adds 16384 equal-per-block terms, and came
//    out 1e-4 off where PyTorch's cascade sums are 1e-6 off (issue #13). Sums
//    whose chain exceeds `max-chain` are split, and their partials and folds
//    again, until no chain is longer (where the loop extents allow), which
//    is cascade summation with error ~ (sum of the chain lengths) ulps.
//
// The combiner must be the single op that folds the accumulator (arith
// add/mul/max/min and friends, with a neutral element). Floating-point sums
// are re-associated, as every GPU library's and PyTorch's reductions are.
//
//===----------------------------------------------------------------------===//
#include "../GPU/GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace oflow {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// The split of one reduction loop: loop `dim` of extent k * (extent / k).
struct Split {
  unsigned dim = 0;
  int64_t k = 1;
};

/// The largest divisor of `n` that is at most `limit`.
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// The smallest divisor of `n` in [from, to], or 1.
int64_t smallestDivisorIn(int64_t n, int64_t from, int64_t to) {
  for (int64_t d = std::max<int64_t>(from, 2); d <= std::min(n, to); ++d)
    if (n % d == 0)
      return d;
  return 1;
}

/// What the split needs to know about a reduction generic.
struct Reduction {
  /// The op that folds each output's accumulator, one per output.
  SmallVector<Operation *> combiners;
  SmallVector<int64_t> ranges;
  int64_t parallel = 1, reduction = 1;
  /// Reduction loops every operand indexes as a plain dimension (or not at
  /// all): the loops that can be split.
  SmallVector<unsigned> splittable;
};

/// Whether `op` is a reduction the pass can split: tensors, static loops,
/// each output with one combiner that has a neutral element (several
/// outputs: sibling reductions oflow-merge-sibling-reductions made one).
std::optional<Reduction> analyze(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() == 0 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  Reduction r;
  r.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(r.ranges, ShapedType::isDynamic))
    return std::nullopt;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    SmallVector<Operation *> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), i, combiners) ||
        combiners.size() != 1 || !arith::getNeutralElement(combiners[0]))
      return std::nullopt;
    r.combiners.push_back(combiners[0]);
  }
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (it != utils::IteratorType::reduction) {
      r.parallel *= r.ranges[d];
      continue;
    }
    r.reduction *= r.ranges[d];
    bool plain = llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
      for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
        if (e.isFunctionOfDim(d) && !isa<AffineDimExpr>(e))
          return false;
      return true;
    });
    if (plain)
      r.splittable.push_back(d);
  }
  return r;
}

/// The occupancy split: enough outputs to fill the GPU.
std::optional<Split> occupancySplit(const Reduction &r, int64_t targetThreads,
                                    int64_t minChunk) {
  if (targetThreads <= 0 || r.parallel >= targetThreads ||
      r.reduction < 2 * minChunk)
    return std::nullopt;
  int64_t want = llvm::divideCeil(targetThreads, r.parallel);
  int64_t limit = std::min(want, r.reduction / minChunk);
  // Without a divisor up to `want` (a 50257-wide vocabulary is 29 x 1733),
  // overshoot the thread target up to 8x rather than not split.
  int64_t overshoot = std::min(8 * want, r.reduction / minChunk);
  Split best;
  for (unsigned d : r.splittable) {
    int64_t k = largestDivisorAtMost(r.ranges[d], limit);
    if (k < 2)
      k = smallestDivisorIn(r.ranges[d], limit + 1, overshoot);
    if (k > best.k)
      best = {d, k};
  }
  if (best.k < 2)
    return std::nullopt;
  return best;
}

/// The accuracy split of a float sum whose sequential chain (the reduction
/// extent) exceeds `maxChain`: the outermost splittable loop (the inner,
/// contiguous loops stay whole for vectorization and caches), by its
/// smallest divisor that brings the chain within `maxChain`, else whole
/// (inner part 1; the next round splits the rest). A split must shorten
/// both chains (partial and fold): a lone prime loop stays as it is.
std::optional<Split> accuracySplit(const Reduction &r, int64_t maxChain) {
  if (maxChain <= 0 || r.reduction <= maxChain ||
      llvm::none_of(r.combiners, llvm::IsaPred<arith::AddFOp, arith::SubFOp>))
    return std::nullopt;
  int64_t need = llvm::divideCeil(r.reduction, maxChain);
  for (unsigned d : r.splittable) {
    int64_t extent = r.ranges[d];
    int64_t k = smallestDivisorIn(extent, need, extent);
    if (k < 2)
      k = extent;
    if (k >= 2 && k < r.reduction)
      return Split{d, k};
  }
  return std::nullopt;
}

/// `map` over the split loops: loop 0 is the new outer part of `split.dim`,
/// every old loop d is d + 1 (so old `split.dim` is now its inner part).
/// For an operand of `shape`, also returns the expanded shape and the
/// reassociation from it.
AffineMap splitMap(AffineMap map, const Split &split, ArrayRef<int64_t> shape,
                   int64_t inner, SmallVectorImpl<int64_t> &newShape,
                   SmallVectorImpl<ReassociationIndices> &reassociation) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> exprs;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (e.isFunctionOfDim(split.dim)) {
      exprs.push_back(getAffineDimExpr(0, ctx));
      exprs.push_back(getAffineDimExpr(split.dim + 1, ctx));
      reassociation.push_back({static_cast<int64_t>(newShape.size()),
                               static_cast<int64_t>(newShape.size() + 1)});
      newShape.append({split.k, inner});
      continue;
    }
    exprs.push_back(e.shiftDims(map.getNumDims(), 1));
    reassociation.push_back({static_cast<int64_t>(newShape.size())});
    newShape.push_back(shape[i]);
  }
  return AffineMap::get(map.getNumDims() + 1, 0, exprs, ctx);
}

/// Splits `op`; returns the partial generic (all of `op`'s outputs, each
/// with k times the points) and one fold generic per output.
std::pair<linalg::GenericOp, SmallVector<linalg::GenericOp>>
split(linalg::GenericOp op, const Split &s, ArrayRef<Operation *> combiners) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  int64_t extent = op.getStaticLoopRanges()[s.dim];
  int64_t inner = extent / s.k;

  // Stage 1: the partial reductions, one more (outermost) parallel loop.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    Value v = operand->get();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> newShape;
    SmallVector<ReassociationIndices> reassociation;
    AffineMap newMap = splitMap(map, s, type ? type.getShape() : ArrayRef<int64_t>{},
                                inner, newShape, reassociation);
    if (type && newShape.size() != static_cast<size_t>(type.getRank()))
      v = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(newShape, type.getElementType()), v,
          reassociation);
    inputs.push_back(v);
    maps.push_back(newMap);
  }
  SmallVector<Type> partialTypes;
  SmallVector<Value> partialInits;
  for (auto [init, combiner] : llvm::zip(op.getDpsInitsMutable(), combiners)) {
    auto outType = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> partialShape = {s.k};
    llvm::append_range(partialShape, outType.getShape());
    partialTypes.push_back(
        RankedTensorType::get(partialShape, outType.getElementType()));
    Value identity = arith::ConstantOp::create(
        b, loc, *arith::getNeutralElement(combiner));
    Value empty =
        tensor::EmptyOp::create(b, loc, partialShape, outType.getElementType());
    partialInits.push_back(
        linalg::FillOp::create(b, loc, identity, empty).getResult(0));
    AffineMap outMap = op.getMatchingIndexingMap(&init);
    SmallVector<AffineExpr> partialExprs = {getAffineDimExpr(0, ctx)};
    for (AffineExpr e : outMap.getResults())
      partialExprs.push_back(e.shiftDims(outMap.getNumDims(), 1));
    maps.push_back(AffineMap::get(outMap.getNumDims() + 1, 0, partialExprs, ctx));
  }
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel};
  llvm::append_range(iterators, op.getIteratorTypesArray());
  auto partial = linalg::GenericOp::create(b, loc, partialTypes, inputs,
                                           partialInits, maps, iterators);
  IRMapping mapping;
  op.getRegion().cloneInto(&partial.getRegion(), mapping);
  // linalg.index: old loop d is loop d + 1; the split loop's full index is
  // outer * inner + inner index.
  partial.getBody()->walk([&](linalg::IndexOp index) {
    OpBuilder ib(index);
    uint64_t d = index.getDim();
    Value shifted = linalg::IndexOp::create(ib, index.getLoc(), d + 1);
    if (d == s.dim) {
      Value outer = linalg::IndexOp::create(ib, index.getLoc(), 0);
      Value scale = arith::ConstantIndexOp::create(ib, index.getLoc(), inner);
      shifted = arith::AddIOp::create(
          ib, index.getLoc(), arith::MulIOp::create(ib, index.getLoc(), outer, scale),
          shifted);
    }
    index.replaceAllUsesWith(shifted);
    index.erase();
  });

  // Stage 2: fold the k partials into each original output (one generic
  // per output: each fold on its own is what the GPU's column strategy
  // takes).
  SmallVector<linalg::GenericOp> folds;
  for (auto [i, init, combiner] :
       llvm::enumerate(op.getDpsInitsMutable(), combiners)) {
    auto outType = cast<RankedTensorType>(init.get().getType());
    unsigned rank = outType.getRank() + 1;
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 1; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> foldMaps = {
        AffineMap::getMultiDimIdentityMap(rank, ctx),
        AffineMap::get(rank, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> foldIterators(rank,
                                                   utils::IteratorType::parallel);
    foldIterators[0] = utils::IteratorType::reduction;
    unsigned accPosition =
        combiner->getOperand(0) == op.getRegionOutputArgs()[i] ? 0 : 1;
    auto fold = linalg::GenericOp::create(
        b, loc, TypeRange{outType}, ValueRange{partial.getResult(i)},
        ValueRange{init.get()}, foldMaps, foldIterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Operation *c = nb.clone(*combiner);
          c->setOperand(accPosition, args[1]);
          c->setOperand(1 - accPosition, args[0]);
          linalg::YieldOp::create(nb, nloc, c->getResult(0));
        });
    op.getResult(i).replaceAllUsesWith(fold.getResult(0));
    folds.push_back(fold);
  }
  op.erase();
  return {partial, folds};
}

struct SplitReductionsPass : impl::SplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  /// How many sequential chains share a reduced element run: `column-warps`
  /// for the reductions oflow-gpu-column-reductions takes (innermost loop
  /// parallel, 16 or more reduced elements), else 1.
  int64_t chainDivisor(linalg::GenericOp op, const Reduction &r) const {
    if (columnWarps > 1 && r.reduction >= 16 &&
        op.getIteratorTypesArray().back() == utils::IteratorType::parallel)
      return columnWarps;
    return 1;
  }

  void runOnOperation() override {
    // Occupancy first (it picks the largest useful k); then every partial
    // and fold is split again for accuracy until its chain is short enough.
    SmallVector<std::pair<linalg::GenericOp, bool>> work;
    getOperation().walk(
        [&](linalg::GenericOp op) { work.push_back({op, true}); });
    while (!work.empty()) {
      auto [op, first] = work.pop_back_val();
      std::optional<Reduction> r = analyze(op);
      if (!r)
        continue;
      // One warp per row reads the row coalesced, chains of at most
      // max-chain per lane: no split needed.
      if (first && warpRows && matchWarpRowReduction(op, maxChain))
        continue;
      std::optional<Split> s;
      if (first)
        s = occupancySplit(*r, targetThreads, minChunk);
      if (!s)
        s = accuracySplit(*r, maxChain * chainDivisor(op, *r));
      if (!s)
        continue;
      auto [partial, folds] = split(op, *s, r->combiners);
      work.push_back({partial, false});
      for (linalg::GenericOp fold : folds)
        work.push_back({fold, false});
    }
  }
};

} // namespace
} // namespace oflow
