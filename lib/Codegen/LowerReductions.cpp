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
/// reduction loops after all parallel ones, outputs indexed by parallel
/// loops only, no linalg.index.
bool isInnerReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
    return false;
  auto iterators = op.getIteratorTypesArray();
  bool seenReduction = false;
  for (utils::IteratorType it : iterators) {
    if (it == utils::IteratorType::reduction)
      seenReduction = true;
    else if (seenReduction)
      return false;
  }
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  if (!op.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  unsigned numParallel = op.getNumParallelLoops();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (AffineExpr e : map.getResults())
      if (e.isFunctionOfDim(numParallel) ||
          llvm::any_of(llvm::seq<unsigned>(numParallel, iterators.size()),
                       [&](unsigned d) { return e.isFunctionOfDim(d); }))
        return false;
  }
  return true;
}

SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map,
                           ValueRange ivs) {
  return *affine::expandAffineMap(b, loc, map, ivs);
}

void lower(linalg::GenericOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numParallel = op.getNumParallelLoops();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> ivs;

  // The parallel nest.
  for (unsigned d = 0; d < numParallel; ++d) {
    auto loop = scf::ForOp::create(b, loc, zero,
                                   arith::ConstantIndexOp::create(b, loc, ranges[d]),
                                   one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
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
  for (unsigned d = numParallel; d < ranges.size(); ++d) {
    auto loop = scf::ForOp::create(b, loc, zero,
                                   arith::ConstantIndexOp::create(b, loc, ranges[d]),
                                   one, accs);
    if (!reductionLoops.empty())
      scf::YieldOp::create(b, loc, loop.getResults());
    reductionLoops.push_back(loop);
    ivs.push_back(loop.getInductionVar());
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
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isInnerReduction(op))
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops)
      lower(op);
  }
};

} // namespace
} // namespace oflow
