//===- LinearAlgebra.cpp - matmul and gemm ---------------------------------===//
//
// Products become linalg.matmul (2-D) or linalg.batch_matmul (3-D), the
// ops the library-call lowering after bufferization recognises. Transposed
// operands are read in place through the ops' indexing maps (which become
// the BLAS call's transpose flags); broadcast batch dims are materialised
// and collapsed into one.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// A copy of `x` broadcast to `shape` (no-op when it already has it).
Value broadcastTo(OpBuilder &b, Location loc, Value x,
                  ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return broadcastGeneric(b, loc, shape, elementTypeOf(x), x,
                          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// The indexing maps of a (batch_)matmul whose operands are stored
/// transposed when `ta`/`tb`: (b,) m, n, k -> A [m, k] or [k, m], B [k, n] or
/// [n, k], C [m, n].
ArrayAttr matmulMaps(OpBuilder &b, bool batched, bool ta, bool tb) {
  unsigned dims = batched ? 4 : 3;
  unsigned first = batched ? 1 : 0;
  AffineExpr m = b.getAffineDimExpr(first), n = b.getAffineDimExpr(first + 1),
             k = b.getAffineDimExpr(first + 2);
  auto map = [&](AffineExpr r, AffineExpr c) {
    SmallVector<AffineExpr> results;
    if (batched)
      results.push_back(b.getAffineDimExpr(0));
    results.append({r, c});
    return AffineMap::get(dims, 0, results, b.getContext());
  };
  return b.getAffineMapArrayAttr(
      {ta ? map(k, m) : map(m, k), tb ? map(n, k) : map(k, n), map(m, n)});
}

/// op(lhs) [..., M, K] x op(rhs) [..., K, N] -> `resultShape`, op transposing
/// the last two dims of an operand whose flag is set, accumulating into
/// `init` when given (of `resultShape`), else into zeros. Transposed operands
/// are read in place through the op's indexing maps (the BLAS call's
/// transpose flags), never copied.
Value multiply(OpBuilder &b, Location loc, Value lhs, Value rhs, bool ta, bool tb,
               ArrayRef<int64_t> resultShape, Value init = {}) {
  Type t = elementTypeOf(lhs);
  int64_t rank = resultShape.size();
  int64_t m = resultShape[rank - 2], n = resultShape[rank - 1];
  int64_t k = ta ? shapeOf(lhs)[shapeOf(lhs).size() - 2] : shapeOf(lhs).back();
  int64_t batch = ShapedType::getNumElements(resultShape.drop_back(2));
  auto accumulator = [&](ArrayRef<int64_t> shape) {
    if (init)
      return reshapeTo(b, loc, init, shape);
    return filledTensor(b, loc, shape, scalarConstant(b, loc, t, 0));
  };
  auto stored = [](int64_t rows, int64_t cols, bool transposed) {
    return transposed ? SmallVector<int64_t>{cols, rows}
                      : SmallVector<int64_t>{rows, cols};
  };
  if (tensorType(rhs).getRank() == 2 && (!ta || batch == 1)) {
    // A shared right operand: fold lhs's batch dims into its rows.
    Value a = reshapeTo(b, loc, lhs, stored(batch * m, k, ta));
    auto mm = linalg::MatmulOp::create(
        b, loc, TypeRange{RankedTensorType::get({batch * m, n}, t)},
        ValueRange{a, rhs}, ValueRange{accumulator({batch * m, n})});
    if (ta || tb)
      mm.setIndexingMapsAttr(matmulMaps(b, /*batched=*/false, ta, tb));
    return reshapeTo(b, loc, mm->getResult(0), resultShape);
  }
  SmallVector<int64_t> lhsShape(resultShape.drop_back(2)), rhsShape(lhsShape);
  lhsShape.append(stored(m, k, ta));
  rhsShape.append(stored(k, n, tb));
  Value a = reshapeTo(b, loc, broadcastTo(b, loc, lhs, lhsShape),
                      {batch, lhsShape[rank - 2], lhsShape[rank - 1]});
  Value c = reshapeTo(b, loc, broadcastTo(b, loc, rhs, rhsShape),
                      {batch, rhsShape[rank - 2], rhsShape[rank - 1]});
  auto bmm = linalg::BatchMatmulOp::create(
      b, loc, TypeRange{RankedTensorType::get({batch, m, n}, t)},
      ValueRange{a, c}, ValueRange{accumulator({batch, m, n})});
  if (ta || tb)
    bmm.setIndexingMapsAttr(matmulMaps(b, /*batched=*/true, ta, tb));
  return reshapeTo(b, loc, bmm->getResult(0), resultShape);
}

struct MatmulLowering : OpConversionPattern<of::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkArithType(op, elementTypeOf(adaptor.getLhs()))))
      return failure();
    ArrayRef<int64_t> shape = op.getOutput().getType().getShape();
    rewriter.replaceOp(op, multiply(rewriter, loc, adaptor.getLhs(),
                                    adaptor.getRhs(), op.getTransposeA(),
                                    op.getTransposeB(), shape));
    return success();
  }
};

struct GemmLowering : OpConversionPattern<of::GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB(), c = adaptor.getC();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    ArrayRef<int64_t> shape = op.getOutput().getType().getShape();
    Type t = elementTypeOf(a);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    bool useC = c && beta != 0.0;
    auto scaled = [&](Value x, double factor) {
      return broadcastGeneric(
          rewriter, loc, shape, t, x,
          [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
            if (factor == 1.0)
              return v[0];
            return arith::MulFOp::create(nb, l, v[0],
                                         scalarConstant(nb, l, t, factor));
          });
    };
    if (alpha == 1.0) {
      // beta * C is the matmul's initial accumulator: one pass, and the
      // BLAS call's own beta = 1 form.
      Value init = useC ? scaled(c, beta) : Value();
      rewriter.replaceOp(op, multiply(rewriter, loc, a, b, ta, tb, shape, init));
      return success();
    }
    Value ab = multiply(rewriter, loc, a, b, ta, tb, shape);
    SmallVector<Value> inputs = {ab};
    if (useC)
      inputs.push_back(c);
    Value y = broadcastGeneric(
        rewriter, loc, shape, t, inputs,
        [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
          Value r = arith::MulFOp::create(nb, l, v[0],
                                          scalarConstant(nb, l, t, alpha));
          if (v.size() == 1)
            return r;
          Value bc = arith::MulFOp::create(nb, l, v[1],
                                           scalarConstant(nb, l, t, beta));
          return arith::AddFOp::create(nb, l, r, bc);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateLinearAlgebraPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, GemmLowering>(patterns.getContext());
}

} // namespace oflow::lowering
