//===- Passes.h - SBP passes ------------------------------------*- C++ -*-===//
//
// Stage 3 of DESIGN.md: SBP signatures, inference and choice.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SBP_PASSES_H
#define OFLOW_SBP_PASSES_H

#include "OFlow/OFlowDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Pass/Pass.h"

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Sbp/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "oflow/Sbp/Passes.h.inc"

} // namespace oflow

#endif // OFLOW_SBP_PASSES_H
