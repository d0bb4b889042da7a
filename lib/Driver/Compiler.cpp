//===- Compiler.cpp - run the pipeline up to --emit -----------------------===//
#include "oflow/Driver/Driver.h"
#include "MemoryLimit.h"
#include "PlanFile.h"
#include "PlanHtml.h"
#include "Pipelines.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Support/ByteSize.h"
#include "oflow/Codegen/KernelReport.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/Program.h"
#include "oflow/Sbp/SbpConversions.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace oflow {

namespace {
struct StageInfo {
  EmitStage stage;
  const char *name;
};
constexpr StageInfo kStages[] = {
    {EmitStage::Mlir, "mlir"},         {EmitStage::Training, "training"},
    {EmitStage::Sbp, "sbp"},           {EmitStage::Partitioned, "partitioned"},
    {EmitStage::Linalg, "linalg"},     {EmitStage::Llvm, "llvm"},
    {EmitStage::Ptx, "ptx"},           {EmitStage::Obj, "obj"},
    {EmitStage::Exe, "exe"},           {EmitStage::Plan, "plan"},
    {EmitStage::PlanJson, "plan-json"}, {EmitStage::PlanHtml, "plan-html"},
    {EmitStage::Simulate, "simulate"},
    {EmitStage::Kernels, "kernels"},   {EmitStage::KernelsJson, "kernels-json"}};
} // namespace

std::optional<EmitStage> parseEmitStage(const std::string &name) {
  for (const StageInfo &s : kStages)
    if (name == s.name)
      return s.stage;
  return std::nullopt;
}

const char *emitStageName(EmitStage stage) {
  for (const StageInfo &s : kStages)
    if (s.stage == stage)
      return s.name;
  return "?";
}

std::vector<std::string> emitStageNames() {
  std::vector<std::string> names;
  for (const StageInfo &s : kStages)
    names.push_back(s.name);
  return names;
}

/// Writes IR (weights elided unless asked for) atomically to the output.
static LogicalResult printModule(ModuleOp module, const CompileOptions &options,
                                 Location cliLoc) {
  OpPrintingFlags flags;
  // Without --print-weights, print no resource section at all: MLIR would
  // hex-encode every weight blob before eliding it (seconds for a 124M
  // model). The elided IR still parses: `dense_resource<name>` handles
  // without data.
  if (!options.printWeights)
    flags.elideLargeElementsAttrs(16).elideLargeResourceString(64).useLocalScope();
  llvm::Error err = llvm::writeToOutput(
      options.output, [&](llvm::raw_ostream &os) -> llvm::Error {
        module->print(os, flags);
        return llvm::Error::success();
      });
  if (err)
    return emitError(cliLoc) << "cannot write '" << options.output
                             << "': " << llvm::toString(std::move(err));
  return success();
}

static std::string humanBytes(int64_t bytes) {
  char text[32];
  if (bytes >= (1 << 20))
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / 1048576.0);
  else
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  return text;
}

/// How --shard-state's choices read in messages.
static std::string shardStateName(StringRef state) {
  if (state == "optimizer")
    return "optimizer state sharded (ZeRO-2)";
  if (state == "all")
    return "parameters and optimizer state sharded (ZeRO-3)";
  if (state == "node")
    return "parameters and optimizer state sharded within a node (HSDP)";
  return "data parallel";
}

/// One candidate of the memory search: how variables are laid out and what
/// is recomputed.
struct MemoryTry {
  std::string shardState, recompute;
  int64_t microBatches = 1; ///< gradient accumulation tried by the search
  /// Split weights gathered for the forward pass kept whole for the backward
  /// pass (--reshard-after-forward no), not gathered again.
  bool keepGathered = false;
  /// --tensor-parallel for this try (empty: the search's own, see
  /// tryTensorParallel); "cost" in a try of its own is the planner's tensor
  /// parallelism on the fastest fitting layouts.
  std::string tensorParallel;
  std::string name() const {
    std::string text = shardStateName(shardState);
    if (recompute == "selective")
      text += " with selective recomputation";
    else if (recompute == "all")
      text += " with recomputation including GEMMs";
    else if (recompute != "none")
      text += " recomputing " + recompute;
    if (microBatches > 1)
      text += ", " + std::to_string(microBatches) + " micro-batches";
    if (keepGathered)
      text += ", gathered weights kept for the backward pass";
    if (tensorParallel == "cost")
      text += ", tensor parallelism where the planner prices it cheaper";
    return text;
  }
  std::string key() const {
    std::string text =
        recompute == "none" ? shardState : shardState + "+recompute=" + recompute;
    if (microBatches > 1)
      text += "+micro_batches=" + std::to_string(microBatches);
    if (keepGathered)
      text += "+keep_gathered";
    if (tensorParallel == "cost")
      text += "+tensor_parallel";
    return text;
  }
};

/// The parameters being trained and the memory plan, on stderr.
static void reportProgram(ModuleOp module, const CompileOptions &options) {
  if (!options.verbose)
    return;
  if (options.mode == Mode::Train) {
    int64_t count = 0, values = 0;
    std::string names;
    for (auto var : module.getOps<mlir::oflow::VariableOp>()) {
      if (var.getRole() != mlir::oflow::VariableRole::param)
        continue;
      ++count;
      values += cast<RankedTensorType>(var.getType()).getNumElements();
      names += (names.empty() ? "" : ", ") +
               (var.getModelName() ? var.getModelName()->str()
                                   : var.getSymName().str());
    }
    llvm::errs() << "oflow-compile: training " << count << " parameters ("
                 << values << " values): " << names << "\n";
  }
}

static void reportMemoryPlan(ModuleOp module, const CompileOptions &options) {
  if (!options.verbose)
    return;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto entry = func->getAttrOfType<StringAttr>(kEntryAttr);
    auto plan = func->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
    if (!entry || !plan)
      continue;
    int64_t peak = plan.getAs<IntegerAttr>("peak").getInt();
    int64_t naive = plan.getAs<IntegerAttr>("naive").getInt();
    int64_t bound = plan.getAs<IntegerAttr>("lower_bound").getInt();
    llvm::errs() << "oflow-compile: memory plan (" << entry.getValue()
                 << "): peak " << humanBytes(peak) << ", naive "
                 << humanBytes(naive) << ", liveness lower bound "
                 << humanBytes(bound) << ", "
                 << plan.getAs<IntegerAttr>("buffers").getInt() << " buffers";
    auto gathered = plan.getAs<IntegerAttr>("gathered_weights");
    if (gathered && gathered.getInt() > 0)
      llvm::errs() << "; weights gathered whole: "
                   << humanBytes(plan.getAs<IntegerAttr>("gathered_weights_peak").getInt())
                   << " live at most, of " << humanBytes(gathered.getInt());
    llvm::errs() << "\n";
  }
}

/// --micro-batches K: one more mesh axis, the last, of K "devices" linked
/// `sequential` (data parallelism over micro-batches, which
/// oflow-unroll-micro-batches turns into time after partitioning).
static LogicalResult addMicroBatchAxis(ModuleOp module, const CompileOptions &options,
                                       int64_t count, Location cliLoc) {
  auto refuse = [&](StringRef why) -> LogicalResult {
    emitError(cliLoc) << "--micro-batches " << count << ": " << why;
    return failure();
  };
  if (options.mode != Mode::Train)
    return refuse("gradient accumulation needs --mode train");
  MLIRContext *ctx = module.getContext();
  auto mesh = module->getAttrOfType<mlir::oflow::MeshAttr>(
      mlir::oflow::OFlowDialect::kMeshAttrName);
  // One device is mesh [1]: hints and plan files keep their one entry.
  SmallVector<int64_t> shape = {1};
  SmallVector<StringAttr> names, links;
  if (mesh) {
    shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    names.assign(mesh.getAxisNames().begin(), mesh.getAxisNames().end());
    links.assign(mesh.getLinks().begin(), mesh.getLinks().end());
    if (llvm::is_contained(mesh.getAxisNames(), StringAttr::get(ctx, "micro")))
      return refuse("the mesh already has an axis named 'micro'");
  }
  if (llvm::any_of(links, [](StringAttr l) { return l.getValue() == sbp::kSequentialLink; }))
    return refuse("the mesh already has a `sequential` axis");
  if (links.empty())
    links.assign(shape.size(), StringAttr::get(ctx, "local"));
  if (!names.empty())
    names.push_back(StringAttr::get(ctx, "micro"));
  shape.push_back(count);
  links.push_back(StringAttr::get(ctx, sbp::kSequentialLink));
  module->setAttr(mlir::oflow::OFlowDialect::kMeshAttrName,
                  mlir::oflow::MeshAttr::get(ctx, shape, names, links));
  return success();
}

/// The global batch of the training graph: the leading dim of the train
/// entry's first named input (0 if none).
static int64_t trainingBatch(ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>(mlir::oflow::OFlowDialect::kEntryAttrName);
    if (!entry || entry.getValue() != "train")
      continue;
    for (BlockArgument arg : fn.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (fn.getArgAttr(arg.getArgNumber(), "oflow.name") && type && type.getRank() > 0)
        return type.getDimSize(0);
    }
  }
  return 0;
}

int runCompiler(MLIRContext &context, const CompileOptions &options) {
  Location cliLoc = NameLoc::get(StringAttr::get(&context, "oflow-compile"));
  // Refuse what this build cannot produce before doing any work.
  bool codegen = options.emit == EmitStage::Llvm || options.emit == EmitStage::Ptx ||
                 options.emit == EmitStage::Obj || options.emit == EmitStage::Exe;
  bool cuda = options.target == Target::Cuda;
  if (options.emit == EmitStage::Ptx && !cuda) {
    emitError(cliLoc) << "--emit=ptx needs --target cuda";
    return 1;
  }
  if (options.target == Target::Cpu && options.convLibrary == "cudnn") {
    emitError(cliLoc) << "--conv cudnn needs --target cuda or cuda-emulated "
                         "(the CPU target's library is dnnl)";
    return 1;
  }
  if (options.target != Target::Cpu && options.convLibrary == "dnnl") {
    emitError(cliLoc) << "--conv dnnl is the CPU target's; the CUDA targets "
                         "take cudnn or im2col";
    return 1;
  }
  bool kernelReport =
      options.emit == EmitStage::Kernels || options.emit == EmitStage::KernelsJson;
  std::optional<DeviceProfile> device;
  if (kernelReport) {
    if (options.target == Target::Cpu) {
      emitError(cliLoc) << "--emit=" << emitStageName(options.emit)
                        << " needs --target cuda or cuda-emulated (the CPU "
                           "target has no kernels)";
      return 1;
    }
  }
  // The planner prices compute on the same profile (a bad one fails here,
  // before any work).
  llvm::Expected<DeviceProfile> loaded = loadDeviceProfile(options.deviceName());
  if (!loaded) {
    emitError(cliLoc) << "--device: " << llvm::toString(loaded.takeError());
    return 1;
  }
  std::optional<DeviceProfile> profile = *loaded;
  if (kernelReport) {
    if (!loaded->gpu) {
      emitError(cliLoc) << "--emit=" << emitStageName(options.emit) << ": --device "
                        << options.deviceName()
                        << " is not a GPU profile (h200, h100, a100 or a GPU's JSON file)";
      return 1;
    }
    device = *loaded;
  }
  if (!options.lineInfoIr.empty() && options.target != Target::Cpu) {
    emitError(cliLoc) << "--line-info-ir needs --target cpu (the GPU kernels "
                         "get no line tables)";
    return 1;
  }
  std::string toolkit = cudaToolkitPath();
  if (codegen && cuda && failed(checkCudaToolkit(cliLoc, toolkit)))
    return 1;
  if (llvm::is_contained(options.links, sbp::kSequentialLink)) {
    emitError(cliLoc) << "--links: `sequential` is reserved for the axis that "
                         "--micro-batches adds";
    return 1;
  }
  bool multiDevice = false;
  for (int64_t d : options.mesh)
    multiDevice |= d > 1;
  registerPipelinePasses();
  registerPipelineDialects(context);

  // --mlir-timing reports each stage and each pass.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  TimingScope importTimer = root.nest("import (" + options.input + ")");
  std::string exportTemplate;
  CompileOptions loadOptions = options;
  if (options.mode == Mode::Train && codegen)
    loadOptions.import.exportTemplate = &exportTemplate;
  OwningOpRef<ModuleOp> module = loadModel(context, loadOptions);
  importTimer.stop();
  if (!module)
    return 1;
  // One pass-manager run per stage, timed under its own name.
  auto runStage = [&](StringRef name,
                      function_ref<LogicalResult(PassManager &)> addPasses) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    TimingScope scope = root.nest(name);
    pm.enableTiming(scope);
    if (failed(addPasses(pm)))
      return failure();
    return pm.run(*module);
  };
  auto finish = [&](EmitStage stage) {
    return options.emit == stage ? printModule(*module, options, cliLoc) : success();
  };
  if (options.emit == EmitStage::Mlir)
    return failed(finish(EmitStage::Mlir)) ? 1 : 0;
  // GPUs on a mesh that names no links: NVLink inside a node of 8, InfiniBand
  // for the axes that span nodes (each axis spans its own size times the
  // sizes of the axes after it: ranks are row-major). CPU ranks keep `local`.
  if (auto meshAttr = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
          mlir::oflow::OFlowDialect::kMeshAttrName);
      meshAttr && profile->gpu && meshAttr.getLinks().empty() &&
      meshAttr.getNumDevices() > 1) {
    SmallVector<StringAttr> links(meshAttr.getNumAxes());
    int64_t span = 1;
    for (int64_t a = meshAttr.getNumAxes() - 1; a >= 0; --a) {
      span *= meshAttr.getShape()[a];
      links[a] = StringAttr::get(&context, span <= 8 ? "nvlink" : "ib");
    }
    (*module)->setAttr(mlir::oflow::OFlowDialect::kMeshAttrName,
                       mlir::oflow::MeshAttr::get(&context, meshAttr.getShape(),
                                                  meshAttr.getAxisNames(), links));
  }

  if (failed(runStage("training graph", [&](PassManager &pm) {
        return addTrainingPasses(pm, options);
      })))
    return 1;
  reportProgram(*module, options);
  if (options.emit == EmitStage::Training)
    return failed(finish(EmitStage::Training)) ? 1 : 0;
  // What the training passes chose (torch.optim's defaults for what the
  // user left unset), read back before later stages rewrite the functions.
  TrainingDescription training = describeTraining(*module);

  // SBP stages: on a mesh, or when asked for their output. A single-device
  // program skips them (its layouts would all be B).
  bool planOutput = options.emit == EmitStage::Plan || options.emit == EmitStage::PlanJson ||
                    options.emit == EmitStage::PlanHtml || options.emit == EmitStage::Simulate;
  std::string planReport, chosenShardState;
  PlanGraph planGraph;
  llvm::json::Object planVariables;
  auto mesh = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
      mlir::oflow::OFlowDialect::kMeshAttrName);
  multiDevice |= mesh && mesh.getNumDevices() > 1;
  MemoryLimit limit = memoryLimitFor(options, *profile);
  // --shard-state auto: data parallelism first; when its plan does not fit
  // the memory limit, the optimizer state split over the mesh (ZeRO-2: the
  // same bytes sent), then the parameters too (ZeRO-3: more all-gathers),
  // and of those that fit the one with the fastest predicted step. Each try
  // plans from the training graph again.
  // --plan: every variable and input as the file says; nothing to search.
  std::vector<std::string> planHints;
  std::vector<std::string> planFlat; // the plan's variables stored flat
  std::string planRecompute = options.recompute; // --recompute, or the plan's
  int64_t microBatches = options.microBatches;   // --micro-batches, or the plan's
  std::string planReshard = options.reshardAfterForward; // or the plan's
  std::string planMicroGradients = options.microBatchGradients; // or the plan's
  std::string planTensorParallel = options.tensorParallel;       // or the plan's
  if (!options.planFile.empty()) {
    if (!options.sbpHints.empty()) {
      emitError(cliLoc) << "--plan and --sbp cannot be combined (the plan gives every "
                           "layout; edit the plan file instead)";
      return 1;
    }
    auto meshNow = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
        mlir::oflow::OFlowDialect::kMeshAttrName);
    llvm::Expected<PlanFile> plan = readPlanFile(
        options.planFile, meshNow ? meshNow.getShape() : ArrayRef<int64_t>{1}, *module);
    if (!plan) {
      emitError(cliLoc) << llvm::toString(plan.takeError());
      return 1;
    }
    planHints = std::move(plan->hints);
    planFlat = std::move(plan->flat);
    if (options.recompute == "auto")
      planRecompute = plan->recompute;
    if (plan->microBatches > 1 && options.microBatches > 1 &&
        plan->microBatches != options.microBatches) {
      emitError(cliLoc) << "--plan " << options.planFile << " is for "
                        << plan->microBatches << " micro-batches, not "
                        << options.microBatches << " (--micro-batches)";
      return 1;
    }
    if (plan->microBatches > 1)
      microBatches = plan->microBatches;
    if (plan->reshardAfterForward && planReshard == "auto")
      planReshard = *plan->reshardAfterForward ? "yes" : "no";
    if (!plan->microBatchGradients.empty() && planMicroGradients == "auto")
      planMicroGradients = plan->microBatchGradients;
    if (!plan->tensorParallel.empty() && planTensorParallel == "auto")
      planTensorParallel = plan->tensorParallel;
  }
  // Gradient accumulation: one more mesh axis, which the hints (the user's,
  // the plan's) leave out.
  if (microBatches > 1) {
    if (failed(addMicroBatchAxis(*module, options, microBatches, cliLoc)))
      return 1;
    mesh = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
        mlir::oflow::OFlowDialect::kMeshAttrName);
  }
  bool sbpStages = multiDevice || microBatches > 1 || options.emit == EmitStage::Sbp ||
                   options.emit == EmitStage::Partitioned || planOutput;
  if (sbpStages && !mesh)
    module.get()->setAttr(mlir::oflow::OFlowDialect::kMeshAttrName,
                          mlir::oflow::MeshAttr::get(&context, {1}));
  // The search: layouts (on a mesh, --shard-state auto) and recomputation
  // (--recompute auto), in the order they usually cost: ZeRO-2 sends the
  // same bytes as data parallelism; selective recomputation costs a few
  // percent of the FLOPs, often less than ZeRO-3's all-gathers. The order
  // only decides which tries can be cut short: past data parallelism the
  // predicted step decides. Recomputing GEMMs too (--recompute all)
  // is not tried: it costs a third more FLOPs and, with each copy made at
  // its first backward use, often needs more memory, not less.
  bool stageSearch = limit.bytes > 0 && options.emit != EmitStage::Sbp &&
                     options.emit != EmitStage::Partitioned &&
                     options.emit != EmitStage::Linalg;
  bool searchLayouts = options.shardState == "auto" && options.planFile.empty() && multiDevice;
  bool searchRecompute = planRecompute == "auto" && options.mode == Mode::Train;
  // Gradient accumulation, the last resort: when nothing above fits, K = 2,
  // 4, ... micro-batches (activations shrink with K; the step's bytes and
  // FLOPs do not) while the batch divides.
  constexpr int64_t kMaxSearchMicro = 16; // each try compiles the step again
  bool searchMicro = stageSearch && microBatches == 1 && options.planFile.empty() &&
                     options.mode == Mode::Train;
  bool search = stageSearch && (searchLayouts || searchRecompute || searchMicro);
  std::string fixedShard = options.shardState == "auto" ? "none" : options.shardState;
  std::string fixedRecompute = planRecompute == "auto" ? "none" : planRecompute;
  std::vector<MemoryTry> tries = {{fixedShard, fixedRecompute}};
  // On a mesh of several axes with devices, sharding inside the last one
  // (a node) and replicating across the others (HSDP) is tried last: it
  // keeps the all-gathers on the fast link.
  int64_t meshAxesWithDevices = 0;
  for (int64_t d : options.mesh)
    meshAxesWithDevices += d > 1;
  bool tryNode = meshAxesWithDevices > 1;
  if (stageSearch && searchLayouts && searchRecompute) {
    tries = {{"none", "none"}, {"optimizer", "none"}, {"optimizer", "selective"},
             {"all", "none"},  {"all", "selective"}};
    if (tryNode)
      tries.insert(tries.end(), {{"node", "none"}, {"node", "selective"}});
  } else if (stageSearch && searchLayouts) {
    tries = {{"none", fixedRecompute}, {"optimizer", fixedRecompute}, {"all", fixedRecompute}};
    if (tryNode)
      tries.push_back({"node", fixedRecompute});
  } else if (stageSearch && searchRecompute) {
    tries = {{fixedShard, "none"}, {fixedShard, "selective"}};
  }
  // Split weights: kept whole from the forward into the backward pass first
  // (one all-gather less per weight, faster), then gathered again (less
  // memory); when the first fits, the second's slower step skips it.
  if (search && planReshard == "auto") {
    std::vector<MemoryTry> expanded;
    for (const MemoryTry &t : tries) {
      if (t.shardState == "all" || t.shardState == "node") {
        expanded.push_back(t);
        expanded.back().keepGathered = true;
      }
      expanded.push_back(t);
    }
    tries = std::move(expanded);
  }

  // --tensor-parallel auto: the search's tries use parameters whole (data
  // parallelism and ZeRO as written: the planner's per-op prices favour
  // tensor-parallel slices that the whole step's model often finds slower,
  // e.g. ResNet-50 on 8x4 H100s, 46.5 against 41.9 ms); the fastest that
  // fits is then planned once more with tensor parallelism by cost, and the
  // faster of the two kept. Layouts given by --sbp or --plan say how their
  // weights are used (a Megatron split): planned with cost.
  bool hinted = !options.sbpHints.empty() || !planHints.empty();
  bool searchTensorParallel = planTensorParallel == "auto" && search && multiDevice && !hinted;
  std::string tryTensorParallel =
      planTensorParallel == "auto" ? (searchTensorParallel ? "none" : "cost") : planTensorParallel;
  bool tryCostLast = searchTensorParallel;
  bool costTried = false;

  OwningOpRef<ModuleOp> trainingGraph;
  if (tries.size() > 1 || searchMicro || tryCostLast)
    trainingGraph = module->clone();
  int64_t globalBatch = trainingBatch(*module);
  int64_t deviceCount = mesh ? mesh.getNumDevices() : 1;
  std::string overLimit, triedText, chosenKey, chosenRecompute, chosenTensorParallel;
  bool chosenKeepGathered = false;
  // What each try of the search costs, for --emit=plan: the forced choice's
  // price is its predicted step against the first try's.
  std::string triesReport;
  std::optional<double> firstStep;
  // The fitting plan the cost model says is fastest, data parallelism
  // included: it is kept on a tie, but ZeRO-2 moves the same bytes as data
  // parallelism's all-reduce and splits the update, so it often wins even
  // when data parallelism fits (bench/plan_quality.py). A try whose step
  // before recomputation already costs the best fitting plan's is not
  // carried past its SBP stage (nor, then, its recomputing twin).
  struct Kept {
    OwningOpRef<ModuleOp> module;
    size_t index = 0;
    double seconds = 0;
    std::string planReport;
    PlanGraph planGraph;
    llvm::json::Object planVariables;
    MemoryUse use;
  };
  std::optional<Kept> best;
  size_t tried = 0;
  MemoryUse finalUse; // what the plan kept needs, measured in the loop
  int64_t smallest = 0;
  size_t smallestTry = 0; // among the tries without micro-batches
  bool gpu = cuda || options.target == Target::CudaEmulated;
  // One cost function (issue #15): on a GPU profile, the CUDA targets'
  // simulation and memory search price compute with the per-kernel model.
  bool kernelModel = gpu && profile->gpu && options.computeModel == "kernels";
  // Pricing with it forms every kernel once more: only where a price is
  // shown or plans are compared. A single plan compiled to a binary or to
  // the kernel report is not priced (the micro-batch fallback adds tries
  // only until one fits, so nothing is compared there either).
  bool priceTries = tries.size() > 1 || tryCostLast || options.emit == EmitStage::Simulate ||
                    options.emit == EmitStage::Plan || options.emit == EmitStage::PlanHtml;
  for (size_t t = 0;; ++t) {
    if (t == tries.size() && tryCostLast && best && !costTried) {
      MemoryTry again = tries[best->index];
      again.tensorParallel = "cost";
      tries.push_back(again);
      costTried = true;
    }
    if (t >= tries.size())
      break;
    std::vector<EntryEstimate> simulated;
    mlir::oflow::MeshAttr simulatedMesh;
    CompileOptions planOptions = options;
    int64_t tryMicro = std::max(microBatches, tries[t].microBatches);
    planOptions.microBatches = tryMicro;
    planOptions.shardState = tries[t].shardState;
    planOptions.recompute = tries[t].recompute;
    planOptions.reshardAfterForward =
        planReshard != "auto" ? planReshard : tries[t].keepGathered ? "no" : "yes";
    planOptions.sbpHints.insert(planOptions.sbpHints.end(), planHints.begin(), planHints.end());
    planOptions.flatVariables = planFlat;
    planOptions.tensorParallel =
        tries[t].tensorParallel.empty() ? tryTensorParallel : tries[t].tensorParallel;
    if (t > 0)
      module = trainingGraph->clone();
    if (tries[t].microBatches > 1 &&
        failed(addMicroBatchAxis(*module, options, tries[t].microBatches, cliLoc)))
      return 1;
    // Sharded gradients accumulated as shards (FSDP's default) unless asked
    // to sum them whole first (its no_sync).
    bool shardsGradients = planOptions.shardState == "optimizer" ||
                           planOptions.shardState == "all" || planOptions.shardState == "node";
    if (tryMicro > 1 && (planMicroGradients == "sharded" ||
                         (planMicroGradients == "auto" && shardsGradients)))
      (*module)->setAttr(sbp::kScatterEachMicroBatchAttr, UnitAttr::get(&context));
    else
      (*module)->removeAttr(sbp::kScatterEachMicroBatchAttr);
    ++tried;
    std::optional<EntryEstimate> estimate;
    if (sbpStages || tryMicro > 1) {
      if (failed(runStage("SBP: choose layouts, insert boxing", [&](PassManager &pm) {
            addSbpPasses(pm, planOptions);
            return success();
          })))
        return 1;
      if (options.emit == EmitStage::Sbp)
        return failed(finish(EmitStage::Sbp)) ? 1 : 0;
      if (options.emit == EmitStage::Plan || options.emit == EmitStage::PlanHtml)
        planReport = describeSbpPlan(*module, options.deviceName());
      if (options.emit == EmitStage::PlanHtml)
        planGraph = collectPlanGraph(*module);
      if (options.emit == EmitStage::PlanJson)
        planVariables = describeSbpPlanJson(*module);
      if (search || options.emit == EmitStage::Simulate) {
        simulated = estimateEntries(*module, *profile, options.precision);
        simulatedMesh = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
            mlir::oflow::OFlowDialect::kMeshAttrName);
      }
      if (search)
        for (const EntryEstimate &e : simulated)
          if (e.entry == "train")
            estimate = e;
      // With the kernel model, the op-priced compute is not a bound on the
      // step: only the collectives are.
      double atLeast = estimate ? (kernelModel ? estimate->commSeconds() : estimate->stepSeconds())
                                : 0;
      if (best && estimate && atLeast >= best->seconds) {
        llvm::raw_string_ostream(triesReport)
            << "memory_try index=" << t + 1 << " shard_state=" << tries[t].shardState
            << " recompute=" << tries[t].recompute
            << (tries[t].keepGathered ? " keep_gathered=yes" : "")
            << (tries[t].tensorParallel == "cost" ? " tensor_parallel=cost" : "")
            << llvm::format(" skipped=yes step_seconds_at_least=%.6g", atLeast)
            << "\n";
        continue;
      }
      if (failed(runStage("partition", [&](PassManager &pm) {
            addPartitionPasses(pm, planOptions);
            return success();
          })))
        return 1;
      if (options.emit == EmitStage::Partitioned)
        return failed(finish(EmitStage::Partitioned)) ? 1 : 0;
    }

    if (failed(runStage("lower to linalg", [&](PassManager &pm) {
          return addLinalgPasses(pm, planOptions);
        })))
      return 1;
    if (options.emit == EmitStage::Linalg)
      return failed(finish(EmitStage::Linalg)) ? 1 : 0;

    if (failed(runStage("bufferize, plan memory", [&](PassManager &pm) {
          BufferizeOptions bufferize;
          bufferize.gpu = gpu;
          bufferize.fuseElementwise = options.fuseElementwise;
          bufferize.reuseBuffers = options.reuseBuffers;
          bufferize.planByLevel = tryMicro == 1;
          addBufferizePipeline(pm, bufferize);
          return success();
        })))
      return 1;
    MemoryUse use = measureMemoryUse(*module);
    finalUse = use;
    std::string error = memoryLimitError(use, limit, tries[t].shardState == "all" ||
                                                         tries[t].shardState == "node");
    // CUDA targets: the train entry's compute from the per-kernel model of
    // the program as lowered (its recomputed copies included), for the
    // plans that fit (the search prices no other) or the one plan asked for.
    auto trainEstimate =
        llvm::find_if(simulated, [](const EntryEstimate &e) { return e.entry == "train"; });
    if (kernelModel && trainEstimate != simulated.end() && (error.empty() || !search) &&
        priceTries) {
      FailureOr<KernelCompute> kernels = kernelModelCompute(*module, "train", *profile, root);
      if (failed(kernels)) {
        emitError(cliLoc) << "the per-kernel model could not form the train entry's kernels";
        return 1;
      }
      trainEstimate->computeSeconds = kernels->seconds;
      trainEstimate->computeModel = "kernels";
      trainEstimate->launches = kernels->launches;
      if (estimate)
        estimate = *trainEstimate;
    } else if (kernelModel) {
      estimate.reset(); // over the limit: not priced
    }
    if (options.emit == EmitStage::Simulate && simulatedMesh)
      planReport = addRecomputeToSimulation(
          formatSimulation(simulatedMesh, simulated, *profile, options.precision), *module,
          *profile, options.precision);
    double seconds = 0;
    if (estimate)
      seconds = estimate->stepSeconds() +
                (estimate->computeModel == "kernels"
                     ? 0
                     : recomputeSeconds(*module, "train", *profile, options.precision));
    if (search) {
      triedText += (triedText.empty() ? "" : ", ") + tries[t].name() + " " +
                   formatByteSize(use.total());
      llvm::raw_string_ostream line(triesReport);
      line << "memory_try index=" << t + 1 << " shard_state=" << tries[t].shardState
           << " recompute=" << tries[t].recompute;
      if (tries[t].microBatches > 1)
        line << " micro_batches=" << tries[t].microBatches;
      if (tries[t].keepGathered)
        line << " keep_gathered=yes";
      if (tries[t].tensorParallel == "cost")
        line << " tensor_parallel=cost";
      line << " peak_bytes_per_device=" << use.total() << " fits=" << (error.empty() ? "yes" : "no");
      if (estimate) {
        line << llvm::format(" step_seconds=%.6g", seconds)
             << " collective_bytes_per_device=" << estimate->bytes();
        if (!firstStep)
          firstStep = seconds;
        else
          line << llvm::format(" cost_seconds=%+.6g", seconds - *firstStep)
               << llvm::format(" cost_percent=%+.2f", 100 * (seconds - *firstStep) / *firstStep);
      }
      line << "\n";
    }
    chosenShardState = tries[t].shardState;
    chosenKey = tries[t].key();
    chosenRecompute = tries[t].recompute;
    chosenKeepGathered = tries[t].keepGathered || planReshard == "no";
    chosenTensorParallel = planOptions.tensorParallel;
    if (error.empty()) {
      if (!best || (estimate && seconds < best->seconds))
        best = Kept{std::move(module), t,        seconds, planReport,
                    planGraph,         planVariables,    use};
      if (!estimate)
        break;
      continue;
    }
    // Keep the smallest plan's account for the error.
    bool smaller = overLimit.empty() || use.total() < smallest;
    if (smaller) {
      overLimit = error;
      smallest = use.total();
      if (tries[t].microBatches == 1)
        smallestTry = t;
    }
    // Nothing fitted: twice the micro-batches, with the layouts and
    // recomputation of the smallest plan without them (recomputation can
    // cost memory: each copy is made at its first backward use), if every
    // device's batch still divides (hints may leave it whole on some axes).
    // A model whose memory is not its activations (the MLP's is its
    // gradients) gains nothing: stop when a doubling does not shrink it.
    int64_t nextMicro = 2 * tries[t].microBatches;
    if (t + 1 == tries.size() && searchMicro && !best &&
        (tries[t].microBatches == 1 || smaller) &&
        globalBatch > 0 && nextMicro <= kMaxSearchMicro &&
        globalBatch % (deviceCount * nextMicro) == 0)
      tries.push_back({tries[smallestTry].shardState, tries[smallestTry].recompute, nextMicro,
                       tries[smallestTry].keepGathered});
  }
  if (best) {
    module = std::move(best->module);
    planReport = std::move(best->planReport);
    planGraph = std::move(best->planGraph);
    planVariables = std::move(best->planVariables);
    finalUse = best->use;
    const MemoryTry &kept = tries[best->index];
    chosenShardState = kept.shardState;
    chosenKey = kept.key();
    chosenRecompute = kept.recompute;
    chosenKeepGathered = kept.keepGathered || planReshard == "no";
    chosenTensorParallel = kept.tensorParallel.empty() ? tryTensorParallel : kept.tensorParallel;
    if (best->index > 0 && options.verbose)
      llvm::errs() << "oflow-compile: memory: " << triedText << " per device; the limit is "
                   << formatByteSize(limit.bytes) << " (" << limit.source << "): "
                   << kept.name() << ", the fastest that fits\n";
    if (search)
      planReport += triesReport + "memory_search tried=" + std::to_string(tried) +
                    " chosen=" + chosenKey + " fits=yes\n";
    overLimit.clear();
  }
  reportMemoryPlan(*module, options);
  if (!overLimit.empty() && search) {
    overLimit = "no plan fits (" + triedText + " per device); the smallest: " + overLimit;
    planReport += triesReport + "memory_search tried=" + std::to_string(tried) + " chosen=" +
                  chosenKey + " fits=no\n# " + overLimit + "\n";
  }
  if (!overLimit.empty() && !planOutput) {
    emitError(cliLoc) << overLimit;
    return 1;
  }
  if (kernelReport) {
    if (failed(runStage("CUDA: form and outline kernels", [](PassManager &pm) {
          addGpuOutlinedKernelsPipeline(pm);
          return success();
        })))
      return 1;
    std::vector<EntryReport> entries = analyzeProgram(*module, *device);
    return failed(writeText(options.emit == EmitStage::Kernels
                                ? formatKernelReport(entries, *device)
                                : kernelReportJson(entries, *device),
                            options, cliLoc))
               ? 1
               : 0;
  }
  if (options.emit == EmitStage::Simulate) {
    const MemoryUse &use = finalUse;
    planReport += "simulate memory peak_bytes_per_device=" + std::to_string(use.total()) +
                  " state_bytes=" + std::to_string(use.stateAligned) +
                  " arena_bytes=" + std::to_string(use.arena) +
                  " gathered_weight_bytes=" + std::to_string(use.gatheredWeights) +
                  " gathered_weight_peak_bytes=" + std::to_string(use.gatheredWeightsPeak) +
                  "\n";
    return failed(writeText(planReport + describeMemoryLimit(use, limit), options, cliLoc)) ? 1
                                                                                          : 0;
  }
  if (options.emit == EmitStage::PlanJson)
    return failed(writeText(planJson(std::move(planVariables),
                                     options.planFile.empty() ? chosenShardState : "plan",
                                     chosenRecompute, !chosenKeepGathered,
                                     chosenTensorParallel, finalUse, limit),
                            options, cliLoc))
               ? 1
               : 0;
  if (options.emit == EmitStage::Plan)
    return failed(writeText(planReport + describeMemoryPlan(*module) +
                                describeMemoryLimit(finalUse, limit),
                            options, cliLoc))
               ? 1
               : 0;
  if (options.emit == EmitStage::PlanHtml)
    return failed(writeText(renderPlanHtml(planGraph,
                                           planReport + describeMemoryPlan(*module) +
                                               describeMemoryLimit(finalUse, limit),
                                           finalUse, limit,
                                           "oflow plan: " +
                                               llvm::sys::path::filename(options.input).str()),
                            options, cliLoc))
               ? 1
               : 0;

  ManifestInfo info;
  info.mode = options.mode == Mode::Train ? "train" : "infer";
  info.modelName = llvm::sys::path::filename(options.input).str();
  info.batch = programBatch(*module);
  if (!llvm::StringRef(options.input).ends_with(".mlir") &&
      !llvm::StringRef(options.input).ends_with(".onnxtext")) {
    llvm::SmallString<256> path(options.input);
    (void)llvm::sys::fs::make_absolute(path);
    info.weightsFile = std::string(path);
  }
  info.embedLimit = options.embedWeightsLimit;
  info.extraLines = training.lines;
  if (options.mode == Mode::Train && training.lr) {
    char lr[40];
    std::snprintf(lr, sizeof lr, "%.9g", *training.lr);
    info.scalarDefaults.push_back({"lr", lr});
  }
  auto image = extractProgramImage(*module, info);
  if (failed(image))
    return 1;
  image->onnxModel = std::move(exportTemplate);

  if (options.target == Target::CudaEmulated &&
      failed(runStage("CUDA kernels, emulated on the host", [&](PassManager &pm) {
        addGpuFormKernelsPipeline(pm);
        EmulateGpuLaunchesOptions emulate;
        emulate.reverseThreads = options.emulateThreadsReversed;
        pm.addNestedPass<func::FuncOp>(createEmulateGpuLaunches(emulate));
        return success();
      })))
    return 1;
  if (cuda) {
    if (failed(runStage("CUDA: form and compile kernels", [&](PassManager &pm) {
          addGpuKernelPipeline(pm, toolkit);
          return success();
        })))
      return 1;
    if (options.emit == EmitStage::Ptx)
      return failed(writeText(kernelAssembly(*module), options, cliLoc)) ? 1 : 0;
  }
  if (failed(runStage("lower to LLVM", [&](PassManager &pm) {
        if (cuda)
          addGpuLowerToLlvmPipeline(pm, toolkit);
        else
          addLowerToLlvmPipeline(pm, options.lineInfoIr,
                                 /*threads=*/options.target == Target::Cpu);
        return success();
      })))
    return 1;

  TimingScope emitTimer = root.nest("LLVM: optimize, emit, link");
  if (options.emit == EmitStage::Llvm || options.emit == EmitStage::Obj) {
    if (options.output == "-" && options.emit == EmitStage::Obj) {
      emitError(cliLoc) << "--emit=obj needs an output file (-o)";
      return 1;
    }
    return failed(emitProgram(*module, *image, options.output,
                              options.emit == EmitStage::Llvm, options.optLevel))
               ? 1
               : 0;
  }
  if (options.output == "-") {
    emitError(cliLoc) << "an executable needs an output file: pass -o NAME";
    return 1;
  }
  // The CUDA target's host module holds the fatbin and the constructors
  // that load it: one partition, as LLVM's module splitting does not
  // promise to keep such a module whole.
  FailureOr<SmallVector<std::string>> objects = emitProgramObjects(
      *module, *image, options.optLevel, cuda ? 1 : codegenThreads());
  if (failed(objects))
    return 1;
  llvm::scope_exit removeObjects([&] {
    for (const std::string &object : *objects)
      llvm::sys::fs::remove(object);
  });
  if (failed(linkExecutable(cliLoc, *objects, options.output, cuda)))
    return 1;
  return 0;
}

} // namespace oflow
