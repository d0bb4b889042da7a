//===- WeightVariables.h - weights become program variables ---*- C++ -*-===//
//
// Both entry builders (train and infer) turn the imported `oflow.weight`s
// into module-level `oflow.variable`s, so the weights live in the program's
// state buffer (loaded, checkpointed, exported) instead of being constants
// baked into the code.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_TRAINING_WEIGHTVARIABLES_H
#define OFLOW_LIB_TRAINING_WEIGHTVARIABLES_H

#include "OFlow/OFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

namespace oflow {

/// All `oflow.weight` ops of one name: one weight.
struct Weight {
  std::string name;
  mlir::RankedTensorType type;
  mlir::ElementsAttr value;
  /// Or the recipe the executable draws the values from (native IR).
  mlir::oflow::InitAttr init;
  /// Some op of this name carries `oflow.trainable`.
  bool trainable = false;
  llvm::SmallVector<mlir::oflow::WeightOp> ops;
  /// Set by `replaceWeightsWithVariables`.
  mlir::oflow::VariableOp variable;
};

/// The weights of `fn` in order of first appearance. Fails (with an error
/// at the op) when two ops of one name disagree on the type, or when a
/// weight has one of the `reserved` names (the entry functions' names: a
/// variable of that name would push the entry off its ABI name).
mlir::FailureOr<llvm::SmallVector<Weight>>
collectWeights(mlir::func::FuncOp fn, llvm::ArrayRef<llvm::StringRef> reserved);

/// Creates one variable per weight (symbol = its name, uniqued if taken;
/// `model_name` = its name; initial value = its value; role from `roleOf`)
/// before `anchor` in the module, and replaces every weight op with an
/// `oflow.read_variable` at the same place.
void replaceWeightsWithVariables(
    mlir::SymbolTable &symbols, mlir::Operation *anchor,
    llvm::MutableArrayRef<Weight> weights,
    llvm::function_ref<mlir::oflow::VariableRole(const Weight &)> roleOf);

/// Erases the ops of `fn` whose results are unused and that have no effect
/// but reads (the computations of dropped results).
void eraseDeadOps(mlir::func::FuncOp fn);

} // namespace oflow

#endif
