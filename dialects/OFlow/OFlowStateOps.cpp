//===- OFlowStateOps.cpp - program variables: verifiers -------------------===//
#include "OFlow/OFlowOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::oflow;

LogicalResult VariableOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("type must be a statically shaped tensor, got ")
           << getType();
  // A partitioned variable holds its local piece but keeps the global
  // initial value or recipe (each rank slices or draws its own at start-up).
  auto fits = [&](ShapedType global) {
    if (global == type)
      return true;
    return getSbpAttr() && isPartitioned(*this) &&
           global.getElementType() == type.getElementType() &&
           ArrayRef<int64_t>(getSbpAttr().getLocalShape(getGoverningMesh(*this),
                                                        global.getShape())) ==
               type.getShape();
  };
  if (auto init = getInitialValueAttr())
    if (!fits(cast<ShapedType>(init.getType())))
      return emitOpError("initial value has type ")
             << init.getType() << ", but the variable is " << type;
  if (auto recipe = getInitializerAttr()) {
    if (getInitialValueAttr())
      return emitOpError("has both an initial value and an initializer recipe");
    if (!fits(cast<ShapedType>(recipe.getType())))
      return emitOpError("initializer has type ")
             << recipe.getType() << ", but the variable is " << type;
  }
  if (auto sbp = getSbpAttr()) {
    if (llvm::any_of(sbp.getEntries(), [](SbpAttr e) { return e.isPartial(); }))
      return emitOpError("a variable is stored whole or split, never partial: ")
             << sbp.str();
    if (!isPartitioned(*this) &&
        failed(sbp.verifyFor(getGoverningMesh(*this), type.getShape(),
                             [&] { return emitOpError(); })))
      return failure();
  }
  if (getRole() == VariableRole::optimizer && !getOfAttr())
    return emitOpError("optimizer state must name its parameter with `of`");
  return success();
}

/// Resolves `symbol` to a variable and checks that it holds `type`.
static LogicalResult verifyVariableUse(Operation *op, FlatSymbolRefAttr symbol,
                                       Type type,
                                       SymbolTableCollection &symbolTable) {
  auto variable =
      symbolTable.lookupNearestSymbolFrom<VariableOp>(op, symbol.getAttr());
  if (!variable)
    return op->emitOpError("'") << symbol.getValue()
                                << "' does not name an oflow.variable";
  if (variable.getType() != type)
    return op->emitOpError("variable '")
           << symbol.getValue() << "' holds " << variable.getType()
           << ", not " << type;
  return success();
}

LogicalResult
ReadVariableOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyVariableUse(*this, getVariableAttr(), getType(), symbolTable);
}

LogicalResult
WriteVariableOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyVariableUse(*this, getVariableAttr(),
                               getValue().getType(), symbolTable)))
    return failure();
  auto variable = symbolTable.lookupNearestSymbolFrom<VariableOp>(
      *this, getVariableAttr().getAttr());
  if (variable.getRole() == VariableRole::constant)
    return emitOpError("variable '")
           << getVariable() << "' is a constant and cannot be written";
  return success();
}
