//===- Link.cpp - object + runtime -> executable --------------------------===//
#include "oflow/Codegen/Program.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

namespace oflow {

/// The folder with liboflow_runtime.a and oflow_runtime.link (the flags the
/// runtime needs): $OFLOW_RUNTIME_DIR, else <this tool>/../lib.
static std::string runtimeDir() {
  if (const char *env = std::getenv("OFLOW_RUNTIME_DIR"))
    return env;
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("oflow-compile", &anchor);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(dir, "lib");
  return std::string(dir);
}

LogicalResult linkExecutable(Location loc, ArrayRef<std::string> objects,
                             StringRef output, bool cuda) {
  std::string dir = runtimeDir();
  llvm::SmallString<256> lib(dir), flagsFile(dir);
  llvm::sys::path::append(lib, cuda ? "liboflow_runtime_cuda.a"
                                    : "liboflow_runtime.a");
  llvm::sys::path::append(flagsFile, cuda ? "oflow_runtime_cuda.link"
                                          : "oflow_runtime.link");
  if (!llvm::sys::fs::exists(lib))
    return emitError(loc) << "the oflow " << (cuda ? "CUDA " : "")
                          << "runtime library is missing: " << lib
                          << " (set OFLOW_RUNTIME_DIR to the folder that has it)";
  SmallVector<std::string> flags;
  if (auto text = llvm::MemoryBuffer::getFile(flagsFile)) {
    SmallVector<StringRef> parts;
    (*text)->getBuffer().split(parts, ' ', -1, false);
    for (StringRef p : parts)
      if (!p.trim().empty())
        flags.push_back(p.trim().str());
  }
  auto cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return emitError(loc) << "no C++ compiler driver (c++) on PATH to link with";
  // Link to a temporary name and rename, so a failed link never leaves a
  // half-written executable over a good one. An output that exists but is
  // not a regular file (/dev/null, a pipe) is written through, never
  // renamed over: as root, a rename would replace the device itself.
  bool special = llvm::sys::fs::exists(output) &&
                 !llvm::sys::fs::is_regular_file(output);
  std::string tmp = (output + ".oflow-link.tmp").str();
  if (special) {
    SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("oflow-link", "exe", path))
      return emitError(loc) << "cannot create a temporary file: " << ec.message();
    tmp = std::string(path);
  }
  SmallVector<StringRef> args = {*cxx};
  args.append(objects.begin(), objects.end());
  args.push_back(lib);
  for (const std::string &f : flags)
    args.push_back(f);
  args.append({"-o", tmp});
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    llvm::sys::fs::remove(tmp);
    return emitError(loc) << "linking the executable failed (" << *cxx
                          << " exited with " << rc << ")"
                          << (message.empty() ? "" : ": ") << message;
  }
  std::error_code ec = special ? llvm::sys::fs::copy_file(tmp, output)
                               : llvm::sys::fs::rename(tmp, output);
  if (special)
    llvm::sys::fs::remove(tmp);
  if (ec)
    return emitError(loc) << "cannot write '" << output << "': " << ec.message();
  return success();
}

} // namespace oflow
