//===- OFlowShapeInference.cpp - result types of oflow ops ----------------===//
//
// inferReturnTypes for every op. The same function builds ops (passes create
// ops without computing shapes) and verifies them (the InferTypeOpInterface
// trait compares the inferred types with the actual ones), so the attribute
// and shape checks live here, with messages that name the offending value.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::oflow;

namespace {
/// Reports an error at the op's location (when there is one), prefixed with
/// the op name as emitOpError would.
template <typename OpT>
struct Failer {
  std::optional<Location> loc;
  template <typename... Args>
  LogicalResult operator()(Args &&...args) const {
    return emitOptionalError(loc, "'", OpT::getOperationName(), "' op ",
                             std::forward<Args>(args)...);
  }
};

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// Checks `axes` are unique and in [0, rank).
template <typename OpT>
LogicalResult checkAxes(const Failer<OpT> &fail, ArrayRef<int64_t> axes,
                        int64_t rank, StringRef what) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t a : axes) {
    if (a < 0 || a >= rank)
      return fail(what, " ", a, " is out of range for rank ", rank);
    if (!seen.insert(a).second)
      return fail(what, " ", a, " appears twice");
  }
  return success();
}

/// An inherent attribute as inference sees it. When a custom-format parser
/// infers the result types (`$input attr-dict : type($input)`), the
/// attributes written in the attr-dict are still only in the dictionary and
/// the properties are empty, so read the property and fall back to the
/// dictionary. Null when the attribute is absent.
template <typename AttrT, typename AdaptorT>
AttrT inherentAttr(AdaptorT &adaptor, Attribute property, StringRef name) {
  if (auto attr = dyn_cast_or_null<AttrT>(property))
    return attr;
  if (DictionaryAttr dict = adaptor.getAttributes())
    return dict.template getAs<AttrT>(name);
  return {};
}

template <typename OpT>
LogicalResult checkSameElementType(const Failer<OpT> &fail, Type a, Type b) {
  Type ea = getElementTypeOrSelf(a), eb = getElementTypeOrSelf(b);
  if (ea != eb)
    return fail("operand element types differ: ", ea, " vs ", eb);
  return success();
}

template <typename OpT>
FailureOr<SmallVector<int64_t>> broadcast(const Failer<OpT> &fail,
                                          ArrayRef<int64_t> a,
                                          ArrayRef<int64_t> b) {
  SmallVector<int64_t> out;
  if (!OpTrait::util::getBroadcastedShape(a, b, out)) {
    (void)fail("shapes ", shapeStr(a), " and ", shapeStr(b),
               " do not broadcast");
    return failure();
  }
  return out;
}
} // namespace

#define OFLOW_INFER(OpT)                                                       \
  LogicalResult OpT::inferReturnTypes(MLIRContext *ctx,                        \
                                      std::optional<Location> loc,             \
                                      OpT::Adaptor adaptor,                    \
                                      SmallVectorImpl<Type> &types)

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

OFLOW_INFER(ConstantOp) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type || !type.hasStaticShape())
    return Failer<ConstantOp>{loc}("value must be a statically shaped tensor");
  types.push_back(type);
  return success();
}

OFLOW_INFER(WeightOp) {
  Failer<WeightOp> fail{loc};
  if (adaptor.getName().empty())
    return fail("needs a non-empty name");
  ElementsAttr value = adaptor.getValueAttr();
  InitAttr init = adaptor.getInitAttr();
  if (static_cast<bool>(value) == static_cast<bool>(init))
    return fail("needs either a value or an initializer recipe (#oflow.init), not " +
                std::string(value ? "both" : "neither"));
  auto type = dyn_cast<RankedTensorType>(value ? value.getType() : init.getType());
  if (!type || !type.hasStaticShape())
    return fail("value must be a statically shaped tensor");
  types.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

#define OFLOW_INFER_SAME(OpT)                                                  \
  OFLOW_INFER(OpT) {                                                           \
    types.push_back(adaptor.getInput().getType());                             \
    return success();                                                          \
  }
OFLOW_INFER_SAME(NegOp)
OFLOW_INFER_SAME(ExpOp)
OFLOW_INFER_SAME(LogOp)
OFLOW_INFER_SAME(SqrtOp)
OFLOW_INFER_SAME(RsqrtOp)
OFLOW_INFER_SAME(ReciprocalOp)
OFLOW_INFER_SAME(TanhOp)
OFLOW_INFER_SAME(SigmoidOp)
OFLOW_INFER_SAME(ReluOp)
OFLOW_INFER_SAME(ErfOp)
OFLOW_INFER_SAME(AbsOp)
OFLOW_INFER_SAME(NotOp)
OFLOW_INFER_SAME(GeluOp)
#undef OFLOW_INFER_SAME

OFLOW_INFER(DropoutOp) {
  Failer<DropoutOp> fail{loc};
  auto ratioAttr = inherentAttr<FloatAttr>(
      adaptor, adaptor.getProperties().ratio, "ratio");
  if (!ratioAttr)
    return fail("requires attribute 'ratio'");
  double ratio = ratioAttr.getValueAsDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return fail("ratio ", ratio, " must be in [0, 1)");
  if (ratio > 0.0 && !inherentAttr<IntegerAttr>(
                         adaptor, adaptor.getProperties().seed, "seed"))
    return fail("ratio ", ratio,
                " > 0 needs a seed, so that every run and every mesh draws the "
                "same mask");
  auto input = tensorType(adaptor.getInput());
  auto global = inherentAttr<DenseI64ArrayAttr>(
      adaptor, adaptor.getProperties().global_shape, "global_shape");
  size_t offsets = adaptor.getOffsets().size();
  if (offsets != 0 && (!global || offsets != size_t(input.getRank())))
    return fail("takes one offset per axis (", input.getRank(),
                ") and a global_shape, or neither; got ", offsets,
                " offsets");
  if (global) {
    if (global.size() != input.getRank())
      return fail("global_shape has rank ", global.size(), ", the input ",
                  input.getRank());
    for (auto [g, l] : llvm::zip(global.asArrayRef(), input.getShape()))
      if (g < l)
        return fail("global_shape ", shapeStr(global.asArrayRef()),
                    " is smaller than the local shape ",
                    shapeStr(input.getShape()));
  }
  types.push_back(input);
  return success();
}

template <typename OpT>
static LogicalResult inferBinary(std::optional<Location> loc, Value lhs,
                                 Value rhs, Type resultElement,
                                 SmallVectorImpl<Type> &types) {
  Failer<OpT> fail{loc};
  if (failed(checkSameElementType(fail, lhs.getType(), rhs.getType())))
    return failure();
  auto shape =
      broadcast(fail, tensorType(lhs).getShape(), tensorType(rhs).getShape());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(
      *shape, resultElement ? resultElement : tensorType(lhs).getElementType()));
  return success();
}

#define OFLOW_INFER_BINARY(OpT)                                                \
  OFLOW_INFER(OpT) {                                                           \
    return inferBinary<OpT>(loc, adaptor.getLhs(), adaptor.getRhs(), Type(),   \
                            types);                                            \
  }
OFLOW_INFER_BINARY(AddOp)
OFLOW_INFER_BINARY(SubOp)
OFLOW_INFER_BINARY(MulOp)
OFLOW_INFER_BINARY(DivOp)
OFLOW_INFER_BINARY(PowOp)
OFLOW_INFER_BINARY(MaxOp)
OFLOW_INFER_BINARY(MinOp)
#undef OFLOW_INFER_BINARY

OFLOW_INFER(CompareOp) {
  return inferBinary<CompareOp>(loc, adaptor.getLhs(), adaptor.getRhs(),
                                IntegerType::get(ctx, 1), types);
}

OFLOW_INFER(WhereOp) {
  Failer<WhereOp> fail{loc};
  if (failed(checkSameElementType(fail, adaptor.getLhs().getType(),
                                  adaptor.getRhs().getType())))
    return failure();
  auto valueShape = broadcast(fail, tensorType(adaptor.getLhs()).getShape(),
                              tensorType(adaptor.getRhs()).getShape());
  if (failed(valueShape))
    return failure();
  auto shape = broadcast(fail, tensorType(adaptor.getCondition()).getShape(),
                         *valueShape);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(
      *shape, tensorType(adaptor.getLhs()).getElementType()));
  return success();
}

OFLOW_INFER(CastOp) {
  Type to = adaptor.getTo();
  if (!isa<FloatType, IntegerType>(to))
    return Failer<CastOp>{loc}("cannot cast to ", to,
                               "; expected an integer or float type");
  types.push_back(RankedTensorType::get(
      tensorType(adaptor.getInput()).getShape(), to));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

OFLOW_INFER(MatmulOp) {
  Failer<MatmulOp> fail{loc};
  auto lhs = tensorType(adaptor.getLhs()), rhs = tensorType(adaptor.getRhs());
  if (failed(checkSameElementType(fail, lhs, rhs)))
    return failure();
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return fail("operands must have rank >= 2, got ", lhs.getRank(), " and ",
                rhs.getRank());
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  int64_t m = a[a.size() - 2], ka = a.back();
  if (adaptor.getTransposeA())
    std::swap(m, ka);
  int64_t kb = b[b.size() - 2], n = b.back();
  if (adaptor.getTransposeB())
    std::swap(kb, n);
  if (ka != kb)
    return fail("contraction sizes differ: lhs ", shapeStr(a), " gives ", ka,
                ", rhs ", shapeStr(b), " gives ", kb);
  auto batch = broadcast(fail, a.drop_back(2), b.drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape(*batch);
  shape.append({m, n});
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

OFLOW_INFER(GemmOp) {
  Failer<GemmOp> fail{loc};
  auto a = tensorType(adaptor.getA()), b = tensorType(adaptor.getB());
  if (failed(checkSameElementType(fail, a, b)))
    return failure();
  if (a.getRank() != 2 || b.getRank() != 2)
    return fail("A and B must be 2-D, got ", shapeStr(a.getShape()), " and ",
                shapeStr(b.getShape()));
  int64_t m = a.getDimSize(0), ka = a.getDimSize(1);
  if (adaptor.getTransposeA())
    std::swap(m, ka);
  int64_t kb = b.getDimSize(0), n = b.getDimSize(1);
  if (adaptor.getTransposeB())
    std::swap(kb, n);
  if (ka != kb)
    return fail("contraction sizes differ: A gives ", ka, ", B gives ", kb);
  if (Value c = adaptor.getC()) {
    if (failed(checkSameElementType(fail, a, c.getType())))
      return failure();
    SmallVector<int64_t> out;
    int64_t mn[] = {m, n};
    if (tensorType(c).getRank() > 2 ||
        !OpTrait::util::getBroadcastedShape(tensorType(c).getShape(), mn,
                                            out) ||
        ArrayRef<int64_t>(out) != ArrayRef<int64_t>(mn))
      return fail("C ", shapeStr(tensorType(c).getShape()),
                  " does not broadcast to [", m, ", ", n, "]");
  }
  types.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult inferReduce(std::optional<Location> loc,
                                 typename OpT::Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  Failer<OpT> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (axes.empty())
    return fail("needs at least one axis");
  if (failed(checkAxes(fail, axes, in.getRank(), "axis")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      shape.push_back(d);
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(ReduceSumOp) { return inferReduce<ReduceSumOp>(loc, adaptor, types); }
OFLOW_INFER(ReduceMeanOp) { return inferReduce<ReduceMeanOp>(loc, adaptor, types); }
OFLOW_INFER(ReduceMaxOp) { return inferReduce<ReduceMaxOp>(loc, adaptor, types); }

template <typename OpT>
static LogicalResult inferSoftmax(std::optional<Location> loc,
                                  typename OpT::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  auto in = tensorType(adaptor.getInput());
  auto axisAttr =
      inherentAttr<IntegerAttr>(adaptor, adaptor.getProperties().axis, "axis");
  if (!axisAttr)
    return Failer<OpT>{loc}("requires attribute 'axis'");
  int64_t axis = axisAttr.getInt();
  if (axis < 0 || axis >= in.getRank())
    return Failer<OpT>{loc}("axis ", axis, " is out of range for rank ",
                            in.getRank());
  types.push_back(in);
  return success();
}
OFLOW_INFER(SoftmaxOp) { return inferSoftmax<SoftmaxOp>(loc, adaptor, types); }

/// Attention's operands: query [..., Tq, D], key and value [..., Tk, D] with
/// the same leading dims (a rank below 2 or other shapes are rejected by
/// name), f32, and the attributes the runtime accepts. Pushes nothing.
template <typename OpT>
static LogicalResult checkAttention(std::optional<Location> loc,
                                    typename OpT::Adaptor adaptor) {
  Failer<OpT> fail{loc};
  auto q = tensorType(adaptor.getQuery()), k = tensorType(adaptor.getKey()),
       v = tensorType(adaptor.getValue());
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"query", q},
                         {"key", k},
                         {"value", v}}) {
    if (t.getRank() < 2)
      return fail(name, " must have rank >= 2 ([..., T, D]), got ",
                  shapeStr(t.getShape()));
    if (!t.getElementType().isF32())
      return fail(name, " must be f32, got ", t.getElementType());
  }
  if (k.getShape() != v.getShape())
    return fail("key ", shapeStr(k.getShape()), " and value ",
                shapeStr(v.getShape()), " must have the same shape");
  int64_t rank = q.getRank();
  if (k.getRank() != rank || q.getShape().drop_back(2) != k.getShape().drop_back(2) ||
      q.getShape().back() != k.getShape().back())
    return fail("query ", shapeStr(q.getShape()), " and key ",
                shapeStr(k.getShape()),
                " must share the leading dims and the last (head) dim");
  auto causal = inherentAttr<UnitAttr>(adaptor, adaptor.getProperties().causal,
                                       "causal");
  if (causal && q.getDimSize(rank - 2) != k.getDimSize(rank - 2))
    return fail("causal attention needs as many queries as keys, got ",
                q.getDimSize(rank - 2), " and ", k.getDimSize(rank - 2));
  auto operandType = inherentAttr<TypeAttr>(
      adaptor, adaptor.getProperties().operand_type, "operand_type");
  if (!operandType)
    return fail("requires attribute 'operand_type'");
  if (!isa<BFloat16Type, Float16Type>(operandType.getValue()))
    return fail("operand_type must be bf16 or f16, got ", operandType.getValue());
  auto scale =
      inherentAttr<FloatAttr>(adaptor, adaptor.getProperties().scale, "scale");
  if (!scale)
    return fail("requires attribute 'scale'");
  if (!std::isfinite(scale.getValueAsDouble()))
    return fail("scale must be finite");
  return success();
}

/// The logsumexp's type: the query's without its head dim.
static RankedTensorType rowStatisticsType(RankedTensorType query) {
  return RankedTensorType::get(query.getShape().drop_back(),
                               query.getElementType());
}

OFLOW_INFER(AttentionOp) {
  if (failed(checkAttention<AttentionOp>(loc, adaptor)))
    return failure();
  auto q = tensorType(adaptor.getQuery());
  types.push_back(q);
  types.push_back(rowStatisticsType(q));
  return success();
}

OFLOW_INFER(AttentionBackwardOp) {
  Failer<AttentionBackwardOp> fail{loc};
  if (failed(checkAttention<AttentionBackwardOp>(loc, adaptor)))
    return failure();
  auto q = tensorType(adaptor.getQuery());
  if (tensorType(adaptor.getOutput()) != q ||
      tensorType(adaptor.getGradOutput()) != q)
    return fail("output and grad_output must have the query's type ", q);
  if (tensorType(adaptor.getLogsumexp()) != rowStatisticsType(q))
    return fail("logsumexp must be ", rowStatisticsType(q), ", got ",
                adaptor.getLogsumexp().getType());
  types.push_back(q);
  types.push_back(adaptor.getKey().getType());
  types.push_back(adaptor.getValue().getType());
  return success();
}
OFLOW_INFER(LogSoftmaxOp) {
  return inferSoftmax<LogSoftmaxOp>(loc, adaptor, types);
}

OFLOW_INFER(LayerNormOp) {
  Failer<LayerNormOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= in.getRank())
    return fail("axis ", axis, " is out of range for rank ", in.getRank());
  if (adaptor.getEpsilon().convertToDouble() < 0)
    return fail("epsilon must be non-negative");
  ArrayRef<int64_t> normShape = in.getShape().drop_front(axis);
  for (Value param : {adaptor.getScale(), adaptor.getBias()}) {
    if (!param)
      continue;
    if (failed(checkSameElementType(fail, in, param.getType())))
      return failure();
    if (tensorType(param).getShape() != normShape)
      return fail("scale and bias must have the normalized shape ",
                  shapeStr(normShape), ", got ",
                  shapeStr(tensorType(param).getShape()));
  }
  types.push_back(in);
  return success();
}

template <typename OpT>
static LogicalResult checkBatchNorm(std::optional<Location> loc,
                                    RankedTensorType in, ValueRange params,
                                    float epsilon) {
  Failer<OpT> fail{loc};
  if (in.getRank() < 2)
    return fail("input must have rank >= 2 (N, C, ...), got ", in.getRank());
  if (epsilon < 0)
    return fail("epsilon must be non-negative");
  int64_t channels = in.getDimSize(1);
  for (Value p : params) {
    if (failed(checkSameElementType(fail, in, p.getType())))
      return failure();
    if (tensorType(p).getShape() != ArrayRef<int64_t>{channels})
      return fail("scale, bias, mean and variance must be [", channels,
                  "] (the channel dim), got ",
                  shapeStr(tensorType(p).getShape()));
  }
  return success();
}

OFLOW_INFER(BatchNormInferenceOp) {
  auto in = tensorType(adaptor.getInput());
  if (failed(checkBatchNorm<BatchNormInferenceOp>(
          loc, in,
          {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
           adaptor.getVariance()},
          adaptor.getEpsilon().convertToFloat())))
    return failure();
  types.push_back(in);
  return success();
}

OFLOW_INFER(BatchNormTrainingOp) {
  auto in = tensorType(adaptor.getInput());
  if (failed(checkBatchNorm<BatchNormTrainingOp>(
          loc, in,
          {adaptor.getScale(), adaptor.getBias(), adaptor.getRunningMean(),
           adaptor.getRunningVar()},
          adaptor.getEpsilon().convertToFloat())))
    return failure();
  float momentum = adaptor.getMomentum().convertToFloat();
  if (!(momentum >= 0 && momentum <= 1))
    return Failer<BatchNormTrainingOp>{loc}("momentum ", momentum,
                                            " must be in [0, 1]");
  types.push_back(in);
  types.push_back(adaptor.getRunningMean().getType());
  types.push_back(adaptor.getRunningVar().getType());
  return success();
}

OFLOW_INFER(BatchNormStatisticsOp) {
  auto in = tensorType(adaptor.getInput());
  if (in.getRank() < 2)
    return Failer<BatchNormStatisticsOp>{loc}(
        "input must have rank >= 2 (N, C, ...), got ", in.getRank());
  auto stat = RankedTensorType::get(
      {in.getDimSize(1)},
      BatchNormTrainingOp::getStatisticsType(in.getElementType()));
  types.push_back(stat);
  types.push_back(stat);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Output size of a window op along one spatial dim, or failure.
template <typename OpT>
static FailureOr<int64_t> windowOutput(const Failer<OpT> &fail, int64_t in,
                                       int64_t kernel, int64_t stride,
                                       int64_t padBegin, int64_t padEnd,
                                       int64_t dilation, bool ceilMode,
                                       int dim) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = in + padBegin + padEnd;
  if (padded < span) {
    (void)fail("spatial dim ", dim, ": the window (", span,
               ") is larger than the padded input (", padded, ")");
    return failure();
  }
  int64_t room = padded - span;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // ceil_mode must not add a window that starts in the right padding (ONNX,
  // PyTorch): it would cover no input element.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

template <typename OpT>
static LogicalResult checkWindowAttrs(const Failer<OpT> &fail,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> pads,
                                      ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2)
    return fail("expects 2 strides, 4 pads [top, left, bottom, right] and 2 "
                "dilations, got ",
                strides.size(), ", ", pads.size(), " and ", dilations.size());
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d <= 0; }))
    return fail("strides and dilations must be positive");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return fail("pads must be non-negative");
  return success();
}

OFLOW_INFER(Conv2dOp) {
  Failer<Conv2dOp> fail{loc};
  auto in = tensorType(adaptor.getInput()), w = tensorType(adaptor.getWeight());
  if (failed(checkSameElementType(fail, in, w)))
    return failure();
  if (in.getRank() != 4 || w.getRank() != 4)
    return fail("expects a 4-D NCHW input and a 4-D [M, C/groups, kH, kW] "
                "weight, got ",
                shapeStr(in.getShape()), " and ", shapeStr(w.getShape()));
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations();
  if (failed(checkWindowAttrs(fail, strides, pads, dilations)))
    return failure();
  int64_t groups = adaptor.getGroups();
  int64_t c = in.getDimSize(1), m = w.getDimSize(0);
  if (groups <= 0 || c % groups || m % groups)
    return fail("groups ", groups, " must divide the input channels ", c,
                " and the output channels ", m);
  if (w.getDimSize(1) != c / groups)
    return fail("weight has ", w.getDimSize(1), " input channels per group, "
                "expected ", c / groups, " (", c, " channels / ", groups,
                " groups)");
  if (Value b = adaptor.getBias()) {
    if (failed(checkSameElementType(fail, in, b.getType())))
      return failure();
    if (tensorType(b).getShape() != ArrayRef<int64_t>{m})
      return fail("bias must be [", m, "], got ",
                  shapeStr(tensorType(b).getShape()));
  }
  SmallVector<int64_t> shape = {in.getDimSize(0), m};
  for (int d = 0; d < 2; ++d) {
    auto out = windowOutput(fail, in.getDimSize(2 + d), w.getDimSize(2 + d),
                            strides[d], pads[d], pads[d + 2], dilations[d],
                            /*ceilMode=*/false, d);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

template <typename OpT>
static LogicalResult inferPool(std::optional<Location> loc,
                               typename OpT::Adaptor adaptor,
                               ArrayRef<int64_t> dilations,
                               SmallVectorImpl<Type> &types) {
  Failer<OpT> fail{loc};
  auto in = tensorType(adaptor.getInput());
  if (in.getRank() != 4)
    return fail("expects a 4-D NCHW input, got ", shapeStr(in.getShape()));
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  if (kernel.size() != 2 || llvm::any_of(kernel, [](int64_t k) { return k <= 0; }))
    return fail("kernel must be 2 positive sizes");
  ArrayRef<int64_t> pads = adaptor.getPads();
  if (failed(checkWindowAttrs(fail, adaptor.getStrides(), pads, dilations)))
    return failure();
  for (int d = 0; d < 2; ++d)
    if (pads[d] >= kernel[d] * dilations[d] ||
        pads[d + 2] >= kernel[d] * dilations[d])
      return fail("pads must be smaller than the window on spatial dim ", d);
  SmallVector<int64_t> shape = {in.getDimSize(0), in.getDimSize(1)};
  for (int d = 0; d < 2; ++d) {
    auto out = windowOutput(fail, in.getDimSize(2 + d), kernel[d],
                            adaptor.getStrides()[d], pads[d], pads[d + 2],
                            dilations[d], adaptor.getCeilMode(), d);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(MaxPool2dOp) {
  SmallVector<int64_t> dilations = {1, 1};
  if (auto d = adaptor.getDilations())
    dilations.assign(d->begin(), d->end());
  return inferPool<MaxPool2dOp>(loc, adaptor, dilations, types);
}

OFLOW_INFER(AvgPool2dOp) {
  return inferPool<AvgPool2dOp>(loc, adaptor, {1, 1}, types);
}

OFLOW_INFER(GlobalAvgPoolOp) {
  auto in = tensorType(adaptor.getInput());
  if (in.getRank() < 3)
    return Failer<GlobalAvgPoolOp>{loc}(
        "expects [N, C, spatial...] of rank >= 3, got ", shapeStr(in.getShape()));
  SmallVector<int64_t> shape(in.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

OFLOW_INFER(ReshapeOp) {
  Failer<ReshapeOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return fail("target shape ", shapeStr(shape),
                " must be static and non-negative");
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (count != in.getNumElements())
    return fail("cannot reshape ", shapeStr(in.getShape()), " (",
                in.getNumElements(), " elements) to ", shapeStr(shape), " (",
                count, " elements)");
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(FlattenOp) {
  auto in = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > in.getRank())
    return Failer<FlattenOp>{loc}("axis ", axis, " is out of range [0, ",
                                  in.getRank(), "]");
  int64_t outer = 1, inner = 1;
  for (auto [i, d] : llvm::enumerate(in.getShape()))
    (static_cast<int64_t>(i) < axis ? outer : inner) *= d;
  types.push_back(RankedTensorType::get({outer, inner}, in.getElementType()));
  return success();
}

OFLOW_INFER(TransposeOp) {
  Failer<TransposeOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return fail("perm has ", perm.size(), " entries for a rank-", in.getRank(),
                " tensor");
  if (failed(checkAxes(fail, perm, in.getRank(), "perm entry")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(SqueezeOp) {
  Failer<SqueezeOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxes(fail, axes, in.getRank(), "axis")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i))) {
      shape.push_back(d);
      continue;
    }
    if (d != 1)
      return fail("cannot squeeze axis ", i, " of size ", d);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(UnsqueezeOp) {
  Failer<UnsqueezeOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = in.getRank() + axes.size();
  if (failed(checkAxes(fail, axes, rank, "axis")))
    return failure();
  SmallVector<int64_t> shape;
  auto next = in.getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(axes, i) ? 1 : *next++);
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OFLOW_INFER(ExpandOp) {
  Failer<ExpandOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  if (llvm::any_of(adaptor.getShape(), [](int64_t d) { return d < 0; }))
    return fail("shape must be non-negative");
  auto shape = broadcast(fail, in.getShape(), adaptor.getShape());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, in.getElementType()));
  return success();
}

OFLOW_INFER(ConcatOp) {
  Failer<ConcatOp> fail{loc};
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return fail("needs at least one input");
  auto first = tensorType(inputs.front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return fail("axis ", axis, " is out of range for rank ", first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto t = tensorType(v);
    if (failed(checkSameElementType(fail, first, t)))
      return failure();
    if (t.getRank() != first.getRank())
      return fail("input #", i, " has rank ", t.getRank(), ", expected ",
                  first.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return fail("input #", i, " has shape ", shapeStr(t.getShape()),
                    ", which differs from ", shapeStr(first.getShape()),
                    " outside axis ", axis);
    shape[axis] += t.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OFLOW_INFER(SliceOp) {
  Failer<SliceOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = in.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return fail("offsets, sizes and strides need one entry per dim (", rank,
                ")");
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 0)
      return fail("stride of dim ", d, " is zero");
    if (sizes[d] < 0)
      return fail("size of dim ", d, " is negative");
    if (sizes[d] == 0)
      continue;
    int64_t last = offsets[d] + (sizes[d] - 1) * strides[d];
    int64_t dim = in.getDimSize(d);
    if (offsets[d] < 0 || offsets[d] >= dim || last < 0 || last >= dim)
      return fail("dim ", d, ": elements ", offsets[d], " to ", last,
                  " are outside [0, ", dim, ")");
  }
  types.push_back(RankedTensorType::get(sizes, in.getElementType()));
  return success();
}

OFLOW_INFER(SplitOp) {
  Failer<SplitOp> fail{loc};
  auto in = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= in.getRank())
    return fail("axis ", axis, " is out of range for rank ", in.getRank());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return fail("needs at least one piece");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return fail("piece sizes must be non-negative");
    total += s;
  }
  if (total != in.getDimSize(axis))
    return fail("pieces ", shapeStr(sizes), " sum to ", total,
                ", but axis ", axis, " has size ", in.getDimSize(axis));
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(in.getShape());
    shape[axis] = s;
    types.push_back(RankedTensorType::get(shape, in.getElementType()));
  }
  return success();
}

OFLOW_INFER(GatherOp) {
  auto data = tensorType(adaptor.getData());
  auto indices = tensorType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= data.getRank())
    return Failer<GatherOp>{loc}("axis ", axis, " is out of range for rank ",
                                 data.getRank());
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

OFLOW_INFER(TriluOp) {
  auto in = tensorType(adaptor.getInput());
  if (in.getRank() < 2)
    return Failer<TriluOp>{loc}("input must have rank >= 2, got ",
                                in.getRank());
  types.push_back(in);
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult inferClassLoss(std::optional<Location> loc, Value input,
                                    Value labels, LossReduction reduction,
                                    SmallVectorImpl<Type> &types) {
  Failer<OpT> fail{loc};
  auto in = tensorType(input), lab = tensorType(labels);
  if (in.getRank() < 2)
    return fail("scores must be [N, C, d...], got ", shapeStr(in.getShape()));
  SmallVector<int64_t> expected = {in.getDimSize(0)};
  llvm::append_range(expected, in.getShape().drop_front(2));
  if (lab.getShape() != ArrayRef<int64_t>(expected))
    return fail("labels must be ", shapeStr(expected), " for scores ",
                shapeStr(in.getShape()), ", got ", shapeStr(lab.getShape()));
  if (reduction == LossReduction::none)
    types.push_back(RankedTensorType::get(expected, in.getElementType()));
  else
    types.push_back(RankedTensorType::get({}, in.getElementType()));
  return success();
}

OFLOW_INFER(SoftmaxCrossEntropyOp) {
  return inferClassLoss<SoftmaxCrossEntropyOp>(
      loc, adaptor.getLogits(), adaptor.getLabels(), adaptor.getReduction(),
      types);
}

OFLOW_INFER(NllLossOp) {
  return inferClassLoss<NllLossOp>(loc, adaptor.getInput(), adaptor.getLabels(),
                                   adaptor.getReduction(), types);
}

OFLOW_INFER(MseLossOp) {
  Failer<MseLossOp> fail{loc};
  auto in = tensorType(adaptor.getInput()), t = tensorType(adaptor.getTarget());
  if (in != t)
    return fail("input ", in, " and target ", t, " must have the same type");
  if (adaptor.getReduction() == LossReduction::none)
    types.push_back(in);
  else
    types.push_back(RankedTensorType::get({}, in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Backward ops: the result shape is an attribute; check that the incoming
// gradient has the shape the forward op would have produced.
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult checkShapeAttr(const Failer<OpT> &fail,
                                    ArrayRef<int64_t> shape, int64_t rank,
                                    StringRef what) {
  if (static_cast<int64_t>(shape.size()) != rank ||
      llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return fail(what, " must be ", rank, " non-negative sizes, got ",
                shapeStr(shape));
  return success();
}

template <typename OpT>
static LogicalResult checkGradShape(const Failer<OpT> &fail, Value grad,
                                    ArrayRef<int64_t> expected) {
  if (tensorType(grad).getShape() != expected)
    return fail("incoming gradient is ", shapeStr(tensorType(grad).getShape()),
                ", but the forward op produces ", shapeStr(expected));
  return success();
}

/// The forward output shape of a 2-D window op over `input` [N, C, H, W]
/// producing `channels` channels.
template <typename OpT>
static FailureOr<SmallVector<int64_t>>
windowForwardShape(const Failer<OpT> &fail, ArrayRef<int64_t> input,
                   int64_t channels, ArrayRef<int64_t> window,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                   ArrayRef<int64_t> dilations, bool ceilMode) {
  if (failed(checkWindowAttrs(fail, strides, pads, dilations)))
    return failure();
  if (window.size() != 2 ||
      llvm::any_of(window, [](int64_t k) { return k <= 0; }))
    return fail("kernel must be 2 positive sizes");
  SmallVector<int64_t> shape = {input[0], channels};
  for (int d = 0; d < 2; ++d) {
    auto out = windowOutput(fail, input[2 + d], window[d], strides[d], pads[d],
                            pads[d + 2], dilations[d], ceilMode, d);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  return shape;
}

OFLOW_INFER(Conv2dBackwardInputOp) {
  Failer<Conv2dBackwardInputOp> fail{loc};
  auto w = tensorType(adaptor.getWeight());
  ArrayRef<int64_t> in = adaptor.getInputShape();
  if (failed(checkShapeAttr(fail, in, 4, "input_shape")) ||
      failed(checkSameElementType(fail, w, adaptor.getGradOutput().getType())))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (w.getRank() != 4 || groups <= 0 || in[1] % groups ||
      w.getDimSize(1) * groups != in[1])
    return fail("weight ", shapeStr(w.getShape()), " does not fit input ",
                shapeStr(in), " with ", groups, " groups");
  auto out = windowForwardShape(fail, in, w.getDimSize(0),
                                w.getShape().drop_front(2), adaptor.getStrides(),
                                adaptor.getPads(), adaptor.getDilations(), false);
  if (failed(out) || failed(checkGradShape(fail, adaptor.getGradOutput(), *out)))
    return failure();
  types.push_back(RankedTensorType::get(in, w.getElementType()));
  return success();
}

OFLOW_INFER(Conv2dBackwardFilterOp) {
  Failer<Conv2dBackwardFilterOp> fail{loc};
  auto x = tensorType(adaptor.getInput());
  ArrayRef<int64_t> filter = adaptor.getFilterShape();
  if (failed(checkShapeAttr(fail, filter, 4, "filter_shape")) ||
      failed(checkSameElementType(fail, x, adaptor.getGradOutput().getType())))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (x.getRank() != 4 || groups <= 0 || x.getDimSize(1) % groups ||
      filter[0] % groups || filter[1] * groups != x.getDimSize(1))
    return fail("filter ", shapeStr(filter), " does not fit input ",
                shapeStr(x.getShape()), " with ", groups, " groups");
  auto out = windowForwardShape(fail, x.getShape(), filter[0],
                                filter.drop_front(2), adaptor.getStrides(),
                                adaptor.getPads(), adaptor.getDilations(), false);
  if (failed(out) || failed(checkGradShape(fail, adaptor.getGradOutput(), *out)))
    return failure();
  types.push_back(RankedTensorType::get(filter, x.getElementType()));
  return success();
}

OFLOW_INFER(MaxPool2dBackwardOp) {
  Failer<MaxPool2dBackwardOp> fail{loc};
  auto x = tensorType(adaptor.getInput());
  if (x.getRank() != 4)
    return fail("expects a 4-D NCHW input, got ", shapeStr(x.getShape()));
  SmallVector<int64_t> dilations = {1, 1};
  if (auto d = adaptor.getDilations())
    dilations.assign(d->begin(), d->end());
  auto out = windowForwardShape(fail, x.getShape(), x.getDimSize(1),
                                adaptor.getKernel(), adaptor.getStrides(),
                                adaptor.getPads(), dilations,
                                adaptor.getCeilMode());
  if (failed(out) || failed(checkGradShape(fail, adaptor.getGradOutput(), *out)))
    return failure();
  types.push_back(x);
  return success();
}

OFLOW_INFER(AvgPool2dBackwardOp) {
  Failer<AvgPool2dBackwardOp> fail{loc};
  ArrayRef<int64_t> in = adaptor.getInputShape();
  if (failed(checkShapeAttr(fail, in, 4, "input_shape")))
    return failure();
  auto out = windowForwardShape(fail, in, in[1], adaptor.getKernel(),
                                adaptor.getStrides(), adaptor.getPads(), {1, 1},
                                adaptor.getCeilMode());
  if (failed(out) || failed(checkGradShape(fail, adaptor.getGradOutput(), *out)))
    return failure();
  types.push_back(RankedTensorType::get(
      in, tensorType(adaptor.getGradOutput()).getElementType()));
  return success();
}

OFLOW_INFER(GatherBackwardOp) {
  Failer<GatherBackwardOp> fail{loc};
  ArrayRef<int64_t> data = adaptor.getDataShape();
  int64_t axis = adaptor.getAxis();
  if (data.empty() || axis < 0 || axis >= static_cast<int64_t>(data.size()))
    return fail("axis ", axis, " is out of range for data shape ",
                shapeStr(data));
  SmallVector<int64_t> expected(data.begin(), data.begin() + axis);
  llvm::append_range(expected, tensorType(adaptor.getIndices()).getShape());
  expected.append(data.begin() + axis + 1, data.end());
  if (failed(checkGradShape(fail, adaptor.getGradOutput(), expected)))
    return failure();
  types.push_back(RankedTensorType::get(
      data, tensorType(adaptor.getGradOutput()).getElementType()));
  return success();
}

OFLOW_INFER(SliceBackwardOp) {
  Failer<SliceBackwardOp> fail{loc};
  ArrayRef<int64_t> in = adaptor.getInputShape();
  size_t rank = in.size();
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
    return fail("offsets, sizes and strides need ", rank, " entries each");
  for (size_t d = 0; d < rank; ++d) {
    int64_t last = offsets[d] + (sizes[d] - 1) * strides[d];
    if (strides[d] == 0 || sizes[d] < 0 ||
        (sizes[d] > 0 && (offsets[d] < 0 || offsets[d] >= in[d] || last < 0 ||
                          last >= in[d])))
      return fail("the slice on dim ", d, " leaves the input [0, ", in[d], ")");
  }
  if (failed(checkGradShape(fail, adaptor.getGradOutput(), sizes)))
    return failure();
  types.push_back(RankedTensorType::get(
      in, tensorType(adaptor.getGradOutput()).getElementType()));
  return success();
}

template <typename OpT>
static LogicalResult inferLossBackward(std::optional<Location> loc,
                                       typename OpT::Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  Failer<OpT> fail{loc};
  SmallVector<Type> forward;
  if (failed(inferClassLoss<OpT>(loc, adaptor.getInput(), adaptor.getLabels(),
                                 adaptor.getReduction(), forward)))
    return failure();
  if (failed(checkGradShape(fail, adaptor.getGradLoss(),
                            cast<RankedTensorType>(forward[0]).getShape())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

OFLOW_INFER(SoftmaxCrossEntropyBackwardOp) {
  return inferLossBackward<SoftmaxCrossEntropyBackwardOp>(loc, adaptor, types);
}

OFLOW_INFER(NllLossBackwardOp) {
  return inferLossBackward<NllLossBackwardOp>(loc, adaptor, types);
}
