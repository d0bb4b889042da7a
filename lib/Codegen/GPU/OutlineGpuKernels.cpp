//===- OutlineGpuKernels.cpp - gpu-kernel-outlining keeping strategies ----===//
//
// Upstream outlining builds each gpu.func afresh and drops the launch's
// discardable attributes; the kernel strategy recorded on a launch (and a
// fused launch's block ranges) must reach the kernel, where the cost report
// and the PTX tests look for them.
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

/// The attributes a launch hands to its kernel.
constexpr StringLiteral kKept[] = {"oflow.strategy", "oflow.segments"};

struct OutlineGpuKernelsPass : impl::OutlineGpuKernelsBase<OutlineGpuKernelsPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    createGpuKernelOutliningPass()->getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<SmallVector<NamedAttribute>> kept;
    module.walk([&](gpu::LaunchOp launch) {
      FlatSymbolRefAttr name = launch.getFunctionAttr();
      for (StringRef attr : kKept)
        if (Attribute value = launch->getAttr(attr); value && name)
          kept[name.getValue()].push_back(
              NamedAttribute(StringAttr::get(&getContext(), attr), value));
    });
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    module.walk([&](gpu::GPUFuncOp kernel) {
      if (auto it = kept.find(kernel.getName()); it != kept.end())
        for (NamedAttribute attr : it->second)
          kernel->setAttr(attr.getName(), attr.getValue());
    });
  }
};

} // namespace
} // namespace oflow
