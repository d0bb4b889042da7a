//===- OFlowOps.cpp - oflow ops: generated code, folders ------------------===//
#include "OFlow/OFlowOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::oflow;

/// `oflow.weight`'s value: data (an elements attribute, whose type is the
/// weight's) or an initializer recipe (`#oflow.init<...> : tensor<...>`).
static ParseResult parseWeightValue(OpAsmParser &parser, ElementsAttr &value,
                                    InitAttr &init) {
  Attribute attr;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseAttribute(attr))
    return failure();
  if ((init = dyn_cast<InitAttr>(attr)))
    return success();
  if ((value = dyn_cast<ElementsAttr>(attr)))
    return success();
  return parser.emitError(at, "expected the weight's data (an elements attribute) "
                              "or an initializer recipe (#oflow.init<...> : type)");
}

static void printWeightValue(OpAsmPrinter &printer, Operation *, ElementsAttr value,
                             InitAttr init) {
  if (init)
    printer.printAttribute(init);
  else
    printer.printAttribute(value);
}

#define GET_OP_CLASSES
#include "OFlow/OFlowOps.cpp.inc"

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// Folds make constants of at most this many elements (a causal mask of
/// 4096 x 4096): larger ones stay computed, not stored in the IR and the
/// executable.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

OpFoldResult TriluOp::fold(FoldAdaptor adaptor) {
  auto input = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!input || !type || !type.hasStaticShape() || type.getRank() < 2 ||
      type.getNumElements() > kMaxFoldedElements ||
      !isa<FloatType, IntegerType>(type.getElementType()))
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back(), k = getK();
  bool upper = getUpper();
  auto keep = [&](int64_t flat) {
    int64_t i = flat / cols % rows, j = flat % cols;
    return upper ? j - i >= k : j - i <= k;
  };
  if (auto floats = dyn_cast<DenseFPElementsAttr>(input)) {
    SmallVector<APFloat> values(floats.getValues<APFloat>());
    auto semantics = &values.front().getSemantics();
    for (int64_t e = 0, n = int64_t(values.size()); e < n; ++e)
      if (!keep(e))
        values[e] = APFloat::getZero(*semantics);
    return DenseElementsAttr::get(type, values);
  }
  auto ints = cast<DenseIntElementsAttr>(input);
  SmallVector<APInt> values(ints.getValues<APInt>());
  for (int64_t e = 0, n = int64_t(values.size()); e < n; ++e)
    if (!keep(e))
      values[e] = APInt::getZero(values[e].getBitWidth());
  return DenseElementsAttr::get(type, values);
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  auto lhs = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getLhs());
  auto rhs = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getRhs());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!lhs || !rhs || !type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldedElements)
    return {};
  // Equal shapes, or a splat on either side (a scalar broadcast).
  auto fits = [&](DenseFPElementsAttr a) {
    return a.isSplat() || a.getType().getShape() == type.getShape();
  };
  if (!fits(lhs) || !fits(rhs))
    return {};
  int64_t n = type.getNumElements();
  auto at = [&](DenseFPElementsAttr a, int64_t e) {
    return a.isSplat() ? a.getSplatValue<APFloat>() : a.getValues<APFloat>()[e];
  };
  SmallVector<bool> bits(n);
  for (int64_t e = 0; e < n; ++e) {
    APFloat::cmpResult c = at(lhs, e).compare(at(rhs, e));
    bool unordered = c == APFloat::cmpUnordered;
    // Ordered predicates (false on NaN) except ne, as the lowering's.
    switch (getPredicate()) {
    case ComparePredicate::eq: bits[e] = c == APFloat::cmpEqual; break;
    case ComparePredicate::ne: bits[e] = unordered || c != APFloat::cmpEqual; break;
    case ComparePredicate::lt: bits[e] = c == APFloat::cmpLessThan; break;
    case ComparePredicate::le:
      bits[e] = c == APFloat::cmpLessThan || c == APFloat::cmpEqual;
      break;
    case ComparePredicate::gt: bits[e] = c == APFloat::cmpGreaterThan; break;
    case ComparePredicate::ge:
      bits[e] = c == APFloat::cmpGreaterThan || c == APFloat::cmpEqual;
      break;
    }
  }
  return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
}
