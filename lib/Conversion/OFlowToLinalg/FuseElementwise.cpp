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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
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

/// How many top-level ops past its last read a fusion may keep a tensor.
constexpr int64_t kMaxLifetimeExtension = 64;

/// Whether fusing `producer`, which stays for its other users, into
/// `consumer` makes the consumer read a large operand of the producer that
/// nothing reads at or after the consumer, or for the last time more than
/// kMaxLifetimeExtension ops before it: that operand would then live on
/// beside the producer's result, which lives anyway. A bias addition after
/// a GEMM, fused into the GELU backward that selective recomputation places
/// in the backward pass, kept every layer's GEMM output from the forward
/// pass to the backward one next to the sum it is part of (twice the
/// activation memory of that tensor, to save no bytes at all).
bool extendsOperandLifetime(Operation *producer, Operation *consumer) {
  if (producer->getBlock() != consumer->getBlock() || producer->getNumResults() != 1)
    return false;
  // A producer whose users are all generics may fuse into each of them and
  // go away: its operands then replace its result, no more bytes. It stays
  // when something else reads it (a GEMM, a recomputation's barrier copy).
  if (llvm::all_of(producer->getUsers(), [](Operation *user) {
        return isa<linalg::GenericOp>(user) && !isLibraryOp(user);
      }))
    return false;
  auto resultType = dyn_cast<RankedTensorType>(producer->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape())
    return false;
  for (Value v : producer->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    // Scalars and vectors next to the result (a bias) cost little to keep.
    if (!type || !type.hasStaticShape() ||
        8 * type.getNumElements() < resultType.getNumElements())
      continue;
    // Where `v` is read last before the consumer; past it, the fusion
    // extends its life. Near the consumer (the same layer's next ops) that
    // costs little and can save a launch; far (the backward pass reading
    // the forward's tensors) it doubles what is kept.
    // The ops just before the consumer first: a reader among them settles
    // it without ordering the block (each rewrite of the greedy driver
    // invalidates the order, and ordering is linear in the block: the
    // flat optimizer updates of a 48-layer GPT took 26 s here).
    llvm::SmallPtrSet<Operation *, 8> readers = {producer};
    for (Operation *user : v.getUsers())
      if (Operation *top = consumer->getBlock()->findAncestorOpInBlock(*user))
        readers.insert(top);
    bool near = false;
    int64_t steps = 0;
    for (Operation *op = consumer->getPrevNode(); op && steps <= kMaxLifetimeExtension && !near;
         op = op->getPrevNode(), ++steps)
      near = readers.contains(op);
    if (near)
      continue;
    Operation *last = producer;
    bool readLater = false;
    for (Operation *user : v.getUsers()) {
      Operation *top = consumer->getBlock()->findAncestorOpInBlock(*user);
      if (!top || top == producer)
        continue;
      if (!top->isBeforeInBlock(consumer))
        readLater = true;
      else if (last->isBeforeInBlock(top))
        last = top;
    }
    if (readLater)
      continue;
    int64_t between = 0;
    for (Operation *op = last->getNextNode(); op && op != consumer; op = op->getNextNode())
      if (++between > kMaxLifetimeExtension)
        return true;
  }
  return false;
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
    if (extendsOperandLifetime(producer, operand->getOwner()))
      return false;
  }
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return true;
  return getUnusedDimsBitVector({consumer.getMatchingIndexingMap(operand)})
      .none();
}

/// An elementwise generic on tensors.
bool isElementwiseGeneric(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  return g && g.hasPureTensorSemantics() && linalg::isElementwise(g);
}

/// Whether `v` reaches a contraction or convolution directly or through one
/// unary elementwise generic (the cast autocast puts before a GEMM operand):
/// oflow-fold-gemm-transposes makes such a transpose the GEMM's own read.
bool feedsLibraryOp(Value v) {
  for (Operation *user : v.getUsers()) {
    if (isLibraryOp(user))
      return true;
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (g && g.getNumDpsInputs() == 1 && g->getNumResults() == 1 &&
        llvm::any_of(g->getResult(0).getUsers(), isLibraryOp))
      return true;
  }
  return false;
}

bool isReshape(Operation *op) {
  return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

/// Whether every user of `v`, looking through reshapes (which the fusion
/// propagates), is a generic on tensors: elementwise, or a reduction (a
/// bias gradient's column sum), which the fusion reads through the
/// permutation as well.
bool onlyGenericUsers(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [](Operation *user) {
    auto g = dyn_cast<linalg::GenericOp>(user);
    return (g && g.hasPureTensorSemantics()) ||
           (isReshape(user) && onlyGenericUsers(user->getResult(0)));
  });
}

/// Whether fusing the transpose's permutation into a neighbour removes it:
/// its input comes from an elementwise generic that has no other user
/// (through single-use reshapes: a head split after a bias add), or every
/// user of its result is a generic (the heads' gradients from the fused
/// attention, read by their bias sums and their roundings for the GEMMs).
bool transposeFuses(linalg::TransposeOp t) {
  if (!t.hasPureTensorSemantics() || feedsLibraryOp(t->getResult(0)))
    return false;
  Value input = t.getInput();
  while (isReshape(input.getDefiningOp()) && input.hasOneUse())
    input = input.getDefiningOp()->getOperand(0);
  if (isElementwiseGeneric(input.getDefiningOp()) && input.hasOneUse())
    return true;
  return onlyGenericUsers(t->getResult(0));
}

/// Rewrites the transposes that fuse as generics, before the fusion
/// patterns run (the fused ops then are generics themselves).
LogicalResult generalizeFusibleTransposes(Operation *root) {
  SmallVector<linalg::TransposeOp> transposes;
  root->walk([&](linalg::TransposeOp t) {
    if (transposeFuses(t))
      transposes.push_back(t);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::TransposeOp t : transposes) {
    rewriter.setInsertionPoint(t);
    if (failed(linalg::generalizeNamedOp(rewriter, t)))
      return t.emitError("could not rewrite the transpose as a linalg.generic");
  }
  return success();
}

/// Whether `op` is an all-parallel generic on tensors whose maps are all
/// identities (every operand indexed by the loops in order).
bool isIdentityElementwise(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// A cast (`arith.truncf`, the rounding autocast puts before a GEMM
/// operand) of an all-parallel `producer`'s result, when that result has
/// other users: elementwise fusion would compute the producer twice (in the
/// cast and in the other users' kernels), or not fuse at all (erf, exp).
/// The producer writes the cast value as one more result instead: one
/// kernel writes the f32 value and its rounding, and the rounding's own
/// read of the f32 value goes. The result and the cast identity-mapped over
/// the same loops.
LogicalResult fuseCastAsResult(RewriterBase &rewriter, linalg::GenericOp castOp) {
  if (!isIdentityElementwise(castOp) || castOp.getNumDpsInputs() != 1 ||
      castOp.getNumDpsInits() != 1 ||
      castOp.payloadUsesValueFromOperand(castOp.getDpsInitOperand(0)))
    return failure();
  Block &castBody = *castOp.getBody();
  if (castBody.getOperations().size() != 2 ||
      !isa<arith::TruncFOp, arith::ExtFOp>(castBody.front()) ||
      castBody.front().getOperand(0) != castBody.getArgument(0))
    return failure();
  auto result = dyn_cast<OpResult>(castOp.getDpsInputs()[0]);
  auto producer = result ? dyn_cast<linalg::GenericOp>(result.getOwner())
                         : linalg::GenericOp();
  if (!producer || result.hasOneUse() || !producer.hasPureTensorSemantics() ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      !producer.getIndexingMapMatchingResult(result).isIdentity() ||
      producer.getStaticLoopRanges() != castOp.getStaticLoopRanges())
    return failure();
  // The castOp's destination, before the producer.
  Value init = castOp.getDpsInits()[0];
  auto empty = init.getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty.getDynamicSizes().empty())
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(producer);
  Value dest = tensor::EmptyOp::create(rewriter, castOp.getLoc(),
                                       castOp.getResultTypes()[0], ValueRange());
  SmallVector<Value> inits(producer.getDpsInits());
  inits.push_back(dest);
  SmallVector<Type> types(producer.getResultTypes());
  types.push_back(castOp.getResultTypes()[0]);
  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.push_back(castOp.getIndexingMapsArray().back());
  auto fused = linalg::GenericOp::create(
      rewriter, rewriter.getFusedLoc({producer.getLoc(), castOp.getLoc()}), types,
      producer.getDpsInputs(), inits, maps, producer.getIteratorTypesArray());
  // The producer's body, with one more block argument (the castOp's
  // destination element), then the castOp of the yielded value.
  Region &region = fused.getRegion();
  rewriter.inlineRegionBefore(producer.getRegion(), region, region.end());
  Block &body = region.front();
  body.addArgument(castBody.getArgument(1).getType(), castOp.getLoc());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  rewriter.setInsertionPoint(yield);
  IRMapping map;
  map.map(castBody.getArgument(0), yield.getOperand(result.getResultNumber()));
  Value casted = rewriter.clone(castBody.front(), map)->getResult(0);
  SmallVector<Value> values(yield.getOperands());
  values.push_back(casted);
  rewriter.replaceOpWithNewOp<linalg::YieldOp>(yield, values);
  rewriter.replaceOp(castOp, fused->getResults().back());
  rewriter.replaceOp(producer, fused->getResults().drop_back());
  return success();
}

/// Applies fuseCastAsResult to every cast in `root`, producers first.
void fuseCastsAsResults(Operation *root) {
  SmallVector<linalg::GenericOp> casts;
  root->walk([&](linalg::GenericOp g) { casts.push_back(g); });
  IRRewriter rewriter(root->getContext());
  for (linalg::GenericOp castOp : casts)
    (void)fuseCastAsResult(rewriter, castOp);
}

struct OFlowFuseElementwise
    : impl::OFlowFuseElementwiseBase<OFlowFuseElementwise> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (transposes && failed(generalizeFusibleTransposes(getOperation())))
      return signalPassFailure();
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
      return signalPassFailure();
    if (castResults)
      fuseCastsAsResults(getOperation());
  }
};
} // namespace
} // namespace oflow
