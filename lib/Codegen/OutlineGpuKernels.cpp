//===- OutlineGpuKernels.cpp - gpu-kernel-outlining keeping strategies ----===//
//
// Upstream outlining builds each gpu.func afresh and drops the launch's
// discardable attributes; the kernel strategy recorded on a launch must
// reach the kernel, where the cost report and the PTX tests look for it.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

namespace oflow {
#define GEN_PASS_DEF_OUTLINEGPUKERNELS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

constexpr StringLiteral kStrategy = "oflow.strategy";

struct OutlineGpuKernelsPass : impl::OutlineGpuKernelsBase<OutlineGpuKernelsPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    createGpuKernelOutliningPass()->getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<Attribute> strategies;
    module.walk([&](gpu::LaunchOp launch) {
      Attribute strategy = launch->getAttr(kStrategy);
      if (FlatSymbolRefAttr name = launch.getFunctionAttr(); strategy && name)
        strategies[name.getValue()] = strategy;
    });
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    module.walk([&](gpu::GPUFuncOp kernel) {
      if (auto it = strategies.find(kernel.getName()); it != strategies.end())
        kernel->setAttr(kStrategy, it->second);
    });
  }
};

} // namespace
} // namespace oflow
