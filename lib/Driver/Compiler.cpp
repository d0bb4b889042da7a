//===- Compiler.cpp - run the pipeline up to --emit -----------------------===//
#include "oflow/Driver/Driver.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"
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
    {EmitStage::Obj, "obj"},           {EmitStage::Exe, "exe"},
    {EmitStage::Plan, "plan"}};
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

/// What a stage that this build does not have yet needs, for the message.
static const char *missingStageReason(EmitStage stage) {
  switch (stage) {
  case EmitStage::Training:
    return "the training-graph passes (loss, autodiff, optimizer)";
  case EmitStage::Sbp:
  case EmitStage::Partitioned:
  case EmitStage::Plan:
    return "SBP inference, boxing and partitioning";
  case EmitStage::Linalg:
  case EmitStage::Llvm:
  case EmitStage::Obj:
  case EmitStage::Exe:
    return "lowering and code generation";
  case EmitStage::Mlir:
    break;
  }
  return "";
}

int runCompiler(MLIRContext &context, const CompileOptions &options) {
  Location cliLoc = NameLoc::get(StringAttr::get(&context, "oflow-compile"));
  // Refuse stages this build cannot produce before doing any work, so the
  // user learns it at once (never a silently different output).
  if (options.emit != EmitStage::Mlir) {
    emitError(cliLoc) << "--emit=" << emitStageName(options.emit)
                      << " is not available yet: this version has no "
                      << missingStageReason(options.emit)
                      << "; use --emit=mlir to print the imported oflow IR";
    return 1;
  }

  // --mlir-timing reports each stage (and, later, each pass).
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  TimingScope importTimer = root.nest("import (" + options.input + ")");
  OwningOpRef<ModuleOp> module = loadModel(context, options);
  importTimer.stop();
  if (!module)
    return 1;
  TimingScope printTimer = root.nest("print IR");

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
  if (err) {
    emitError(cliLoc) << "cannot write '" << options.output
                      << "': " << llvm::toString(std::move(err));
    return 1;
  }
  return 0;
}

} // namespace oflow
