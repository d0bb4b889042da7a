//===- Pipelines.cpp - oflow-compile's pass pipelines ---------------------===//
#include "Pipelines.h"

#include "oflow/Autodiff/Passes.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Conversion/Passes.h"
#include "oflow/Sbp/Passes.h"
#include "oflow/Training/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

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

/// A pass option value in MLIR's textual pipeline syntax.
static std::string quoted(llvm::StringRef value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
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

LogicalResult addTrainingPasses(PassManager &pm, const CompileOptions &options) {
  if (options.mode == Mode::Infer)
    return addTextual(pm, "oflow-build-infer-entry,canonicalize,cse");
  const TrainingOptions &t = options.training;
  std::string freeze;
  for (const std::string &f : t.freeze)
    freeze += (freeze.empty() ? "" : ",") + quoted(f);
  std::string pipeline =
      "oflow-append-loss{loss=" + t.loss + " label=" +
      quoted(t.label) + "},oflow-autodiff" +
      (freeze.empty() ? std::string() : "{freeze=" + freeze + "}") +
      ",oflow-build-train-step{optimizer=" + t.optimizer + " lr=" + num(t.lr) +
      " momentum=" + num(t.momentum) + " dampening=" + num(t.dampening) +
      " nesterov=" + (t.nesterov ? "true" : "false") + " beta1=" + num(t.beta1) +
      " beta2=" + num(t.beta2) + " eps=" + num(t.eps) +
      " weight-decay=" + num(t.weightDecay) +
      " clip-grad-norm=" + num(t.clipGradNorm) + " schedule=" + t.schedule +
      " warmup-steps=" + std::to_string(t.warmupSteps) +
      " total-steps=" + std::to_string(t.totalSteps) + " min-lr=" + num(t.minLr) +
      " loss-scaling=" + (options.precision == "fp16" ? "true" : "false") +
      " loss-scale=" + num(t.lossScale) +
      "},canonicalize,cse";
  return addTextual(pm, pipeline);
}

LogicalResult addLinalgPasses(PassManager &pm, const CompileOptions &options) {
  std::string autocast;
  if (options.precision != "fp32")
    autocast = ",func.func(oflow-autocast{precision=" + options.precision + "})";
  return addTextual(pm, "oflow-bind-program-interface,oflow-lower-to-linalg" +
                            autocast + ",canonicalize,cse");
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

std::vector<std::string> describeTraining(const CompileOptions &options) {
  if (options.mode != Mode::Train)
    return {};
  const TrainingOptions &t = options.training;
  std::vector<std::string> lines;
  std::string opt = "optimizer " + t.optimizer + " lr=" + num(t.lr) +
                    " weight_decay=" + num(t.weightDecay);
  if (t.optimizer == "sgd")
    opt += " momentum=" + num(t.momentum) + " dampening=" + num(t.dampening) +
           " nesterov=" + (t.nesterov ? "1" : "0");
  else
    opt += " beta1=" + num(t.beta1) + " beta2=" + num(t.beta2) +
           " eps=" + num(t.eps);
  if (t.clipGradNorm > 0)
    opt += " clip_grad_norm=" + num(t.clipGradNorm);
  lines.push_back(opt);
  lines.push_back("schedule " + t.schedule +
                  " warmup_steps=" + std::to_string(t.warmupSteps) +
                  " total_steps=" + std::to_string(t.totalSteps) +
                  " min_lr=" + num(t.minLr));
  return lines;
}

} // namespace oflow

namespace oflow {

void addSbpPasses(PassManager &pm, const CompileOptions &options) {
  pm.addPass(createDecomposeForSbp());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  InferSbpOptions infer;
  infer.hints.assign(options.sbpHints.begin(), options.sbpHints.end());
  pm.addPass(createInferSbp(infer));
  pm.addPass(createInsertBoxing());
  BucketCollectivesOptions bucket;
  bucket.bucketMb = options.bucketMb;
  pm.addPass(createBucketCollectives(bucket));
  pm.addPass(createVerifySbp());
}

void addPartitionPasses(PassManager &pm) { pm.addPass(createPartition()); }

} // namespace oflow
