//===- VectorizeElementwise.cpp - parallel generics as vector tiles -------===//
//
// LLVM does not vectorize the fused elementwise loops: they read many views
// of the one arena, and proving them alias-free takes more runtime checks
// than it allows. Vector code from MLIR needs no such proof: each tile of
// `kWidth` elements along the innermost dimension is read whole, computed and
// written (the memory plan never partially overlaps buffers that are live
// together, and an output reusing a dead input's bytes is read before it is
// written, tile by tile). Generics whose innermost extent does not divide
// stay scalar.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace oflow {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

constexpr int64_t kWidth = 16;

bool isVectorizable(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumReductionLoops() != 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() % kWidth != 0)
    return false;
  // Plain element types only (no index/bool vectors to worry about).
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (type && !type.getElementType().isF32())
      return false;
  }
  return true;
}

struct VectorizeElementwisePass
    : impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isVectorizable(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<int64_t> tiles(op.getNumLoops(), 1);
      tiles.back() = kWidth;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tiles).setLoopType(linalg::LinalgTilingLoopType::Loops);
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
