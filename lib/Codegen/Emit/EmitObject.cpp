//===- EmitObject.cpp - LLVM dialect -> host object files, in process -----===//
//
// LLVM's optimization and code generation are most of a big model's compile
// time on the CPU target, and one module is one thread: the executable's
// module is split into partitions compiled on the machine's cores.
//
//===----------------------------------------------------------------------===//
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
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

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

/// The host's LLVM target machine at `optLevel`.
static std::unique_ptr<llvm::TargetMachine> hostMachine(unsigned optLevel,
                                                        std::string &error) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  for (auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::None));
}

/// Optimizes `m` for `machine` and writes it to `path` as LLVM IR text
/// (`asText`) or an object file; "" or the error.
static std::string optimizeAndWrite(llvm::Module &m, llvm::TargetMachine &machine,
                                    unsigned optLevel, StringRef path, bool asText) {
  m.setTargetTriple(machine.getTargetTriple());
  m.setDataLayout(machine.createDataLayout());
  auto optimize = makeOptimizingTransformer(optLevel, 0, &machine);
  if (llvm::Error err = optimize(&m))
    return "LLVM optimization failed: " + llvm::toString(std::move(err));
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write '" + path.str() + "': " + ec.message();
  if (asText) {
    m.print(out.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine.addPassesToEmitFile(codegen, out.os(), nullptr,
                                    llvm::CodeGenFileType::ObjectFile))
      return "the host target cannot emit object files";
    codegen.run(m);
  }
  out.keep();
  return "";
}

/// The module as LLVM IR with the image's data, or null after an error.
static std::unique_ptr<llvm::Module> translate(ModuleOp module, const ProgramImage &image,
                                               llvm::LLVMContext &llvmContext) {
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
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "oflow_program");
  if (!llvmModule) {
    emitError(module.getLoc()) << "translation to LLVM IR failed";
    return nullptr;
  }
  addData(*llvmModule, "oflow_manifest", image.manifest, false, true);
  addData(*llvmModule,
          "oflow_state_init",
          StringRef(reinterpret_cast<const char *>(image.stateInit.data()),
                    image.stateInit.size()),
          true, false);
  addData(*llvmModule, "oflow_onnx_model", image.onnxModel, true, false);
  return llvmModule;
}

LogicalResult emitProgram(ModuleOp module, const ProgramImage &image,
                          StringRef path, bool asText, unsigned optLevel) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translate(module, image, llvmContext);
  if (!llvmModule)
    return failure();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = hostMachine(optLevel, error);
  if (machine)
    error = optimizeAndWrite(*llvmModule, *machine, optLevel, path, asText);
  if (!error.empty())
    return emitError(module.getLoc()) << error;
  return success();
}

unsigned codegenThreads() {
  if (const char *env = std::getenv("OFLOW_COMPILE_THREADS")) {
    int n = std::atoi(env);
    return static_cast<unsigned>(std::clamp(n, 1, 64));
  }
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

FailureOr<SmallVector<std::string>> emitProgramObjects(ModuleOp module,
                                                       const ProgramImage &image,
                                                       unsigned optLevel,
                                                       unsigned threads) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translate(module, image, llvmContext);
  if (!llvmModule)
    return failure();
  // Partitions in bitcode, each read back into a context of its own: an
  // LLVMContext is not shared between threads. Round-robin over functions
  // balances the work; locals used across partitions become hidden globals.
  SmallVector<SmallString<0>> bitcode;
  if (threads <= 1) {
    bitcode.emplace_back();
    llvm::raw_svector_ostream os(bitcode.back());
    llvm::WriteBitcodeToFile(*llvmModule, os);
  } else {
    llvm::SplitModule(
        *llvmModule, threads,
        [&](std::unique_ptr<llvm::Module> part) {
          bitcode.emplace_back();
          llvm::raw_svector_ostream os(bitcode.back());
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
  }
  llvmModule.reset();

  SmallVector<std::string> paths(bitcode.size()), errors(bitcode.size());
  for (auto [i, path] : llvm::enumerate(paths)) {
    SmallString<128> file;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "oflow-program-" + Twine(i), "o", file)) {
      for (StringRef made : ArrayRef(paths).take_front(i))
        llvm::sys::fs::remove(made);
      return emitError(module.getLoc())
             << "cannot create a temporary object file: " << ec.message();
    }
    path = std::string(file);
  }
  auto compile = [&](size_t i) {
    llvm::LLVMContext context;
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(bitcode[i].str(), "oflow_program"), context);
    if (!part) {
      errors[i] = "reading a partition back failed: " + llvm::toString(part.takeError());
      return;
    }
    std::unique_ptr<llvm::TargetMachine> machine = hostMachine(optLevel, errors[i]);
    if (machine)
      errors[i] = optimizeAndWrite(**part, *machine, optLevel, paths[i], false);
  };
  std::vector<std::thread> workers;
  for (size_t i = 1; i < bitcode.size(); ++i)
    workers.emplace_back(compile, i);
  compile(0);
  for (std::thread &worker : workers)
    worker.join();
  for (const std::string &error : errors)
    if (!error.empty()) {
      for (const std::string &path : paths)
        llvm::sys::fs::remove(path);
      return emitError(module.getLoc()) << error;
    }
  return paths;
}

} // namespace oflow
