//===- EmitObject.cpp - LLVM dialect -> host object file, in process ------===//
#include "oflow/Codegen/Program.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace oflow {

/// Adds `bytes` as the external constant `name` and its size as
/// `name_size` (a uint64_t), as abi.h declares them.
static void addData(llvm::Module &m, StringRef name, StringRef bytes,
                    bool withSize, bool nulTerminated) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, bytes, nulTerminated);
  auto *gv = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::ExternalLinkage, init,
                                      name);
  gv->setAlignment(llvm::Align(64));
  if (withSize) {
    auto *size = llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), bytes.size());
    new llvm::GlobalVariable(m, size->getType(), true,
                             llvm::GlobalValue::ExternalLinkage, size,
                             (name + "_size").str());
  }
}

LogicalResult emitProgram(ModuleOp module, const ProgramImage &image,
                          StringRef path, bool asText, unsigned optLevel) {
  Location loc = module.getLoc();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // CUDA target: gpu.binary becomes the embedded fatbin with its module
  // load/unload constructors, gpu.launch_func the mgpu* launch calls.
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "oflow_program");
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";

  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc) << "no LLVM target for " << triple.str() << ": " << error;
  llvm::SubtargetFeatures features;
  for (auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::None));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  addData(*llvmModule, "oflow_manifest", image.manifest, false, true);
  addData(*llvmModule,
          "oflow_state_init",
          StringRef(reinterpret_cast<const char *>(image.stateInit.data()),
                    image.stateInit.size()),
          true, false);
  addData(*llvmModule, "oflow_onnx_model", image.onnxModel, true, false);

  auto optimize = makeOptimizingTransformer(optLevel, 0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: "
                          << llvm::toString(std::move(err));

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  if (asText) {
    llvmModule->print(out.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the host target cannot emit object files";
    codegen.run(*llvmModule);
  }
  out.keep();
  return success();
}

} // namespace oflow
