//===- Driver.h - the oflow-compile pipeline --------------------*- C++ -*-===//
#ifndef OFLOW_DRIVER_DRIVER_H
#define OFLOW_DRIVER_DRIVER_H

#include "oflow/Import/OnnxImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <vector>

namespace oflow {

/// Pipeline stages `--emit` can stop after, in pipeline order, plus the plan
/// report. `Ptx` (the kernels' PTX, CUDA target only) is a side output
/// listed after the host's LLVM IR.
enum class EmitStage {
  Mlir, Training, Sbp, Partitioned, Linalg, Llvm, Ptx, Obj, Exe, Plan,
  PlanJson, PlanHtml, Simulate, Kernels, KernelsJson
};

/// Parses an `--emit` value; nullopt for an unknown one.
std::optional<EmitStage> parseEmitStage(const std::string &name);
const char *emitStageName(EmitStage stage);
/// The stage names in pipeline order, for --help.
std::vector<std::string> emitStageNames();

/// `CudaEmulated`: the CUDA target's kernels run as host loops, linked with
/// the CPU runtime, to check their numerics on a machine without a GPU.
enum class Target { Cuda, Cpu, CudaEmulated };

enum class Mode { Train, Infer };

/// The training graph: loss, what to train, optimizer and LR schedule
/// (PyTorch semantics; see the oflow-build-train-step pass).
struct TrainingOptions {
  std::string loss = "none"; ///< none (the model outputs a scalar) | cross-entropy | mse
  std::string label = "labels";
  std::vector<std::string> freeze;
  std::string optimizer = "sgd"; ///< sgd | adam | adamw
  /// Negative: unset; oflow-build-train-step applies torch.optim's default.
  double lr = -1.0;
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  /// Negative: unset (torch.optim's default: 0.01 for AdamW, else 0).
  double weightDecay = -1.0;
  double clipGradNorm = 0.0;
  std::string schedule = "constant"; ///< constant | linear-warmup | cosine | warmup-cosine
  int64_t warmupSteps = 0;
  int64_t totalSteps = 0;
  double minLr = 0.0;
  /// The initial dynamic loss scale under --precision fp16 (GradScaler init_scale).
  double lossScale = 65536.0;
};

struct CompileOptions {
  std::string input;
  std::string output = "-";
  /// Axis sizes of the device mesh; empty keeps the model's (native IR) or
  /// uses one device.
  std::vector<int64_t> mesh;
  /// Names and link kinds of the mesh axes (--mesh-names, --links; one per
  /// axis), set on the mesh (--mesh's or the model's); empty: unchanged.
  std::vector<std::string> meshNames, links;
  Target target = Target::Cuda;
  EmitStage emit = EmitStage::Exe;
  bool printWeights = false;
  /// Print the memory plan and the trained parameters on stderr.
  bool verbose = true;
  /// LLVM optimization level for the generated code (0-3).
  unsigned optLevel = 2;
  /// CPU target: write the loop-level IR here and give the executable line
  /// tables pointing into it (--line-info-ir), for profilers.
  std::string lineInfoIr;
  /// Models whose weights exceed this many bytes are not embedded: the
  /// executable reads them from the model file when it starts.
  int64_t embedWeightsLimit = int64_t(256) << 20;
  Mode mode = Mode::Train;
  /// `NAME=LAYOUT` layouts for variables and inputs (--sbp).
  std::vector<std::string> sbpHints;
  /// Variables stored flat whatever their hints say (--plan's `stored_flat`).
  std::vector<std::string> flatVariables;
  /// Largest all-reduce bucket in MiB (--bucket-mb; 0: no fusion).
  double bucketMb = 25.0;
  /// fp32, or bf16/fp16: GEMM operands rounded to that precision, f32
  /// accumulation, f32 master weights (--precision; oflow-autocast).
  std::string precision = "fp32";
  /// Debugging aids (--no-elementwise-fusion, --no-buffer-reuse): stages
  /// switched off so that a wrong result can be pinned on one of them.
  bool fuseElementwise = true;
  bool reuseBuffers = true;
  /// --no-fused-attention: CUDA targets with --precision bf16/fp16 keep
  /// attention as matmul, softmax, matmul (oflow-fuse-attention skipped).
  bool fuseAttention = true;
  /// --pad-gemm-min-macs: CUDA targets pad a GEMM's odd output extent with
  /// zero weight rows (oflow-pad-gemm-extents) when M * N * K is at least
  /// this; 0 turns it off.
  int64_t padGemmMinMacs = int64_t(1) << 30;
  /// How f32 convolutions run (--conv): auto (the target's library: dnnl
  /// on the CPU, cudnn on the CUDA targets), dnnl (oneDNN's primitives, CPU
  /// only), cudnn (cuDNN, CUDA targets only; cuda-emulated runs the same
  /// calls with oneDNN) or im2col (im2col + GEMMs, depthwise ones as loops).
  std::string convLibrary = "auto";
  /// --cudnn-workspace-mb: the workspace each cuDNN convolution call gets
  /// from the memory plan (its algorithms are chosen to fit it).
  int64_t cudnnWorkspaceMb = 64;
  /// --emulate-threads-reversed: cuda-emulated runs each interval of a
  /// warp-synchronous kernel's threads in descending order (race finding).
  bool emulateThreadsReversed = false;
  /// The device the SBP planner prices compute on and --emit=kernels judges
  /// the kernels with: a built-in profile's name (h200, h100, a100, cpu) or a
  /// JSON profile (oflow/Support/DeviceProfile.h). Empty: cpu for the CPU
  /// target, h200 for the CUDA targets (deviceName()).
  std::string device;
  /// Variables without an --sbp hint (--shard-state): none (B, data
  /// parallel), optimizer (slots split over the mesh: ZeRO-2), all
  /// (parameters too: ZeRO-3), auto (the first of these whose plan fits the
  /// memory limit).
  std::string shardState = "auto";
  /// Weights split over the mesh and all-gathered for the forward pass
  /// (--reshard-after-forward): yes, gathered again before the backward pass
  /// (oflow-regather-for-backward, FSDP's reshard_after_forward); no, kept
  /// whole across it (one all-gather less per weight); auto, yes unless the
  /// memory search finds that keeping them fits and is faster.
  std::string reshardAfterForward = "auto";
  /// What prices compute in --emit=simulate and the memory search
  /// (--compute-model): "kernels" (the per-kernel model of the lowered
  /// program; used on the CUDA targets with a GPU profile) or "ops" (each op
  /// as the SBP planner prices it).
  std::string computeModel = "kernels";
  /// Under --micro-batches, gradients the plan reduce-scatters
  /// (--micro-batch-gradients): sharded (each micro-batch's scattered as it
  /// is made, the shards accumulated: FSDP, DeepSpeed ZeRO-2), whole
  /// (accumulated whole, scattered once a step: FSDP's no_sync), auto
  /// (sharded when --shard-state shards them: optimizer, all, node).
  std::string microBatchGradients = "auto";
  /// How layouts are chosen (--planner): greedy (in program order, the
  /// default) or ilp (the whole function as an integer program, solved by
  /// CBC from the greedy plan; issue #15 item 5).
  std::string planner = "greedy";
  /// Whether an op may use a parameter split (--tensor-parallel): cost
  /// (where the planner's cost model finds it cheaper), none (every op but
  /// the optimizer update uses parameters whole: data parallelism and ZeRO
  /// as written, what bench/plans' hand plans mean) or auto (in the memory
  /// search, every layout tried with none, and the fastest that fits once
  /// more with cost, the faster kept; without a search or with --sbp hints,
  /// cost).
  std::string tensorParallel = "auto";
  /// Activation recomputation (--recompute): none, selective (elementwise
  /// ops, views, softmax and layer norm), all (GEMMs too), a regular
  /// expression over ONNX node names, or auto (none unless the memory limit
  /// needs it: the search tries selective, then all).
  std::string recompute = "auto";
  /// Gradient accumulation (--micro-batches): each step's batch runs as
  /// this many micro-batches one after the other, their gradients summed,
  /// one synchronisation per step. Planned as one more, last, mesh axis
  /// linked `sequential` (named `micro` on named meshes), which
  /// oflow-unroll-micro-batches turns into time after partitioning.
  int64_t microBatches = 1;
  /// A plan file (--plan, written by --emit=plan-json): the nd-SBP of
  /// every variable and input, compiled exactly.
  std::string planFile;
  /// Bytes per device the plan must fit in (--memory-limit); 0: the
  /// device's memory less 4 GiB where the profile knows it, else none.
  int64_t memoryLimit = 0;
  /// `device`, or the target's default.
  std::string deviceName() const {
    return !device.empty() ? device : target == Target::Cpu ? "cpu" : "h200";
  }
  TrainingOptions training;
  ImportOptions import;
};

/// Loads an ONNX (`.onnx`, `.onnxtext`) or native-IR (`.mlir`) model into a
/// verified oflow module with the mesh attached as `oflow.mesh`. Errors are
/// reported through the context's diagnostics; returns null after them.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(mlir::MLIRContext &context,
                                            const CompileOptions &options);

/// Registers every pass the pipelines run (upstream and oflow's), so that
/// MLIR's command-line options can name them (--mlir-print-ir-after=...).
void registerPipelinePasses();

/// Runs the pipeline up to `options.emit` and writes the result. Returns the
/// process exit code (0, or 1 after reporting a diagnostic).
int runCompiler(mlir::MLIRContext &context, const CompileOptions &options);

} // namespace oflow

#endif
