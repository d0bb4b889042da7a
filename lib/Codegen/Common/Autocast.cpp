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

/// `value` rounded to `type` when it is a tensor inserted into zeros
/// (slice_backward's form: `insert_slice %src into D`, D a chain of zero
/// fills of slabs of a tensor.empty; a padded GEMM's gradient,
/// oflow-pad-gemm-extents): `src` is rounded and inserted into the same
/// zeros built in `type`, so that the rounding fuses into src's producer
/// and the padded f32 tensor is never written. Null otherwise.
Value roundPadded(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto insert = value.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert)
    return {};
  SmallVector<tensor::InsertSliceOp> slabs;
  Value dest = insert.getDest();
  while (auto slab = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    auto fill = slab.getSource().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return {};
    slabs.push_back(slab);
    dest = slab.getDest();
  }
  if (!dest.getDefiningOp<tensor::EmptyOp>())
    return {};
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  Value zeros = tensor::EmptyOp::create(b, loc, shape, type);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  for (tensor::InsertSliceOp slab : llvm::reverse(slabs)) {
    Value part = tensor::ExtractSliceOp::create(
        b, loc, zeros, slab.getMixedOffsets(), slab.getMixedSizes(),
        slab.getMixedStrides());
    Value filled = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{part})
                       .getResult(0);
    zeros = tensor::InsertSliceOp::create(b, loc, filled, zeros, slab.getMixedOffsets(),
                                          slab.getMixedSizes(), slab.getMixedStrides());
  }
  Value source = round(b, loc, insert.getSource(), type);
  return tensor::InsertSliceOp::create(b, loc, source, zeros, insert.getMixedOffsets(),
                                       insert.getMixedSizes(), insert.getMixedStrides());
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
        if (Value padded = roundPadded(b, loc, operand, type))
          return padded;
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
