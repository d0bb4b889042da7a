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

#include "oflow/Codegen/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <limits>

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

/// Makes the constant byte offsets of `kernel`'s views parameters that its
/// one launch passes; false (nothing changed) when there are none or too
/// many.
bool parameterizeOffsets(gpu::GPUFuncOp kernel, gpu::LaunchFuncOp launch) {
  SmallVector<std::pair<memref::ViewOp, arith::ConstantIndexOp>> views;
  kernel.walk([&](memref::ViewOp view) {
    if (auto c = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>())
      views.push_back({view, c});
  });
  if (views.empty() || views.size() > kMaxOffsetParams)
    return false;
  OpBuilder host(launch);
  SmallVector<Value> offsets;
  for (auto [view, offset] : views) {
    unsigned index = kernel.getNumArguments();
    if (failed(kernel.insertArgument(index, host.getIndexType(), {}, view.getLoc())))
      return false;
    view.getByteShiftMutable().assign(kernel.getArgument(index));
    offsets.push_back(arith::ConstantIndexOp::create(host, launch.getLoc(), offset.value()));
  }
  llvm::SmallPtrSet<Operation *, 8> constants;
  for (auto [view, offset] : views)
    constants.insert(offset);
  for (Operation *c : constants)
    if (c->use_empty())
      c->erase(); // its text would tell the kernels apart
  launch.getKernelOperandsMutable().append(offsets);
  return true;
}

/// `kernel` as text without its name: equal for kernels that compute the
/// same from the same parameters.
std::string bodyKey(gpu::GPUFuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Local scope: without it each print numbers the whole module's values.
  // Every flag the command line could change is set: elided constants
  // would make different kernels equal, locations equal ones different.
  OpPrintingFlags flags;
  flags.useLocalScope()
      .enableDebugInfo(false)
      .printNameLocAsPrefix(false)
      .printGenericOpForm(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max());
  kernel.print(os, flags);
  std::string name = "@" + kernel.getName().str() + "(";
  if (size_t at = text.find(name); at != std::string::npos)
    text.replace(at, name.size(), "@(");
  return text;
}

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
    parameterizeOffsets(kernel, launch);
    auto [first, inserted] = firstOf.try_emplace(bodyKey(kernel), kernel);
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
