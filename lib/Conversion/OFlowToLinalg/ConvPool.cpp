//===- ConvPool.cpp - convolution, pooling and their gradients -------------===//
//
// f32 convolutions and their gradients go through GEMMs (Im2Col.cpp) where
// that pays; the lowerings below are the general ones.
//
// Forward ops are the named linalg convolution and pooling ops on an input
// padded with tensor.pad (pooling pads with -inf for max, zeros for sums,
// and ceil_mode's last window is covered by extra padding at the end).
// Grouped convolution uses the NGCHW x GFCHW op on expanded views.
//
// conv2d_backward_input is a stride-1 convolution of the incoming gradient,
// dilated by the stride (inserted zeros) and padded, with the flipped,
// transposed weight; conv2d_backward_filter is a generic correlating the
// gradient with the padded input. Pool gradients are gathers: each input
// element sums over the window positions that read it.
//
//===----------------------------------------------------------------------===//
#include "ConvUtils.h"

namespace oflow::lowering {

Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, Value value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return x;
  SmallVector<int64_t> shape(shapeOf(x));
  SmallVector<OpFoldResult> lo = {b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> hi = lo;
  for (int d = 0; d < 2; ++d) {
    shape[2 + d] += low[d] + high[d];
    lo.push_back(b.getIndexAttr(low[d]));
    hi.push_back(b.getIndexAttr(high[d]));
  }
  auto type = RankedTensorType::get(shape, elementTypeOf(x));
  return tensor::PadOp::create(b, loc, type, x, lo, hi, value);
}

namespace {
namespace of = mlir::oflow;

DenseIntElementsAttr i64Pair(OpBuilder &b, ArrayRef<int64_t> v) {
  return DenseIntElementsAttr::get(
      RankedTensorType::get({2}, b.getI64Type()), v);
}

/// Padding at the end of each spatial dim so that every output window of a
/// pooling op (ceil_mode may add one past the padded input) lies inside.
SmallVector<int64_t> poolHighPads(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                  const Window &w) {
  SmallVector<int64_t> high;
  for (int d = 0; d < 2; ++d) {
    int64_t needed = (out[2 + d] - 1) * w.strides[d] +
                     (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t have = in[2 + d] + w.pads[d] + w.pads[d + 2];
    high.push_back(w.pads[d + 2] + std::max<int64_t>(0, needed - have));
  }
  return high;
}

/// Average pooling's divisor for each output position [OH, OW] (PyTorch's:
/// the window clipped to the padded input, or to the input itself without
/// count_include_pad).
SmallVector<double> poolDivisors(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                 const Window &w, bool countIncludePad) {
  SmallVector<double> divisors;
  auto extent = [&](int d, int64_t o) {
    int64_t start = o * w.strides[d] - w.pads[d];
    int64_t end = std::min(start + w.kernel[d], in[2 + d] + w.pads[d + 2]);
    if (countIncludePad)
      return end - start;
    return std::min(end, in[2 + d]) - std::max<int64_t>(start, 0);
  };
  for (int64_t oh = 0; oh < out[2]; ++oh)
    for (int64_t ow = 0; ow < out[3]; ++ow)
      divisors.push_back(static_cast<double>(extent(0, oh) * extent(1, ow)));
  return divisors;
}

// Window loops run (n, c, kh, kw, y, x): the kernel dims outside the
// spatial ones. A reduction over the window then carries its accumulator
// from one pass over the image to the next, not from one instruction to
// the next: with the kernel dims innermost, the selects of max-pool's
// arg-max formed a loop-carried chain that x86 codegen turns into
// branches, mispredicted on real data (30% of the CNN's training step in
// perf; the step went from 2.56 to 2.05 ms with this order).

/// The dims (n, c, y, x, kh, kw) of a window loop nest in loop order.
constexpr int64_t kWindowLoopDim[6] = {0, 1, 4, 5, 2, 3};

/// The window loop nest's indices as (n, c, y, x, kh, kw).
SmallVector<Value> windowIndices(OpBuilder &b, Location loc) {
  SmallVector<Value> idx;
  for (int64_t d : kWindowLoopDim)
    idx.push_back(linalg::IndexOp::create(b, loc, d));
  return idx;
}

/// The map (n, c, kh, kw, oh, ow) -> (n, c, oh*s + kh*d, ow*s + kw*d).
AffineMap windowInputMap(MLIRContext *ctx, const Window &w) {
  SmallVector<AffineExpr> e = {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)};
  for (int d = 0; d < 2; ++d)
    e.push_back(getAffineDimExpr(4 + d, ctx) * w.strides[d] +
                getAffineDimExpr(2 + d, ctx) * w.dilations[d]);
  return AffineMap::get(6, 0, e, ctx);
}

/// Loop sizes (n, c, kh, kw, y, x) for an NCHW `shape` [n, c, y, x].
SmallVector<int64_t> windowLoops(ArrayRef<int64_t> shape, const Window &w) {
  return {shape[0], shape[1], w.kernel[0], w.kernel[1], shape[2], shape[3]};
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// [d0, d1, ...] -> [d0, groups, d1/groups, ...] (or the same at `dim`).
Value splitDim(OpBuilder &b, Location loc, Value x, int64_t dim,
               int64_t groups) {
  SmallVector<int64_t> shape(shapeOf(x).take_front(dim));
  shape.push_back(groups);
  shape.push_back(shapeOf(x)[dim] / groups);
  llvm::append_range(shape, shapeOf(x).drop_front(dim + 1));
  return reshapeTo(b, loc, x, shape);
}

/// conv of padded `xp` [N, C, Hp, Wp] with `w` [M, C/g, kH, kW] into `init`
/// [N, M, OH, OW] (accumulates).
Value convolve(OpBuilder &b, Location loc, Value xp, Value w, Value init,
               int64_t groups, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> dilations) {
  auto initType = tensorType(init);
  if (groups == 1)
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{initType}, ValueRange{xp, w}, ValueRange{init},
               i64Pair(b, strides), i64Pair(b, dilations))
        ->getResult(0);
  Value xg = splitDim(b, loc, xp, 1, groups);
  Value wg = splitDim(b, loc, w, 0, groups);
  Value ig = splitDim(b, loc, init, 1, groups);
  Value yg = linalg::Conv2DNgchwGfchwOp::create(
                 b, loc, TypeRange{ig.getType()}, ValueRange{xg, wg},
                 ValueRange{ig}, i64Pair(b, strides), i64Pair(b, dilations))
                 ->getResult(0);
  return reshapeTo(b, loc, yg, initType.getShape());
}

/// The window of a convolution op (or its gradients) with `weightShape`.
template <typename OpT>
Window convWindow(OpT op, ArrayRef<int64_t> weightShape) {
  Window w;
  w.kernel.assign(weightShape.begin() + 2, weightShape.end());
  w.strides.assign(op.getStrides().begin(), op.getStrides().end());
  w.dilations.assign(op.getDilations().begin(), op.getDilations().end());
  w.pads.assign(op.getPads().begin(), op.getPads().end());
  return w;
}

/// The conv patterns take `library`: which convolutions become oneDNN or
/// cuDNN calls (`conv-library=dnnl|cudnn`).
template <typename OpT>
struct ConvPattern : OpConversionPattern<OpT> {
  ConvPattern(MLIRContext *ctx, const ConvLibraryOptions &library)
      : OpConversionPattern<OpT>(ctx), library(library) {}
  ConvLibraryOptions library;
};

struct Conv2dLowering : ConvPattern<of::Conv2dOp> {
  using ConvPattern::ConvPattern;
  LogicalResult
  matchAndRewrite(of::Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getOutput().getType();
    Type t = type.getElementType();
    ArrayRef<int64_t> weightShape = shapeOf(adaptor.getWeight());
    if (convLowersThroughLibrary(library, t, convWindow(op, weightShape), weightShape,
                                 op.getGroups())) {
      rewriter.replaceOp(
          op, conv2dThroughLibrary(rewriter, loc, op, library, adaptor.getInput(),
                                   adaptor.getWeight(), adaptor.getBias(),
                                   type.getShape(), convWindow(op, weightShape),
                                   op.getGroups()));
      return success();
    }
    if (convLowersThroughGemm(t, weightShape, op.getGroups())) {
      rewriter.replaceOp(
          op, conv2dThroughGemm(rewriter, loc, adaptor.getInput(),
                                adaptor.getWeight(), adaptor.getBias(),
                                type.getShape(), convWindow(op, weightShape),
                                op.getGroups()));
      return success();
    }
    ArrayRef<int64_t> pads = op.getPads();
    Value zero = scalarConstant(rewriter, loc, t, 0);
    Value xp = padSpatial(rewriter, loc, adaptor.getInput(), pads.take_front(2),
                          pads.drop_front(2), zero);
    // The bias is the accumulator's initial value.
    Value init;
    if (Value bias = adaptor.getBias()) {
      AffineMap channel = AffineMap::get(
          4, 0, getAffineDimExpr(1, rewriter.getContext()), rewriter.getContext());
      init = parallelGeneric(rewriter, loc, type.getShape(), t, bias, channel,
                             [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    } else {
      init = filledTensor(rewriter, loc, type.getShape(), zero);
    }
    rewriter.replaceOp(op, convolve(rewriter, loc, xp, adaptor.getWeight(), init,
                                    op.getGroups(), op.getStrides(),
                                    op.getDilations()));
    return success();
  }
};

struct Conv2dBackwardInputLowering : ConvPattern<of::Conv2dBackwardInputOp> {
  using ConvPattern::ConvPattern;
  LogicalResult
  matchAndRewrite(of::Conv2dBackwardInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value dy = adaptor.getGradOutput(), w = adaptor.getWeight();
    auto type = op.getGradInput().getType();
    Type t = type.getElementType();
    ArrayRef<int64_t> in = type.getShape(), out = shapeOf(dy);
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    ArrayRef<int64_t> pads = op.getPads();
    ArrayRef<int64_t> kernel = shapeOf(w).drop_front(2);
    int64_t groups = op.getGroups();
    int64_t m = shapeOf(w)[0], cg = shapeOf(w)[1];
    if (convLowersThroughLibrary(library, t, convWindow(op, shapeOf(w)), shapeOf(w),
                                 groups)) {
      rewriter.replaceOp(op, conv2dBackwardInputThroughLibrary(
                                 rewriter, loc, op, library, dy, w, in,
                                 convWindow(op, shapeOf(w)), groups));
      return success();
    }
    if (convLowersThroughGemm(t, shapeOf(w), groups)) {
      rewriter.replaceOp(op, conv2dBackwardInputThroughGemm(
                                 rewriter, loc, dy, w, in,
                                 convWindow(op, shapeOf(w)), groups));
      return success();
    }

    // dx[h] = sum_k dyFull[h + k*d] * w[K-1-k], where dyFull holds dy[o] at
    // row (K-1)*d - pt + o*s and zeros elsewhere.
    SmallVector<int64_t> fullShape = {out[0], out[1]}, offsets = {0, 0},
                         sliceOffsets = {0, 0}, sliceSizes = {out[0], out[1]};
    for (int d = 0; d < 2; ++d) {
      int64_t low = (kernel[d] - 1) * dilations[d];
      int64_t rows = in[2 + d] + low;
      int64_t span = (out[2 + d] - 1) * strides[d] + 1;
      // Rows before the slice start (pads[d]) and after the last needed row.
      int64_t total = std::max(low + span, pads[d] + rows);
      fullShape.push_back(total);
      offsets.push_back(low);
      sliceOffsets.push_back(pads[d]);
      sliceSizes.push_back(rows);
    }
    Value full = filledTensor(rewriter, loc, fullShape,
                              scalarConstant(rewriter, loc, t, 0));
    full = tensor::InsertSliceOp::create(
        rewriter, loc, dy, full, ValueRange{}, ValueRange{}, ValueRange{},
        offsets, out, SmallVector<int64_t>{1, 1, strides[0], strides[1]});
    Value window = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get(sliceSizes, t), full, ValueRange{},
        ValueRange{}, ValueRange{}, sliceOffsets, sliceSizes,
        SmallVector<int64_t>{1, 1, 1, 1});

    // wT[g*cg + c, mg, kh, kw] = w[g*(m/g) + mg, c, K-1-kh, K-1-kw]: the
    // flipped weight with input and output channels swapped per group.
    int64_t mg = m / groups;
    SmallVector<int64_t> wtShape = {groups, cg, mg, kernel[0], kernel[1]};
    Value wg = splitDim(rewriter, loc, w, 0, groups); // [g, mg, cg, kh, kw]
    auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap flip = AffineMap::get(
        5, 0,
        {dim(0), dim(2), dim(1), getAffineConstantExpr(kernel[0] - 1, ctx) - dim(3),
         getAffineConstantExpr(kernel[1] - 1, ctx) - dim(4)},
        ctx);
    Value wt = parallelGeneric(rewriter, loc, wtShape, t, wg, flip,
                               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    wt = reshapeTo(rewriter, loc, wt, {groups * cg, mg, kernel[0], kernel[1]});

    Value init = filledTensor(rewriter, loc, in, scalarConstant(rewriter, loc, t, 0));
    rewriter.replaceOp(op, convolve(rewriter, loc, window, wt, init, groups,
                                    {1, 1}, dilations));
    return success();
  }
};

struct Conv2dBackwardFilterLowering
    : ConvPattern<of::Conv2dBackwardFilterOp> {
  using ConvPattern::ConvPattern;
  LogicalResult
  matchAndRewrite(of::Conv2dBackwardFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = op.getGradFilter().getType();
    Type t = type.getElementType();
    int64_t groups = op.getGroups();
    ArrayRef<int64_t> f = type.getShape();
    if (convLowersThroughLibrary(library, t, convWindow(op, f), f, groups)) {
      rewriter.replaceOp(op, conv2dBackwardFilterThroughLibrary(
                                 rewriter, loc, op, library,
                                 adaptor.getGradOutput(),
                                 adaptor.getInput(), f, convWindow(op, f),
                                 groups));
      return success();
    }
    if (convLowersThroughGemm(t, f, groups)) {
      rewriter.replaceOp(op, conv2dBackwardFilterThroughGemm(
                                 rewriter, loc, adaptor.getGradOutput(),
                                 adaptor.getInput(), f, convWindow(op, f),
                                 groups));
      return success();
    }
    ArrayRef<int64_t> pads = op.getPads(), strides = op.getStrides(),
                      dilations = op.getDilations();
    Value xp = padSpatial(rewriter, loc, adaptor.getInput(), pads.take_front(2),
                          pads.drop_front(2), scalarConstant(rewriter, loc, t, 0));
    Value xg = splitDim(rewriter, loc, xp, 1, groups);   // [n, g, cg, h, w]
    Value dyg = splitDim(rewriter, loc, adaptor.getGradOutput(), 1,
                         groups);                        // [n, g, mg, oh, ow]
    SmallVector<int64_t> gradShape = {groups, f[0] / groups, f[1], f[2], f[3]};
    // Loops (g, mg, c, kh, kw | n, oh, ow).
    auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap xMap = AffineMap::get(
        8, 0,
        {dim(5), dim(0), dim(2), dim(6) * strides[0] + dim(3) * dilations[0],
         dim(7) * strides[1] + dim(4) * dilations[1]},
        ctx);
    AffineMap dyMap = AffineMap::get(8, 0, {dim(5), dim(0), dim(1), dim(6), dim(7)}, ctx);
    SmallVector<int64_t> loopShape(gradShape);
    loopShape.push_back(shapeOf(dyg)[0]);
    loopShape.push_back(shapeOf(dyg)[3]);
    loopShape.push_back(shapeOf(dyg)[4]);
    Value dw = reduceGeneric(
        rewriter, loc, ValueRange{dyg, xg}, {dyMap, xMap}, loopShape, {5, 6, 7},
        scalarConstant(rewriter, loc, t, 0),
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(b, l, a[2],
                                       arith::MulFOp::create(b, l, a[0], a[1]));
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, dw, f));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename OpT>
Window windowOf(OpT op) {
  Window w;
  w.kernel.assign(op.getKernel().begin(), op.getKernel().end());
  w.strides.assign(op.getStrides().begin(), op.getStrides().end());
  w.pads.assign(op.getPads().begin(), op.getPads().end());
  w.dilations = {1, 1};
  if constexpr (std::is_same_v<OpT, of::MaxPool2dOp> ||
                std::is_same_v<OpT, of::MaxPool2dBackwardOp>)
    if (auto d = op.getDilations())
      w.dilations.assign(d->begin(), d->end());
  return w;
}

/// The pooled input: padded with `padValue` so every window is inside.
Value padForPool(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> out,
                 const Window &w, Value padValue) {
  return padSpatial(b, loc, x, ArrayRef<int64_t>(w.pads).take_front(2),
                    poolHighPads(shapeOf(x), out, w), padValue);
}

struct MaxPool2dLowering : OpConversionPattern<of::MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getOutput().getType();
    Type t = type.getElementType();
    Window w = windowOf(op);
    Value lowest = lowestValue(rewriter, loc, t);
    Value xp = padForPool(rewriter, loc, adaptor.getInput(), type.getShape(), w,
                          lowest);
    // The window loops in their order (kernel dims outside the spatial
    // ones, see kWindowLoopDim): each kernel position sweeps the output
    // plane, whose inner loop over x has no loop-carried chain and
    // vectorizes. (linalg.pooling_nchw_max runs the kernel dims innermost:
    // a chain of 9 maxima per output, 2.4x slower on ResNet's stem pool.)
    MLIRContext *ctx = rewriter.getContext();
    Value window = emptyTensor(rewriter, loc, w.kernel, t);
    AffineMap kernelMap = AffineMap::get(
        6, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
    SmallVector<utils::IteratorType> iterators(6, utils::IteratorType::parallel);
    iterators[2] = iterators[3] = utils::IteratorType::reduction;
    Value init = filledTensor(rewriter, loc, type.getShape(), lowest);
    rewriter.replaceOp(
        op, makeGeneric(rewriter, loc, ValueRange{xp, window}, ValueRange{init},
                        {windowInputMap(ctx, w), kernelMap, dropDimsMap(ctx, 6, {2, 3})},
                        iterators,
                        [](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
                          // NaN wins, as in PyTorch.
                          return {arith::MaximumFOp::create(b, l, a[0], a[2])};
                        })[0]);
    return success();
  }
};

struct AvgPool2dLowering : OpConversionPattern<of::AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = op.getOutput().getType();
    ArrayRef<int64_t> out = type.getShape();
    Type t = type.getElementType();
    Window w = windowOf(op);
    Value zero = scalarConstant(rewriter, loc, t, 0);
    Value x = adaptor.getInput();
    Value xp = padForPool(rewriter, loc, x, out, w, zero);
    Value window = emptyTensor(rewriter, loc, w.kernel, t);
    Value sum = linalg::PoolingNchwSumOp::create(
                    rewriter, loc, TypeRange{type}, ValueRange{xp, window},
                    ValueRange{filledTensor(rewriter, loc, out, zero)},
                    i64Pair(rewriter, w.strides), i64Pair(rewriter, w.dilations))
                    ->getResult(0);
    Value divisors = floatTensorConstant(
        rewriter, loc, out.drop_front(2), t,
        poolDivisors(shapeOf(x), out, w, op.getCountIncludePad()));
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap spatial = AffineMap::get(
        4, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
    rewriter.replaceOp(
        op, parallelGeneric(rewriter, loc, out, t, ValueRange{sum, divisors},
                            {id, spatial},
                            [](OpBuilder &b, Location l, ValueRange a) -> Value {
                              return arith::DivFOp::create(b, l, a[0], a[1]);
                            }));
    return success();
  }
};

} // namespace

/// How many windows along spatial dim `d` can read one input element: those
/// starting in the (k-1)*dil + 1 positions up to it, one every stride.
static int64_t windowsPerElement(const Window &w, int d) {
  return (w.kernel[d] - 1) * w.dilations[d] / w.strides[d] + 1;
}

Value sumOverWindows(
    OpBuilder &b, Location loc, ArrayRef<int64_t> inShape,
    ArrayRef<int64_t> outShape, Type t, const Window &w,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> at)> contribution) {
  MLIRContext *ctx = b.getContext();
  // The loops visit, for each input element, only the windows that can
  // read it (2 x 2 for a 3x3 window of stride 2, where visiting the 9
  // kernel positions found at most 4): candidate j along a dim is the j-th
  // window back from the last one starting at or before the element. This
  // empty tensor gives linalg the candidate dims' sizes.
  int64_t candidates[2] = {windowsPerElement(w, 0), windowsPerElement(w, 1)};
  Value candidateShape = emptyTensor(b, loc, candidates, t);
  AffineMap candidateMap = AffineMap::get(
      6, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
  SmallVector<int64_t> loops = {inShape[0], inShape[1], candidates[0],
                                candidates[1], inShape[2], inShape[3]};
  return reduceGeneric(
      b, loc, candidateShape, candidateMap, loops, {2, 3},
      scalarConstant(b, loc, t, 0),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        SmallVector<Value> idx = windowIndices(nb, l); // (n, c, h, w, jh, jw)
        Value valid = arith::ConstantIntOp::create(nb, l, 1, 1);
        SmallVector<Value> at = {idx[0], idx[1], Value(), Value(), Value(), Value()};
        Value zero = indexConstant(nb, l, 0);
        for (int d = 0; d < 2; ++d) {
          // The element's padded coordinate p >= 0; window o starts at
          // o*s and reads p at offset p - o*s = p mod s + j*s, which must
          // lie in the window, (k-1)*dil at most, on a dilation step.
          Value s = indexConstant(nb, l, w.strides[d]);
          Value p = arith::AddIOp::create(nb, l, idx[2 + d],
                                          indexConstant(nb, l, w.pads[d]));
          Value o = arith::SubIOp::create(nb, l, arith::DivUIOp::create(nb, l, p, s),
                                          idx[4 + d]);
          Value offset = arith::SubIOp::create(nb, l, p, arith::MulIOp::create(nb, l, o, s));
          int64_t dil = w.dilations[d];
          Value ok = arith::AndIOp::create(
              nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, o, zero),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, o,
                                    indexConstant(nb, l, outShape[2 + d])));
          ok = arith::AndIOp::create(
              nb, l, ok,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, offset,
                                    indexConstant(nb, l, (w.kernel[d] - 1) * dil)));
          Value k = offset;
          if (dil != 1) {
            Value dv = indexConstant(nb, l, dil);
            ok = arith::AndIOp::create(
                nb, l, ok,
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                      arith::RemUIOp::create(nb, l, offset, dv), zero));
            k = arith::DivUIOp::create(nb, l, offset, dv);
          }
          valid = arith::AndIOp::create(nb, l, valid, ok);
          at[2 + d] = arith::SelectOp::create(nb, l, ok, o, zero);
          at[4 + d] = arith::SelectOp::create(nb, l, ok, k, zero);
        }
        Value c = contribution(nb, l, at);
        Value add = arith::AddFOp::create(nb, l, a[1], c);
        return arith::SelectOp::create(nb, l, valid, add, a[1]);
      });
}

namespace {

struct AvgPool2dBackwardLowering
    : OpConversionPattern<of::AvgPool2dBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AvgPool2dBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = adaptor.getGradOutput();
    auto type = op.getGradInput().getType();
    Type t = type.getElementType();
    Window w = windowOf(op);
    ArrayRef<int64_t> out = shapeOf(dy);
    Value divisors = floatTensorConstant(
        rewriter, loc, out.drop_front(2), t,
        poolDivisors(type.getShape(), out, w, op.getCountIncludePad()));
    Value dx = sumOverWindows(
        rewriter, loc, type.getShape(), out, t, w,
        [&](OpBuilder &b, Location l, ArrayRef<Value> at) -> Value {
          Value g = tensor::ExtractOp::create(b, l, dy, at.take_front(4));
          Value n = tensor::ExtractOp::create(b, l, divisors, at.slice(2, 2));
          return arith::DivFOp::create(b, l, g, n);
        });
    rewriter.replaceOp(op, dx);
    return success();
  }
};

struct MaxPool2dBackwardLowering
    : OpConversionPattern<of::MaxPool2dBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::MaxPool2dBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput(), dy = adaptor.getGradOutput();
    ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(dy);
    Type t = elementTypeOf(x);
    Window w = windowOf(op);
    Value lowest = lowestValue(rewriter, loc, t);
    Value xp = padForPool(rewriter, loc, x, out, w, lowest);

    // Pass 1: each window's arg-max as the position kh * kW + kw. The first
    // maximum in row-major window order wins (PyTorch), whatever order the
    // loops run in: ties go to the smaller position; a NaN beats numbers.
    // Padding is never a candidate.
    Value window = emptyTensor(rewriter, loc, w.kernel, t);
    AffineMap kernelMap = AffineMap::get(
        6, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
    AffineMap outMap = dropDimsMap(ctx, 6, {2, 3});
    // Positions as i32: half the bytes of i64 to write here and to gather in
    // pass 2.
    Type posType = rewriter.getI32Type();
    int64_t none = w.kernel[0] * w.kernel[1];
    SmallVector<Value> inits = {
        filledTensor(rewriter, loc, out, lowest),
        filledTensor(rewriter, loc, out, scalarConstant(rewriter, loc, posType, none))};
    SmallVector<utils::IteratorType> iterators(6, utils::IteratorType::parallel);
    iterators[2] = iterators[3] = utils::IteratorType::reduction;
    Value argmax =
        makeGeneric(
            rewriter, loc, ValueRange{xp, window}, inits,
            {windowInputMap(ctx, w), kernelMap, outMap, outMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
              Value v = a[0], best = a[2], bestPos = a[3];
              SmallVector<Value> idx = windowIndices(b, l);
              Value pos = arith::AddIOp::create(
                  b, l,
                  arith::MulIOp::create(b, l, idx[4],
                                        indexConstant(b, l, w.kernel[1])),
                  idx[5]);
              pos = arith::IndexCastOp::create(b, l, posType, pos);
              // Inside the real input?
              Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
              for (int d = 0; d < 2; ++d) {
                Value h = arith::SubIOp::create(
                    b, l,
                    arith::AddIOp::create(
                        b, l,
                        arith::MulIOp::create(b, l, idx[2 + d],
                                              indexConstant(b, l, w.strides[d])),
                        arith::MulIOp::create(b, l, idx[4 + d],
                                              indexConstant(b, l, w.dilations[d]))),
                    indexConstant(b, l, w.pads[d]));
                Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, h,
                                                 indexConstant(b, l, 0));
                Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, h,
                                                 indexConstant(b, l, in[2 + d]));
                inside = arith::AndIOp::create(
                    b, l, inside, arith::AndIOp::create(b, l, ge, lt));
              }
              auto cmpf = [&](arith::CmpFPredicate p, Value lhs, Value rhs) {
                return arith::CmpFOp::create(b, l, p, lhs, rhs);
              };
              Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                                    pos, bestPos);
              Value greater = cmpf(arith::CmpFPredicate::OGT, v, best);
              Value tie = arith::AndIOp::create(
                  b, l, cmpf(arith::CmpFPredicate::OEQ, v, best), earlier);
              Value vNan = cmpf(arith::CmpFPredicate::UNO, v, v);
              Value bestNan = cmpf(arith::CmpFPredicate::UNO, best, best);
              Value nanWins = arith::AndIOp::create(
                  b, l, vNan,
                  arith::OrIOp::create(
                      b, l,
                      arith::XOrIOp::create(b, l, bestNan,
                                            arith::ConstantIntOp::create(b, l, 1, 1)),
                      earlier));
              // An empty window (best still at its initial position) takes
              // any real element, -inf included.
              Value first = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::eq, bestPos,
                  arith::ConstantIntOp::create(b, l, posType, none));
              Value better = arith::OrIOp::create(
                  b, l, arith::OrIOp::create(b, l, greater, tie),
                  arith::OrIOp::create(b, l, nanWins, first));
              better = arith::AndIOp::create(b, l, better, inside);
              return {arith::SelectOp::create(b, l, better, v, best),
                      arith::SelectOp::create(b, l, better, pos, bestPos)};
            })[1];

    // Pass 2: every input element sums the gradients of the windows whose
    // arg-max it is.
    Value dx = sumOverWindows(
        rewriter, loc, in, out, t, w,
        [&](OpBuilder &b, Location l, ArrayRef<Value> at) -> Value {
          Value g = tensor::ExtractOp::create(b, l, dy, at.take_front(4));
          Value best = tensor::ExtractOp::create(b, l, argmax, at.take_front(4));
          Value pos = arith::AddIOp::create(
              b, l,
              arith::MulIOp::create(b, l, at[4], indexConstant(b, l, w.kernel[1])),
              at[5]);
          Value hit = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq,
              arith::IndexCastOp::create(b, l, posType, pos), best);
          return arith::SelectOp::create(b, l, hit, g, scalarConstant(b, l, t, 0));
        });
    rewriter.replaceOp(op, dx);
    return success();
  }
};

} // namespace

void populateConvPoolPatterns(RewritePatternSet &patterns,
                              const ConvLibraryOptions &convLibrary) {
  patterns.add<Conv2dLowering, Conv2dBackwardInputLowering,
               Conv2dBackwardFilterLowering>(patterns.getContext(), convLibrary);
  patterns.add<MaxPool2dLowering,
               AvgPool2dLowering, AvgPool2dBackwardLowering,
               MaxPool2dBackwardLowering>(patterns.getContext());
}

} // namespace oflow::lowering
