//===- oflow-compile.cpp - model in, training executable out --------------===//
//
//   oflow-compile MODEL [-o OUT] [--mesh 8x4] [--target cuda|cpu|cuda-emulated] [--emit=STAGE]
//
// A thin main: options (CLI11) into CompileOptions, MLIR's own options
// (--mlir-timing, --mlir-print-ir-after-all, ...) to llvm::cl, and every
// diagnostic printed as one line. Exit code 0 or 1, never a crash.
//
//===----------------------------------------------------------------------===//
#include "oflow/Driver/Driver.h"
#include "oflow/Support/ByteSize.h"

#include "OFlow/OFlowAttrs.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

namespace {

/// Prints a diagnostic on one line: "<where>: error: <message>".
void printDiagnostic(mlir::Diagnostic &diag) {
  std::string where = "oflow-compile";
  mlir::Location loc = diag.getLocation();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()))
      where = file.getFilename().str();
    else if (name.getName() != "oflow-compile")
      where = name.getName().str();
  } else if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    where = file.getFilename().str();
    if (file.getLine() != 0)
      where += ":" + std::to_string(file.getLine()) + ":" +
               std::to_string(file.getColumn());
  }
  const char *kind = diag.getSeverity() == mlir::DiagnosticSeverity::Error
                         ? "error"
                     : diag.getSeverity() == mlir::DiagnosticSeverity::Warning
                         ? "warning"
                         : "note";
  std::string message = diag.str();
  for (char &c : message)
    if (c == '\n')
      c = ' ';
  llvm::errs() << where << ": " << kind << ": " << message << "\n";
}

int run(int argc, char **argv) {
  // MLIR's options go to llvm::cl; everything else to CLI11.
  std::vector<char *> mlirArgs = {argv[0]}, cliArgs = {argv[0]};
  for (int i = 1; i < argc; ++i)
    (llvm::StringRef(argv[i]).starts_with("--mlir-") ? mlirArgs : cliArgs)
        .push_back(argv[i]);
  // Before the pass manager's options, whose pass lists are filled when they
  // are made: --mlir-print-ir-after=oflow-fuse-launches names a pass.
  oflow::registerPipelinePasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(mlirArgs.size()),
                                         mlirArgs.data(), "", &llvm::errs()))
    return 1;

  oflow::CompileOptions options;
  CLI::App app{"oflow-compile: compiles an ONNX or oflow-IR model into one "
               "executable that trains it on a device mesh.\n"
               "MLIR's own options (--mlir-timing, --mlir-print-ir-after-all, "
               "...) are accepted too."};
  app.set_version_flag("--version", std::string("oflow-compile ") +
                                        OFLOW_VERSION_STRING +
                                        " (MLIR/LLVM 22, ONNX opsets 7-17)\n");
  app.add_option("model", options.input,
                 "the model: .onnx, .onnxtext (ONNX text format) or .mlir "
                 "(oflow dialect)")
      ->required();
  app.add_option("-o,--output", options.output,
                 "output file ('-' for stdout)");
  std::string mesh, target = "cuda", emit = "exe";
  app.add_option("--mesh", mesh,
                 "device mesh as axis sizes, e.g. 8 or 8x4 (default: 1 "
                 "device); ranks map row-major, the last axis fastest");
  app.add_option("--mesh-names", options.meshNames,
                 "names of the mesh axes, e.g. node,gpu (one per axis)")
      ->delimiter(',');
  app.add_option("--links", options.links,
                 "what connects the devices along each mesh axis, e.g. "
                 "ib,nvlink: local (default), nvlink, pcie, ib or ethernet; "
                 "the planner prices each axis's collectives with its link")
      ->delimiter(',');
  app.add_option("--sbp", options.sbpHints,
                 "layout of a variable or graph input: NAME=LAYOUT with one "
                 "S(i), B or P per mesh axis, e.g. fc1.weight=S(0) or "
                 "x=S(0),B; NAME may be a glob (*.weight); repeatable");
  app.add_option("--bucket-mb", options.bucketMb,
                 "largest fused gradient all-reduce in MiB (0: one per "
                 "tensor; default 25)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--precision", options.precision,
                 "fp32 (default), or bf16 / fp16: mixed precision, every "
                 "GEMM (forward and backward) reads its operands rounded to "
                 "bf16 or fp16 and accumulates in f32; weights, optimizer "
                 "and all other ops stay f32")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--conv", options.convLibrary,
                 "how f32 convolutions and their gradients run: auto (the "
                 "target's library, default), dnnl (oneDNN's primitives; "
                 "--target cpu), cudnn (cuDNN; the CUDA targets, whose "
                 "cuda-emulated runs the same calls with oneDNN) or im2col "
                 "(im2col + GEMMs; depthwise ones as loops)")
      ->check(CLI::IsMember({"auto", "dnnl", "cudnn", "im2col"}));
  app.add_option("--cudnn-workspace-mb", options.cudnnWorkspaceMb,
                 "MiB of workspace each cuDNN convolution call gets from the "
                 "memory plan; only deterministic algorithms that fit it run "
                 "(default 64)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--target", target,
                 "code generation target (cuda-emulated: the CUDA kernels as "
                 "CPU loops, to check them without a GPU)")
      ->check(CLI::IsMember({"cuda", "cpu", "cuda-emulated"}));
  std::string stages;
  for (const std::string &s : oflow::emitStageNames())
    stages += (stages.empty() ? "" : "|") + s;
  app.add_option("--emit", emit,
                 "stop after this stage and write its output: " + stages +
                     " (default exe)")
      ->check(CLI::IsMember(oflow::emitStageNames()));
  app.add_option("--device", options.device,
                 "the device the planner prices compute on and --emit=kernels "
                 "predicts for: h200, h100, a100, cpu, or a JSON profile file "
                 "(default: cpu for --target cpu, h200 for the CUDA targets)");
  app.add_option("--compute-model", options.computeModel,
                 "what prices compute in --emit=simulate and the memory search: "
                 "kernels (the CUDA targets' default on a GPU profile: the "
                 "program's kernels formed as for the executable and priced as "
                 "--emit=kernels prices them; one cost function, slower to "
                 "compile), ops (each op as the SBP planner prices it: fast, "
                 "blind to fusion and launches; the CPU target's only model)")
      ->check(CLI::IsMember({"kernels", "ops"}));
  std::string memoryLimit;
  app.add_option("--memory-limit", memoryLimit,
                 "bytes per device the plan must fit in (state, inputs and "
                 "outputs, activations), with a unit: 512MiB, 76GiB (default: "
                 "the --device's memory less 4 GiB; none for cpu)");
  app.add_option("--plan", options.planFile,
                 "compile exactly the plan in this file (what --emit=plan-json "
                 "writes: the layout of every variable and input)");
  app.add_option("--shard-state", options.shardState,
                 "variables without an --sbp hint on a mesh: none (whole on "
                 "every device: data parallel), optimizer (optimizer state "
                 "split: ZeRO-2), all (parameters too: ZeRO-3), node (parameters "
                 "and optimizer state split over the last mesh axis only: ZeRO-3 "
                 "inside a node, data parallel across nodes, as HSDP), auto "
                 "(default: of the plans that fit --memory-limit, the fastest predicted)")
      ->check(CLI::IsMember({"none", "optimizer", "all", "node", "auto"}));
  app.add_option("--reshard-after-forward", options.reshardAfterForward,
                 "split weights (ZeRO-3, HSDP) all-gathered for the forward pass: "
                 "yes (gathered again before their backward use, as FSDP's "
                 "reshard_after_forward), no (kept whole until then: one "
                 "all-gather less per weight, every gathered weight live at the "
                 "forward/backward boundary), auto (default: yes, unless the "
                 "memory search finds that keeping them fits and is faster)")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  app.add_option("--micro-batch-gradients", options.microBatchGradients,
                 "with --micro-batches, gradients the plan reduce-scatters "
                 "(ZeRO-2/3): sharded (each micro-batch's reduce-scattered as "
                 "it is made and accumulated as a shard, as FSDP and DeepSpeed: "
                 "K reduce-scatters a step, no whole accumulator), whole "
                 "(accumulated whole and reduce-scattered once a step, as "
                 "FSDP's no_sync), auto (default: sharded when --shard-state "
                 "shards them)")
      ->check(CLI::IsMember({"auto", "sharded", "whole"}));
  app.add_option("--planner", options.planner,
                 "how layouts are chosen on a mesh: greedy (default: op by op "
                 "in program order) or ilp (the whole program as an integer "
                 "program, started from the greedy plan; repeated layers "
                 "solved once)")
      ->check(CLI::IsMember({"greedy", "ilp"}));
  app.add_option("--tensor-parallel", options.tensorParallel,
                 "whether an op may use a parameter split on a mesh: none "
                 "(every op but the optimizer update uses parameters whole, "
                 "all-gathering split ones: data parallelism and ZeRO exactly "
                 "as written), cost (where the planner's cost model finds a "
                 "slice of a weight with gathered activations cheaper), or "
                 "auto (default: the memory search tries its layouts with "
                 "none, then the fastest that fits with cost, and keeps the "
                 "faster; without a search or with --sbp hints, cost)")
      ->check(CLI::IsMember({"auto", "cost", "none"}));
  app.add_option("--recompute", options.recompute,
                 "activation recomputation: none, selective (elementwise ops, "
                 "views, softmax, layer norm), all (GEMMs too), a regular "
                 "expression over ONNX node names, or auto (default: none "
                 "unless --memory-limit needs it)");
  app.add_option("--micro-batches", options.microBatches,
                 "gradient accumulation: run each step's batch as K "
                 "micro-batches in turn (activations of one at a time), sum "
                 "their gradients and synchronise once per step (default 1)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20)
                 .description("a positive count"));
  app.add_flag("--print-weights", options.printWeights,
               "print weights in full in IR output (default: elided)");
  int64_t batch = 0;
  auto *batchOpt = app.add_option("--batch", batch,
                                  "fixes the leading dynamic dimension of "
                                  "every graph input")
                       ->check(CLI::Range(int64_t(1), int64_t(1) << 40)
                                  .description("a positive size"));
  std::vector<std::string> shapes;
  app.add_option("--shape", shapes,
                 "fixes a graph input's shape: NAME=d0,d1,... (repeatable)");

  // What the executable does: train (default) or run the model forward.
  std::string mode = "train";
  app.add_option("--mode", mode, "train: a training executable; infer: an "
                                 "executable that runs the model forward")
      ->check(CLI::IsMember({"train", "infer"}));
  int64_t embedMiB = 256;
  app.add_option("--embed-weights-limit", embedMiB,
                 "embed the initial weights in the executable up to this many "
                 "MiB (default 256); larger models are read from the model "
                 "file (and its external data) when the executable starts")
      ->check(CLI::NonNegativeNumber);
  unsigned optLevel = 2;
  app.add_option("-O,--opt-level", optLevel,
                 "LLVM optimization level of the generated code (default 2)")
      ->check(CLI::Range(0, 3));
  app.add_option("--line-info-ir", options.lineInfoIr,
                 "CPU target: write the loop-level IR to this file and give "
                 "the generated code line tables that point into it, so that "
                 "`perf annotate` or `perf report --sort srcline` attribute "
                 "time to IR ops");
  const char *debugging = "Debugging (slower code, the same numbers)";
  app.add_flag("!--no-elementwise-fusion", options.fuseElementwise,
               "lower every op to its own loop nest (no elementwise fusion)")
      ->group(debugging);
  app.add_flag("!--no-fused-attention", options.fuseAttention,
               "CUDA targets with --precision bf16/fp16: keep attention as "
               "matmul, softmax and matmul ops instead of one fused "
               "oflow.attention (the scores then go through memory)")
      ->group(debugging);
  app.add_option("--pad-gemm-min-macs", options.padGemmMinMacs,
                 "CUDA targets: a GEMM whose output extent is not a multiple of "
                 "16 bytes (a vocabulary of 50257) gets zero weight rows up to a "
                 "multiple of 64 when M*N*K is at least this (default 2^30; 0: "
                 "never; the runtime then pads its copies instead)")
      ->check(CLI::NonNegativeNumber)
      ->group(debugging);
  app.add_flag("!--no-buffer-reuse", options.reuseBuffers,
               "give every buffer bytes of its own in the arena (no sharing "
               "between values whose lifetimes do not overlap)")
      ->group(debugging);
  app.add_flag("--emulate-threads-reversed", options.emulateThreadsReversed,
               "--target cuda-emulated: run the threads of warp-synchronous "
               "kernels in descending order; results that differ from the "
               "ascending order's show a race between threads")
      ->group(debugging);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet,
               "do not list the trained parameters and the memory plan");
  oflow::TrainingOptions &t = options.training;
  const char *training = "Training (PyTorch semantics)";
  app.add_option("--loss", t.loss,
                 "the loss when the model has no scalar output: "
                 "cross-entropy (on output 0 against integer labels) or mse")
      ->check(CLI::IsMember({"none", "cross-entropy", "mse"}))
      ->group(training);
  app.add_option("--label", t.label,
                 "name of the labels input that --loss adds (default labels)")
      ->group(training);
  app.add_option("--freeze", t.freeze,
                 "do not train this weight: a name or a regular expression "
                 "(full match); repeatable")
      ->group(training);
  app.add_option("--optimizer", t.optimizer, "sgd (with --momentum, "
                 "--nesterov), adam or adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}))
      ->group(training);
  app.add_option("--lr", t.lr, "base learning rate (default torch.optim's, "
                 "1e-3; the executable's --lr overrides it)")
      ->check(CLI::NonNegativeNumber)
      ->group(training);
  app.add_option("--momentum", t.momentum, "SGD momentum")->group(training);
  app.add_option("--dampening", t.dampening, "SGD dampening")->group(training);
  app.add_flag("--nesterov", t.nesterov, "Nesterov momentum")->group(training);
  app.add_option("--beta1", t.beta1, "Adam beta1")->group(training);
  app.add_option("--beta2", t.beta2, "Adam beta2")->group(training);
  app.add_option("--eps", t.eps, "Adam epsilon")->group(training);
  app.add_option("--weight-decay", t.weightDecay,
                     "weight decay (L2 for sgd/adam, decoupled for adamw); "
                     "default 0, and 0.01 for adamw as in torch.optim.AdamW")
      ->check(CLI::NonNegativeNumber)
      ->group(training);
  app.add_option("--clip-grad-norm", t.clipGradNorm,
                 "clip the global gradient norm to this value (0: off)")
      ->group(training);
  app.add_option("--schedule", t.schedule,
                 "learning-rate schedule: constant, linear-warmup, cosine, "
                 "warmup-cosine")
      ->check(CLI::IsMember({"constant", "linear-warmup", "cosine", "warmup-cosine"}))
      ->group(training);
  app.add_option("--warmup-steps", t.warmupSteps, "warm-up steps")->group(training);
  app.add_option("--total-steps", t.totalSteps,
                 "steps of the cosine schedule")->group(training);
  app.add_option("--min-lr", t.minLr, "final learning rate of cosine decay")
      ->group(training);
  app.add_option("--loss-scale", t.lossScale,
                 "initial dynamic loss scale with --precision fp16 (default "
                 "65536; halved on each step whose gradients overflow, which "
                 "is then skipped; doubled after 2000 good steps)")
      ->check(CLI::PositiveNumber)
      ->group(training);

  try {
    app.parse(static_cast<int>(cliArgs.size()), cliArgs.data());
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0)
      return app.exit(e); // --help, --version
    std::string msg = e.what();
    for (char &c : msg)
      if (c == '\n')
        c = ' ';
    llvm::errs() << "oflow-compile: error: " << msg
                 << " (see oflow-compile --help)\n";
    return 1;
  }

  if (!mesh.empty()) {
    std::string error;
    auto shape = mlir::oflow::parseMeshSpec(mesh, error);
    if (failed(shape)) {
      llvm::errs() << "oflow-compile: error: --mesh: " << error << "\n";
      return 1;
    }
    options.mesh.assign(shape->begin(), shape->end());
  }
  if (!memoryLimit.empty()) {
    std::optional<int64_t> bytes = oflow::parseByteSize(memoryLimit);
    if (!bytes) {
      llvm::errs() << "oflow-compile: error: --memory-limit: '" << memoryLimit
                   << "' is not a size (a positive number with a unit: 512MiB, "
                      "76GiB, 1.5GB)\n";
      return 1;
    }
    options.memoryLimit = *bytes;
  }
  options.target = target == "cpu"             ? oflow::Target::Cpu
                   : target == "cuda-emulated" ? oflow::Target::CudaEmulated
                                               : oflow::Target::Cuda;
  options.emit = *oflow::parseEmitStage(emit);
  options.mode = mode == "infer" ? oflow::Mode::Infer : oflow::Mode::Train;
  options.verbose = !quiet;
  options.optLevel = optLevel;
  options.embedWeightsLimit = embedMiB << 20;
  if (*batchOpt)
    options.import.batch = batch;
  for (const std::string &spec : shapes) {
    llvm::StringRef name, dims;
    std::tie(name, dims) = llvm::StringRef(spec).split('=');
    std::vector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> parts;
    if (!dims.empty())
      dims.split(parts, ',');
    bool ok = !name.empty() && !dims.empty();
    for (llvm::StringRef p : parts) {
      int64_t d = 0;
      ok &= !p.trim().getAsInteger(10, d) && d > 0;
      shape.push_back(d);
    }
    if (!ok) {
      llvm::errs() << "oflow-compile: error: --shape '" << spec
                   << "': expected NAME=d0,d1,... with positive sizes\n";
      return 1;
    }
    options.import.shapes[name.str()] = shape;
  }

  mlir::MLIRContext context;
  // One line per failure: the first error says what is wrong; errors after
  // it (e.g. "failed to legalize operation" after a pattern's own message)
  // are consequences.
  bool reported = false;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    bool isError = diag.getSeverity() == mlir::DiagnosticSeverity::Error;
    if (isError && reported)
      return mlir::success();
    reported |= isError;
    printDiagnostic(diag);
    return mlir::success();
  });
  return oflow::runCompiler(context, options);
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    for (char &c : msg)
      if (c == '\n')
        c = ' ';
    llvm::errs() << "oflow-compile: error: " << msg << "\n";
    return 1;
  }
}
