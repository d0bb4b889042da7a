//===- OnnxOpConverters.cpp - ONNX nodes into oflow ops -------------------===//
//
// One converter per ONNX op type (default domain, opsets 11-17). Converters
// resolve ONNX's attribute defaults, negative axes and constant inputs into
// the explicit form of the oflow ops; anything they cannot express is
// reported against the node, never silently changed.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::import {
namespace {

using Ctx = NodeContext;

LogicalResult setResult(Ctx &c, Operation *op) {
  if (!op)
    return failure();
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    c.setOutput(i, op->getResult(i));
  return success();
}

/// Fails when an optional output that we do not produce is consumed.
LogicalResult onlyOutputs(Ctx &c, int produced, StringRef what) {
  for (int i = produced; i < c.numOutputs(); ++i)
    if (c.outputUsed(i))
      return c.unsupported("output #" + Twine(i) + " (" + what +
                           ") is not supported");
  return success();
}

std::string onnxTypeNameOf(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

DenseI64ArrayAttr i64s(Ctx &c, ArrayRef<int64_t> v) {
  return DenseI64ArrayAttr::get(c.ctx(), v);
}

template <typename OpT>
LogicalResult unary(Ctx &c) {
  return setResult(c, c.create<OpT>(c.input(0)));
}

template <typename OpT>
LogicalResult binary(Ctx &c) {
  return setResult(c, c.create<OpT>({c.input(0), c.input(1)}));
}

/// Variadic Max/Min/Sum fold pairwise.
template <typename OpT>
LogicalResult variadic(Ctx &c) {
  Value acc = c.input(0);
  for (int i = 1; i < c.numInputs() && acc; ++i)
    if (auto op = c.create<OpT>({acc, c.input(i)}))
      acc = op;
    else
      return failure();
  c.setOutput(0, acc);
  return success(static_cast<bool>(acc));
}

LogicalResult convertMean(Ctx &c) {
  Value sum = c.input(0);
  for (int i = 1; i < c.numInputs() && sum; ++i)
    sum = c.create<AddOp>({sum, c.input(i)});
  if (!sum)
    return failure();
  auto elt = cast<RankedTensorType>(sum.getType()).getElementType();
  if (!isa<FloatType>(elt))
    return c.unsupported("Mean of integer tensors is not supported");
  auto n = ConstantOp::create(
      c.builder(), c.loc(),
      DenseElementsAttr::get(RankedTensorType::get({}, elt),
                             FloatAttr::get(elt, c.numInputs())));
  return setResult(c, c.create<DivOp>({sum, n}));
}

LogicalResult identity(Ctx &c) {
  c.setOutput(0, c.input(0));
  return success();
}

template <ComparePredicate P>
LogicalResult compare(Ctx &c) {
  return setResult(
      c, c.create<CompareOp>(
             {c.input(0), c.input(1)},
             {c.named("predicate",
                      ComparePredicateAttr::get(c.ctx(), P))}));
}

LogicalResult convertConstant(Ctx &c) {
  const onnx::AttributeProto *a = nullptr;
  for (const auto &attr : c.node().attribute())
    a = &attr;
  if (!a || c.node().attribute_size() != 1)
    return c.unsupported("expects exactly one value attribute");
  Builder b(c.ctx());
  DenseElementsAttr value;
  StringRef name = a->name();
  if (name == "value") {
    std::string error;
    ElementsAttr t = readTensor(c.ctx(), a->t(), "", false, "", error);
    if (!t)
      return c.unsupported(error);
    value = cast<DenseElementsAttr>(t);
  } else if (name == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   a->f());
  } else if (name == "value_floats") {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (name == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   static_cast<int64_t>(a->i()));
  } else if (name == "value_ints") {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getI64Type()),
        ArrayRef<int64_t>(v));
  } else {
    return c.unsupported("Constant attribute '" + name + "' is not supported");
  }
  c.setConstOutput(0, value);
  return success();
}

LogicalResult convertCast(Ctx &c) {
  Type to = convertElementType(c.ctx(), c.intAttr("to", 0));
  if (!to)
    return c.unsupported("cast to " + onnxTypeName(c.intAttr("to", 0)) +
                         " is not supported");
  Value x = c.input(0);
  if (cast<RankedTensorType>(x.getType()).getElementType() == to)
    return identity(c);
  return setResult(c, c.create<CastOp>(x, {c.named("to", TypeAttr::get(to))}));
}

/// A float scalar input that is a Constant or an initializer (a weight, its
/// data in a resource blob), for attribute-like inputs (Dropout's ratio).
std::optional<double> constFloatScalar(Ctx &c, int i) {
  if (!c.hasInput(i))
    return std::nullopt;
  std::optional<SmallVector<double>> v = constantFloats(c.input(i));
  if (!v || v->size() != 1)
    return std::nullopt;
  return v->front();
}

LogicalResult convertDropout(Ctx &c) {
  if (failed(onlyOutputs(c, 1, "mask")))
    return failure();
  // Opset 12+: ratio and training_mode are (constant) inputs. In inference
  // Dropout is the identity whatever the ratio.
  double ratio = 0.5;
  bool training = false;
  if (c.hasInput(2)) {
    DenseElementsAttr t = c.constValue(2);
    if (!t)
      return c.unsupported("training_mode must be a compile-time constant");
    training = *t.getValues<bool>().begin();
  }
  if (!training)
    return identity(c);
  if (std::optional<double> r = constFloatScalar(c, 1))
    ratio = *r;
  else if (c.hasInput(1))
    return c.unsupported("ratio must be a compile-time constant");
  if (ratio == 0.0)
    return identity(c);
  // A dropout without a seed still gets a fixed one, so runs are repeatable
  // (a stable hash: llvm::hash_value may be seeded per process). It is keyed
  // by the node's name, or by its (unique) output name when it has none, so
  // that two dropouts never share a mask.
  StringRef key = c.node().name().empty() ? StringRef(c.node().output(0))
                                          : StringRef(c.node().name());
  int64_t seed = c.hasAttr("seed")
                     ? c.intAttr("seed", 0)
                     : static_cast<int64_t>(llvm::xxh3_64bits(key) & 0x7fffffff);
  return setResult(c, c.create<DropoutOp>(
                          c.input(0),
                          {c.named("operandSegmentSizes",
                                   c.builder().getDenseI32ArrayAttr({1, 0, 0})),
                           c.named("ratio", c.builder().getF64FloatAttr(ratio)),
                           c.named("seed", c.builder().getI64IntegerAttr(seed))}));
}

LogicalResult convertMatMul(Ctx &c) {
  Value a = c.input(0), b = c.input(1);
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  // numpy semantics for 1-D operands: promote, multiply, drop the dim.
  bool squeezeA = ta.getRank() == 1, squeezeB = tb.getRank() == 1;
  if (squeezeA)
    a = c.create<UnsqueezeOp>(a, {c.named("axes", i64s(c, {0}))});
  if (squeezeB)
    b = c.create<UnsqueezeOp>(b, {c.named("axes", i64s(c, {1}))});
  if (!a || !b)
    return failure();
  Value r = c.create<MatmulOp>({a, b});
  if (!r)
    return failure();
  int64_t rank = cast<RankedTensorType>(r.getType()).getRank();
  SmallVector<int64_t> drop;
  if (squeezeA)
    drop.push_back(rank - 2);
  if (squeezeB)
    drop.push_back(rank - 1);
  if (!drop.empty())
    r = c.create<SqueezeOp>(r, {c.named("axes", i64s(c, drop))});
  c.setOutput(0, r);
  return success(static_cast<bool>(r));
}

LogicalResult convertGemm(Ctx &c) {
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  SmallVector<NamedAttribute> attrs = {
      c.named("alpha", c.builder().getF32FloatAttr(c.floatAttr("alpha", 1))),
      c.named("beta", c.builder().getF32FloatAttr(c.floatAttr("beta", 1)))};
  if (c.intAttr("transA", 0))
    attrs.push_back(c.named("transpose_a", c.builder().getUnitAttr()));
  if (c.intAttr("transB", 0))
    attrs.push_back(c.named("transpose_b", c.builder().getUnitAttr()));
  return setResult(c, c.create<GemmOp>(operands, attrs));
}

/// Axes of a Reduce*: an attribute before opset 13 (ReduceSum) / 18 (the
/// others), an optional input after. Empty means all axes, or nothing with
/// noop_with_empty_axes.
template <typename OpT>
LogicalResult convertReduce(Ctx &c) {
  bool axesAsInput = std::is_same_v<OpT, ReduceSumOp> && c.opset() >= 13;
  SmallVector<int64_t> axes;
  if (axesAsInput) {
    if (c.hasInput(1)) {
      auto v = c.constInts(1, "axes");
      if (failed(v))
        return failure();
      axes = *v;
    }
  } else {
    axes = c.intsAttr("axes");
  }
  RankedTensorType t = c.inputType(0);
  if (axes.empty()) {
    if (c.intAttr("noop_with_empty_axes", 0))
      return identity(c);
    for (int64_t d = 0; d < t.getRank(); ++d)
      axes.push_back(d);
  }
  for (int64_t &a : axes) {
    auto n = c.normalizeAxis(a, t.getRank());
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  if (t.getRank() == 0)
    return identity(c);
  return setResult(
      c, c.create<OpT>(c.input(0),
                       {c.named("axes", i64s(c, axes)),
                        c.named("keepdims", c.builder().getBoolAttr(
                                                c.intAttr("keepdims", 1)))}));
}

template <typename OpT>
LogicalResult convertSoftmax(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  int64_t dflt = c.opset() >= 13 ? -1 : 1;
  auto axis = c.normalizeAxis(c.intAttr("axis", dflt), t.getRank());
  if (failed(axis))
    return failure();
  // Before opset 13 the input is coerced to 2-D at `axis`: the same as
  // opset 13's only when axis is the last dim.
  if (c.opset() < 13 && *axis != t.getRank() - 1)
    return c.unsupported("opset " + Twine(c.opset()) + " " +
                         c.node().op_type() +
                         " over flattened trailing dims (axis " +
                         Twine(*axis) + " of rank " + Twine(t.getRank()) +
                         ") is not supported; export with opset >= 13");
  return setResult(c, c.create<OpT>(c.input(0),
                                    {c.named("axis", c.builder().getI64IntegerAttr(*axis))}));
}

LogicalResult convertLayerNorm(Ctx &c) {
  if (failed(onlyOutputs(c, 1, "mean / inverse std-dev")))
    return failure();
  RankedTensorType t = c.inputType(0);
  auto axis = c.normalizeAxis(c.intAttr("axis", -1), t.getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return setResult(
      c, c.create<LayerNormOp>(
             operands,
             {c.named("axis", c.builder().getI64IntegerAttr(*axis)),
              c.named("epsilon", c.builder().getF32FloatAttr(
                                     c.floatAttr("epsilon", 1e-5f)))}));
}

/// InstanceNormalization(x, scale[C], B[C]) normalizes each (image,
/// channel) over the axes from 2 on: a layer norm from axis 2 with a unit
/// scale, then the per-channel affine. PyTorch exports GroupNorm this way
/// too (x reshaped to [N, groups, -1], unit scale, then its own affine).
LogicalResult convertInstanceNorm(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  if (t.getRank() < 3)
    return c.unsupported("InstanceNormalization of a rank-" +
                         Twine(t.getRank()) + " input (needs N, C and at "
                         "least one spatial axis)");
  Type elt = t.getElementType();
  if (!isa<FloatType>(elt))
    return c.unsupported("InstanceNormalization of a non-float tensor");
  auto normShape = RankedTensorType::get(t.getShape().drop_front(2), elt);
  Value ones = ConstantOp::create(
      c.builder(), c.loc(),
      DenseElementsAttr::get(normShape, FloatAttr::get(elt, 1.0)));
  Value y = c.create<LayerNormOp>(
      {c.input(0), ones},
      {c.named("axis", c.builder().getI64IntegerAttr(2)),
       c.named("epsilon",
               c.builder().getF32FloatAttr(c.floatAttr("epsilon", 1e-5f)))});
  // scale and B as [C, 1, ...]: they broadcast over the spatial axes.
  SmallVector<int64_t> perChannel(t.getRank() - 1, 1);
  perChannel[0] = t.getDimSize(1);
  for (int input : {1, 2}) {
    if (!y)
      return failure();
    Value p = c.create<ReshapeOp>(c.input(input),
                                  {c.named("shape", i64s(c, perChannel))});
    if (!p)
      return failure();
    y = input == 1 ? Value(c.create<MulOp>({y, p})) : Value(c.create<AddOp>({y, p}));
  }
  if (!y)
    return failure();
  c.setOutput(0, y);
  return success();
}

LogicalResult convertBatchNorm(Ctx &c) {
  bool training = c.intAttr("training_mode", 0) != 0;
  if (c.opset() < 14 && c.numOutputs() > 1)
    training = true;
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i)
    operands.push_back(c.input(i));
  auto eps = c.named("epsilon",
                     c.builder().getF32FloatAttr(c.floatAttr("epsilon", 1e-5f)));
  if (!training)
    return setResult(c, c.create<BatchNormInferenceOp>(operands, {eps}));
  if (c.opset() < 14)
    return c.unsupported("training-mode BatchNormalization before opset 14 "
                         "(saved mean/var outputs) is not supported");
  auto momentum = c.named(
      "momentum", c.builder().getF32FloatAttr(c.floatAttr("momentum", 0.9f)));
  return setResult(c, c.create<BatchNormTrainingOp>(operands, {eps, momentum}));
}

/// Resolves auto_pad and explicit pads for a 2-D window op.
FailureOr<SmallVector<int64_t>> windowPads(Ctx &c, RankedTensorType in,
                                           ArrayRef<int64_t> kernel,
                                           ArrayRef<int64_t> strides,
                                           ArrayRef<int64_t> dilations) {
  std::string autoPad = c.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads = c.intsAttr("pads");
    if (pads.empty())
      pads.assign(4, 0);
    if (pads.size() != 4) {
      (void)c.unsupported("expects 4 pads for a 2-D window, got " +
                          Twine(pads.size()));
      return failure();
    }
    return pads;
  }
  if (autoPad == "VALID")
    return SmallVector<int64_t>(4, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    (void)c.unsupported("auto_pad '" + autoPad + "' is not supported");
    return failure();
  }
  SmallVector<int64_t> pads(4, 0);
  for (int d = 0; d < 2; ++d) {
    int64_t size = in.getDimSize(2 + d);
    int64_t out = (size + strides[d] - 1) / strides[d];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * strides[d] + dilations[d] * (kernel[d] - 1) + 1 - size);
    int64_t small = total / 2, large = total - small;
    pads[d] = autoPad == "SAME_UPPER" ? small : large;
    pads[d + 2] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

SmallVector<int64_t> orDefault(SmallVector<int64_t> v, int64_t fill) {
  if (v.empty())
    v.assign(2, fill);
  return v;
}

LogicalResult convertConv(Ctx &c) {
  RankedTensorType in = c.inputType(0), w = c.inputType(1);
  if (in.getRank() != 4)
    return c.unsupported(Twine(in.getRank() - 2) +
                         "-D convolution is not supported (only 2-D, NCHW)");
  SmallVector<int64_t> kernel = c.intsAttr("kernel_shape");
  if (kernel.empty())
    kernel = {w.getDimSize(2), w.getDimSize(3)};
  SmallVector<int64_t> strides = orDefault(c.intsAttr("strides"), 1);
  SmallVector<int64_t> dilations = orDefault(c.intsAttr("dilations"), 1);
  auto pads = windowPads(c, in, kernel, strides, dilations);
  if (failed(pads))
    return failure();
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return setResult(
      c, c.create<Conv2dOp>(
             operands,
             {c.named("strides", i64s(c, strides)), c.named("pads", i64s(c, *pads)),
              c.named("dilations", i64s(c, dilations)),
              c.named("groups", c.builder().getI64IntegerAttr(c.intAttr("group", 1)))}));
}

/// ConvTranspose(x, w[C_in, C_out/group, kH, kW]) is the input gradient of
/// the convolution from its output [N, C_out, OH, OW] to x: oflow's
/// conv2d_backward_input with x as the incoming gradient, where
/// OH = stride (H - 1) + output_padding + dilation (kH - 1) + 1 - pads.
/// With output_shape, or auto_pad SAME_UPPER / SAME_LOWER (output_shape
/// H * stride), the pads are ONNX's: total = stride (H - 1) + output_padding
/// + dilation (kH - 1) + 1 - output_shape, split evenly with the odd one at
/// the end (SAME_UPPER: at the start); a negative end pad is more
/// output_padding (rows no input reaches).
std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

LogicalResult convertConvTranspose(Ctx &c) {
  RankedTensorType in = c.inputType(0), w = c.inputType(1);
  if (in.getRank() != 4)
    return c.unsupported(Twine(in.getRank() - 2) +
                         "-D ConvTranspose is not supported (only 2-D, NCHW)");
  std::string autoPadAttr = c.stringAttr("auto_pad", "NOTSET");
  StringRef autoPad = autoPadAttr;
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID")
    return c.unsupported("ConvTranspose's auto_pad '" + autoPad +
                         "' is not one of NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  SmallVector<int64_t> outputShape = c.intsAttr("output_shape");
  if (outputShape.size() == 4)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != 2)
    return c.unsupported("ConvTranspose's output_shape must have 2 (spatial) "
                         "or 4 values");
  SmallVector<int64_t> strides = orDefault(c.intsAttr("strides"), 1);
  SmallVector<int64_t> dilations = orDefault(c.intsAttr("dilations"), 1);
  SmallVector<int64_t> pads = c.intsAttr("pads");
  if (pads.empty() || autoPad != "NOTSET")
    pads.assign(4, 0);
  SmallVector<int64_t> outPad = c.intsAttr("output_padding");
  if (outPad.empty())
    outPad.assign(2, 0);
  int64_t group = c.intAttr("group", 1);
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
      outPad.size() != 2)
    return c.unsupported("ConvTranspose expects 2 strides, dilations and "
                         "output_padding values and 4 pads");
  if (w.getRank() != 4 || group < 1 || w.getDimSize(0) != in.getDimSize(1))
    return c.unsupported("ConvTranspose's weight " + shapeText(w.getShape()) +
                         " does not fit its input " + shapeText(in.getShape()) +
                         " (expected [C_in, C_out / group, kH, kW] with C_in = " +
                         Twine(in.getDimSize(1)) + ")");
  for (int d = 0; d < 2; ++d) {
    if (outPad[d] < 0 || outPad[d] >= std::max(strides[d], dilations[d]))
      return c.unsupported("ConvTranspose's output_padding must be below the "
                           "stride or the dilation");
    int64_t target = !outputShape.empty() ? outputShape[d]
                     : autoPad.starts_with("SAME")
                         ? in.getDimSize(2 + d) * strides[d]
                         : -1;
    if (target < 0)
      continue;
    int64_t total = strides[d] * (in.getDimSize(2 + d) - 1) + outPad[d] +
                    dilations[d] * (w.getDimSize(2 + d) - 1) + 1 - target;
    // Floor halves, as ONNX's reference (Python's //) takes them.
    int64_t half = llvm::divideFloorSigned(total, int64_t(2));
    int64_t begin = autoPad == "SAME_UPPER" ? half : total - half;
    int64_t end = total - begin;
    if (begin < 0)
      return c.unsupported("ConvTranspose's output_shape " + Twine(target) +
                           " in spatial dim " + Twine(d) +
                           " would add output rows before the first one");
    if (end < 0) {
      outPad[d] -= end;
      end = 0;
    }
    pads[d] = begin;
    pads[d + 2] = end;
  }
  SmallVector<int64_t> outShape = {in.getDimSize(0), w.getDimSize(1) * group};
  SmallVector<int64_t> convPads = pads;
  for (int d = 0; d < 2; ++d) {
    outShape.push_back(strides[d] * (in.getDimSize(2 + d) - 1) + outPad[d] +
                       dilations[d] * (w.getDimSize(2 + d) - 1) + 1 - pads[d] -
                       pads[d + 2]);
    if (outShape.back() < 1)
      return c.unsupported("ConvTranspose's pads leave no output");
    // The output_padding rows and columns are the convolution's unread
    // tail: up to stride - 1 of them the convolution's floor division
    // leaves unread by itself; its end pad gives up the rest.
    convPads[d + 2] -= std::max<int64_t>(0, outPad[d] - (strides[d] - 1));
    if (convPads[d + 2] < 0)
      return c.unsupported("ConvTranspose's output_padding " + Twine(outPad[d]) +
                           " in spatial dim " + Twine(d) +
                           " exceeds its stride - 1 plus its end pad");
  }
  Value y = c.create<Conv2dBackwardInputOp>(
      {c.input(0), c.input(1)},
      {c.named("input_shape", i64s(c, outShape)),
       c.named("strides", i64s(c, strides)), c.named("pads", i64s(c, convPads)),
       c.named("dilations", i64s(c, dilations)),
       c.named("groups", c.builder().getI64IntegerAttr(group))});
  if (y && c.hasInput(2)) {
    Value b = c.create<ReshapeOp>(c.input(2),
                                  {c.named("shape", i64s(c, {outShape[1], 1, 1}))});
    y = b ? Value(c.create<AddOp>({y, b})) : Value();
  }
  if (!y)
    return failure();
  c.setOutput(0, y);
  return success();
}

template <typename OpT>
LogicalResult convertPool(Ctx &c) {
  constexpr bool isMax = std::is_same_v<OpT, MaxPool2dOp>;
  if (failed(onlyOutputs(c, 1, "indices")))
    return failure();
  RankedTensorType in = c.inputType(0);
  if (in.getRank() != 4)
    return c.unsupported(Twine(in.getRank() - 2) +
                         "-D pooling is not supported (only 2-D, NCHW)");
  if (!isa<FloatType>(in.getElementType()))
    return c.unsupported("pooling of " + onnxTypeNameOf(in.getElementType()) +
                         " tensors is not supported (floating point only)");
  if (c.intAttr("storage_order", 0) != 0)
    return c.unsupported("column-major storage_order is not supported");
  SmallVector<int64_t> kernel = c.intsAttr("kernel_shape");
  SmallVector<int64_t> strides = orDefault(c.intsAttr("strides"), 1);
  SmallVector<int64_t> dilations = orDefault(c.intsAttr("dilations"), 1);
  if (!isMax && llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return c.unsupported("dilated average pooling is not supported");
  if (kernel.size() != 2)
    return c.unsupported("expects a 2-D kernel_shape");
  auto pads = windowPads(c, in, kernel, strides, dilations);
  if (failed(pads))
    return failure();
  SmallVector<NamedAttribute> attrs = {c.named("kernel", i64s(c, kernel)),
                                       c.named("strides", i64s(c, strides)),
                                       c.named("pads", i64s(c, *pads))};
  if (c.intAttr("ceil_mode", 0))
    attrs.push_back(c.named("ceil_mode", c.builder().getUnitAttr()));
  if constexpr (isMax) {
    attrs.push_back(c.named("dilations", i64s(c, dilations)));
  } else {
    if (c.intAttr("count_include_pad", 0))
      attrs.push_back(c.named("count_include_pad", c.builder().getUnitAttr()));
  }
  return setResult(c, c.create<OpT>(c.input(0), attrs));
}

LogicalResult convertReshape(Ctx &c) {
  auto shape = c.constInts(1, "the target shape");
  if (failed(shape))
    return failure();
  RankedTensorType t = c.inputType(0);
  SmallVector<int64_t> dims;
  int64_t inferAt = -1, known = 1;
  bool allowZero = c.intAttr("allowzero", 0);
  for (auto [i, entry] : llvm::enumerate(*shape)) {
    int64_t d = entry;
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(t.getRank()))
        return c.unsupported("shape entry " + Twine(i) +
                             " copies a dimension the input does not have");
      d = t.getDimSize(i);
    }
    if (d == -1) {
      if (inferAt >= 0)
        return c.unsupported("the target shape has two -1 entries");
      inferAt = i;
      dims.push_back(1);
      continue;
    }
    if (d < 0)
      return c.unsupported("invalid target dimension " + Twine(d));
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return c.unsupported("the target shape has more than 2^63 elements");
    dims.push_back(d);
    known *= d;
  }
  if (inferAt >= 0) {
    if (known == 0 || t.getNumElements() % known)
      return c.unsupported("cannot infer the -1 dimension of the target shape");
    dims[inferAt] = t.getNumElements() / known;
  }
  if (ArrayRef<int64_t>(dims) == t.getShape())
    return identity(c);
  return setResult(c, c.create<ReshapeOp>(c.input(0),
                                          {c.named("shape", i64s(c, dims))}));
}

LogicalResult convertFlatten(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  int64_t axis = c.intAttr("axis", 1);
  if (axis < 0)
    axis += t.getRank();
  return setResult(c, c.create<FlattenOp>(
                          c.input(0),
                          {c.named("axis", c.builder().getI64IntegerAttr(axis))}));
}

LogicalResult convertTranspose(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  SmallVector<int64_t> perm = c.intsAttr("perm");
  if (!c.hasAttr("perm"))
    for (int64_t d = t.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  for (int64_t &p : perm)
    if (p < 0)
      p += t.getRank();
  return setResult(c, c.create<TransposeOp>(c.input(0),
                                            {c.named("perm", i64s(c, perm))}));
}

FailureOr<SmallVector<int64_t>> squeezeAxes(Ctx &c) {
  if (c.opset() >= 13) {
    if (!c.hasInput(1))
      return SmallVector<int64_t>();
    return c.constInts(1, "axes");
  }
  return c.intsAttr("axes");
}

LogicalResult convertSqueeze(Ctx &c) {
  auto axes = squeezeAxes(c);
  if (failed(axes))
    return failure();
  RankedTensorType t = c.inputType(0);
  SmallVector<int64_t> norm;
  if (axes->empty()) {
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) == 1)
        norm.push_back(d);
  }
  for (int64_t a : *axes) {
    auto n = c.normalizeAxis(a, t.getRank());
    if (failed(n))
      return failure();
    norm.push_back(*n);
  }
  llvm::sort(norm);
  return setResult(c, c.create<SqueezeOp>(c.input(0),
                                          {c.named("axes", i64s(c, norm))}));
}

LogicalResult convertUnsqueeze(Ctx &c) {
  auto axes = squeezeAxes(c);
  if (failed(axes))
    return failure();
  int64_t rank = c.inputType(0).getRank() + axes->size();
  SmallVector<int64_t> norm;
  for (int64_t a : *axes) {
    auto n = c.normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    norm.push_back(*n);
  }
  llvm::sort(norm);
  return setResult(c, c.create<UnsqueezeOp>(c.input(0),
                                            {c.named("axes", i64s(c, norm))}));
}

LogicalResult convertExpand(Ctx &c) {
  auto shape = c.constInts(1, "the target shape");
  if (failed(shape))
    return failure();
  return setResult(c, c.create<ExpandOp>(c.input(0),
                                         {c.named("shape", i64s(c, *shape))}));
}

LogicalResult convertConcat(Ctx &c) {
  SmallVector<Value> inputs;
  for (int i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i))
      inputs.push_back(c.input(i));
  int64_t rank = c.inputType(0).getRank();
  auto axis = c.normalizeAxis(c.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  return setResult(c, c.create<ConcatOp>(
                          inputs,
                          {c.named("axis", c.builder().getI64IntegerAttr(*axis))}));
}

LogicalResult convertSlice(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  int64_t rank = t.getRank();
  // Before opset 10 starts, ends and axes are attributes.
  bool attrForm = c.opset() < 10;
  FailureOr<SmallVector<int64_t>> starts =
      attrForm ? FailureOr<SmallVector<int64_t>>(c.intsAttr("starts"))
               : c.constInts(1, "starts");
  FailureOr<SmallVector<int64_t>> ends =
      attrForm ? FailureOr<SmallVector<int64_t>>(c.intsAttr("ends"))
               : c.constInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (attrForm && c.hasAttr("axes")) {
    axes = c.intsAttr("axes");
  } else if (!attrForm && c.hasInput(3)) {
    auto v = c.constInts(3, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (!attrForm && c.hasInput(4)) {
    auto v = c.constInts(4, "steps");
    if (failed(v))
      return failure();
    steps = *v;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return c.unsupported("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offsets(rank, 0), sizes(t.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = c.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t dim = t.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return c.unsupported("slice step is zero");
    // ONNX clamping: negative indices count from the end; then clamp to
    // [0, dim] for positive steps and [-1, dim-1] for negative ones.
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += dim;
      return step > 0 ? std::clamp<int64_t>(v, 0, dim)
                      : std::clamp<int64_t>(v, -1, dim - 1);
    };
    int64_t start = clampIndex((*starts)[i]), end = clampIndex((*ends)[i]);
    int64_t count =
        step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                 : std::max<int64_t>(0, (start - end - step - 1) / -step);
    offsets[*axis] = count ? start : 0;
    sizes[*axis] = count;
    strides[*axis] = step;
  }
  if (ArrayRef<int64_t>(sizes) == t.getShape() &&
      llvm::all_of(strides, [](int64_t s) { return s == 1; }))
    return identity(c);
  return setResult(c, c.create<SliceOp>(c.input(0),
                                        {c.named("offsets", i64s(c, offsets)),
                                         c.named("sizes", i64s(c, sizes)),
                                         c.named("strides", i64s(c, strides))}));
}

LogicalResult convertSplit(Ctx &c) {
  RankedTensorType t = c.inputType(0);
  auto axis = c.normalizeAxis(c.intAttr("axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> sizes;
  if (c.opset() >= 13 && c.hasInput(1)) {
    auto v = c.constInts(1, "split sizes");
    if (failed(v))
      return failure();
    sizes = *v;
  } else if (c.opset() < 13) {
    sizes = c.intsAttr("split");
  }
  if (sizes.empty()) {
    int64_t n = c.numOutputs(), dim = t.getDimSize(*axis);
    if (dim % n)
      return c.unsupported("cannot split axis " + Twine(*axis) + " of size " +
                           Twine(dim) + " into " + Twine(n) + " equal parts");
    sizes.assign(n, dim / n);
  }
  return setResult(
      c, c.create<SplitOp>(c.input(0),
                           {c.named("axis", c.builder().getI64IntegerAttr(*axis)),
                            c.named("sizes", i64s(c, sizes))}));
}

LogicalResult convertGather(Ctx &c) {
  auto axis = c.normalizeAxis(c.intAttr("axis", 0), c.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return setResult(c, c.create<GatherOp>(
                          {c.input(0), c.input(1)},
                          {c.named("axis", c.builder().getI64IntegerAttr(*axis))}));
}

LogicalResult convertTrilu(Ctx &c) {
  int64_t k = 0;
  if (c.hasInput(1)) {
    auto v = c.constInts(1, "k");
    if (failed(v))
      return failure();
    k = v->empty() ? 0 : (*v)[0];
  }
  return setResult(
      c, c.create<TriluOp>(c.input(0),
                           {c.named("upper", c.builder().getBoolAttr(
                                                 c.intAttr("upper", 1))),
                            c.named("k", c.builder().getI64IntegerAttr(k))}));
}

FailureOr<LossReduction> reduction(Ctx &c) {
  std::string r = c.stringAttr("reduction", "mean");
  if (r == "mean")
    return LossReduction::mean;
  if (r == "sum")
    return LossReduction::sum;
  if (r == "none")
    return LossReduction::none;
  (void)c.unsupported("reduction '" + r + "' is not supported");
  return failure();
}

template <typename OpT>
LogicalResult convertClassLoss(Ctx &c) {
  constexpr bool isCE = std::is_same_v<OpT, SoftmaxCrossEntropyOp>;
  if (c.hasInput(2))
    return c.unsupported("per-class loss weights are not supported");
  auto red = reduction(c);
  if (failed(red))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      c.named("reduction", LossReductionAttr::get(c.ctx(), *red))};
  if (c.hasAttr("ignore_index"))
    attrs.push_back(c.named("ignore_index", c.builder().getI64IntegerAttr(
                                                c.intAttr("ignore_index", 0))));
  if (failed(setResult(c, c.create<OpT>({c.input(0), c.input(1)}, attrs))))
    return failure();
  if (isCE && c.outputUsed(1)) {
    // The log-probabilities output: log_softmax over the class axis.
    auto logp = c.create<LogSoftmaxOp>(
        c.input(0), {c.named("axis", c.builder().getI64IntegerAttr(1))});
    if (!logp)
      return failure();
    c.setOutput(1, logp);
  }
  return success();
}

/// ONNX Pow allows an exponent of another type; oflow.pow takes one float
/// type, so the exponent is cast to the base's.
LogicalResult convertPow(Ctx &c) {
  Value base = c.input(0), exponent = c.input(1);
  Type bt = cast<RankedTensorType>(base.getType()).getElementType();
  Type et = cast<RankedTensorType>(exponent.getType()).getElementType();
  if (!isa<FloatType>(bt))
    return c.unsupported("integer Pow (base " +
                         onnxTypeNameOf(bt) + ") is not supported");
  if (et != bt)
    exponent = c.create<CastOp>(exponent, {c.named("to", TypeAttr::get(bt))});
  if (!exponent)
    return failure();
  return setResult(c, c.create<PowOp>({base, exponent}));
}

/// Clip(x, lo, hi) = min(max(x, lo), hi), bounds optional (torch's ReLU6).
LogicalResult convertClip(Ctx &c) {
  Value x = c.input(0);
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  auto bound = [&](int input, const char *attrName) -> Value {
    if (c.opset() >= 11)
      return c.hasInput(input) ? c.input(input) : Value();
    if (!c.hasAttr(attrName) || !isa<FloatType>(elt))
      return Value();
    return ConstantOp::create(
        c.builder(), c.loc(),
        DenseElementsAttr::get(RankedTensorType::get({}, elt),
                               FloatAttr::get(elt, c.floatAttr(attrName, 0))));
  };
  if (Value lo = bound(1, "min"))
    x = x ? Value(c.create<MaxOp>({x, lo})) : Value();
  if (Value hi = bound(2, "max"))
    x = x ? Value(c.create<MinOp>({x, hi})) : Value();
  if (!x)
    return failure();
  c.setOutput(0, x);
  return success();
}

/// max(0, min(1, alpha x + beta)), the piecewise-linear sigmoid of
/// HardSigmoid and HardSwish, from oflow's own ops (their gradients with
/// it: alpha inside (0, 1), 0 outside, as torch's hardsigmoid).
Value hardSigmoid(Ctx &c, Value x, float alpha, float beta) {
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isa<FloatType>(elt))
    return Value();
  auto scalar = [&](double v) -> Value {
    return ConstantOp::create(
        c.builder(), c.loc(),
        DenseElementsAttr::get(RankedTensorType::get({}, elt),
                               FloatAttr::get(elt, v)));
  };
  Value y = c.create<MulOp>({x, scalar(alpha)});
  if (y)
    y = c.create<AddOp>({y, scalar(beta)});
  if (y)
    y = c.create<MinOp>({y, scalar(1)});
  if (y)
    y = c.create<MaxOp>({y, scalar(0)});
  return y;
}

LogicalResult convertHardSigmoid(Ctx &c) {
  Value x = c.input(0);
  if (!isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return c.unsupported("HardSigmoid of a non-float tensor");
  Value y = hardSigmoid(c, x, c.floatAttr("alpha", 0.2f),
                        c.floatAttr("beta", 0.5f));
  if (!y)
    return failure();
  c.setOutput(0, y);
  return success();
}

/// HardSwish(x) = x * HardSigmoid(x) with alpha 1/6, beta 1/2 (MobileNetV3).
LogicalResult convertHardSwish(Ctx &c) {
  Value x = c.input(0);
  if (!isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return c.unsupported("HardSwish of a non-float tensor");
  Value gate = hardSigmoid(c, x, 1.0f / 6.0f, 0.5f);
  if (!gate)
    return failure();
  return setResult(c, c.create<MulOp>({x, gate}));
}

LogicalResult convertWhere(Ctx &c) {
  return setResult(c, c.create<WhereOp>({c.input(0), c.input(1), c.input(2)}));
}

/// Pad with all-zero pads is the identity (torch emits it before pooling).
LogicalResult convertPad(Ctx &c) {
  if (c.stringAttr("mode", "constant") != "constant")
    return c.unsupported("only constant padding is supported");
  auto pads = c.opset() < 11
                  ? FailureOr<SmallVector<int64_t>>(c.intsAttr("pads"))
                  : c.constInts(1, "pads");
  if (failed(pads))
    return failure();
  if (llvm::any_of(*pads, [](int64_t p) { return p != 0; }))
    return c.unsupported("non-zero Pad is not supported; fold it into the "
                         "following Conv/Pool pads");
  return identity(c);
}

LogicalResult onlyFolded(Ctx &c) {
  return c.unsupported("only supported when its inputs are compile-time "
                       "constants (static shapes)");
}

LogicalResult rangeOnlyFolded(Ctx &c) {
  return c.unsupported("only supported when start, limit and delta are "
                       "compile-time integer constants (delta non-zero)");
}

} // namespace

NodeConverter lookupConverter(StringRef domain, StringRef opType) {
  if (!domain.empty() && domain != "ai.onnx")
    return nullptr;
  return llvm::StringSwitch<NodeConverter>(opType)
      .Case("Identity", identity)
      .Case("Constant", convertConstant)
      .Case("Neg", unary<NegOp>)
      .Case("Exp", unary<ExpOp>)
      .Case("Log", unary<LogOp>)
      .Case("Sqrt", unary<SqrtOp>)
      .Case("Reciprocal", unary<ReciprocalOp>)
      .Case("Tanh", unary<TanhOp>)
      .Case("Sigmoid", unary<SigmoidOp>)
      .Case("Relu", unary<ReluOp>)
      .Case("Erf", unary<ErfOp>)
      .Case("Abs", unary<AbsOp>)
      .Case("Not", unary<NotOp>)
      .Case("Add", binary<AddOp>)
      .Case("Sub", binary<SubOp>)
      .Case("Mul", binary<MulOp>)
      .Case("Div", binary<DivOp>)
      .Case("Pow", convertPow)
      .Case("Clip", convertClip)
      .Case("HardSigmoid", convertHardSigmoid)
      .Case("HardSwish", convertHardSwish)
      .Case("Max", variadic<MaxOp>)
      .Case("Min", variadic<MinOp>)
      .Case("Sum", variadic<AddOp>)
      .Case("Mean", convertMean)
      .Case("Equal", compare<ComparePredicate::eq>)
      .Case("Less", compare<ComparePredicate::lt>)
      .Case("LessOrEqual", compare<ComparePredicate::le>)
      .Case("Greater", compare<ComparePredicate::gt>)
      .Case("GreaterOrEqual", compare<ComparePredicate::ge>)
      .Case("Where", convertWhere)
      .Case("Cast", convertCast)
      .Case("Dropout", convertDropout)
      .Case("MatMul", convertMatMul)
      .Case("Einsum", convertEinsum)
      .Case("Gemm", convertGemm)
      .Case("ReduceSum", convertReduce<ReduceSumOp>)
      .Case("ReduceMean", convertReduce<ReduceMeanOp>)
      .Case("ReduceMax", convertReduce<ReduceMaxOp>)
      .Case("Softmax", convertSoftmax<SoftmaxOp>)
      .Case("LogSoftmax", convertSoftmax<LogSoftmaxOp>)
      .Case("LayerNormalization", convertLayerNorm)
      .Case("BatchNormalization", convertBatchNorm)
      .Case("InstanceNormalization", convertInstanceNorm)
      .Case("Conv", convertConv)
      .Case("ConvTranspose", convertConvTranspose)
      .Case("Resize", convertResize)
      .Case("Upsample", convertUpsample)
      .Case("MaxPool", convertPool<MaxPool2dOp>)
      .Case("AveragePool", convertPool<AvgPool2dOp>)
      .Case("GlobalAveragePool", unary<GlobalAvgPoolOp>)
      .Case("Reshape", convertReshape)
      .Case("Flatten", convertFlatten)
      .Case("Transpose", convertTranspose)
      .Case("Squeeze", convertSqueeze)
      .Case("Unsqueeze", convertUnsqueeze)
      .Case("Expand", convertExpand)
      .Case("Concat", convertConcat)
      .Case("Slice", convertSlice)
      .Case("Split", convertSplit)
      .Case("Gather", convertGather)
      .Case("Trilu", convertTrilu)
      .Case("SoftmaxCrossEntropyLoss", convertClassLoss<SoftmaxCrossEntropyOp>)
      .Case("NegativeLogLikelihoodLoss", convertClassLoss<NllLossOp>)
      .Case("Pad", convertPad)
      // Only ever folded at compile time (IntegerFolding.cpp); reaching the
      // converter means an input was not a compile-time constant.
      .Case("Shape", onlyFolded)
      .Case("Size", onlyFolded)
      .Case("Range", rangeOnlyFolded)
      .Case("ConstantOfShape", onlyFolded)
      .Default(nullptr);
}

} // namespace oflow::import
