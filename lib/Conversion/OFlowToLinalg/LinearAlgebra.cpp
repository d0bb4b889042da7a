//===- LinearAlgebra.cpp - matmul and gemm ---------------------------------===//
//
// Products become linalg.matmul (2-D) or linalg.batch_matmul (3-D) with
// their default indexing maps: the library-call lowering after
// bufferization recognises exactly those ops. So transposed operands are
// materialised with linalg.transpose, and broadcast batch dims are
// materialised and collapsed into one.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

Value transposeLastTwo(OpBuilder &b, Location loc, Value x) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<int64_t> shape(shapeOf(x));
  std::swap(shape[rank - 1], shape[rank - 2]);
  Value init = emptyTensor(b, loc, shape, elementTypeOf(x));
  return linalg::TransposeOp::create(b, loc, x, init, perm)->getResult(0);
}

/// A copy of `x` broadcast to `shape` (no-op when it already has it).
Value broadcastTo(OpBuilder &b, Location loc, Value x,
                  ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return broadcastGeneric(b, loc, shape, elementTypeOf(x), x,
                          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// lhs [..., M, K] x rhs [..., K, N] -> `resultShape`, accumulating into
/// `init` when given (of `resultShape`), else into zeros.
Value product(OpBuilder &b, Location loc, Value lhs, Value rhs,
              ArrayRef<int64_t> resultShape, Value init = {}) {
  Type t = elementTypeOf(lhs);
  int64_t rank = resultShape.size();
  int64_t m = resultShape[rank - 2], n = resultShape[rank - 1];
  int64_t k = shapeOf(lhs).back();
  int64_t batch = product(resultShape.drop_back(2));
  auto accumulator = [&](ArrayRef<int64_t> shape) {
    if (init)
      return reshapeTo(b, loc, init, shape);
    return filledTensor(b, loc, shape, scalarConstant(b, loc, t, 0));
  };
  if (tensorType(rhs).getRank() == 2) {
    // A shared right operand: fold lhs's batch dims into its rows.
    Value a = reshapeTo(b, loc, lhs, {batch * m, k});
    Value mm = linalg::MatmulOp::create(
                   b, loc, TypeRange{RankedTensorType::get({batch * m, n}, t)},
                   ValueRange{a, rhs}, ValueRange{accumulator({batch * m, n})})
                   ->getResult(0);
    return reshapeTo(b, loc, mm, resultShape);
  }
  SmallVector<int64_t> lhsShape(resultShape.drop_back(2)), rhsShape(lhsShape);
  lhsShape.append({m, k});
  rhsShape.append({k, n});
  Value a = reshapeTo(b, loc, broadcastTo(b, loc, lhs, lhsShape), {batch, m, k});
  Value c = reshapeTo(b, loc, broadcastTo(b, loc, rhs, rhsShape), {batch, k, n});
  Value bmm = linalg::BatchMatmulOp::create(
                  b, loc, TypeRange{RankedTensorType::get({batch, m, n}, t)},
                  ValueRange{a, c}, ValueRange{accumulator({batch, m, n})})
                  ->getResult(0);
  return reshapeTo(b, loc, bmm, resultShape);
}

struct MatmulLowering : OpConversionPattern<of::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkArithType(op, elementTypeOf(adaptor.getLhs()))))
      return failure();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    if (op.getTransposeA())
      lhs = transposeLastTwo(rewriter, loc, lhs);
    if (op.getTransposeB())
      rhs = transposeLastTwo(rewriter, loc, rhs);
    ArrayRef<int64_t> shape = op.getOutput().getType().getShape();
    rewriter.replaceOp(op, product(rewriter, loc, lhs, rhs, shape));
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
    if (op.getTransposeA())
      a = transposeLastTwo(rewriter, loc, a);
    if (op.getTransposeB())
      b = transposeLastTwo(rewriter, loc, b);
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
      rewriter.replaceOp(op, product(rewriter, loc, a, b, shape, init));
      return success();
    }
    Value ab = product(rewriter, loc, a, b, shape);
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
