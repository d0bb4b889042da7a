//===- Pipelines.cpp - the pass pipelines after oflow -> linalg -----------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/Program.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace oflow {

static void addTextual(OpPassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("oflow: invalid built-in pass pipeline");
}

void addBufferizePipeline(OpPassManager &pm) {
  addTextual(pm, "func.func(oflow-fuse-elementwise),canonicalize,cse,"
                 "one-shot-bufferize{bufferize-function-boundaries "
                 "function-boundary-type-conversion=identity-layout-map},"
                 "canonicalize,cse");
  pm.addPass(createPlanMemory());
  pm.addPass(createLinalgToBlas());
  pm.addPass(createLowerRuntimeCalls());
  pm.addNestedPass<func::FuncOp>(createExpandStridedCopies());
}

void addLowerToLlvmPipeline(OpPassManager &pm) {
  addTextual(pm, "func.func(oflow-lower-reductions,oflow-vectorize-elementwise,"
                 "convert-linalg-to-loops,convert-vector-to-scf{full-unroll},"
                 "lower-vector-mask),"
                 "expand-strided-metadata,"
                 "lower-affine,func.func(convert-scf-to-cf),convert-math-to-llvm,"
                 "convert-math-to-libm,convert-vector-to-llvm,convert-to-llvm,"
                 "reconcile-unrealized-casts");
}

} // namespace oflow
