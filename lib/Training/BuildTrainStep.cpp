//===- BuildTrainStep.cpp - the train and grads entry functions -----------===//
//
// Turns autodiff's output (the entry returning the loss, `oflow.gradient`
// markers) into the program the runtime calls: weights become variables,
// and two entries are cloned from the entry: `@oflow_train_step` applies
// the schedule, clipping and optimizer and writes the new state;
// `@oflow_grad_step` returns the gradients and writes nothing (for testing
// against torch.autograd and for gradient dumps).
//
//===----------------------------------------------------------------------===//
#include "oflow/Training/Passes.h"

#include "LRSchedule.h"
#include "Optimizer.h"
#include "ScalarBuilder.h"
#include "WeightVariables.h"

#include "OFlow/OFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace oflow {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "oflow/Training/Passes.h.inc"
} // namespace oflow

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace {

constexpr StringLiteral kTrainEntry = "oflow_train_step";
constexpr StringLiteral kGradsEntry = "oflow_grad_step";

/// A trained weight and the gradient autodiff computed for it.
struct Trained {
  Weight *weight;
  of::GradientOp gradient;
};

struct BuildTrainStep : ::oflow::impl::BuildTrainStepBase<BuildTrainStep> {
  using BuildTrainStepBase::BuildTrainStepBase;

  void runOnOperation() override;

private:
  LogicalResult parseOptions();
  FailureOr<SmallVector<Trained>>
  matchGradients(func::FuncOp fn, MutableArrayRef<Weight> weights);
  func::FuncOp cloneEntry(func::FuncOp fn, SymbolTable &symbols,
                          StringRef name, StringRef kind);
  LogicalResult buildTrain(func::FuncOp fn, SymbolTable &symbols,
                           Operation *anchor, ArrayRef<Trained> trained);
  void buildGrads(func::FuncOp fn, ArrayRef<Trained> trained);
  DictionaryAttr describeOptimizer(MLIRContext *ctx) const;

  OptimizerConfig optimizerConfig;
  ScheduleConfig scheduleConfig;
};

LogicalResult BuildTrainStep::parseOptions() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    return module.emitError("oflow-build-train-step: ") << message;
  };
  std::optional<OptimizerKind> kind = parseOptimizerKind(optimizer);
  if (!kind)
    return fail("unknown optimizer '" + optimizer +
                "' (expected sgd, adam or adamw)");
  std::optional<ScheduleKind> scheduleKind = parseScheduleKind(schedule);
  if (!scheduleKind)
    return fail("unknown schedule '" + schedule +
                "' (expected constant, linear-warmup, cosine or "
                "warmup-cosine)");
  OptimizerConfig &c = optimizerConfig;
  c.kind = *kind;
  // torch's defaults where the option was left negative.
  c.lr = lr >= 0 ? lr : (c.kind == OptimizerKind::sgd ? 0.01 : 1e-3);
  c.weightDecay = weightDecay >= 0
                      ? weightDecay
                      : (c.kind == OptimizerKind::adamw ? 0.01 : 0.0);
  c.momentum = momentum;
  c.dampening = dampening;
  c.nesterov = nesterov;
  c.beta1 = beta1;
  c.beta2 = beta2;
  c.eps = eps;
  c.clipGradNorm = clipGradNorm;
  if (c.momentum < 0)
    return fail("--momentum must not be negative");
  if (c.eps < 0)
    return fail("--eps must not be negative");
  if (c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1)
    return fail("--beta1 and --beta2 must be in [0, 1)");
  if (c.clipGradNorm < 0)
    return fail("--clip-grad-norm must not be negative (0 turns it off)");
  if (c.kind == OptimizerKind::sgd && c.nesterov &&
      (c.momentum <= 0 || c.dampening != 0))
    return fail("Nesterov momentum needs --momentum > 0 and --dampening 0");
  scheduleConfig = {*scheduleKind, warmupSteps, totalSteps, minLr};
  std::string problem = checkSchedule(scheduleConfig);
  if (!problem.empty())
    return fail(problem);
  return success();
}

FailureOr<SmallVector<Trained>>
BuildTrainStep::matchGradients(func::FuncOp fn,
                               MutableArrayRef<Weight> weights) {
  llvm::StringMap<Weight *> byName;
  for (Weight &w : weights)
    byName[w.name] = &w;
  llvm::StringMap<of::GradientOp> gradients;
  WalkResult walk = fn.walk([&](of::GradientOp op) {
    Weight *w = byName.lookup(op.getName());
    if (!w || !w->trainable) {
      op.emitOpError("names '")
          << op.getName()
          << (w ? "', a weight that is not oflow.trainable"
                : "', which is no oflow.weight of @" + fn.getName().str());
      return WalkResult::interrupt();
    }
    if (op.getGrad().getType() != w->type) {
      op.emitOpError("gradient of '")
          << op.getName() << "' has type " << op.getGrad().getType()
          << ", but the weight is " << w->type;
      return WalkResult::interrupt();
    }
    auto [it, inserted] = gradients.try_emplace(op.getName(), op);
    if (!inserted) {
      op.emitOpError("is the second gradient of '") << op.getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  SmallVector<Trained> trained;
  for (Weight &w : weights) {
    if (!w.trainable)
      continue;
    of::GradientOp gradient = gradients.lookup(w.name);
    if (!gradient)
      return w.ops.front().emitOpError("trainable weight '")
             << w.name << "' has no oflow.gradient (run oflow-autodiff first)";
    trained.push_back({&w, gradient});
  }
  if (trained.empty())
    return fn.emitError("@")
           << fn.getName()
           << " trains no weight: no float initializer reaches the loss "
              "(values fed as graph inputs are data, not parameters; "
              "--freeze may exclude them; oflow-autodiff marks what is "
              "trained)";
  return trained;
}

/// A copy of `fn` named `name`, taking the step scalars after its arguments.
func::FuncOp BuildTrainStep::cloneEntry(func::FuncOp fn, SymbolTable &symbols,
                                        StringRef name, StringRef kind) {
  MLIRContext *ctx = fn.getContext();
  auto clone = fn.clone();
  clone.setSymName(name);
  clone->setAttr(of::OFlowDialect::kEntryAttrName, StringAttr::get(ctx, kind));
  symbols.insert(clone);
  auto scalar = [&](StringRef what) {
    return DictionaryAttr::get(
        ctx, {NamedAttribute(of::OFlowDialect::kScalarAttrName,
                             StringAttr::get(ctx, what))});
  };
  unsigned n = clone.getNumArguments();
  Type f32 = RankedTensorType::get({}, Float32Type::get(ctx));
  Type i64 = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  Location loc = NameLoc::get(StringAttr::get(ctx, "oflow.step_scalars"),
                              fn.getLoc());
  (void)clone.insertArguments({n, n}, {f32, i64}, {scalar("lr"), scalar("step")},
                              {loc, loc});
  return clone;
}

/// Replaces the return with `values` carrying `attrs`.
static void setResults(func::FuncOp fn, ArrayRef<Value> values,
                       ArrayRef<DictionaryAttr> attrs) {
  Operation *terminator = fn.getBody().back().getTerminator();
  OpBuilder builder(terminator);
  func::ReturnOp::create(builder, terminator->getLoc(), values);
  terminator->erase();
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               ValueRange(values).getTypes()));
  fn.setAllResultAttrs(attrs);
}

static DictionaryAttr oneAttr(MLIRContext *ctx, StringRef name,
                              StringRef value) {
  return DictionaryAttr::get(
      ctx, {NamedAttribute(name, StringAttr::get(ctx, value))});
}

/// The gradient ops of a clone of the entry, by weight name (validated on
/// the entry by matchGradients: one per trained weight).
static llvm::StringMap<of::GradientOp> gradientsByName(func::FuncOp fn) {
  llvm::StringMap<of::GradientOp> map;
  fn.walk([&](of::GradientOp op) { map[op.getName()] = op; });
  return map;
}

void BuildTrainStep::buildGrads(func::FuncOp fn, ArrayRef<Trained> trained) {
  MLIRContext *ctx = fn.getContext();
  llvm::StringMap<of::GradientOp> gradients = gradientsByName(fn);
  Value loss = fn.getBody().back().getTerminator()->getOperand(0);
  SmallVector<Value> values{loss};
  SmallVector<DictionaryAttr> attrs{
      oneAttr(ctx, of::OFlowDialect::kNameAttrName, "loss")};
  for (const Trained &t : trained) {
    values.push_back(gradients[t.weight->name].getGrad());
    attrs.push_back(
        oneAttr(ctx, of::OFlowDialect::kGradOfAttrName, t.weight->name));
  }
  for (auto &entry : gradients)
    entry.second.erase();
  setResults(fn, values, attrs);
  eraseDeadOps(fn);
}

LogicalResult BuildTrainStep::buildTrain(func::FuncOp fn, SymbolTable &symbols,
                                         Operation *anchor,
                                         ArrayRef<Trained> trained) {
  MLIRContext *ctx = fn.getContext();
  llvm::StringMap<of::GradientOp> gradients = gradientsByName(fn);
  Operation *terminator = fn.getBody().back().getTerminator();
  Value loss = terminator->getOperand(0);
  unsigned n = fn.getNumArguments();
  Value lrArg = fn.getArgument(n - 2), stepArg = fn.getArgument(n - 1);

  // Batch-norm running statistics kept in buffer variables.
  SmallVector<VariableWrite> statWrites;
  llvm::StringMap<Operation *> statWriter;
  WalkResult walk = fn.walk([&](of::BatchNormTrainingOp bn) {
    for (auto [operand, result] :
         {std::pair{bn.getRunningMean(), bn.getNewRunningMean()},
          std::pair{bn.getRunningVar(), bn.getNewRunningVar()}}) {
      auto read = operand.getDefiningOp<of::ReadVariableOp>();
      if (!read)
        continue;
      auto variable =
          symbols.lookup<of::VariableOp>(read.getVariableAttr().getAttr());
      if (!variable || variable.getRole() != of::VariableRole::buffer)
        continue;
      auto [it, inserted] =
          statWriter.try_emplace(variable.getSymName(), bn.getOperation());
      if (!inserted) {
        bn.emitOpError("updates running statistics '")
            << variable.getSymName()
            << "' that another batch_norm_training updates too";
        return WalkResult::interrupt();
      }
      statWrites.push_back({read.getVariableAttr(), result});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Optimizer state variables, next to the weights.
  SmallVector<ParamUpdate> params;
  OpBuilder detached(ctx);
  for (const Trained &t : trained) {
    ParamUpdate update{FlatSymbolRefAttr::get(t.weight->variable.getSymNameAttr()),
                       t.weight->type, gradients[t.weight->name].getGrad(), {}};
    for (StringRef slot : optimizerSlots(optimizerConfig)) {
      std::string name = (t.weight->variable.getSymName() + "." + slot).str();
      auto state = of::VariableOp::create(
          detached, t.weight->variable.getLoc(), name,
          of::VariableRole::optimizer, t.weight->type,
          /*initial_value=*/nullptr,
          StringAttr::get(ctx, t.weight->name + "." + slot.str()),
          update.param, /*sbp=*/nullptr);
      symbols.insert(state, Block::iterator(anchor));
      update.slots.push_back(FlatSymbolRefAttr::get(state.getSymNameAttr()));
    }
    params.push_back(update);
  }

  OpBuilder builder(terminator);
  ScalarBuilder sb(builder, NameLoc::get(StringAttr::get(ctx, "oflow.optimizer"),
                                         terminator->getLoc()));
  Value lr = buildScheduledLearningRate(
      sb, scheduleConfig, sb.cast(lrArg, builder.getF64Type()), stepArg);
  Value lrUsed = sb.cast(lr, builder.getF32Type());
  SmallVector<VariableWrite> writes =
      buildOptimizerStep(sb, optimizerConfig, lr, stepArg, params, lrUsed);
  llvm::append_range(writes, statWrites);
  // Reads see the state from before the step: every write goes last.
  for (const VariableWrite &w : writes)
    of::WriteVariableOp::create(builder, sb.location(), w.variable, w.value);

  for (auto &entry : gradients)
    entry.second.erase();
  setResults(fn, {loss, lrUsed},
             {oneAttr(ctx, of::OFlowDialect::kNameAttrName, "loss"),
              oneAttr(ctx, of::OFlowDialect::kScalarAttrName, "lr_used")});
  fn->setAttr(of::OFlowDialect::kOptimizerAttrName, describeOptimizer(ctx));
  eraseDeadOps(fn);
  return success();
}

/// The hyper-parameters, for the manifest and for people reading the IR.
DictionaryAttr BuildTrainStep::describeOptimizer(MLIRContext *ctx) const {
  Builder b(ctx);
  const OptimizerConfig &c = optimizerConfig;
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr("kind", b.getStringAttr(stringifyOptimizerKind(c.kind))),
      b.getNamedAttr("lr", b.getF64FloatAttr(c.lr)),
      b.getNamedAttr("weight_decay", b.getF64FloatAttr(c.weightDecay)),
      b.getNamedAttr("clip_grad_norm", b.getF64FloatAttr(c.clipGradNorm)),
      b.getNamedAttr("schedule", b.getStringAttr(stringifyScheduleKind(
                                     scheduleConfig.kind)))};
  if (c.kind == OptimizerKind::sgd) {
    attrs.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(c.momentum)));
    attrs.push_back(
        b.getNamedAttr("dampening", b.getF64FloatAttr(c.dampening)));
    attrs.push_back(b.getNamedAttr("nesterov", b.getBoolAttr(c.nesterov)));
  } else {
    attrs.push_back(b.getNamedAttr("beta1", b.getF64FloatAttr(c.beta1)));
    attrs.push_back(b.getNamedAttr("beta2", b.getF64FloatAttr(c.beta2)));
    attrs.push_back(b.getNamedAttr("eps", b.getF64FloatAttr(c.eps)));
  }
  if (scheduleConfig.kind != ScheduleKind::constant) {
    attrs.push_back(b.getNamedAttr(
        "warmup_steps", b.getI64IntegerAttr(scheduleConfig.warmupSteps)));
    attrs.push_back(b.getNamedAttr(
        "total_steps", b.getI64IntegerAttr(scheduleConfig.totalSteps)));
    attrs.push_back(
        b.getNamedAttr("min_lr", b.getF64FloatAttr(scheduleConfig.minLr)));
  }
  return b.getDictionaryAttr(attrs);
}

void BuildTrainStep::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(parseOptions()))
    return signalPassFailure();
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal()) {
    module.emitError("oflow-build-train-step: no function @")
        << entry << " with a body";
    return signalPassFailure();
  }
  for (StringRef name : {kTrainEntry, kGradsEntry})
    if (module.lookupSymbol(name)) {
      module.emitError("oflow-build-train-step: the module already has @")
          << name;
      return signalPassFailure();
    }
  auto lossType = fn.getNumResults()
                      ? dyn_cast<RankedTensorType>(fn.getResultTypes()[0])
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType())) {
    fn.emitError("@") << entry
                      << " must return the scalar float loss first (run "
                         "oflow-append-loss and oflow-autodiff first)";
    return signalPassFailure();
  }

  FailureOr<SmallVector<Weight>> weights = collectWeights(fn, {kTrainEntry, kGradsEntry});
  if (failed(weights))
    return signalPassFailure();
  FailureOr<SmallVector<Trained>> trained = matchGradients(fn, *weights);
  if (failed(trained))
    return signalPassFailure();

  // Variables go first in the module, in order.
  Operation *anchor = &module.getBody()->front();
  SymbolTable symbols(module);
  replaceWeightsWithVariables(symbols, anchor, *weights, [](const Weight &w) {
    return w.trainable ? of::VariableRole::param : of::VariableRole::buffer;
  });
  func::FuncOp train = cloneEntry(fn, symbols, kTrainEntry, "train");
  func::FuncOp grads = cloneEntry(fn, symbols, kGradsEntry, "grads");
  buildGrads(grads, *trained);
  if (failed(buildTrain(train, symbols, anchor, *trained)))
    return signalPassFailure();
  symbols.erase(fn);
}

} // namespace

namespace oflow {
std::vector<std::string> listTrainedParameters(ModuleOp module) {
  std::vector<std::string> names;
  for (auto variable : module.getOps<of::VariableOp>())
    if (variable.getRole() == of::VariableRole::param)
      names.push_back(variable.getModelName().value_or(variable.getSymName()).str());
  if (!names.empty())
    return names;
  llvm::StringSet<> seen;
  module.walk([&](of::WeightOp op) {
    if (op->hasAttr(of::OFlowDialect::kTrainableAttrName) &&
        seen.insert(op.getName()).second)
      names.push_back(op.getName().str());
  });
  return names;
}
} // namespace oflow
