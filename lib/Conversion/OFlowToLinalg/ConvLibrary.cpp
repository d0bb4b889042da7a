//===- ConvLibrary.cpp - f32 convolutions as oneDNN / cuDNN calls ---------===//
//
// With `conv-library=dnnl` (CPU) or `cudnn` (CUDA targets),
// oflow-lower-to-linalg turns each f32 conv2d and its two backward ops into
// one call of the runtime's convolution (oflow_rt/abi.h, oflow_rt_conv2d_*:
// oneDNN in the CPU runtime, which --target cuda-emulated links too, cuDNN
// in the CUDA runtime) instead of im2col + GEMM or direct loops. The call
// is emitted, as the collectives are, against a placeholder taking memrefs
// (`__oflow_rt_conv2d_<kind>_f32`): the operands are the tensors' own
// buffers (`to_buffer`, read only; bufferization copies only a tensor whose
// buffer is not dense), the result a fresh buffer the memory plan places,
// and so is the workspace (a second, unused result: the plan gives it the
// call's duration only); oflow-lower-runtime-calls later passes their
// addresses.
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
/// oh, ow, strides, dilations, pads (top, left, bottom, right), groups,
/// workspace bytes.
SmallVector<int64_t> geometry(const ConvLibraryOptions &conv,
                              ArrayRef<int64_t> inShape,
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
  g.push_back(conv.workspaceBytes);
  return g;
}

/// Calls `__oflow_rt_conv2d_<kind>_f32` with `geom`, the buffers of
/// `inputs`, a fresh result buffer of `resultShape` and the workspace (at
/// least one byte: every call passes a buffer, the runtime uses the bytes
/// `geom` says).
Value callConv(OpBuilder &b, Location loc, Operation *anchor,
               const ConvLibraryOptions &conv, StringRef kind,
               ArrayRef<int64_t> geom, ValueRange inputs,
               ArrayRef<int64_t> resultShape) {
  SmallVector<Value> scalars;
  for (int64_t v : geom)
    scalars.push_back(arith::ConstantIntOp::create(b, loc, v, 64));
  std::string name = ("__oflow_rt_conv2d_" + kind + "_f32").str();
  auto workspace = RankedTensorType::get(
      {std::max<int64_t>(conv.workspaceBytes, 1)}, b.getI8Type());
  return callRuntimeLibrary(
             b, loc, anchor, name, scalars, inputs,
             {RankedTensorType::get(resultShape, b.getF32Type()), workspace})
      .front();
}

} // namespace

bool convLowersThroughLibrary(const ConvLibraryOptions &conv, Type elementType,
                              const Window &window, ArrayRef<int64_t> weightShape,
                              int64_t groups) {
  if (conv.library.empty() || !elementType.isF32())
    return false;
  // cuDNN's 2-D convolution descriptor has one pad per spatial dimension.
  if (conv.library == "cudnn")
    return window.pads.size() == 4 && window.pads[0] == window.pads[2] &&
           window.pads[1] == window.pads[3];
  // oneDNN 2.6 has no direct kernel for a dilated depthwise convolution's
  // backward passes: both run through its GEMM fallback, one small GEMM per
  // channel (`x64:gemm:jit` in ONEDNN_VERBOSE). LR-ASPP's three 5x5
  // depthwise convolutions of dilation 2 on 4x4 maps (672-960 channels,
  // batch 4) took 1.3-1.9 ms a pass there, 10.5 ms of a 46 ms step, for
  // 1.5 M multiply-adds each; oflow's loops run all three directions in
  // less (the step measured 33-52 -> 27-45 ms in five interleaved pairs on
  // this noisy 2-vCPU machine, docs/benchmarks.md).
  bool depthwise = weightShape.size() == 4 && weightShape[1] == 1 &&
                   weightShape[0] == groups && groups > 1;
  bool dilated = llvm::any_of(window.dilations, [](int64_t d) { return d > 1; });
  return !(depthwise && dilated);
}

Value conv2dThroughLibrary(OpBuilder &b, Location loc, Operation *anchor,
                           const ConvLibraryOptions &conv, Value x, Value w,
                           Value bias, ArrayRef<int64_t> outShape,
                           const Window &window, int64_t groups) {
  auto geom = geometry(conv, shapeOf(x), shapeOf(w), outShape, window, groups);
  if (bias)
    return callConv(b, loc, anchor, conv, "fwd_bias", geom, {x, w, bias},
                    outShape);
  return callConv(b, loc, anchor, conv, "fwd", geom, {x, w}, outShape);
}

Value conv2dBackwardInputThroughLibrary(OpBuilder &b, Location loc,
                                        Operation *anchor,
                                        const ConvLibraryOptions &conv,
                                        Value dy, Value w,
                                        ArrayRef<int64_t> inShape,
                                        const Window &window, int64_t groups) {
  auto geom = geometry(conv, inShape, shapeOf(w), shapeOf(dy), window, groups);
  return callConv(b, loc, anchor, conv, "bwd_data", geom, {dy, w}, inShape);
}

Value conv2dBackwardFilterThroughLibrary(OpBuilder &b, Location loc,
                                         Operation *anchor,
                                         const ConvLibraryOptions &conv,
                                         Value dy, Value x,
                                         ArrayRef<int64_t> filterShape,
                                         const Window &window, int64_t groups) {
  auto geom = geometry(conv, shapeOf(x), filterShape, shapeOf(dy), window, groups);
  return callConv(b, loc, anchor, conv, "bwd_filter", geom, {dy, x},
                  filterShape);
}

} // namespace oflow::lowering
