//===- Pipelines.cpp - the pass pipelines after oflow -> linalg -----------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/Program.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace oflow {

static void addTextual(OpPassManager &pm, const std::string &pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("oflow: invalid built-in pass pipeline");
}

void addBufferizePipeline(OpPassManager &pm, const BufferizeOptions &options) {
  // On the GPU a transpose next to an elementwise op fuses into it (one
  // kernel instead of two), and so does a rounding of a result with other
  // users (as one more result); the CPU keeps its cache-tiled transpose
  // loops and vectorizes f32 generics only.
  if (options.fuseElementwise)
    addTextual(pm, options.gpu ? "func.func(oflow-fuse-elementwise{transposes=true "
                                 "cast-results=true})"
                               : "func.func(oflow-fuse-elementwise)");
  // Weights read transposed by the GEMM call, not copied transposed.
  addTextual(pm, "func.func(oflow-fold-gemm-transposes)");
  // On the GPU, loops of extent 1 go (keepdims statistics, 8x64x1): a
  // normalization's backward then runs over the same rows as its
  // reductions, and oflow-gpu-row-reductions makes it one warp-per-row
  // kernel instead of a kernel per statistic.
  if (options.gpu)
    addTextual(pm, "func.func(oflow-drop-unit-loops)");
  // Every float sum in chains of at most 64 adds (PyTorch-like accuracy);
  // on the GPU also enough partial outputs to fill the chip (a column
  // reduction's 8 warps each take an eighth of the chain).
  // Sibling reductions over the same data (batch and layer norms' sums)
  // one loop nest each: the data read once. On the GPU the row and column
  // strategies keep theirs.
  addTextual(pm, options.gpu ? "func.func(oflow-merge-sibling-reductions{"
                               "gpu-strategies=true})"
                             : "func.func(oflow-merge-sibling-reductions)");
  addTextual(pm, options.gpu ? "func.func(oflow-split-reductions{max-chain=64 "
                               "warp-rows=true column-warps=8},"
                               // A row reduction's row-wise consumers next
                               // to it: one warp-per-row kernel.
                               "oflow-hoist-row-consumers{max-chain=64})"
                             : "func.func(oflow-split-reductions{"
                               "target-threads=0 max-chain=64})");
  // Fills are duplicated after the last CSE, which would merge them again.
  // Results stored into state and io are computed there (no arena copy).
  addTextual(pm, "canonicalize,cse,func.func(oflow-drop-recompute-barriers,"
                 "oflow-duplicate-init-fills,"
                 "oflow-store-results-in-place),"
                 // A value inserted into a larger tensor (a slice's
                 // gradient, a concatenation's parts) is computed in place.
                 "eliminate-empty-tensors,"
                 "one-shot-bufferize{bufferize-function-boundaries "
                 "function-boundary-type-conversion=identity-layout-map},"
                 // The second canonicalize folds the copies between equal
                 // subviews that in-place insertions leave, once CSE has
                 // made them one value.
                 "canonicalize,cse,canonicalize");
  PlanMemoryOptions plan;
  plan.reuse = options.reuseBuffers;
  plan.hostFlag = options.gpu;
  plan.byLevel = options.gpu && options.planByLevel;
  pm.addPass(createPlanMemory(plan));
  pm.addPass(createLinalgToBlas());
  pm.addPass(createLowerRuntimeCalls());
  pm.addNestedPass<func::FuncOp>(createExpandStridedCopies());
}

void addLowerToLlvmPipeline(OpPassManager &pm, StringRef lineInfoIr, bool threads) {
  // Every op lowered from a linalg op keeps its location, so the line of the
  // linalg op in the snapshot names all the loops it becomes.
  if (!lineInfoIr.empty()) {
    LocationSnapshotOptions snapshot;
    snapshot.fileName = lineInfoIr.str();
    pm.addPass(createLocationSnapshot(snapshot));
  }
  // With threads, parallel dimensions stay scf.parallel until the nests are
  // outlined, and each nest over them is run in ranges on the threads.
  std::string parallel = threads ? "{parallel-loops=true}" : "";
  addTextual(pm, "oflow-vectorize-elementwise" + parallel + ","
                 "func.func(oflow-lower-reductions" + parallel + "," +
                 (threads ? "convert-linalg-to-parallel-loops," : "convert-linalg-to-loops,") +
                 "lower-vector-multi-reduction{lowering-strategy=inner-reduction},"
                 "convert-vector-to-scf{full-unroll},lower-vector-mask),"
                 "oflow-vector-math-to-libmvec,"
                 "expand-strided-metadata,"
                 // One function per loop nest: what follows, LLVM included,
                 // then works in time linear in the number of nests.
                 "lower-affine,oflow-outline-loop-nests{nests-per-function=1}," +
                 // scf's collapse of parallel loops leaves affine.apply ops.
                 (threads ? "oflow-parallelize-nests,lower-affine," : "") +
                 "func.func(convert-scf-to-cf,"
                 // bf16 <-> f32 as integer ops (x86 has no such conversion
                 // without AVX512-BF16, and no libcall is guaranteed).
                 "arith-expand{include-bf16=true}),convert-math-to-llvm,"
                 "convert-math-to-libm,convert-vector-to-llvm{reassociate-fp-reductions},"
                 "convert-to-llvm,"
                 "reconcile-unrealized-casts" +
                 (threads ? ",oflow-lower-parallel-calls" : ""));
  if (!lineInfoIr.empty())
    addTextual(pm, "ensure-debug-info-scope-on-llvm-func{"
                   "emission-kind=LineTablesOnly}");
}

std::string cudaToolkitPath() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return "/usr/local/cuda";
}

LogicalResult checkCudaToolkit(Location loc, StringRef toolkit) {
  for (StringRef part : {"bin/ptxas", "bin/fatbinary", "nvvm/libdevice/libdevice.10.bc"}) {
    SmallString<256> path(toolkit);
    llvm::sys::path::append(path, part);
    if (!llvm::sys::fs::exists(path))
      return emitError(loc) << "the CUDA toolkit lacks " << path
                            << " (set CUDA_HOME to a CUDA toolkit folder)";
  }
  return success();
}

/// The kernels' PTX is generated for the oldest architecture the executable
/// supports (PTX ISA 8.0, CUDA 12.0); EmbedFatbin adds the cubins.
static constexpr const char *kPtxChip = "sm_80";
static constexpr const char *kPtxFeatures = "+ptx80";

void addGpuFormKernelsPipeline(OpPassManager &pm) {
  // Reductions first: rows one warp each (the reductions split-reductions
  // left whole for it), columns a block per tile of 32, runs of elementwise
  // ops over the same points one kernel, the other reductions one thread
  // per output with register accumulators.
  addTextual(pm, "func.func(oflow-gpu-row-reductions{max-chain=64},"
                 "oflow-gpu-column-reductions,"
                 "oflow-merge-pointwise,"
                 "oflow-lower-reductions{parallel-loops=true any-order=true},"
                 "oflow-expand-strided-copies{all-copies=true},"
                 "convert-linalg-to-parallel-loops),"
                 "lower-affine,canonicalize,cse,oflow-form-gpu-kernels,"
                 // Then the small independent kernels share launches.
                 "func.func(oflow-fuse-launches)");
}

void addGpuOutlinedKernelsPipeline(OpPassManager &pm) {
  addGpuFormKernelsPipeline(pm);
  addTextual(pm, "oflow-outline-gpu-kernels");
}

void addGpuKernelPipeline(OpPassManager &pm, StringRef toolkit) {
  addGpuOutlinedKernelsPipeline(pm);
  std::string attach = std::string("nvvm-attach-target{chip=") + kPtxChip +
                       " features=" + kPtxFeatures + " O=3}";
  addTextual(pm, "convert-scf-to-cf,expand-strided-metadata," + attach + ","
                 "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,"
                 "canonicalize,cse,"
                 "gpu.module(strip-debuginfo,convert-gpu-to-nvvm,"
                 "llvm-optimize-for-nvvm-target,canonicalize,cse,"
                 "reconcile-unrealized-casts)");
  // With the toolkit, the NVVM serializer links libdevice (__nv_expf, ...);
  // without it those calls would stay unresolved in the PTX.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit.str();
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void addGpuLowerToLlvmPipeline(OpPassManager &pm, StringRef toolkit) {
  EmbedFatbinOptions fatbin;
  fatbin.toolkit = toolkit.str();
  pm.addPass(createEmbedFatbin(fatbin));
  // The host code: thousands of launches, one per function for LLVM, those
  // that differ only in their buffers' offsets shared.
  addTextual(pm, "oflow-outline-loop-nests{nests-per-function=1},gpu-to-llvm,convert-to-llvm,"
                 "canonicalize,cse,reconcile-unrealized-casts");
}

std::string kernelAssembly(ModuleOp module) {
  std::string text;
  module.walk([&](gpu::BinaryOp binary) {
    for (auto object : binary.getObjects().getAsRange<gpu::ObjectAttr>())
      if (object.getFormat() == gpu::CompilationTarget::Assembly)
        text += object.getObject().getValue().str();
  });
  return text;
}

} // namespace oflow
