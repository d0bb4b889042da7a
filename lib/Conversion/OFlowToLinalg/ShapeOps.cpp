//===- ShapeOps.cpp - reshapes, transposes, slices and concatenation -------===//
//
// Reshapes are tensor.collapse_shape / expand_shape (free after
// bufferization); slices with positive strides are tensor.extract_slice /
// insert_slice, and a negative stride is the positive-stride slice of the
// same elements followed by a reversal (a linalg.generic reading d -> n-1-d).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// Lowers ops that only reinterpret their input's shape.
template <typename OpT>
struct ReshapeLikeLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                                     type.getShape()));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<of::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = op.getOutput().getType();
    Value init = emptyTensor(rewriter, op.getLoc(), type.getShape(),
                             type.getElementType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getInput(), init,
                                                       op.getPerm())
                               ->getResult(0));
    return success();
  }
};

/// `x` with the dims in `dims` reversed.
Value reverseDims(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return x;
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<AffineExpr> exprs;
  for (auto [d, size] : llvm::enumerate(shape)) {
    AffineExpr e = getAffineDimExpr(d, ctx);
    if (llvm::is_contained(dims, static_cast<int64_t>(d)))
      e = getAffineConstantExpr(size - 1, ctx) - e;
    exprs.push_back(e);
  }
  return parallelGeneric(b, loc, shape, elementTypeOf(x), x,
                         AffineMap::get(shape.size(), 0, exprs, ctx),
                         [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// A slice as positive-stride offsets and strides plus the dims to reverse.
struct PositiveSlice {
  SmallVector<int64_t> offsets, strides, reversed;
};

PositiveSlice normalizeSlice(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  PositiveSlice s;
  for (auto [d, off] : llvm::enumerate(offsets)) {
    int64_t stride = strides[d];
    if (stride > 0 || sizes[d] <= 1) {
      // A single element needs no reversal; stride 1 keeps it in range.
      s.offsets.push_back(off);
      s.strides.push_back(stride > 0 ? stride : 1);
      continue;
    }
    s.offsets.push_back(off + (sizes[d] - 1) * stride);
    s.strides.push_back(-stride);
    s.reversed.push_back(d);
  }
  return s;
}

struct SliceLowering : OpConversionPattern<of::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PositiveSlice s =
        normalizeSlice(op.getOffsets(), op.getSizes(), op.getStrides());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, op.getOutput().getType(), adaptor.getInput(),
        ValueRange{}, ValueRange{}, ValueRange{}, s.offsets, op.getSizes(),
        s.strides);
    rewriter.replaceOp(op, reverseDims(rewriter, loc, slice, s.reversed));
    return success();
  }
};

/// `dest` with zeros written everywhere outside the unit-stride box
/// `offsets` + `sizes`: for each dim d, the slabs below and above the box's
/// range in d, over the box's range in the dims before d and all of the
/// dims after (together exactly the complement).
Value zerosOutside(OpBuilder &b, Location loc, Value dest,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  ArrayRef<int64_t> shape = shapeOf(dest);
  int64_t rank = shape.size();
  Value zero = scalarConstant(b, loc, elementTypeOf(dest), 0);
  SmallVector<int64_t> ones(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t end = offsets[d] + sizes[d];
    for (auto [start, length] : {std::pair<int64_t, int64_t>{0, offsets[d]},
                                 {end, shape[d] - end}}) {
      if (length == 0)
        continue;
      SmallVector<int64_t> off(rank, 0), size(shape);
      for (int64_t e = 0; e < d; ++e) {
        off[e] = offsets[e];
        size[e] = sizes[e];
      }
      off[d] = start;
      size[d] = length;
      Value slab = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(size, elementTypeOf(dest)), dest,
          ValueRange{}, ValueRange{}, ValueRange{}, off, size, ones);
      Value filled =
          linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{slab})
              .getResult(0);
      dest = tensor::InsertSliceOp::create(b, loc, filled, dest, ValueRange{},
                                           ValueRange{}, ValueRange{}, off,
                                           size, ones);
    }
  }
  return dest;
}

struct SliceBackwardLowering : OpConversionPattern<of::SliceBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::SliceBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getGradInput().getType();
    PositiveSlice s =
        normalizeSlice(op.getOffsets(), op.getSizes(), op.getStrides());
    bool unitStrides = s.reversed.empty() &&
                       llvm::all_of(s.strides, [](int64_t v) { return v == 1; });
    if (unitStrides) {
      // Zeros only around the slice (a padded GEMM's gradient,
      // oflow-pad-gemm-extents: not a fill of all the logits' gradient
      // before the copy into it; empty-tensor elimination before
      // bufferization then has the gradient's producer write in place).
      // The slice goes in first: zeros filled into an empty tensor first
      // are the same value for every slice_backward of this shape (CSE),
      // which each insert would then copy (oflow-flatten-state pads
      // hundreds of gradients of one shape: One-Shot Bufferize's analysis of
      // those shared uses grew with their square).
      SmallVector<int64_t> ones(type.getRank(), 1);
      Value filled = tensor::InsertSliceOp::create(
          rewriter, loc, adaptor.getGradOutput(),
          emptyTensor(rewriter, loc, type.getShape(), type.getElementType()),
          ValueRange{}, ValueRange{}, ValueRange{}, s.offsets, op.getSizes(), ones);
      rewriter.replaceOp(op, zerosOutside(rewriter, loc, filled, s.offsets, op.getSizes()));
      return success();
    }
    Value grad = reverseDims(rewriter, loc, adaptor.getGradOutput(), s.reversed);
    Value zeros = filledTensor(
        rewriter, loc, type.getShape(),
        scalarConstant(rewriter, loc, type.getElementType(), 0));
    rewriter.replaceOp(
        op, tensor::InsertSliceOp::create(rewriter, loc, grad, zeros,
                                          ValueRange{}, ValueRange{},
                                          ValueRange{}, s.offsets,
                                          op.getSizes(), s.strides));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<of::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getOutput().getType();
    int64_t axis = op.getAxis(), rank = type.getRank();
    Value result =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (Value in : adaptor.getInputs()) {
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result,
                                             ValueRange{}, ValueRange{},
                                             ValueRange{}, offsets,
                                             shapeOf(in), strides);
      offsets[axis] += shapeOf(in)[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitLowering : OpConversionPattern<of::SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = tensorType(adaptor.getInput()).getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    SmallVector<Value> pieces;
    for (Value out : op.getOutputs()) {
      auto type = cast<RankedTensorType>(out.getType());
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, type, adaptor.getInput(), ValueRange{}, ValueRange{},
          ValueRange{}, offsets, type.getShape(), strides));
      offsets[axis] += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

struct TriluLowering : OpConversionPattern<of::TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getInput();
    Type t = elementTypeOf(x);
    if (!isa<FloatType>(t) && !t.isSignlessInteger())
      return checkArithType(op, t);
    int64_t rank = tensorType(x).getRank(), k = op.getK();
    bool upper = op.getUpper();
    Value y = broadcastGeneric(
        rewriter, op.getLoc(), shapeOf(x), t, x,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(b, l, rank - 2);
          Value j = linalg::IndexOp::create(b, l, rank - 1);
          // keep j - i >= k (upper) or j - i <= k (lower)
          Value diff = arith::SubIOp::create(b, l, j, i);
          Value kv = indexConstant(b, l, k);
          Value keep = arith::CmpIOp::create(
              b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
              diff, kv);
          return arith::SelectOp::create(b, l, keep, a[0],
                                         scalarConstant(b, l, t, 0));
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLikeLowering<of::ReshapeOp>,
               ReshapeLikeLowering<of::FlattenOp>,
               ReshapeLikeLowering<of::SqueezeOp>,
               ReshapeLikeLowering<of::UnsqueezeOp>, TransposeLowering,
               SliceLowering, SliceBackwardLowering, ConcatLowering,
               SplitLowering, TriluLowering>(patterns.getContext());
}

} // namespace oflow::lowering
