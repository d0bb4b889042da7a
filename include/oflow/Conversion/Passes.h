//===- Passes.h - oflow lowering passes -------------------------*- C++ -*-===//
#ifndef OFLOW_CONVERSION_PASSES_H
#define OFLOW_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Conversion/Passes.h.inc"

/// Adds the patterns that rewrite oflow compute ops into linalg, tensor,
/// arith and math ops (the content of `oflow-lower-to-linalg`);
/// `convLibrary`: f32 convolutions as the runtime's oneDNN calls.
void populateOFlowToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                   bool convLibrary = false);

#define GEN_PASS_REGISTRATION
#include "oflow/Conversion/Passes.h.inc"

} // namespace oflow

#endif // OFLOW_CONVERSION_PASSES_H
