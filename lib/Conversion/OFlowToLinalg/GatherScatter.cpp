//===- GatherScatter.cpp - gather and its scatter-add gradient -------------===//
//
// gather is a generic over the result that reads its index and then the
// data element with tensor.extract. gather_backward is written as a gather
// too (no scatter on tensors): every data row sums the gradient slices whose
// index names it, a reduction over the index dims with a select. That costs
// rows x indices x columns, fine for embedding tables of the examples' size.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// An index element as `index`, negative values counted from the end of a
/// dim of `size` (ONNX), then clamped into [0, size) so that a bad index
/// cannot read outside the tensor.
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t size) {
  Value idx = toIndex(b, loc, raw);
  Value zero = indexConstant(b, loc, 0);
  Value n = indexConstant(b, loc, size);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx, zero);
  idx = arith::SelectOp::create(b, loc, negative,
                                arith::AddIOp::create(b, loc, idx, n), idx);
  idx = arith::MaxSIOp::create(b, loc, idx, zero);
  return arith::MinSIOp::create(b, loc, idx, indexConstant(b, loc, size - 1));
}

struct GatherLowering : OpConversionPattern<of::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto type = op.getOutput().getType();
    int64_t axis = op.getAxis();
    int64_t dataRank = tensorType(data).getRank();
    int64_t q = tensorType(indices).getRank(), rank = type.getRank();
    if (shapeOf(data)[axis] == 0)
      return cannotLower(op, "gather from an empty axis");
    SmallVector<AffineExpr> idxExprs;
    for (int64_t d = 0; d < q; ++d)
      idxExprs.push_back(getAffineDimExpr(axis + d, ctx));
    AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, ctx);
    int64_t axisSize = shapeOf(data)[axis];
    Value y = parallelGeneric(
        rewriter, loc, type.getShape(), type.getElementType(), indices, idxMap,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < dataRank; ++d) {
            if (d < axis)
              at.push_back(linalg::IndexOp::create(b, l, d));
            else if (d == axis)
              at.push_back(wrapIndex(b, l, a[0], axisSize));
            else
              at.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
          }
          return tensor::ExtractOp::create(b, l, data, at);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct GatherBackwardLowering : OpConversionPattern<of::GatherBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::GatherBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value grad = adaptor.getGradOutput(), indices = adaptor.getIndices();
    auto type = op.getGradData().getType();
    int64_t axis = op.getAxis(), r = type.getRank();
    int64_t q = tensorType(indices).getRank();
    // Loops: the data dims (parallel), then the index dims (reduction).
    SmallVector<int64_t> shape(type.getShape());
    llvm::append_range(shape, shapeOf(indices));
    SmallVector<int64_t> reduced;
    SmallVector<AffineExpr> idxExprs, gradExprs;
    for (int64_t d = 0; d < q; ++d) {
      reduced.push_back(r + d);
      idxExprs.push_back(getAffineDimExpr(r + d, ctx));
    }
    for (int64_t d = 0; d < r; ++d) {
      if (d == axis)
        llvm::append_range(gradExprs, idxExprs);
      else
        gradExprs.push_back(getAffineDimExpr(d, ctx));
    }
    int64_t loops = shape.size();
    AffineMap gradMap = AffineMap::get(loops, 0, gradExprs, ctx);
    AffineMap idxMap = AffineMap::get(loops, 0, idxExprs, ctx);
    Type t = type.getElementType();
    int64_t axisSize = type.getDimSize(axis);
    if (axisSize == 0)
      return cannotLower(op, "scatter into an empty axis");
    Value sum = reduceGeneric(
        rewriter, loc, ValueRange{grad, indices}, {gradMap, idxMap}, shape,
        reduced, scalarConstant(rewriter, loc, t, 0),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(b, l, axis);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            wrapIndex(b, l, a[1], axisSize), row);
          Value add = arith::AddFOp::create(b, l, a[2], a[0]);
          return arith::SelectOp::create(b, l, hit, add, a[2]);
        });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

} // namespace

void populateGatherScatterPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherLowering, GatherBackwardLowering>(patterns.getContext());
}

} // namespace oflow::lowering
