//===- FuseElementwise.cpp - the oflow-fuse-elementwise pass ---------------===//
//
// Upstream's elementwise fusion (linalg-fuse-elementwise-ops), except that
// it never fuses into or out of a contraction or convolution: since LLVM 21
// upstream fuses elementwise producers into any linalg op and propagates
// reshapes through them, turning linalg.matmul / batch_matmul / conv into
// linalg.generic, which the library-call lowering no longer recognises.
//
//===----------------------------------------------------------------------===//
#include "oflow/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace oflow {
#define GEN_PASS_DEF_OFLOWFUSEELEMENTWISE
#include "oflow/Conversion/Passes.h.inc"

namespace {
using namespace mlir;

/// The ops that become library calls (BLAS, cuDNN): kept as they are.
bool isLibraryOp(Operation *op) {
  return isa_and_nonnull<linalg::ContractionOpInterface,
                         linalg::ConvolutionOpInterface>(op);
}

bool mayFuse(OpOperand *operand) {
  return !isLibraryOp(operand->getOwner()) &&
         !isLibraryOp(operand->get().getDefiningOp());
}

/// Reshapes are propagated through single-use producers only, as upstream's
/// pass does: expanding a producer with other users keeps the original for
/// them, and with the collapse patterns the copies fed each other (a random
/// 73-node graph of slices, concatenations and broadcasts did not finish in
/// minutes; issue #13's differential tester).
bool mayPropagateReshape(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  return mayFuse(operand) && (!producer || producer->hasOneUse());
}

/// Fusing a producer into a consumer that reads it through a map not using
/// every consumer loop (a broadcast, or a scatter-add's loop over table rows)
/// would recompute the producer on every iteration of the unused loops: the
/// GPT's embedding-gradient scatter recomputed the whole layer-norm backward
/// once per vocabulary row. Fuse only through maps that index by all loops.
bool mayFuseProducer(OpOperand *operand) {
  if (!mayFuse(operand))
    return false;
  // A producer with several consumers is recomputed in each one it fuses
  // into: fine for an add or two, not for erf/exp/log (GELU's erf ran three
  // times per element in the GPT's backward), gathers, or long fused chains
  // (the GPT's residual stream recomputed the embedding lookup in every
  // block). Those stay materialized.
  Operation *producer = operand->get().getDefiningOp();
  if (producer && !operand->get().hasOneUse()) {
    int64_t ops = 0;
    bool expensive = false;
    producer->walk([&](Operation *op) {
      if (op == producer || isa<linalg::YieldOp>(op))
        return;
      ++ops;
      expensive |= isa<tensor::ExtractOp>(op) ||
                   (op->getDialect() &&
                    op->getDialect()->getNamespace() == "math");
    });
    if (expensive || ops > 4)
      return false;
  }
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return true;
  return getUnusedDimsBitVector({consumer.getMatchingIndexingMap(operand)})
      .none();
}

struct OFlowFuseElementwise
    : impl::OFlowFuseElementwiseBase<OFlowFuseElementwise> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, mayFuseProducer);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      mayPropagateReshape);
    linalg::populateConstantFoldLinalgOperations(patterns, mayFuse);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    // Top-down, as upstream's pass, for compile time.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal();
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
} // namespace oflow
