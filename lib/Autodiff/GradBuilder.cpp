//===- GradBuilder.cpp - helpers shared by the gradient rules -------------===//
#include "GradRules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(shape);
  for (int64_t a : axes)
    kept[a] = 1;
  return kept;
}

SmallVector<int64_t> axesExcept(int64_t n, ArrayRef<int64_t> skip) {
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < n; ++i)
    if (!llvm::is_contained(skip, i))
      axes.push_back(i);
  return axes;
}

std::string nodeName(Location loc) {
  return mlir::oflow::getNodeName(loc).value_or("").str();
}

std::string describeOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "'";
  if (std::string node = nodeName(op->getLoc()); !node.empty())
    os << " (node \"" << node << "\")";
  return s;
}

Value GradBuilder::scalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  auto attr = DenseElementsAttr::get(
      type, ArrayRef<Attribute>{FloatAttr::get(elementType, value)});
  return op<ConstantOp>(cast<ElementsAttr>(attr));
}

Value GradBuilder::scalarLike(double value, Value like) {
  return scalar(value, tensorType(like).getElementType());
}

Value GradBuilder::add(Value a, Value b) { return op<AddOp>(a, b); }
Value GradBuilder::sub(Value a, Value b) { return op<SubOp>(a, b); }
Value GradBuilder::mul(Value a, Value b) { return op<MulOp>(a, b); }
Value GradBuilder::div(Value a, Value b) { return op<DivOp>(a, b); }
Value GradBuilder::neg(Value a) { return op<NegOp>(a); }

Value GradBuilder::convert(Value a, Type elementType) {
  if (tensorType(a).getElementType() == elementType)
    return a;
  return op<CastOp>(a, elementType);
}

Value GradBuilder::compare(ComparePredicate predicate, Value a, Value b) {
  return op<CompareOp>(predicate, a, b);
}

Value GradBuilder::where(Value condition, Value a, Value b) {
  return op<WhereOp>(condition, a, b);
}

Value GradBuilder::scale(Value a, double value) {
  return value == 1.0 ? a : mul(a, scalarLike(value, a));
}

Value GradBuilder::sum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return x;
  return op<ReduceSumOp>(x, axes, keepdims);
}

Value GradBuilder::meanKeep(Value x, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return x;
  return op<ReduceMeanOp>(x, axes, /*keepdims=*/true);
}

Value GradBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return op<ReshapeOp>(x, shape);
}

Value GradBuilder::expand(Value x, ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return op<ExpandOp>(x, shape);
}

Value GradBuilder::reduceTo(Value grad, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(grad);
  if (from == shape)
    return grad;
  int64_t lead =
      static_cast<int64_t>(from.size()) - static_cast<int64_t>(shape.size());
  assert(lead >= 0 && "an operand never has more dims than its broadcast");
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d)
    if (d < lead || (shape[d - lead] == 1 && from[d] != 1))
      axes.push_back(d);
  return reshape(sum(grad, axes, /*keepdims=*/true), shape);
}

} // namespace oflow::autodiff
