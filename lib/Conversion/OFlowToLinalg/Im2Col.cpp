//===- Im2Col.cpp - f32 convolutions and their gradients as GEMMs ----------===//
//
// The direct convolution loops stay scalar after lowering; a GEMM runs in
// OpenBLAS. So each f32 convolution becomes im2col (a linalg.generic that
// gathers the padded, strided, dilated windows into a column matrix) and a
// linalg.batch_matmul with default maps, which oflow-linalg-to-blas turns
// into one sgemm call per batch entry. The batch is (image, group):
//
//   forward          y[ng]    = W[g] [Mg, Kg]      x col[ng] [Kg, P]
//   backward-filter  dW[g]    = sum_n dy[ng] [Mg, P] x colT[ng] [P, Kg]
//   backward-input   dcol[ng] = W[g]^T [Kg, Mg]    x dy[ng] [Mg, P]
//                    dx       = col2im(dcol)
//
// with Kg = C/groups * kH * kW and P = OH * OW. The weights are broadcast
// over the images (materialized: a batched GEMM reads every operand through
// its batch stride), which costs N * Mg * Kg copies against the N * Mg * P
// a single GEMM would spend transposing its result back to NCHW. col2im is
// a scatter-add written as a gather: each input pixel sums the column
// entries whose windows read it.
//
//===----------------------------------------------------------------------===//
#include "ConvUtils.h"

namespace oflow::lowering {
namespace {

Value zeroOf(OpBuilder &b, Location loc, Type t) {
  return scalarConstant(b, loc, t, 0);
}

/// The padded input [N, C, H, W] viewed per group: [N, G, C/G, Hp, Wp].
Value paddedGroups(OpBuilder &b, Location loc, Value x, const Window &w,
                   int64_t groups) {
  Value xp = padSpatial(b, loc, x, ArrayRef<int64_t>(w.pads).take_front(2),
                        ArrayRef<int64_t>(w.pads).drop_front(2),
                        zeroOf(b, loc, elementTypeOf(x)));
  ArrayRef<int64_t> s = shapeOf(xp);
  return reshapeTo(b, loc, xp, {s[0], groups, s[1] / groups, s[2], s[3]});
}

/// im2col: the windows of `xg` [N, G, Cg, Hp, Wp] read by an output of
/// spatial size `out` [OH, OW]. With `rowsPerPixel` the result is
/// [N*G, OH*OW, Cg*kH*kW] (one row per output pixel), otherwise
/// [N*G, Cg*kH*kW, OH*OW] (one column per output pixel).
Value gatherWindows(OpBuilder &b, Location loc, Value xg,
                    ArrayRef<int64_t> out, const Window &w, bool rowsPerPixel) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = shapeOf(xg);
  int64_t n = s[0], g = s[1], cg = s[2];
  // Loop positions of (c, kh, kw) and (oh, ow) after the leading (n, g).
  unsigned c = rowsPerPixel ? 4 : 2, o = rowsPerPixel ? 2 : 5;
  SmallVector<int64_t> shape(7);
  shape[0] = n;
  shape[1] = g;
  shape[c] = cg;
  shape[c + 1] = w.kernel[0];
  shape[c + 2] = w.kernel[1];
  shape[o] = out[0];
  shape[o + 1] = out[1];
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> read = {dim(0), dim(1), dim(c)};
  for (unsigned d = 0; d < 2; ++d)
    read.push_back(dim(o + d) * w.strides[d] + dim(c + 1 + d) * w.dilations[d]);
  Value col = parallelGeneric(b, loc, shape, elementTypeOf(xg), xg,
                              AffineMap::get(7, 0, read, ctx),
                              [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  int64_t k = cg * w.kernel[0] * w.kernel[1], p = out[0] * out[1];
  return reshapeTo(b, loc, col,
                   rowsPerPixel ? SmallVector<int64_t>{n * g, p, k}
                                : SmallVector<int64_t>{n * g, k, p});
}

/// The weight [M, Cg, kH, kW] as [N*G, Mg, Kg], or transposed per group as
/// [N*G, Kg, Mg]: a copy per image, so that the batched GEMM can step
/// through it.
Value broadcastWeight(OpBuilder &b, Location loc, Value w, int64_t images,
                      int64_t groups, bool transposed) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = shapeOf(w);
  int64_t mg = s[0] / groups, kg = s[1] * s[2] * s[3];
  Value wg = reshapeTo(b, loc, w, {groups, mg, kg});
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops (n, g, rows, cols) read wg[g, m, k].
  SmallVector<int64_t> shape = {images, groups, mg, kg};
  AffineMap read = AffineMap::get(4, 0, {dim(1), dim(2), dim(3)}, ctx);
  if (transposed) {
    shape = {images, groups, kg, mg};
    read = AffineMap::get(4, 0, {dim(1), dim(3), dim(2)}, ctx);
  }
  Value wb = parallelGeneric(b, loc, shape, elementTypeOf(w), wg, read,
                             [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return reshapeTo(b, loc, wb, {images * groups, shape[2], shape[3]});
}

/// An NCHW tensor [N, M, OH, OW] as [N*G, M/G, OH*OW] (a view).
Value groupRows(OpBuilder &b, Location loc, Value y, int64_t groups) {
  ArrayRef<int64_t> s = shapeOf(y);
  Value split = reshapeTo(b, loc, y, {s[0], groups, s[1] / groups, s[2], s[3]});
  return reshapeTo(b, loc, split, {s[0] * groups, s[1] / groups, s[2] * s[3]});
}

/// The inverse of groupRows: [N*G, Mg, P] as `shape` [N, M, OH, OW].
Value ungroupRows(OpBuilder &b, Location loc, Value y,
                  ArrayRef<int64_t> shape, int64_t groups) {
  Value split = reshapeTo(
      b, loc, y, {shape[0], groups, shape[1] / groups, shape[2], shape[3]});
  return reshapeTo(b, loc, split, shape);
}

Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  Value init) {
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{init})
      ->getResult(0);
}

} // namespace

bool convLowersThroughGemm(Type elementType, ArrayRef<int64_t> weightShape,
                           int64_t groups) {
  return elementType.isF32() && (groups == 1 || weightShape[0] / groups > 1);
}

Value conv2dThroughGemm(OpBuilder &b, Location loc, Value x, Value w,
                        Value bias, ArrayRef<int64_t> outShape,
                        const Window &window, int64_t groups) {
  MLIRContext *ctx = b.getContext();
  Type t = elementTypeOf(x);
  int64_t n = outShape[0], mg = outShape[1] / groups,
          p = outShape[2] * outShape[3];
  Value col = gatherWindows(b, loc, paddedGroups(b, loc, x, window, groups),
                            outShape.drop_front(2), window,
                            /*rowsPerPixel=*/false);
  Value wb = broadcastWeight(b, loc, w, n, groups, /*transposed=*/false);
  // The bias is the accumulator's initial value (sgemm's beta = 1).
  SmallVector<int64_t> accShape = {n, groups, mg, p};
  Value init;
  if (bias) {
    Value bg = reshapeTo(b, loc, bias, {groups, mg});
    AffineMap channel = AffineMap::get(
        4, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)}, ctx);
    init = parallelGeneric(b, loc, accShape, t, bg, channel,
                           [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = filledTensor(b, loc, accShape, zeroOf(b, loc, t));
  }
  init = reshapeTo(b, loc, init, {n * groups, mg, p});
  return ungroupRows(b, loc, batchMatmul(b, loc, wb, col, init), outShape,
                     groups);
}

Value conv2dBackwardFilterThroughGemm(OpBuilder &b, Location loc, Value dy,
                                      Value x, ArrayRef<int64_t> filterShape,
                                      const Window &window, int64_t groups) {
  Type t = elementTypeOf(dy);
  int64_t n = shapeOf(dy)[0], mg = filterShape[0] / groups,
          kg = filterShape[1] * filterShape[2] * filterShape[3];
  Value colT = gatherWindows(b, loc, paddedGroups(b, loc, x, window, groups),
                             shapeOf(dy).drop_front(2), window,
                             /*rowsPerPixel=*/true);
  Value perImage =
      batchMatmul(b, loc, groupRows(b, loc, dy, groups), colT,
                  filledTensor(b, loc, {n * groups, mg, kg}, zeroOf(b, loc, t)));
  // The images' contributions summed: [N, G*Mg*Kg] -> [G*Mg*Kg].
  Value flat = reshapeTo(b, loc, perImage, {n, groups * mg * kg});
  Value dw = reduceGeneric(
      b, loc, flat, shapeOf(flat), {0}, zeroOf(b, loc, t),
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[1], a[0]);
      });
  return reshapeTo(b, loc, dw, filterShape);
}

Value conv2dBackwardInputThroughGemm(OpBuilder &b, Location loc, Value dy,
                                     Value w, ArrayRef<int64_t> inShape,
                                     const Window &window, int64_t groups) {
  Type t = elementTypeOf(dy);
  ArrayRef<int64_t> out = shapeOf(dy);
  int64_t n = out[0], kg = shapeOf(w)[1] * window.kernel[0] * window.kernel[1];
  Value wT = broadcastWeight(b, loc, w, n, groups, /*transposed=*/true);
  Value dcol = batchMatmul(
      b, loc, wT, groupRows(b, loc, dy, groups),
      filledTensor(b, loc, {n * groups, kg, out[2] * out[3]}, zeroOf(b, loc, t)));
  // [N*G, Cg*kH*kW, OH*OW] -> [N, C, kH, kW, OH, OW]: the channel index
  // g * Cg + c is the collapse of (g, c).
  dcol = reshapeTo(b, loc, dcol,
                   {n, inShape[1], window.kernel[0], window.kernel[1], out[2],
                    out[3]});
  return sumOverWindows(
      b, loc, inShape, out, t, window,
      [&](OpBuilder &nb, Location l, ArrayRef<Value> at) -> Value {
        // at = (n, c, oh, ow, kh, kw).
        return tensor::ExtractOp::create(
            nb, l, dcol, ValueRange{at[0], at[1], at[4], at[5], at[2], at[3]});
      });
}

} // namespace oflow::lowering
