//===- VectorizeElementwise.cpp - generics as loops over vector tiles -----===//
//
// LLVM does not vectorize the fused loops: they read many views of the one
// arena, and proving them alias-free takes more runtime checks than it
// allows. Vector code from MLIR needs no such proof: each tile is read whole,
// computed and written (the memory plan never partially overlaps buffers that
// are live together, and an output reusing a dead input's bytes is read
// before it is written, tile by tile).
//
// Two shapes of generic are tiled and vectorized:
//  - innermost loop parallel: 1 x ... x W tiles along it, W = 16, or 8 when
//    16 does not divide it (elementwise ops, and reductions over outer loops
//    such as bias gradients, which add a vector of outputs per tile);
//  - one reduction loop, innermost (softmax, layer norm, cross-entropy rows)
//    whose extent divides by 16: 1 x ... x C tiles, C a multiple of 16
//    dividing the row (at most 256), so a row is read as vectors and folded
//    by `vector.multi_reduction`.
// Others stay scalar (oflow-lower-reductions, convert-linalg-to-loops).
//
// An all-parallel generic whose innermost extent neither width divides (a
// 3x3 convolution weight's update, 7x7 and 14x14 feature maps) first has
// its trailing loops collapsed into one where every operand is contiguous
// along them (collapseTrailingLoops): scalar, LLVM vectorized such a loop
// nest along an outer loop with gathers, and the in-place SGD update of one
// 512x512x3x3 weight took 13 ms of ResNet-18's 55 ms step.
//
// `i1` inputs (masks) are read as bytes: LLVM packs `<N x i1>` vectors into
// bits, while a memref stores one byte per i1, so a vector load of an i1
// memref would read the wrong bytes. Each i1 input that is a constant global
// or an arena view (through reshapes) is replaced by its i8 twin, truncated
// to i1 inside the body.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Vector widths, widest first: 16 f32 fill an AVX-512 register; rows of 8
/// (small feature maps, pooling windows) take half of one.
constexpr int64_t kWidths[] = {16, 8};
/// Longest row slice reduced as one vector (16 AVX-512 registers).
constexpr int64_t kMaxReductionTile = 256;

bool isBool(Type type) { return type.isInteger(1); }

/// The buffer `value` (an i1 memref) is a chain of reshapes and subviews on a
/// global with dense elements or on an arena view: those can be re-typed to
/// i8.
bool hasByteTwin(Value value, SymbolTable &symbols) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
    auto global = symbols.lookup<memref::GlobalOp>(get.getName());
    return global && global.getInitialValue() &&
           isa<DenseElementsAttr>(*global.getInitialValue());
  }
  if (isa<memref::ViewOp>(def))
    return true;
  if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp>(def))
    return hasByteTwin(def->getOperand(0), symbols);
  return false;
}

/// The i8 buffer with the bytes of the i1 buffer `value` (see hasByteTwin),
/// built at `b`'s insertion point.
Value byteTwin(OpBuilder &b, Value value, SymbolTable &symbols) {
  Operation *def = value.getDefiningOp();
  Type i8 = b.getI8Type();
  auto retype = [&](Type type) -> MemRefType {
    return MemRefType::Builder(cast<MemRefType>(type)).setElementType(i8);
  };
  if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
    auto global = symbols.lookup<memref::GlobalOp>(get.getName());
    std::string name = (get.getName() + "_i8").str();
    auto twin = symbols.lookup<memref::GlobalOp>(name);
    if (!twin) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(global);
      auto dense = cast<DenseElementsAttr>(*global.getInitialValue());
      Attribute init =
          dense.mapValues(i8, [](const APInt &bit) { return bit.zext(8); });
      twin = memref::GlobalOp::create(
          b, global.getLoc(), name, global.getSymVisibilityAttr(),
          retype(global.getType()), init,
          global.getConstant(), global.getAlignmentAttr());
      symbols.insert(twin);
    }
    return memref::GetGlobalOp::create(b, get.getLoc(), retype(get.getType()),
                                       twin.getSymName());
  }
  IRMapping mapping;
  if (!isa<memref::ViewOp>(def))
    mapping.map(def->getOperand(0), byteTwin(b, def->getOperand(0), symbols));
  Operation *clone = b.clone(*def, mapping);
  clone->getResult(0).setType(retype(def->getResult(0).getType()));
  return clone->getResult(0);
}

/// Whether every value folded into an output varies along the innermost
/// (reduction) loop: depends on an input read along it or on its index.
/// linalg::vectorize folds a row of a loop-invariant value (a count:
/// `out + 1`) into the accumulator once instead of once per element.
bool foldsVaryingValues(linalg::GenericOp op) {
  unsigned inner = op.getNumLoops() - 1;
  Block &body = *op.getBlock();
  DenseSet<Value> varying;
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(inner))
      varying.insert(op.getMatchingBlockArgument(input));
  for (Operation &inside : body.without_terminator()) {
    auto index = dyn_cast<linalg::IndexOp>(inside);
    if ((index && index.getDim() == inner) ||
        llvm::any_of(inside.getOperands(),
                     [&](Value v) { return varying.contains(v); }))
      varying.insert(inside.getResults().begin(), inside.getResults().end());
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    if (!acc.hasOneUse())
      return false;
    Operation *combiner = *acc.getUsers().begin();
    if (!llvm::all_of(combiner->getOperands(), [&](Value v) {
          return v == acc || varying.contains(v);
        }))
      return false;
  }
  return true;
}

/// The reassociation of a rank-`rank` buffer that joins its last `group`
/// dims and keeps the others.
SmallVector<ReassociationIndices> lastDimsJoined(unsigned rank, unsigned group) {
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i + group < rank; ++i)
    groups.push_back({static_cast<int64_t>(i)});
  groups.emplace_back();
  for (unsigned i = rank - group; i < rank; ++i)
    groups.back().push_back(i);
  return groups;
}

/// The first loop of the trailing loops of `op` that can be one loop: all
/// parallel, their extents' product divisible by the narrowest width, and
/// each operand either not indexed by them or indexed by them, in order, in
/// its last dims of a memref contiguous there (the group has at least two
/// loops; the first such group, the longest).
std::optional<unsigned> collapsibleFrom(linalg::GenericOp op, ArrayRef<int64_t> ranges) {
  unsigned n = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  for (unsigned k = 0; k + 1 < n; ++k) {
    if (llvm::any_of(ArrayRef(iterators).drop_front(k),
                     [](utils::IteratorType it) { return !linalg::isParallelIterator(it); }))
      continue;
    int64_t extent = 1;
    for (unsigned d = k; d < n; ++d)
      extent *= ranges[d];
    if (extent % kWidths[std::size(kWidths) - 1] != 0)
      continue;
    unsigned group = n - k;
    bool ok = llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!map.isProjectedPermutation())
        return false;
      bool uses = llvm::any_of(llvm::seq(k, n), [&](unsigned d) { return map.isFunctionOfDim(d); });
      if (!uses)
        return true;
      unsigned results = map.getNumResults();
      if (results < group)
        return false;
      for (unsigned i = 0; i < group; ++i)
        if (map.getResult(results - group + i) != getAffineDimExpr(k + i, op.getContext()))
          return false;
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        return false;
      return memref::CollapseShapeOp::isGuaranteedCollapsible(
          type, lastDimsJoined(results, group));
    });
    if (ok)
      return k;
  }
  return std::nullopt;
}

/// `op` with its trailing loops from collapsibleFrom as one loop (its
/// operands collapsed along them), or `op` itself where that changes
/// nothing or cannot be done.
linalg::GenericOp collapseTrailingLoops(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2)
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      llvm::any_of(kWidths, [&](int64_t w) { return ranges.back() % w == 0; }))
    return op;
  std::optional<unsigned> from = collapsibleFrom(op, ranges);
  if (!from)
    return op;
  unsigned k = *from, n = op.getNumLoops(), group = n - k;
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool uses = llvm::any_of(llvm::seq(k, n), [&](unsigned d) { return map.isFunctionOfDim(d); });
    SmallVector<AffineExpr> results(map.getResults());
    Value value = operand.get();
    if (uses) {
      unsigned count = results.size();
      value = memref::CollapseShapeOp::create(rewriter, op.getLoc(), value,
                                              lastDimsJoined(count, group));
      results.resize(count - group);
      results.push_back(getAffineDimExpr(k, ctx));
    }
    operands.push_back(value);
    maps.push_back(AffineMap::get(k + 1, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators(op.getIteratorTypesArray());
  iterators.resize(k + 1);
  unsigned inputs = op.getNumDpsInputs();
  auto collapsed = linalg::GenericOp::create(
      rewriter, op.getLoc(), TypeRange{}, ArrayRef(operands).take_front(inputs),
      ArrayRef(operands).drop_front(inputs), maps, iterators);
  collapsed.getRegion().takeBody(op.getRegion());
  collapsed->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.eraseOp(op);
  return collapsed;
}

/// Tile sizes that make `op` a loop over vector tiles, or none.
std::optional<SmallVector<int64_t>> vectorTile(linalg::GenericOp op,
                                               SymbolTable &symbols) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  const int64_t *width = llvm::find_if(
      kWidths, [&](int64_t w) { return ranges.back() % w == 0; });
  if (width == std::end(kWidths))
    return std::nullopt;
  SmallVector<int64_t> tiles(op.getNumLoops(), 1);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (linalg::isParallelIterator(iterators.back())) {
    // Reductions over outer loops (bias and layer-norm parameter gradients)
    // accumulate a vector of outputs per tile.
    tiles.back() = *width;
  } else if (op.getNumReductionLoops() == 1 && *width == kWidths[0] &&
             foldsVaryingValues(op)) {
    // Rows of 8 (the class scores of small classifiers) stay scalar: with
    // libmvec's 8-wide exp in its cross-entropy, the CNN example's SGD run
    // drifted from PyTorch's by 1.4e-4 after 18 steps; with glibc's scalar
    // expf, by 3.8e-7. The time they take is negligible.
    int64_t tile = *width;
    for (int64_t t = kMaxReductionTile; t > *width; t -= *width)
      if (ranges.back() % t == 0) {
        tile = t;
        break;
      }
    tiles.back() = tile;
  } else {
    return std::nullopt;
  }
  // Only values in registers: a body that reads memory (a gather) would be
  // vectorized as a single scalar load.
  if (llvm::any_of(op.getBlock()->without_terminator(),
                   [](Operation &inside) { return !isMemoryEffectFree(&inside); }))
    return std::nullopt;
  // f32 outputs; f32 or integer inputs (indices, labels), i1 ones only when
  // they can be read as bytes.
  for (OpOperand &operand : op->getOpOperands()) {
    Type element = getElementTypeOrSelf(operand.get().getType());
    if (element.isF32())
      continue;
    if (!op.isDpsInput(&operand) || !element.isSignlessInteger())
      return std::nullopt;
    if (isBool(element) && !hasByteTwin(operand.get(), symbols))
      return std::nullopt;
  }
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return std::nullopt;
  return tiles;
}

/// Reads each i1 input of `op` through its i8 twin.
void readBoolsAsBytes(RewriterBase &rewriter, linalg::GenericOp op,
                      SymbolTable &symbols) {
  for (OpOperand *operand : op.getDpsInputOperands()) {
    if (!isBool(getElementTypeOrSelf(operand->get().getType())))
      continue;
    rewriter.setInsertionPoint(op);
    Value bytes = byteTwin(rewriter, operand->get(), symbols);
    rewriter.modifyOpInPlace(op, [&] { operand->set(bytes); });
    BlockArgument arg = op.getMatchingBlockArgument(operand);
    arg.setType(rewriter.getI8Type());
    rewriter.setInsertionPointToStart(op.getBlock());
    Value bit = arith::TruncIOp::create(rewriter, op.getLoc(),
                                        rewriter.getI1Type(), arg);
    rewriter.replaceAllUsesExcept(arg, bit, bit.getDefiningOp());
  }
}

struct VectorizeElementwisePass
    : impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    SmallVector<std::pair<linalg::GenericOp, SmallVector<int64_t>>> ops;
    for (linalg::GenericOp op : generics) {
      op = collapseTrailingLoops(rewriter, op);
      if (std::optional<SmallVector<int64_t>> tiles = vectorTile(op, symbols))
        ops.push_back({op, *tiles});
    }
    for (auto &[op, tiles] : ops) {
      readBoolsAsBytes(rewriter, op, symbols);
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tiles).setLoopType(
          parallelLoops ? linalg::LinalgTilingLoopType::ParallelLoops
                        : linalg::LinalgTilingLoopType::Loops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      rewriter.setInsertionPoint(tiled->op);
      if (succeeded(linalg::vectorize(rewriter, tiled->op)))
        rewriter.eraseOp(tiled->op);
    }
  }
};

} // namespace
} // namespace oflow
