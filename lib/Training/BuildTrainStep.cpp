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

/// The loss scaler's variables (see Passes.td), made once for both entries.
struct LossScalerVariables {
  FlatSymbolRefAttr scale, good, applied;
};

/// This step's scaler values.
struct LossScaler {
  LossScalerVariables vars;
  Value scale, good, appliedSteps;
  Value overflow; // i1: some gradient holds an inf or NaN
};

static LossScalerVariables createLossScalerVariables(ModuleOp module,
                                                     SymbolTable &symbols,
                                                     Operation *anchor,
                                                     FlatSymbolRefAttr firstParam,
                                                     double initialScale) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  auto variable = [&](StringRef name, RankedTensorType type, Attribute init) {
    // Optimizer state: checkpointed, never exported; 0-d, so never split.
    auto v = of::VariableOp::create(
        b, module.getLoc(), name, of::VariableRole::optimizer, type,
        DenseElementsAttr::get(type, init), /*initializer=*/nullptr,
        StringAttr::get(ctx, name),
        firstParam, /*sbp=*/nullptr);
    symbols.insert(v, Block::iterator(anchor));
    return FlatSymbolRefAttr::get(v.getSymNameAttr());
  };
  return {variable("loss_scale", f32, b.getF32FloatAttr(static_cast<float>(initialScale))),
          variable("loss_scale.good_steps", i64, b.getI64IntegerAttr(0)),
          variable("loss_scale.applied_steps", i64, b.getI64IntegerAttr(0))};
}

/// Scales the backward of `fn` (its seed becomes S instead of 1) and returns
/// the unscaled `grads` (at the builder's point) and whether any overflowed.
static Value scaleBackward(func::FuncOp fn, const LossScalerVariables &vars,
                           ScalarBuilder &sb, MutableArrayRef<Value> grads,
                           Value &scale) {
  OpBuilder &b = sb.builder();
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  scale = of::ReadVariableOp::create(b, sb.location(), f32, vars.scale);
  fn.walk([&](Operation *op) {
    auto loc = dyn_cast<NameLoc>(op->getLoc());
    if (!loc || loc.getName() != "oflow.loss_seed" || op->getNumResults() != 1)
      return;
    OpBuilder at(op);
    ScalarBuilder here(at, sb.location());
    Value seed = here.cast(
        of::ReadVariableOp::create(at, sb.location(), f32, vars.scale),
        elementTypeOf(op->getResult(0)));
    op->getResult(0).replaceAllUsesWith(seed);
  });
  // Unscale; sum(g * 0) is NaN exactly when g holds an inf or a NaN.
  Value inverse = sb.div(sb.constant(1.0, b.getF32Type()), scale);
  Value probe = sb.constant(0.0, b.getF32Type());
  for (Value &g : grads) {
    Type elem = elementTypeOf(g);
    Value sum = sb.sumAll(sb.mul(g, sb.constant(0.0, elem)));
    probe = sb.add(probe, sb.cast(sum, b.getF32Type()));
    g = sb.mul(g, sb.cast(inverse, elem));
  }
  return sb.compare(of::ComparePredicate::ne, probe, probe);
}

static LossScaler startLossScaling(func::FuncOp fn, const LossScalerVariables &vars,
                                   ScalarBuilder &sb,
                                   MutableArrayRef<ParamUpdate> params) {
  OpBuilder &b = sb.builder();
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  LossScaler s;
  s.vars = vars;
  s.good = of::ReadVariableOp::create(b, sb.location(), i64, vars.good);
  s.appliedSteps = of::ReadVariableOp::create(b, sb.location(), i64, vars.applied);
  SmallVector<Value> grads = llvm::map_to_vector(params, [](const ParamUpdate &p) {
    return p.grad;
  });
  s.overflow = scaleBackward(fn, vars, sb, grads, s.scale);
  for (auto [p, g] : llvm::zip(params, grads))
    p.grad = g;
  return s;
}

/// Keeps every variable's old value when the step overflowed, and updates
/// the scaler (GradScaler.update: backoff 0.5, growth 2 every 2000 steps).
static void finishLossScaling(const LossScaler &s, ScalarBuilder &sb,
                              SmallVectorImpl<VariableWrite> &writes) {
  OpBuilder &b = sb.builder();
  for (VariableWrite &w : writes) {
    Value old = of::ReadVariableOp::create(b, sb.location(), w.value.getType(),
                                           w.variable);
    w.value = sb.where(s.overflow, old, w.value);
  }
  Type f32 = b.getF32Type();
  Value good = sb.add(s.good, sb.i64(1));
  Value grow = sb.compare(of::ComparePredicate::ge, good, sb.i64(2000));
  Value scale = sb.where(
      s.overflow, sb.mul(s.scale, sb.constant(0.5, f32)),
      sb.where(grow, sb.mul(s.scale, sb.constant(2.0, f32)), s.scale));
  good = sb.where(s.overflow, sb.i64(0), sb.where(grow, sb.i64(0), good));
  Value applied = sb.where(s.overflow, s.appliedSteps,
                           sb.add(s.appliedSteps, sb.i64(1)));
  writes.push_back({s.vars.scale, scale});
  writes.push_back({s.vars.good, good});
  writes.push_back({s.vars.applied, applied});
}

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
  /// Set with loss-scaling.
  std::optional<LossScalerVariables> scalerVariables;
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
  // torch.optim's defaults where the option was left negative (the pass owns
  // them; the driver passes what the user set): lr 1e-3 for all three (SGD's
  // since torch 2), weight decay 0.01 for AdamW and 0 otherwise.
  c.lr = lr >= 0 ? lr : 1e-3;
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
  // Dropout masks are drawn per step (the gradient's dropouts with them).
  Value step = clone.getArgument(n + 1);
  clone.walk([&](of::DropoutOp op) {
    if (op.getRatio().convertToDouble() == 0.0 || op.getStep())
      return;
    OpBuilder builder(op);
    auto keyed = of::DropoutOp::create(
        builder, op.getLoc(), op.getInput(), step, op.getOffsets(),
        op.getRatioAttr(), op.getSeedAttr(), op.getGlobalShapeAttr());
    op.replaceAllUsesWith(keyed.getResult());
    op.erase();
  });
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
  if (scalerVariables) {
    // The gradients the train step uses: scaled backward, unscaled here.
    OpBuilder builder(fn.getBody().back().getTerminator());
    ScalarBuilder sb(builder, NameLoc::get(StringAttr::get(ctx, "oflow.loss_scale"),
                                           fn.getLoc()));
    Value scale;
    (void)scaleBackward(fn, *scalerVariables, sb,
                        MutableArrayRef<Value>(values).drop_front(), scale);
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
          /*initial_value=*/nullptr, /*initializer=*/nullptr,
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
  std::optional<LossScaler> scaler;
  if (scalerVariables)
    scaler = startLossScaling(fn, *scalerVariables, sb, params);
  SmallVector<VariableWrite> writes = buildOptimizerStep(
      sb, optimizerConfig, lr, scaler ? scaler->appliedSteps : stepArg, params,
      lrUsed);
  if (scaler)
    finishLossScaling(*scaler, sb, writes);
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
  if (lossScaling)
    scalerVariables = createLossScalerVariables(
        module, symbols, anchor,
        FlatSymbolRefAttr::get(trained->front().weight->variable.getSymNameAttr()),
        lossScale);
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
