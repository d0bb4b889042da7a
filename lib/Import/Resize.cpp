//===- Resize.cpp - ONNX Resize and Upsample as two matrix products -------===//
//
// Nearest and linear resizing are linear maps along each resized axis, and
// separable: Y = A_h X A_w^T with A [out, in] holding each output's taps (a
// single 1 for nearest, 1 - r and r for linear). The importer builds the two
// constant matrices from the ONNX attributes and multiplies, so the resize
// needs no op of its own: its gradient (A_h^T dY A_w), its SBP signatures
// and its kernels on every target are the matmul's. The taps are exact (a
// product with 0 adds 0), so the numbers are the direct interpolation's up
// to the order of the two taps' sum.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "OFlow/OFlowOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::import {
namespace {

struct ResizeMode {
  std::string mode;       // nearest | linear
  std::string coordinate; // how an output index maps to an input coordinate
  std::string nearest;    // how nearest rounds that coordinate
};

/// The input coordinate of output index `o` (ONNX's
/// coordinate_transformation_mode), for an axis resized from `in` with
/// `scale` (the given scale, or out / in when sizes are given). ONNX's
/// length_resized is in * scale, unrounded (its align_corners test
/// downsamples 4 by 0.6 with the divisor 1.4, not 1).
double sourceCoordinate(const ResizeMode &m, int64_t o, int64_t in, double scale) {
  double x = static_cast<double>(o);
  double resized = static_cast<double>(in) * scale;
  if (m.coordinate == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (m.coordinate == "pytorch_half_pixel")
    return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m.coordinate == "align_corners")
    return resized == 1 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1);
  if (m.coordinate == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  return x / scale; // asymmetric
}

int64_t roundNearest(const ResizeMode &m, double x) {
  if (m.nearest == "floor")
    return static_cast<int64_t>(std::floor(x));
  if (m.nearest == "ceil")
    return static_cast<int64_t>(std::ceil(x));
  double f = std::floor(x);
  if (x - f == 0.5)
    return static_cast<int64_t>(m.nearest == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

/// The [out, in] interpolation matrix of one axis, row-major. Taps past the
/// edges read the edge (ONNX's reference pads by replication; PyTorch clamps
/// the coordinate, which gives the same weights).
std::vector<float> interpolationMatrix(const ResizeMode &m, int64_t in,
                                       int64_t out, double scale) {
  std::vector<float> a(static_cast<size_t>(out * in), 0.0f);
  auto clampIndex = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    double x = sourceCoordinate(m, o, in, scale);
    float *row = a.data() + o * in;
    if (m.mode == "nearest") {
      row[clampIndex(roundNearest(m, x))] = 1.0f;
      continue;
    }
    double x0 = std::floor(x), r = x - x0;
    row[clampIndex(static_cast<int64_t>(x0))] += static_cast<float>(1.0 - r);
    row[clampIndex(static_cast<int64_t>(x0) + 1)] += static_cast<float>(r);
  }
  return a;
}

Value constantMatrix(NodeContext &c, Type elt, int64_t rows, int64_t cols,
                     const std::vector<float> &values) {
  auto type = RankedTensorType::get({rows, cols}, Float32Type::get(c.ctx()));
  Value m = ConstantOp::create(c.builder(), c.loc(),
                               DenseElementsAttr::get(type, ArrayRef<float>(values)));
  if (!elt.isF32())
    m = c.create<CastOp>(m, {c.named("to", TypeAttr::get(elt))});
  return m;
}

/// Resizes the last two axes of input 0 to `outShape` with `scales` (one
/// per axis); every other axis must keep its size.
LogicalResult resize(NodeContext &c, const ResizeMode &m,
                     ArrayRef<int64_t> outShape, ArrayRef<double> scales) {
  RankedTensorType t = c.inputType(0);
  Type elt = t.getElementType();
  if (!isa<FloatType>(elt))
    return c.unsupported("resizing a non-float tensor is not supported");
  int64_t rank = t.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (outShape[d] < 1)
      return c.unsupported("output size " + Twine(outShape[d]) + " of axis " +
                           Twine(d) + " is empty");
    bool resized = outShape[d] != t.getDimSize(d) || scales[d] != 1.0;
    if (resized && d < rank - 2)
      return c.unsupported("resizing axis " + Twine(d) +
                           " is not supported (only the last two axes)");
  }
  Value y = c.input(0);
  // The last axis: Y = X A^T, A^T [in, out].
  int64_t w = rank - 1;
  if (outShape[w] != t.getDimSize(w) || scales[w] != 1.0) {
    int64_t in = t.getDimSize(w), out = outShape[w];
    std::vector<float> a = interpolationMatrix(m, in, out, scales[w]);
    std::vector<float> at(a.size());
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        at[i * out + o] = a[o * in + i];
    y = c.create<MatmulOp>({y, constantMatrix(c, elt, in, out, at)});
    if (!y)
      return failure();
  }
  // The second-to-last axis: Y = A X, A [out, in] broadcast over the rest.
  int64_t h = rank - 2;
  if (h >= 0 && (outShape[h] != t.getDimSize(h) || scales[h] != 1.0)) {
    int64_t in = t.getDimSize(h), out = outShape[h];
    y = c.create<MatmulOp>(
        {constantMatrix(c, elt, out, in, interpolationMatrix(m, in, out, scales[h])), y});
    if (!y)
      return failure();
  }
  c.setOutput(0, y);
  return success();
}

/// The float values of a constant or an initializer, or of a concatenation
/// of such (PyTorch exports scale_factor as Concat([1, 1], [s, s])).
std::optional<SmallVector<double>> foldFloats(Value v) {
  auto concat = v.getDefiningOp<ConcatOp>();
  if (!concat)
    return constantFloats(v);
  SmallVector<double> out;
  for (Value part : concat.getInputs()) {
    std::optional<SmallVector<double>> p = foldFloats(part);
    if (!p)
      return std::nullopt;
    out.append(*p);
  }
  return out;
}

/// The float values of constant input `i`, or failure (reported).
FailureOr<SmallVector<double>> constFloats(NodeContext &c, int i, StringRef what) {
  std::optional<SmallVector<double>> values = foldFloats(c.input(i));
  if (!values) {
    (void)c.unsupported(what + " must be a compile-time float constant");
    return failure();
  }
  return *values;
}

/// The output shape and per-axis scales from ONNX scales or sizes.
LogicalResult shapeAndScales(NodeContext &c, std::optional<SmallVector<double>> scales,
                             std::optional<SmallVector<int64_t>> sizes,
                             SmallVectorImpl<int64_t> &outShape,
                             SmallVectorImpl<double> &outScales) {
  RankedTensorType t = c.inputType(0);
  int64_t rank = t.getRank();
  if (sizes) {
    if (static_cast<int64_t>(sizes->size()) != rank)
      return c.unsupported("sizes has " + Twine(sizes->size()) +
                           " values for a rank-" + Twine(rank) + " input");
    for (int64_t d = 0; d < rank; ++d) {
      outShape.push_back((*sizes)[d]);
      outScales.push_back(static_cast<double>((*sizes)[d]) / t.getDimSize(d));
    }
    return success();
  }
  if (!scales || static_cast<int64_t>(scales->size()) != rank)
    return c.unsupported("needs one scale per axis (" + Twine(rank) +
                         ") or sizes");
  for (int64_t d = 0; d < rank; ++d) {
    double s = (*scales)[d];
    if (!(s > 0))
      return c.unsupported("scale " + Twine(std::to_string(s)) + " of axis " + Twine(d) +
                           " must be positive");
    outShape.push_back(static_cast<int64_t>(std::floor(t.getDimSize(d) * s)));
    outScales.push_back(s);
  }
  return success();
}

} // namespace

/// Resize (opset 10+): nearest and linear modes, scales or sizes.
LogicalResult convertResize(NodeContext &c) {
  if (!c.inputType(0).hasStaticShape())
    return c.unsupported("Resize of a dynamically shaped tensor");
  ResizeMode m;
  m.mode = c.stringAttr("mode", "nearest");
  m.coordinate = c.stringAttr("coordinate_transformation_mode",
                              c.opset() < 11 ? "asymmetric" : "half_pixel");
  m.nearest = c.stringAttr("nearest_mode", "round_prefer_floor");
  if (m.mode != "nearest" && m.mode != "linear")
    return c.unsupported("Resize mode '" + m.mode +
                         "' is not supported (nearest and linear are)");
  static const char *coordinates[] = {"half_pixel", "pytorch_half_pixel",
                                      "align_corners", "asymmetric",
                                      "tf_half_pixel_for_nn"};
  if (llvm::find(coordinates, m.coordinate) == std::end(coordinates))
    return c.unsupported("coordinate_transformation_mode '" + m.coordinate +
                         "' is not supported");
  static const char *nearests[] = {"round_prefer_floor", "round_prefer_ceil",
                                   "floor", "ceil"};
  if (llvm::find(nearests, m.nearest) == std::end(nearests))
    return c.unsupported("nearest_mode '" + m.nearest + "' is not supported");
  if (c.intAttr("antialias", 0) != 0)
    return c.unsupported("Resize with antialias is not supported");
  if (c.hasAttr("axes"))
    return c.unsupported("Resize with axes is not supported (give every axis)");
  if (c.stringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    return c.unsupported("keep_aspect_ratio_policy other than stretch is not "
                         "supported");

  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  int scalesInput = c.opset() < 11 ? 1 : 2;
  if (c.opset() >= 11 && c.numInputs() > 3 && c.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> s = c.constInts(3, "sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (c.numInputs() > scalesInput && c.hasInput(scalesInput)) {
    FailureOr<SmallVector<double>> s = constFloats(c, scalesInput, "scales");
    if (failed(s))
      return failure();
    // An empty scales tensor (opset 11+) means "use sizes", which is absent.
    if (!s->empty())
      scales = *s;
  }
  SmallVector<int64_t> outShape;
  SmallVector<double> outScales;
  if (failed(shapeAndScales(c, scales, sizes, outShape, outScales)))
    return failure();
  return resize(c, m, outShape, outScales);
}

/// Upsample (opsets 7 and 9, deprecated): Resize with asymmetric
/// coordinates; nearest takes the floor.
LogicalResult convertUpsample(NodeContext &c) {
  if (!c.inputType(0).hasStaticShape())
    return c.unsupported("Upsample of a dynamically shaped tensor");
  ResizeMode m{c.stringAttr("mode", "nearest"), "asymmetric", "floor"};
  if (m.mode == "bilinear")
    m.mode = "linear";
  if (m.mode != "nearest" && m.mode != "linear")
    return c.unsupported("Upsample mode '" + m.mode + "' is not supported");
  std::optional<SmallVector<double>> scales;
  if (c.hasAttr("scales")) {
    const onnx::AttributeProto *a = c.attr("scales");
    scales = SmallVector<double>(a->floats().begin(), a->floats().end());
  } else if (c.hasInput(1)) {
    FailureOr<SmallVector<double>> s = constFloats(c, 1, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  }
  SmallVector<int64_t> outShape;
  SmallVector<double> outScales;
  if (failed(shapeAndScales(c, scales, std::nullopt, outShape, outScales)))
    return failure();
  return resize(c, m, outShape, outScales);
}

} // namespace oflow::import
