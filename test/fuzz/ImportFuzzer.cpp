//===- ImportFuzzer.cpp - model bytes through the command line's front-end ===//
//
// The bytes are written to a file named like a model (OFLOW_FUZZ_EXTENSION:
// .onnx, .onnxtext or .mlir) and loaded exactly as oflow-compile loads its
// input (oflow::loadModel: the ONNX importer or MLIR's parser, then the
// verifier), so a finding is one a user's file can trigger. Diagnostics are
// expected and dropped (OFLOW_FUZZ_VERBOSE=1 prints them); a crash, a hang
// or a sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//
#include "FuzzWorkDir.h"
#include "oflow/Driver/Driver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

const std::string &modelPath() {
  static const std::string path =
      fuzzWorkDir() + "/model" OFLOW_FUZZ_EXTENSION;
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = modelPath();
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    if (size)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    std::perror(path.c_str());
    std::abort();
  }
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  static const bool verbose = std::getenv("OFLOW_FUZZ_VERBOSE") != nullptr;
  mlir::ScopedDiagnosticHandler drop(&context, [](mlir::Diagnostic &d) {
    if (verbose)
      std::fprintf(stderr, "%s\n", d.str().c_str());
    return mlir::success();
  });
  oflow::CompileOptions options;
  options.input = path;
  mlir::OwningOpRef<mlir::ModuleOp> module = oflow::loadModel(context, options);
  return 0;
}
