//===- Program.h - from bound, bufferized IR to an executable ---*- C++ -*-===//
#ifndef OFLOW_CODEGEN_PROGRAM_H
#define OFLOW_CODEGEN_PROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>
#include <vector>

namespace oflow {

/// Everything besides code that the runtime needs (abi.h): the manifest text
/// and the initial bytes of the state buffer's variables.
struct ProgramImage {
  std::string manifest;
  std::vector<uint8_t> stateInit;
  /// The ONNX model with the variables' initializer data stripped, for
  /// `--export` (empty when the program came from MLIR).
  std::string onnxModel;
};

struct ManifestInfo {
  std::string mode;      // train | infer
  std::string modelName; // informational
  int64_t batch = 0;
  std::vector<std::string> extraLines; // optimizer/schedule records
  /// When the variables' initial values exceed `embedLimit` bytes and the
  /// model is this ONNX file, the executable reads them from it at start
  /// (the manifest's `weights` record) instead of embedding them.
  std::string weightsFile;
  int64_t embedLimit = int64_t(256) << 20;
  /// Default values of io scalars (e.g. lr), as manifest text.
  std::vector<std::pair<std::string, std::string>> scalarDefaults;
};

/// Passes from linalg-on-tensors to a planned, bufferized program:
/// elementwise fusion, one-shot bufferization, the static memory plan, BLAS
/// calls. For the GPU (`gpu`), reductions into few outputs are split first
/// (oflow-split-reductions), so that they fill the chip.
struct BufferizeOptions {
  bool gpu = false;
  /// Debugging aids that make a wrong result point at a stage: without
  /// elementwise fusion every op is its own loop nest; without buffer reuse
  /// every buffer has bytes of its own in the arena.
  bool fuseElementwise = true;
  bool reuseBuffers = true;
  /// GPU targets: buffer lifetimes in dependence levels (independent
  /// kernels keep sharing a launch; oflow-plan-memory's by-level), else in
  /// program steps. Micro-batches plan in steps: their lanes are
  /// independent, so by level every lane's buffers would be live together.
  bool planByLevel = true;
};
void addBufferizePipeline(mlir::OpPassManager &pm,
                          const BufferizeOptions &options = {});
/// Passes from the bufferized program to the LLVM dialect. With
/// `lineInfoIr`, the bufferized loop-level IR is written to that file and the
/// generated code gets line tables pointing into it, so that a profiler
/// (`perf annotate`, `perf report --sort srcline`) attributes time to IR ops.
/// With `threads` (the CPU target), loop nests over parallel dimensions run
/// their outer iterations on the runtime's threads.
void addLowerToLlvmPipeline(mlir::OpPassManager &pm,
                            llvm::StringRef lineInfoIr = {}, bool threads = false);

/// The CUDA toolkit folder: $CUDA_HOME, else /usr/local/cuda.
std::string cudaToolkitPath();
/// Fails with one error line when the toolkit lacks ptxas, fatbinary or
/// libdevice.
mlir::LogicalResult checkCudaToolkit(mlir::Location loc, llvm::StringRef toolkit);
/// The bufferized program's memory-touching ops as gpu.launch regions
/// (the start of addGpuKernelPipeline; `--target cuda-emulated` runs them as
/// host loops through oflow-emulate-gpu-launches).
void addGpuFormKernelsPipeline(mlir::OpPassManager &pm);
/// addGpuFormKernelsPipeline, then the launches outlined into gpu.func
/// kernels (what --emit=kernels analyses; no CUDA toolkit needed).
void addGpuOutlinedKernelsPipeline(mlir::OpPassManager &pm);
/// CUDA target, part 1: from the bufferized program to kernels (PTX in
/// gpu.binary objects, see kernelAssembly) launched from host code.
void addGpuKernelPipeline(mlir::OpPassManager &pm, llvm::StringRef toolkit);
/// CUDA target, part 2: PTX -> fatbin (cubins for sm_80, sm_90 + PTX), host
/// code -> the LLVM dialect.
void addGpuLowerToLlvmPipeline(mlir::OpPassManager &pm, llvm::StringRef toolkit);
/// The PTX of the kernels after addGpuKernelPipeline.
std::string kernelAssembly(mlir::ModuleOp module);

/// Reads the manifest and initial state from a module bound by
/// oflow-bind-program-interface and planned by oflow-plan-memory, then
/// removes what LLVM translation cannot see (variables, oflow.* attributes).
mlir::FailureOr<ProgramImage> extractProgramImage(mlir::ModuleOp module,
                                                  const ManifestInfo &info);

/// Escapes a name for the manifest (%XX outside [A-Za-z0-9._:/-]).
std::string escapeManifestName(llvm::StringRef name);

/// Translates an LLVM-dialect module to LLVM IR for the host, adds the image
/// as data, optimizes (O3) and writes LLVM IR text (`asText`) or an object.
mlir::LogicalResult emitProgram(mlir::ModuleOp module, const ProgramImage &image,
                                llvm::StringRef path, bool asText,
                                unsigned optLevel = 2);

/// Threads for emitProgramObjects: $OFLOW_COMPILE_THREADS (1 to 64), else the
/// machine's cores (at most 8).
unsigned codegenThreads();

/// emitProgram's object, as `threads` partitions (functions round-robin)
/// optimized and compiled in parallel into temporary object files, whose
/// paths it returns (the caller removes them).
mlir::FailureOr<llvm::SmallVector<std::string>>
emitProgramObjects(mlir::ModuleOp module, const ProgramImage &image,
                   unsigned optLevel, unsigned threads);

/// Links objects with the runtime into an executable (the system C++
/// driver; the runtime library is found next to this compiler or through
/// OFLOW_RUNTIME_DIR): liboflow_runtime.a, or liboflow_runtime_cuda.a for
/// the CUDA target, with the flags of the .link file next to it.
mlir::LogicalResult linkExecutable(mlir::Location loc,
                                   llvm::ArrayRef<std::string> objects,
                                   llvm::StringRef output, bool cuda = false);

} // namespace oflow

#endif
