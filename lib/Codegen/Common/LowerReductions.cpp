//===- LowerReductions.cpp - reductions as loops with register accumulators ===//
//
// convert-linalg-to-loops reads and writes a reduction's output element in
// every iteration. With every buffer a view of one arena, LLVM cannot prove
// the output does not alias the inputs, so it keeps the memory round trip
// and vectorizes none of these loops (softmax, layer norm, losses: most of
// the GPT's generated-code time). Here a linalg.generic whose reduction loops
// are innermost becomes parallel scf.for loops around reduction scf.for loops
// that carry the accumulators as iter_args: loaded once, stored once. The
// reduction's float ops get `reassoc` so LLVM may split them into vector
// lanes (as PyTorch's kernels do).
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/IR/IRMapping.h"

namespace oflow {
#define GEN_PASS_DEF_LOWERREDUCTIONS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Whether `op` has the shape this lowering handles: buffers, static loops,
/// outputs indexed by parallel loops only, and (unless `anyOrder`: the GPU,
/// where the parallel loops become threads and the order of the loops in the
/// op does not matter) an innermost reduction loop and no linalg.index.
/// The lowering hoists every parallel loop outside the reduction loops,
/// which keep their order: each output's terms are added in the op's own
/// order, and the innermost loop, the one that walks memory contiguously,
/// stays innermost. A batch norm's sums over [N, H, W] per channel (loops
/// N, C, H, W) become C outside N, H, W, with registers for accumulators;
/// an innermost parallel loop (a column sum) keeps its loop order instead.
bool isLowerable(linalg::GenericOp op, bool anyOrder) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
    return false;
  auto iterators = op.getIteratorTypesArray();
  if (!anyOrder) {
    if (iterators.back() != utils::IteratorType::reduction)
      return false;
    if (!op.getBody()->getOps<linalg::IndexOp>().empty())
      return false;
  }
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (AffineExpr e : map.getResults())
      for (auto [d, it] : llvm::enumerate(iterators))
        if (it == utils::IteratorType::reduction && e.isFunctionOfDim(d))
          return false;
  }
  return true;
}

SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map,
                           ValueRange ivs) {
  return *affine::expandAffineMap(b, loc, map, ivs);
}

void lower(linalg::GenericOp op, bool parallelLoops) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // ivs[d]: the induction variable of the op's loop d.
  SmallVector<Value> ivs(ranges.size());
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, it] : llvm::enumerate(iterators))
    (it == utils::IteratorType::reduction ? reductionDims : parallelDims).push_back(d);

  // The parallel nest: scf.for loops, or one scf.parallel (the GPU's threads).
  if (parallelLoops && !parallelDims.empty()) {
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned d : parallelDims) {
      lbs.push_back(zero);
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, ranges[d]));
      steps.push_back(one);
    }
    auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
    for (auto [i, d] : llvm::enumerate(parallelDims))
      ivs[d] = loop.getInductionVars()[i];
    b.setInsertionPoint(loop.getBody()->getTerminator());
  } else {
    for (unsigned d : parallelDims) {
      auto loop = scf::ForOp::create(
          b, loc, zero, arith::ConstantIndexOp::create(b, loc, ranges[d]), one);
      ivs[d] = loop.getInductionVar();
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
  }
  // Accumulators start from the outputs' current values.
  SmallVector<Value> accs;
  SmallVector<std::pair<Value, SmallVector<Value>>> outputs;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    SmallVector<Value> at = indices(b, loc, op.getMatchingIndexingMap(&init), ivs);
    accs.push_back(memref::LoadOp::create(b, loc, init.get(), at));
    outputs.push_back({init.get(), at});
  }
  // The reduction nest, each level carrying the accumulators.
  SmallVector<scf::ForOp> reductionLoops;
  for (unsigned d : reductionDims) {
    auto loop = scf::ForOp::create(b, loc, zero,
                                   arith::ConstantIndexOp::create(b, loc, ranges[d]),
                                   one, accs);
    if (!reductionLoops.empty())
      scf::YieldOp::create(b, loc, loop.getResults());
    reductionLoops.push_back(loop);
    ivs[d] = loop.getInductionVar();
    accs.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    b.setInsertionPointToStart(loop.getBody());
  }
  // The body: inputs loaded, outputs are the accumulators.
  IRMapping mapping;
  Block *body = op.getBody();
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value arg = body->getArgument(input->getOperandNumber());
    if (isa<MemRefType>(input->get().getType()))
      mapping.map(arg, memref::LoadOp::create(
                           b, loc, input->get(),
                           indices(b, loc, op.getMatchingIndexingMap(input), ivs)));
    else
      mapping.map(arg, input->get());
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
    mapping.map(body->getArgument(init.getOperandNumber()), accs[i]);
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    Operation *clone = b.clone(inner, mapping);
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(clone))
      clone->setAttr(fm.getFastMathAttrName(),
                     arith::FastMathFlagsAttr::get(
                         b.getContext(),
                         fm.getFastMathFlagsAttr()
                             ? fm.getFastMathFlagsAttr().getValue() |
                                   arith::FastMathFlags::reassoc
                             : arith::FastMathFlags::reassoc));
  }
  SmallVector<Value> yielded;
  for (Value v : body->getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  scf::YieldOp::create(b, loc, yielded);
  // Store the reduced values once, after the reduction nest.
  b.setInsertionPointAfter(reductionLoops.front());
  for (auto [i, out] : llvm::enumerate(outputs))
    memref::StoreOp::create(b, loc, reductionLoops.front().getResult(i),
                            out.first, out.second);
  op.erase();
}

struct LowerReductionsPass : impl::LowerReductionsBase<LowerReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isLowerable(op, anyOrder))
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops)
      lower(op, parallelLoops);
  }
};

} // namespace
} // namespace oflow
