//===- ConvLibrary.cpp - f32 convolutions as oneDNN calls (CPU target) ----===//
//
// With `conv-library=dnnl`, oflow-lower-to-linalg turns each f32 conv2d and
// its two backward ops into one call of the runtime's oneDNN convolution
// (oflow_rt/abi.h, oflow_rt_conv2d_*) instead of im2col + GEMM or direct
// loops. The call is emitted, as the collectives are, against a placeholder
// taking memrefs (`__oflow_rt_conv2d_<kind>_f32`): the operands are the
// tensors' own buffers (`to_buffer`, read only; bufferization copies only a
// tensor whose buffer is not dense), the result a fresh buffer the memory
// plan places; oflow-lower-runtime-calls later passes their addresses.
//
//===----------------------------------------------------------------------===//
#include "ConvUtils.h"

#include "oflow/Codegen/DeclareFunction.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace oflow::lowering {
namespace {

/// The runtime's geometry arguments, in its order: n, c, h, w, m, kh, kw,
/// oh, ow, strides, dilations, pads (top, left, bottom, right), groups.
SmallVector<int64_t> geometry(ArrayRef<int64_t> inShape,
                              ArrayRef<int64_t> weightShape,
                              ArrayRef<int64_t> outShape, const Window &window,
                              int64_t groups) {
  SmallVector<int64_t> g = {inShape[0],     inShape[1],     inShape[2],
                            inShape[3],     weightShape[0], weightShape[2],
                            weightShape[3], outShape[2],    outShape[3]};
  g.append(window.strides.begin(), window.strides.end());
  g.append(window.dilations.begin(), window.dilations.end());
  g.append(window.pads.begin(), window.pads.end());
  g.push_back(groups);
  return g;
}

/// Calls `__oflow_rt_conv2d_<kind>_f32` with `geom`, the buffers of
/// `inputs` and a fresh result buffer of `resultShape`.
Value callConv(OpBuilder &b, Location loc, Operation *anchor, StringRef kind,
               ArrayRef<int64_t> geom, ValueRange inputs,
               ArrayRef<int64_t> resultShape) {
  SmallVector<Value> scalars;
  for (int64_t v : geom)
    scalars.push_back(arith::ConstantIntOp::create(b, loc, v, 64));
  std::string name = ("__oflow_rt_conv2d_" + kind + "_f32").str();
  return callRuntimeLibrary(b, loc, anchor, name, scalars, inputs,
                            {RankedTensorType::get(resultShape, b.getF32Type())})
      .front();
}

} // namespace

bool convLowersThroughLibrary(Type elementType) { return elementType.isF32(); }

Value conv2dThroughLibrary(OpBuilder &b, Location loc, Operation *anchor,
                           Value x, Value w, Value bias,
                           ArrayRef<int64_t> outShape, const Window &window,
                           int64_t groups) {
  auto geom = geometry(shapeOf(x), shapeOf(w), outShape, window, groups);
  if (bias)
    return callConv(b, loc, anchor, "fwd_bias", geom, {x, w, bias}, outShape);
  return callConv(b, loc, anchor, "fwd", geom, {x, w}, outShape);
}

Value conv2dBackwardInputThroughLibrary(OpBuilder &b, Location loc,
                                        Operation *anchor, Value dy, Value w,
                                        ArrayRef<int64_t> inShape,
                                        const Window &window, int64_t groups) {
  auto geom = geometry(inShape, shapeOf(w), shapeOf(dy), window, groups);
  return callConv(b, loc, anchor, "bwd_data", geom, {dy, w}, inShape);
}

Value conv2dBackwardFilterThroughLibrary(OpBuilder &b, Location loc,
                                         Operation *anchor, Value dy, Value x,
                                         ArrayRef<int64_t> filterShape,
                                         const Window &window, int64_t groups) {
  auto geom = geometry(shapeOf(x), filterShape, shapeOf(dy), window, groups);
  return callConv(b, loc, anchor, "bwd_filter", geom, {dy, x}, filterShape);
}

} // namespace oflow::lowering
