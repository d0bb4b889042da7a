//===- Pipelines.h - oflow-compile's pass pipelines -------------*- C++ -*-===//
#ifndef OFLOW_LIB_DRIVER_PIPELINES_H
#define OFLOW_LIB_DRIVER_PIPELINES_H

#include "oflow/Driver/Driver.h"

#include "mlir/Pass/PassManager.h"

namespace oflow {

/// Makes every dialect and interface model the pipelines need available.
void registerPipelineDialects(mlir::MLIRContext &context);

/// Registers every pass the pipelines below name.
void registerPipelinePasses();

/// Import -> training graph (train: loss, autodiff, optimizer step and
/// gradient entries; infer: the inference entry).
mlir::LogicalResult addTrainingPasses(mlir::PassManager &pm,
                                      const CompileOptions &options);

/// Training graph -> program interface bound, linalg on tensors.
mlir::LogicalResult addLinalgPasses(mlir::PassManager &pm,
                                    const CompileOptions &options);

/// The global batch: the leading dim of the program's inputs (0 if none).
int64_t programBatch(mlir::ModuleOp module);

/// Manifest records describing the optimizer and schedule.
std::vector<std::string> describeTraining(const CompileOptions &options);

} // namespace oflow

#endif
