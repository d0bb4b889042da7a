//===- OutlineGpuKernels.cpp - gpu-kernel-outlining keeping strategies ----===//
//
// Upstream outlining builds each gpu.func afresh and drops the launch's
// discardable attributes; the kernel strategy recorded on a launch (and a
// fused launch's block ranges) must reach the kernel, where the cost report
// and the PTX tests look for them.
//
// Then kernels that differ only in where their buffers lie become one: the
// constant byte offsets of a kernel's views become kernel parameters, and
// kernels that are then the same (a transformer's layers repeat theirs)
// share one gpu.func. GPT-2's 12 layers made 12 copies of each of their
// kernels, and PTX generation and ptxas take time in proportion.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "oflow/Codegen/FunctionDedup.h"
#include "oflow/Codegen/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// At most this many offsets become parameters of one kernel (8 bytes
/// each; CUDA's limit for all parameters is 4 KiB on older drivers).
constexpr unsigned kMaxOffsetParams = 256;

/// Parameterizes each kernel's offsets, then lets kernels with equal text
/// share the first one's gpu.func. The ONNX nodes each launch came from
/// stay on the launch (`oflow.origins`) for the cost report.
void dedupKernels(ModuleOp module) {
  llvm::DenseMap<Operation *, SmallVector<gpu::LaunchFuncOp>> launches;
  SymbolTableCollection symbols;
  module.walk([&](gpu::LaunchFuncOp launch) {
    if (auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            launch, launch.getKernel()))
      launches[kernel].push_back(launch);
  });
  llvm::StringMap<gpu::GPUFuncOp> firstOf;
  SmallVector<gpu::GPUFuncOp> kernels;
  module.walk([&](gpu::GPUFuncOp kernel) { kernels.push_back(kernel); });
  for (gpu::GPUFuncOp kernel : kernels) {
    auto it = launches.find(kernel);
    if (it == launches.end() || it->second.size() != 1)
      continue;
    gpu::LaunchFuncOp launch = it->second.front();
    if (std::string origins = kernelOrigins(kernel); !origins.empty())
      launch->setAttr("oflow.origins", StringAttr::get(module.getContext(), origins));
    if (auto offsets = parameterizeViewOffsets(kernel, kMaxOffsetParams)) {
      OpBuilder host(launch);
      for (int64_t offset : *offsets)
        launch.getKernelOperandsMutable().append(
            arith::ConstantIndexOp::create(host, launch.getLoc(), offset).getResult());
    }
    auto [first, inserted] = firstOf.try_emplace(functionBodyKey(kernel), kernel);
    if (inserted)
      continue;
    gpu::GPUFuncOp keep = first->second;
    auto kernelModule = keep->getParentOfType<gpu::GPUModuleOp>();
    launch.setKernelAttr(SymbolRefAttr::get(
        kernelModule.getNameAttr(), {FlatSymbolRefAttr::get(keep.getNameAttr())}));
    kernel.erase();
  }
}

struct OutlineGpuKernelsPass : impl::OutlineGpuKernelsBase<OutlineGpuKernelsPass> {
  using Base::Base;
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
    if (dedup)
      dedupKernels(module);
  }
};

} // namespace
} // namespace oflow
