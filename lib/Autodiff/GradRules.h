//===- GradRules.h - gradient rules of the oflow ops ------------*- C++ -*-===//
//
// The interface between the autodiff driver and the per-op gradient rules.
// A rule receives the gradients of its op's results and returns those of the
// operands the driver asks for, built from existing oflow ops (forward ops
// and the backward ops of OFlowTrainingOps.td) through a GradBuilder. Rules
// live in one file per op family; each family registers its rules in a
// GradRegistry.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_AUTODIFF_GRADRULES_H
#define OFLOW_LIB_AUTODIFF_GRADRULES_H

#include "OFlow/OFlowOps.h"

#include "llvm/ADT/DenseMap.h"
#include <functional>

namespace oflow::autodiff {

/// Builds gradient IR at one insertion point with one location (the forward
/// op's, so a backward op points back at the ONNX node it differentiates).
class GradBuilder {
public:
  GradBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &b;
  mlir::Location loc;

  /// Creates an op whose result types are inferred; returns its only result.
  template <typename OpT, typename... Args> mlir::Value op(Args &&...args) {
    return OpT::create(b, loc, std::forward<Args>(args)...).getResult();
  }

  /// A 0-d constant of `elementType` (broadcasts against any shape).
  mlir::Value scalar(double value, mlir::Type elementType);
  /// A 0-d constant with the element type of `like`.
  mlir::Value scalarLike(double value, mlir::Value like);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value a);
  /// `a` converted to `elementType` (`a` itself when it already is).
  mlir::Value convert(mlir::Value a, mlir::Type elementType);
  mlir::Value compare(mlir::oflow::ComparePredicate predicate, mlir::Value a,
                      mlir::Value b);
  mlir::Value where(mlir::Value condition, mlir::Value a, mlir::Value b);
  /// `a * value` (or `a` when value is 1).
  mlir::Value scale(mlir::Value a, double value);

  /// Sums a gradient of a broadcast result back to the shape of an operand
  /// (numpy rules: leading dims and size-1 dims that were broadcast).
  mlir::Value reduceTo(mlir::Value grad, llvm::ArrayRef<int64_t> shape);
  /// reduce_sum over `axes` (no-op when empty).
  mlir::Value sum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdims);
  /// reduce_mean over `axes` with keepdims (no-op when empty).
  mlir::Value meanKeep(mlir::Value x, llvm::ArrayRef<int64_t> axes);
  /// reshape, skipped when the shape is already `shape`.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// expand, skipped when the shape is already `shape`.
  mlir::Value expand(mlir::Value x, llvm::ArrayRef<int64_t> shape);
};

mlir::RankedTensorType tensorType(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
/// `shape` with the dims at `axes` set to 1 (a keepdims reduction's shape).
llvm::SmallVector<int64_t> keptShape(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int64_t> axes);
/// 0 .. n-1 except `skip`.
llvm::SmallVector<int64_t> axesExcept(int64_t n, llvm::ArrayRef<int64_t> skip);
/// The ONNX node name carried in a location (NameLoc), or "".
std::string nodeName(mlir::Location loc);
/// "'oflow.foo' (node "bar")": how a diagnostic names a forward op.
std::string describeOp(mlir::Operation *op);

/// What a rule sees: the result gradients (null for a result that gets no
/// gradient) and the operands whose gradients it must set.
struct GradArgs {
  GradBuilder &b;
  llvm::ArrayRef<mlir::Value> resultGrads;
  llvm::ArrayRef<bool> wanted;
  llvm::SmallVector<mlir::Value> operandGrads;

  mlir::Value grad(unsigned result = 0) const { return resultGrads[result]; }
  bool needs(unsigned operand) const {
    return operand < wanted.size() && wanted[operand];
  }
  void set(unsigned operand, mlir::Value grad) {
    if (needs(operand))
      operandGrads[operand] = grad;
  }
};

using GradFn =
    std::function<mlir::LogicalResult(mlir::Operation *, GradArgs &)>;

struct GradRule {
  GradFn fn;
  /// Bit i set: operand i carries no gradient (indices, masks, buffers),
  /// besides the non-float operands, which never do.
  uint64_t inactiveOperands = 0;
  /// Bit i set: result i carries no gradient (running statistics).
  uint64_t inactiveResults = 0;
};

/// The gradient rules, keyed by op.
class GradRegistry {
public:
  template <typename OpT, typename F>
  void add(F rule, uint64_t inactiveOperands = 0,
           uint64_t inactiveResults = 0) {
    rules[mlir::TypeID::get<OpT>()] =
        GradRule{[rule](mlir::Operation *op, GradArgs &args) {
                   return rule(llvm::cast<OpT>(op), args);
                 },
                 inactiveOperands, inactiveResults};
  }
  const GradRule *lookup(mlir::Operation *op) const {
    auto it = rules.find(op->getName().getTypeID());
    return it == rules.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<mlir::TypeID, GradRule> rules;
};

void registerElementwiseGradRules(GradRegistry &registry);
void registerLinalgGradRules(GradRegistry &registry);
void registerNormGradRules(GradRegistry &registry);
void registerShapeGradRules(GradRegistry &registry);
void registerLossGradRules(GradRegistry &registry);

} // namespace oflow::autodiff

#endif // OFLOW_LIB_AUTODIFF_GRADRULES_H
