//===- Autocast.cpp - GEMM operands in bf16/f16, f32 everywhere else ------===//
//
// `--precision bf16|fp16`: mixed-precision training as PyTorch's autocast
// does it for matmuls, with f32 master weights. Every f32 linalg.matmul and
// linalg.batch_matmul (forward, backward and the convolutions' im2col GEMMs
// alike) reads its two operands rounded to bf16 or f16 and accumulates into
// its f32 output; everything else (norms, softmax, losses, the optimizer)
// stays f32. LinalgToBlas turns the mixed GEMMs into oflow_rt_gemm_lowp
// calls (cuBLASLt tensor cores on the GPU; widened to f32 for OpenBLAS on the
// CPU, which gives the same numbers).
//
// The rounding is a separate elementwise linalg.generic per operand, so that
// elementwise fusion can fold it into the operand's producer (a bf16 result
// instead of an f32 one plus a copy).
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace oflow {
#define GEN_PASS_DEF_AUTOCAST
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// `value` (a static f32 tensor) rounded to `type` elementwise.
Value round(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  Value empty = tensor::EmptyOp::create(b, loc, tensorType.getShape(), type);
  unsigned rank = tensorType.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, ValueRange{value}, ValueRange{empty},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = arith::TruncFOp::create(nb, nloc, type, args[0]);
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// `value` rounded to `type` when it is built of pieces inserted into a
/// tensor.empty: a concat (oflow-merge-sibling-matmuls' joined weights and
/// their joined gradients) or a tensor inserted into zeros (slice_backward's
/// form, a padded GEMM's gradient: oflow-pad-gemm-extents). Each piece is
/// rounded (zero fills are built in `type`) and inserted into a tensor.empty
/// of `type`, so that the rounding fuses into each piece's producer, which
/// then writes its slab of the rounded tensor; the f32 whole is never
/// written. Looks through a collapse_shape. Null otherwise.
Value roundPieces(OpBuilder &b, Location loc, Value value, FloatType type) {
  // Through reshapes (a joined gradient's batch dims collapsed for the
  // GEMM): the rounding commutes with them.
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>()) {
    Value pieces = roundPieces(b, loc, collapse.getSrc(), type);
    return pieces ? tensor::CollapseShapeOp::create(b, loc, pieces,
                                                    collapse.getReassociationIndices())
                        .getResult()
                  : Value();
  }
  SmallVector<tensor::InsertSliceOp> slabs;
  Value dest = value;
  while (auto slab = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    slabs.push_back(slab);
    dest = slab.getDest();
  }
  if (slabs.empty() || !dest.getDefiningOp<tensor::EmptyOp>())
    return {};
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  Value whole = tensor::EmptyOp::create(b, loc, shape, type);
  for (tensor::InsertSliceOp slab : llvm::reverse(slabs)) {
    Value piece;
    auto fill = slab.getSource().getDefiningOp<linalg::FillOp>();
    if (fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
      Value part = tensor::ExtractSliceOp::create(
          b, loc, whole, slab.getMixedOffsets(), slab.getMixedSizes(),
          slab.getMixedStrides());
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
      piece = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{part})
                  .getResult(0);
    } else {
      piece = round(b, loc, slab.getSource(), type);
    }
    whole = tensor::InsertSliceOp::create(b, loc, piece, whole, slab.getMixedOffsets(),
                                          slab.getMixedSizes(), slab.getMixedStrides());
  }
  return whole;
}

/// Whether `op` is a plain f32 GEMM on static tensors.
bool isF32Gemm(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureTensorSemantics())
    return false;
  return llvm::all_of(op->getOperands(), [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.hasStaticShape() && type.getElementType().isF32();
  });
}

struct AutocastPass : impl::AutocastBase<AutocastPass> {
  using Base::Base;

  void runOnOperation() override {
    FloatType type;
    if (precision == "bf16")
      type = BFloat16Type::get(&getContext());
    else if (precision == "fp16")
      type = Float16Type::get(&getContext());
    else if (precision == "fp32")
      return;
    else {
      getOperation().emitError("oflow-autocast: unknown precision '")
          << precision << "' (want fp32, bf16 or fp16)";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isF32Gemm(op))
        gemms.push_back(op);
    });
    for (linalg::LinalgOp op : gemms) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      auto rounded = [&](Value operand) {
        if (Value pieces = roundPieces(b, loc, operand, type))
          return pieces;
        return round(b, loc, operand, type);
      };
      Value a = rounded(op->getOperand(0));
      Value bm = rounded(op->getOperand(1));
      Value c = op->getOperand(2);
      // The same op on the rounded operands, with its indexing maps
      // (transposed operands); its body widens them to f32.
      auto rebuild = [&](auto gemmOp) -> Operation * {
        auto rounded = decltype(gemmOp)::create(
            b, loc, TypeRange{c.getType()}, ValueRange{a, bm}, ValueRange{c});
        rounded.setIndexingMapsAttr(gemmOp.getIndexingMaps());
        return rounded;
      };
      Operation *gemm = isa<linalg::MatmulOp>(op)
                            ? rebuild(cast<linalg::MatmulOp>(op))
                            : rebuild(cast<linalg::BatchMatmulOp>(op));
      op->replaceAllUsesWith(gemm->getResults());
      op->erase();
    }
  }
};

} // namespace
} // namespace oflow
