//===- Passes.h - training-graph passes -------------------------*- C++ -*-===//
//
// The passes around autodiff (loss, program variables, optimizers, LR
// schedules, clipping, entry functions) and the inference entry. Their
// options structs (`BuildTrainStepOptions`, ...) are what the driver fills
// from its command line.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_TRAINING_PASSES_H
#define OFLOW_TRAINING_PASSES_H

#include "OFlow/OFlowDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "oflow/Training/Passes.h.inc"

/// The ONNX names of the weights the program trains, in program order: the
/// `param` variables after `oflow-build-train-step`, or before it the names
/// of the `oflow.weight`s that autodiff marked `oflow.trainable` (each once).
std::vector<std::string> listTrainedParameters(mlir::ModuleOp module);

} // namespace oflow

#endif // OFLOW_TRAINING_PASSES_H
