//===- ScalarBuilder.cpp - oflow math on 0-d tensors ----------------------===//
#include "ScalarBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <numeric>

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

Value ScalarBuilder::constant(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = FloatAttr::get(floatType, value);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  return of::ConstantOp::create(b, loc, DenseElementsAttr::get(type, element));
}

Value ScalarBuilder::i64(int64_t value) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  return of::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(value)));
}

Value ScalarBuilder::cast(Value value, Type elementType) {
  if (elementTypeOf(value) == elementType)
    return value;
  return of::CastOp::create(b, loc, value, elementType);
}

Value ScalarBuilder::add(Value lhs, Value rhs) {
  return of::AddOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::sub(Value lhs, Value rhs) {
  return of::SubOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::mul(Value lhs, Value rhs) {
  return of::MulOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::div(Value lhs, Value rhs) {
  return of::DivOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::min(Value lhs, Value rhs) {
  return of::MinOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::max(Value lhs, Value rhs) {
  return of::MaxOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::pow(Value lhs, Value rhs) {
  return of::PowOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::sqrt(Value value) {
  return of::SqrtOp::create(b, loc, value);
}
Value ScalarBuilder::compare(of::ComparePredicate predicate, Value lhs,
                             Value rhs) {
  return of::CompareOp::create(b, loc, predicate, lhs, rhs);
}
Value ScalarBuilder::where(Value condition, Value lhs, Value rhs) {
  return of::WhereOp::create(b, loc, condition, lhs, rhs);
}

Value ScalarBuilder::sumAll(Value value) {
  int64_t rank = mlir::cast<ShapedType>(value.getType()).getRank();
  if (rank == 0)
    return value;
  SmallVector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  return of::ReduceSumOp::create(b, loc, value, axes, /*keepdims=*/false);
}
