//===- GatherScatter.cpp - gather and its scatter-add gradient -------------===//
//
// gather is a generic over the result that reads its index and then the
// data element with tensor.extract. gather_backward on axis 0 (embedding
// tables) is a loop over the indices that adds each gradient row into its
// table row (indices x columns of work, rows summed in index order, as
// PyTorch's CPU embedding backward does); on other axes every data row sums
// the gradient slices whose index names it, a reduction over the index dims
// with a select (rows x indices x columns).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

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

/// sum over i of grad[i, :] into rows indices[i] of a zero [rows, cols]
/// table, by an scf.for over the n indices whose body updates one row in
/// place (extract_slice, add, insert_slice at the same place).
Value scatterRows(OpBuilder &b, Location loc, Value grad, Value indices,
                  RankedTensorType type) {
  int64_t rows = type.getDimSize(0);
  int64_t cols = type.getNumElements() / rows;
  int64_t n = tensorType(indices).getNumElements();
  Type t = type.getElementType();
  Value flatIdx = reshapeTo(b, loc, indices, {n});
  Value flatGrad = reshapeTo(b, loc, grad, {n, cols});
  Value table = filledTensor(b, loc, {rows, cols}, scalarConstant(b, loc, t, 0));
  Value lb = indexConstant(b, loc, 0), ub = indexConstant(b, loc, n),
        step = indexConstant(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{table},
      [&](OpBuilder &lb2, Location l, Value i, ValueRange acc) {
        Value raw = tensor::ExtractOp::create(lb2, l, flatIdx, ValueRange{i});
        Value row = wrapIndex(lb2, l, raw, rows);
        SmallVector<OpFoldResult> one = {lb2.getIndexAttr(1), lb2.getIndexAttr(cols)};
        SmallVector<OpFoldResult> unit = {lb2.getIndexAttr(1), lb2.getIndexAttr(1)};
        auto rowType = RankedTensorType::get({cols}, t);
        Value gradRow = tensor::ExtractSliceOp::create(
            lb2, l, rowType, flatGrad, SmallVector<OpFoldResult>{i, lb2.getIndexAttr(0)},
            one, unit);
        Value accRow = tensor::ExtractSliceOp::create(
            lb2, l, rowType, acc[0], SmallVector<OpFoldResult>{row, lb2.getIndexAttr(0)},
            one, unit);
        AffineMap id = AffineMap::getMultiDimIdentityMap(1, lb2.getContext());
        Value sum = makeGeneric(
            lb2, l, ValueRange{gradRow}, ValueRange{accRow}, {id, id},
            {utils::IteratorType::parallel},
            [&](OpBuilder &bb, Location ll, ValueRange a) -> SmallVector<Value> {
              return {arith::AddFOp::create(bb, ll, a[1], a[0])};
            })[0];
        Value updated = tensor::InsertSliceOp::create(
            lb2, l, sum, acc[0], SmallVector<OpFoldResult>{row, lb2.getIndexAttr(0)},
            one, unit);
        scf::YieldOp::create(lb2, l, updated);
      });
  return reshapeTo(b, loc, loop.getResult(0), type.getShape());
}

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
    if (axis == 0) { // grad_data is a float tensor
      rewriter.replaceOp(op, scatterRows(rewriter, loc, grad, indices, type));
      return success();
    }
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
