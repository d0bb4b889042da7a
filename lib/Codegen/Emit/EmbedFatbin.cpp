//===- EmbedFatbin.cpp - PTX objects -> one fatbin per gpu.binary ---------===//
//
// MLIR's NVVM target serializes a gpu.module for one chip. The executable
// must load on sm_80 and sm_90 and JIT on newer GPUs, so the PTX (generated
// for the oldest architecture) is assembled by ptxas once per architecture
// and packed with the PTX itself by fatbinary into one image.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace oflow {
#define GEN_PASS_DEF_EMBEDFATBIN
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Temporary files removed when the object goes out of scope.
struct TempFiles {
  SmallVector<std::string> paths;
  ~TempFiles() {
    for (const std::string &p : paths)
      llvm::sys::fs::remove(p);
  }
  FailureOr<std::string> create(Location loc, StringRef suffix) {
    SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("oflow-kernels", suffix, path))
      return emitError(loc) << "cannot create a temporary file: " << ec.message();
    paths.push_back(std::string(path));
    return paths.back();
  }
};

LogicalResult runTool(Location loc, StringRef tool, ArrayRef<std::string> args) {
  SmallVector<StringRef> argv = {tool};
  for (const std::string &a : args)
    argv.push_back(a);
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(tool, argv, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return emitError(loc) << llvm::sys::path::filename(tool) << " failed (exit "
                          << rc << ")" << (message.empty() ? "" : ": ")
                          << message;
  return success();
}

/// Runs `tool` once per argument list, concurrently.
LogicalResult runTools(Location loc, StringRef tool,
                       ArrayRef<SmallVector<std::string>> argLists) {
  SmallVector<SmallVector<StringRef>> argvs;
  for (const auto &args : argLists) {
    argvs.push_back({tool});
    for (const std::string &a : args)
      argvs.back().push_back(a);
  }
  SmallVector<llvm::sys::ProcessInfo> running;
  std::string message;
  for (const auto &argv : argvs) {
    running.push_back(llvm::sys::ExecuteNoWait(tool, argv, std::nullopt, {}, 0,
                                               &message));
    if (running.back().Pid == llvm::sys::ProcessInfo::InvalidPid)
      return emitError(loc) << "cannot run " << tool << ": " << message;
  }
  LogicalResult result = success();
  for (llvm::sys::ProcessInfo &p : running) {
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(p, /*SecondsToWait=*/std::nullopt, &message);
    if (done.ReturnCode != 0 && succeeded(result))
      result = emitError(loc) << llvm::sys::path::filename(tool)
                              << " failed (exit " << done.ReturnCode << ")"
                              << (message.empty() ? "" : ": ") << message;
  }
  return result;
}

struct EmbedFatbinPass : impl::EmbedFatbinBase<EmbedFatbinPass> {
  using Base::Base;

  /// "sm_90" -> "90".
  static StringRef smNumber(StringRef arch) {
    arch.consume_front("sm_");
    return arch;
  }

  FailureOr<std::string> buildFatbin(Location loc, StringRef ptx,
                                     ArrayRef<std::string> arches) {
    SmallString<128> ptxas(toolkit), fatbinary(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    llvm::sys::path::append(fatbinary, "bin", "fatbinary");
    for (StringRef tool : {StringRef(ptxas), StringRef(fatbinary)})
      if (!llvm::sys::fs::can_execute(tool))
        return emitError(loc) << "the CUDA toolkit has no " << tool
                              << " (set CUDA_HOME to the toolkit's folder)";
    TempFiles temps;
    FailureOr<std::string> ptxFile = temps.create(loc, "ptx");
    FailureOr<std::string> fatbinFile = temps.create(loc, "fatbin");
    if (failed(ptxFile) || failed(fatbinFile))
      return failure();
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(*ptxFile, ec);
      if (ec)
        return emitError(loc) << "cannot write " << *ptxFile << ": " << ec.message();
      os << ptx;
    }
    SmallVector<std::string> fatbinArgs = {"-64", "--create=" + *fatbinFile};
    // One ptxas per architecture, all at once (they take seconds on big
    // programs).
    SmallVector<SmallVector<std::string>> ptxasArgs;
    for (const std::string &arch : arches) {
      FailureOr<std::string> cubin = temps.create(loc, "cubin");
      if (failed(cubin))
        return failure();
      ptxasArgs.push_back({"-arch=" + arch, "-O3", *ptxFile, "-o", *cubin});
      fatbinArgs.push_back(
          ("--image3=kind=elf,sm=" + smNumber(arch) + ",file=" + *cubin).str());
    }
    if (failed(runTools(loc, ptxas, ptxasArgs)))
      return failure();
    // The PTX for the oldest architecture: the driver JIT-compiles it on
    // GPUs newer than every cubin.
    fatbinArgs.push_back(("--image3=kind=ptx,sm=" + smNumber(arches.front()) +
                          ",file=" + *ptxFile)
                             .str());
    if (failed(runTool(loc, fatbinary, fatbinArgs)))
      return failure();
    auto bytes = llvm::MemoryBuffer::getFile(*fatbinFile, /*IsText=*/false);
    if (!bytes)
      return emitError(loc) << "cannot read " << *fatbinFile;
    return (*bytes)->getBuffer().str();
  }

  void runOnOperation() override {
    SmallVector<std::string> arches(archs.begin(), archs.end());
    if (arches.empty())
      arches = {"sm_80", "sm_90"};
    getOperation().walk([&](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        if (object.getFormat() != gpu::CompilationTarget::Assembly) {
          objects.push_back(object);
          continue;
        }
        FailureOr<std::string> fatbin = buildFatbin(
            binary.getLoc(), object.getObject().getValue(), arches);
        if (failed(fatbin))
          return signalPassFailure();
        objects.push_back(gpu::ObjectAttr::get(
            &getContext(), object.getTarget(), gpu::CompilationTarget::Fatbin,
            StringAttr::get(&getContext(), *fatbin), object.getProperties(),
            object.getKernels()));
      }
      binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    });
  }
};

} // namespace
} // namespace oflow
