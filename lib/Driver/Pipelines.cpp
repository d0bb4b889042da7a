//===- Pipelines.cpp - oflow-compile's pass pipelines ---------------------===//
#include "Pipelines.h"
#include "oflow/Driver/Driver.h"

#include "oflow/Autodiff/Passes.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Conversion/Passes.h"
#include "oflow/Sbp/Passes.h"
#include "oflow/Training/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace oflow {

void registerPipelineDialects(MLIRContext &context) {
  // Every dialect the pipelines produce, with the external interface models
  // (bufferization, conversion to LLVM) that registerAll* attaches.
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates the kernels to LLVM IR (NVVM).
  registerAllToLLVMIRTranslations(registry);
  context.appendDialectRegistry(registry);
}

void registerPipelinePasses() {
  static bool done = [] {
    registerAllPasses();
    registerOFlowCodegenPasses();
    registerTrainingPasses();
    registerAutodiffPasses();
    registerOFlowConversionPasses();
    registerSbpPasses();
    return true;
  }();
  (void)done;
}

static LogicalResult addTextual(PassManager &pm, const std::string &pipeline) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (succeeded(parsePassPipeline(pipeline, pm, os)))
    return success();
  return emitError(UnknownLoc::get(pm.getContext()))
         << "internal pipeline '" << pipeline << "' is invalid: " << error;
}

/// A double exactly as the pass option parser reads it back.
static std::string num(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// The graph rewrites for cuBLASLt and the runtime's GPU kernels, before
/// autodiff: zero weight rows for GEMMs with odd extents (every precision:
/// fp32 executables may run TF32 tensor cores), and oflow-fuse-attention
/// where the runtime has kernels for the fused op (tensor-core precisions;
/// cuda-emulated runs the CPU runtime's reference of the same function).
/// The CPU target keeps its BLAS GEMMs and unfused attention.
static void addGpuGraphRewrites(PassManager &pm, const CompileOptions &options) {
  if (options.target == Target::Cpu)
    return;
  if (options.padGemmMinMacs > 0) {
    OFlowPadGemmExtentsOptions pad;
    // 16 bytes of the operands cuBLASLt reads: 8 halves, 4 floats.
    pad.multiple = options.precision == "fp32" ? 4 : 8;
    pad.minMacs = options.padGemmMinMacs;
    pm.addPass(createOFlowPadGemmExtents(pad));
  }
  if (options.fuseAttention && options.precision != "fp32") {
    // Folds a mask built from constants (trilu + compare: the native-IR
    // GPTs of examples/gpt-config) into the constant the matcher reads.
    pm.addPass(createCanonicalizerPass());
    OFlowFuseAttentionOptions fuse;
    fuse.precision = options.precision;
    pm.addPass(createOFlowFuseAttention(fuse));
  }
  // After the attention matcher, which reads the projections one by one.
  pm.addPass(createOFlowMergeSiblingMatmuls());
}

LogicalResult addTrainingPasses(PassManager &pm, const CompileOptions &options) {
  addGpuGraphRewrites(pm, options);
  if (options.mode == Mode::Infer)
    return addTextual(pm, "oflow-build-infer-entry,canonicalize,cse");
  // Typed options: what the user set, nothing more; the passes own the
  // defaults (torch.optim's), and the manifest is written from what the IR
  // records (describeTraining).
  const TrainingOptions &t = options.training;
  AppendLossOptions loss;
  loss.loss = t.loss;
  loss.label = t.label;
  pm.addPass(createAppendLoss(loss));
  OFlowAutodiffOptions autodiff;
  autodiff.freeze.assign(t.freeze.begin(), t.freeze.end());
  pm.addPass(createOFlowAutodiff(autodiff));
  BuildTrainStepOptions step;
  step.optimizer = t.optimizer;
  step.lr = t.lr;
  step.momentum = t.momentum;
  step.dampening = t.dampening;
  step.nesterov = t.nesterov;
  step.beta1 = t.beta1;
  step.beta2 = t.beta2;
  step.eps = t.eps;
  step.weightDecay = t.weightDecay;
  step.clipGradNorm = t.clipGradNorm;
  step.schedule = t.schedule;
  step.warmupSteps = t.warmupSteps;
  step.totalSteps = t.totalSteps;
  step.minLr = t.minLr;
  step.lossScaling = options.precision == "fp16";
  step.lossScale = t.lossScale;
  pm.addPass(createBuildTrainStep(step));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return success();
}

/// --recompute's pass, when it asks for one.
static void addRecomputePass(PassManager &pm, const CompileOptions &options) {
  if (options.recompute == "none" || options.recompute == "auto")
    return;
  RecomputeOptions recompute;
  if (options.recompute == "selective" || options.recompute == "all") {
    recompute.mode = options.recompute;
  } else {
    recompute.mode = "all";
    recompute.names = options.recompute;
  }
  pm.addPass(createRecompute(recompute));
}

std::string convLibraryOf(const CompileOptions &options) {
  if (options.convLibrary == "im2col")
    return "";
  if (options.convLibrary != "auto")
    return options.convLibrary;
  return options.target == Target::Cpu ? "dnnl" : "cudnn";
}

LogicalResult addLinalgPasses(PassManager &pm, const CompileOptions &options) {
  std::string autocast;
  if (options.precision != "fp32")
    autocast = ",func.func(oflow-autocast{precision=" + options.precision + "})";
  // oneDNN's and cuDNN's convolutions are f32 here: with mixed precision
  // the targets keep the GEMM path, whose operands oflow-autocast rounds.
  // With micro-batches the partition stage has recomputed (addPartitionPasses).
  if (options.microBatches == 1)
    addRecomputePass(pm, options);
  std::string lower = "oflow-lower-to-linalg";
  if (std::string library = convLibraryOf(options);
      !library.empty() && options.precision == "fp32") {
    int64_t workspace =
        library == "cudnn" ? options.cudnnWorkspaceMb * (int64_t(1) << 20) : 0;
    lower += "{conv-library=" + library +
             " conv-workspace-bytes=" + std::to_string(workspace) + "}";
  }
  return addTextual(pm, "oflow-bind-program-interface," + lower + autocast +
                            ",canonicalize,cse");
}

int64_t programBatch(ModuleOp module) {
  auto slots = module->getAttrOfType<ArrayAttr>(kIoLayoutAttr);
  if (!slots)
    return 0;
  for (auto slot : slots.getAsRange<DictionaryAttr>()) {
    if (slot.getAs<StringAttr>("kind").getValue() != "input")
      continue;
    auto typeAttr = slot.getAs<TypeAttr>("global_type");
    if (!typeAttr)
      typeAttr = slot.getAs<TypeAttr>("type");
    auto type = cast<RankedTensorType>(typeAttr.getValue());
    if (type.getRank() > 0)
      return type.getDimSize(0);
  }
  return 0;
}

/// The shortest text that reads back as `v` (0.9, not 0.90000000000000002).
static std::string shortest(double v) {
  char text[40];
  for (int digits = 6; digits < 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v)
      return text;
  }
  return num(v);
}

/// A manifest value: numbers as the runtime parses them back.
static std::string manifestValue(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return shortest(f.getValueAsDouble());
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getType().isInteger(1) ? (i.getValue().isZero() ? "0" : "1")
                                    : std::to_string(i.getInt());
  if (auto b = dyn_cast<BoolAttr>(value))
    return b.getValue() ? "1" : "0";
  if (auto str = dyn_cast<StringAttr>(value))
    return str.getValue().str();
  return "?";
}

TrainingDescription describeTraining(ModuleOp module) {
  TrainingDescription d;
  DictionaryAttr opt;
  module.walk([&](FunctionOpInterface fn) {
    if (auto a = fn->getAttrOfType<DictionaryAttr>(
            mlir::oflow::OFlowDialect::kOptimizerAttrName))
      opt = a;
  });
  if (!opt)
    return d;
  // "optimizer KIND lr=.. weight_decay=.. <the optimizer's own>", then
  // "schedule KIND <its parameters>": the attribute's keys, as recorded.
  std::string line = "optimizer " + manifestValue(opt.get("kind"));
  std::string schedule = "schedule " + manifestValue(opt.get("schedule"));
  for (NamedAttribute a : opt) {
    StringRef key = a.getName().getValue();
    if (key == "kind" || key == "schedule")
      continue;
    bool scheduleKey = key == "warmup_steps" || key == "total_steps" || key == "min_lr";
    (scheduleKey ? schedule : line) += " " + key.str() + "=" + manifestValue(a.getValue());
  }
  d.lines = {line, schedule};
  if (auto lr = dyn_cast_or_null<FloatAttr>(opt.get("lr")))
    d.lr = lr.getValueAsDouble();
  return d;
}

} // namespace oflow

namespace oflow {

void addSbpPasses(PassManager &pm, const CompileOptions &options) {
  pm.addPass(createDecomposeForSbp());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  FlattenStateOptions flatten;
  flatten.hints.assign(options.sbpHints.begin(), options.sbpHints.end());
  flatten.shardState = options.shardState == "auto" ? "none" : options.shardState;
  flatten.flat.assign(options.flatVariables.begin(), options.flatVariables.end());
  pm.addPass(createFlattenState(flatten));
  InferSbpOptions infer;
  infer.hints.assign(options.sbpHints.begin(), options.sbpHints.end());
  infer.device = options.deviceName();
  infer.precision = options.precision;
  infer.shardState = options.shardState == "auto" ? "none" : options.shardState;
  infer.planner_ = options.planner;
  // auto is the driver's search; one plan is planned with cost.
  infer.tensorParallel = options.tensorParallel == "none" ? "none" : "cost";
  pm.addPass(createInferSbp(infer));
  pm.addPass(createInsertBoxing());
  // After the backward pass's gathers are its own: their buckets form
  // there, and the forward's end with it.
  if (options.reshardAfterForward != "no")
    pm.addPass(createRegatherForBackward());
  BucketCollectivesOptions bucket;
  bucket.bucketMb = options.bucketMb;
  pm.addPass(createBucketCollectives(bucket));
  pm.addPass(createVerifySbp());
}

void addPartitionPasses(PassManager &pm, const CompileOptions &options) {
  pm.addPass(createPartition());
  // Micro-batches: recomputation finds the forward/backward boundary of the
  // one step before the step becomes K lanes, each then with its copies.
  if (options.microBatches > 1)
    addRecomputePass(pm, options);
  pm.addPass(createUnrollMicroBatches());
}

} // namespace oflow
