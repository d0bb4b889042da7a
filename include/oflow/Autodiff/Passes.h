//===- Passes.h - reverse-mode autodiff -------------------------*- C++ -*-===//
#ifndef OFLOW_AUTODIFF_PASSES_H
#define OFLOW_AUTODIFF_PASSES_H

#include "OFlow/OFlowDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "oflow/Autodiff/Passes.h.inc"

} // namespace oflow

#endif // OFLOW_AUTODIFF_PASSES_H
