//===- DeclareFunction.h - private declarations of called functions -*- C++ -*-===//
#ifndef OFLOW_CODEGEN_DECLAREFUNCTION_H
#define OFLOW_CODEGEN_DECLAREFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace oflow {

/// A function's count of library calls whose operands are `to_buffer`s
/// numbered `library_call_site` (oflow-lower-to-linalg's oneDNN calls), so
/// that CSE keeps each call's own; oflow-lower-runtime-calls removes it.
inline constexpr llvm::StringLiteral kLibraryCallsAttr = "library_calls";
inline constexpr llvm::StringLiteral kLibraryCallSiteAttr = "library_call_site";

/// The private declaration of `name` (the runtime's entry points, BLAS,
/// libmvec), created once at the END of `module` — tests rely on the
/// declarations following the code (func::createFnDecl puts them first).
inline mlir::func::FuncOp declareFunction(mlir::ModuleOp module,
                                          llvm::StringRef name,
                                          mlir::FunctionType type) {
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>(name))
    return f;
  auto b = mlir::OpBuilder::atBlockEnd(module.getBody());
  auto f = mlir::func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

} // namespace oflow

#endif
