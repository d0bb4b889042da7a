//===- ConvUtils.h - window geometry shared by the conv and pool lowerings -===//
//
// ConvPool.cpp lowers convolutions and pooling; Im2Col.cpp lowers f32
// convolutions through GEMMs, ConvLibrary.cpp through oneDNN calls. Both pad NCHW inputs and gather over windows
// with the pieces declared here. Internal to the OFlowToLinalg library.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_CONVERSION_OFLOWTOLINALG_CONVUTILS_H
#define OFLOW_LIB_CONVERSION_OFLOWTOLINALG_CONVUTILS_H

#include "LoweringUtils.h"

namespace oflow::lowering {

/// Window geometry of one op: [top, left, bottom, right] pads, per-dim
/// strides, dilations, kernel sizes.
struct Window {
  SmallVector<int64_t, 2> kernel, strides, dilations;
  SmallVector<int64_t, 4> pads;
};

// Defined in ConvPool.cpp.

/// Pads the spatial dims of an NCHW tensor with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, Value value);

/// dx[n, c, h, w] = sum over the window positions (kh, kw) whose window
/// (oh, ow) reads input element (h, w) of contribution(n, c, oh, ow, kh, kw).
Value sumOverWindows(
    OpBuilder &b, Location loc, ArrayRef<int64_t> inShape,
    ArrayRef<int64_t> outShape, Type t, const Window &w,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> at)> contribution);

// Defined in Im2Col.cpp.

/// Whether a convolution with `weightShape` [M, C/groups, kH, kW] lowers
/// through im2col and batched GEMMs: f32 (the BLAS calls are sgemm) with
/// more than one output channel per group (a depthwise convolution would
/// make one matrix-vector product per image and channel, slower than the
/// direct loops).
bool convLowersThroughGemm(Type elementType, ArrayRef<int64_t> weightShape,
                           int64_t groups);

/// y = conv(x, w) + bias (bias may be null) of shape `outShape`.
Value conv2dThroughGemm(OpBuilder &b, Location loc, Value x, Value w,
                        Value bias, ArrayRef<int64_t> outShape,
                        const Window &window, int64_t groups);

/// The gradient of a convolution with respect to its input of `inShape`.
Value conv2dBackwardInputThroughGemm(OpBuilder &b, Location loc, Value dy,
                                     Value w, ArrayRef<int64_t> inShape,
                                     const Window &window, int64_t groups);

/// The gradient of a convolution with respect to its filter of
/// `filterShape`.
Value conv2dBackwardFilterThroughGemm(OpBuilder &b, Location loc, Value dy,
                                      Value x, ArrayRef<int64_t> filterShape,
                                      const Window &window, int64_t groups);

// Defined in ConvLibrary.cpp (`conv-library=dnnl|cudnn`: the runtime's
// oneDNN or cuDNN calls).

/// Whether a convolution of `elementType` over `window` with weights of
/// `weightShape` in `groups` groups is a call of the library `conv` names:
/// f32 only (the runtimes' primitives are f32; other types keep the loops),
/// for cuDNN symmetric pads only, and for oneDNN not a dilated depthwise
/// convolution (see ConvLibrary.cpp).
bool convLowersThroughLibrary(const ConvLibraryOptions &conv, Type elementType,
                              const Window &window, ArrayRef<int64_t> weightShape,
                              int64_t groups);

/// y = conv(x, w) + bias (bias may be null) as one library call. `anchor`:
/// an op of the module that gets the call's declaration.
Value conv2dThroughLibrary(OpBuilder &b, Location loc, Operation *anchor,
                           const ConvLibraryOptions &conv, Value x, Value w,
                           Value bias, ArrayRef<int64_t> outShape,
                           const Window &window, int64_t groups);

/// The gradient with respect to the input of `inShape`, as one call.
Value conv2dBackwardInputThroughLibrary(OpBuilder &b, Location loc,
                                        Operation *anchor,
                                        const ConvLibraryOptions &conv,
                                        Value dy, Value w,
                                        ArrayRef<int64_t> inShape,
                                        const Window &window, int64_t groups);

/// The gradient with respect to the filter of `filterShape`, as one call.
Value conv2dBackwardFilterThroughLibrary(OpBuilder &b, Location loc,
                                         Operation *anchor,
                                         const ConvLibraryOptions &conv,
                                         Value dy, Value x,
                                         ArrayRef<int64_t> filterShape,
                                         const Window &window, int64_t groups);

} // namespace oflow::lowering

#endif
