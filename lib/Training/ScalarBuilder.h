//===- ScalarBuilder.h - oflow math on 0-d tensors ------------*- C++ -*-===//
//
// The optimizer, clipping and schedule math is written with oflow ops on
// 0-d tensors (scalars), broadcast against parameters where needed, so every
// later stage (SBP, lowering) sees ordinary graph ops. This wraps the op
// builders to keep that math readable.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_TRAINING_SCALARBUILDER_H
#define OFLOW_LIB_TRAINING_SCALARBUILDER_H

#include "OFlow/OFlowOps.h"
#include "mlir/IR/Builders.h"

namespace oflow {

class ScalarBuilder {
public:
  ScalarBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

  /// A 0-d constant of element type `elementType` (float or integer).
  mlir::Value constant(double value, mlir::Type elementType);
  mlir::Value f64(double value) { return constant(value, b.getF64Type()); }
  mlir::Value i64(int64_t value);

  /// `value` converted to `elementType` (itself when it already has it).
  mlir::Value cast(mlir::Value value, mlir::Type elementType);

  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value min(mlir::Value lhs, mlir::Value rhs);
  mlir::Value max(mlir::Value lhs, mlir::Value rhs);
  mlir::Value pow(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sqrt(mlir::Value value);
  mlir::Value compare(mlir::oflow::ComparePredicate predicate, mlir::Value lhs,
                      mlir::Value rhs);
  mlir::Value where(mlir::Value condition, mlir::Value lhs, mlir::Value rhs);

  /// The sum over all elements, a 0-d tensor (`value` itself when 0-d).
  mlir::Value sumAll(mlir::Value value);
  /// sum(value * value) over all elements, a 0-d tensor.
  mlir::Value sumOfSquares(mlir::Value value) { return sumAll(mul(value, value)); }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// The element type of a tensor value.
inline mlir::Type elementTypeOf(mlir::Value value) {
  return mlir::cast<mlir::ShapedType>(value.getType()).getElementType();
}

} // namespace oflow

#endif
