//===- Autodiff.cpp - reverse-mode autodiff over the oflow ops ------------===//
//
// 1. Activity: a value is active when a differentiable path leads from a
//    trainable weight to it and from it to the loss. Integer and boolean
//    values, and the operands/results a rule marks inactive (buffers), cut
//    paths; so weights that only feed masks or running statistics are not
//    trained.
// 2. A reverse walk over the entry block applies each active op's rule and
//    accumulates the gradients of values used several times with oflow.add.
// 3. One oflow.gradient per trained weight name, before the return, in the
//    order of the weight's first appearance.
//
//===----------------------------------------------------------------------===//
#include "GradRules.h"
#include "oflow/Autodiff/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Regex.h"

namespace oflow {
#define GEN_PASS_DEF_OFLOWAUTODIFF
#include "oflow/Autodiff/Passes.h.inc"
} // namespace oflow

using namespace mlir;
using namespace mlir::oflow;

namespace oflow {
namespace {

using autodiff::GradArgs;
using autodiff::GradBuilder;
using autodiff::GradRegistry;
using autodiff::GradRule;
using autodiff::tensorType;

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

const GradRegistry &gradRegistry() {
  static const GradRegistry registry = [] {
    GradRegistry r;
    autodiff::registerElementwiseGradRules(r);
    autodiff::registerLinalgGradRules(r);
    autodiff::registerNormGradRules(r);
    autodiff::registerShapeGradRules(r);
    autodiff::registerLossGradRules(r);
    return r;
  }();
  return registry;
}

/// Whether gradients can flow through operand / result `i` of `op`. Ops
/// without a rule count as differentiable, so that reaching one from a
/// trained weight is reported instead of silently cutting the path.
bool operandCarries(Operation *op, const GradRule *rule, unsigned i) {
  if (!isFloatTensor(op->getOperand(i)))
    return false;
  return !rule || i >= 64 || !(rule->inactiveOperands >> i & 1);
}

bool resultCarries(Operation *op, const GradRule *rule, unsigned i) {
  if (!isFloatTensor(op->getResult(i)))
    return false;
  return !rule || i >= 64 || !(rule->inactiveResults >> i & 1);
}

/// The values gradients flow through: reached from a trainable weight and
/// reaching the loss along differentiable edges.
llvm::DenseSet<Value> activeValues(Block &block, Value loss,
                                   llvm::function_ref<bool(WeightOp)> trainable,
                                   const GradRegistry &registry) {
  llvm::DenseSet<Value> varied;
  for (Operation &op : block.without_terminator()) {
    if (auto w = dyn_cast<WeightOp>(op)) {
      if (trainable(w))
        varied.insert(w.getOutput());
      continue;
    }
    const GradRule *rule = registry.lookup(&op);
    bool reached =
        llvm::any_of(llvm::seq(op.getNumOperands()), [&](unsigned i) {
          return operandCarries(&op, rule, i) &&
                 varied.contains(op.getOperand(i));
        });
    if (!reached)
      continue;
    for (unsigned i = 0; i < op.getNumResults(); ++i)
      if (resultCarries(&op, rule, i))
        varied.insert(op.getResult(i));
  }
  llvm::DenseSet<Value> active;
  if (varied.contains(loss))
    active.insert(loss);
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return active.contains(r); }))
      continue;
    const GradRule *rule = registry.lookup(&op);
    for (unsigned i = 0; i < op.getNumOperands(); ++i)
      if (operandCarries(&op, rule, i) && varied.contains(op.getOperand(i)))
        active.insert(op.getOperand(i));
  }
  return active;
}

/// The reverse walk: gradients of the active values, built before the
/// return (every forward value the rules use dominates that point).
class Backprop {
public:
  Backprop(OpBuilder &builder, const GradRegistry &registry,
           const llvm::DenseSet<Value> &active)
      : builder(builder), registry(registry), active(active) {}

  LogicalResult run(Block &block, Value loss) {
    if (active.contains(loss)) {
      // Named, so that oflow-build-train-step can scale it (fp16 loss
      // scaling multiplies the seed, not the loss).
      GradBuilder seed(builder,
                       NameLoc::get(StringAttr::get(builder.getContext(),
                                                    "oflow.loss_seed"),
                                    loss.getLoc()));
      grads[loss] = seed.scalar(1.0, tensorType(loss).getElementType());
    }
    for (Operation &op : llvm::reverse(block.without_terminator()))
      if (!isa<WeightOp>(op) && failed(visit(op)))
        return failure();
    return success();
  }

  Value gradient(Value v) const { return grads.lookup(v); }

private:
  LogicalResult visit(Operation &op) {
    SmallVector<Value> resultGrads;
    for (Value r : op.getResults())
      resultGrads.push_back(active.contains(r) ? grads.lookup(r) : Value());
    SmallVector<bool> wanted;
    for (Value operand : op.getOperands())
      wanted.push_back(active.contains(operand));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }) ||
        !llvm::is_contained(wanted, true))
      return success();
    const GradRule *rule = registry.lookup(&op);
    if (!rule)
      return op.emitError()
             << autodiff::describeOp(&op)
             << " has no gradient rule; freeze the weights that reach it "
                "(--freeze) or keep it off the path from the weights to "
                "the loss";
    GradBuilder gb(builder, op.getLoc());
    GradArgs args{gb, resultGrads, wanted, {}};
    args.operandGrads.resize(op.getNumOperands());
    if (failed(rule->fn(&op, args)))
      return failure();
    for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
      if (!wanted[i])
        continue;
      Value g = args.operandGrads[i];
      // A rule bug, not a user error: say which rule.
      if (!g || g.getType() != operand.getType())
        return op.emitError() << "oflow-autodiff: the gradient rule of "
                              << autodiff::describeOp(&op) << " gave "
                              << (g ? "a wrongly typed" : "no")
                              << " gradient for operand " << i;
      accumulate(operand, g, op.getLoc());
    }
    return success();
  }

  /// A value used several times gets the sum of its uses' gradients.
  void accumulate(Value v, Value g, Location loc) {
    auto [it, inserted] = grads.try_emplace(v, g);
    if (!inserted)
      it->second = AddOp::create(builder, loc, it->second, g).getResult();
  }

  OpBuilder &builder;
  const GradRegistry &registry;
  const llvm::DenseSet<Value> &active;
  llvm::DenseMap<Value, Value> grads;
};

struct OFlowAutodiff : impl::OFlowAutodiffBase<OFlowAutodiff> {
  using OFlowAutodiffBase::OFlowAutodiffBase;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entry);
    if (!func) {
      getOperation().emitError() << "oflow-autodiff: no function @" << entry
                                 << " (the entry that returns the loss)";
      return signalPassFailure();
    }
    if (failed(differentiate(func)))
      signalPassFailure();
  }

private:
  FailureOr<SmallVector<llvm::Regex>> frozenPatterns(Operation *anchor) {
    SmallVector<llvm::Regex> patterns;
    for (const std::string &p : freeze) {
      llvm::Regex re("^(" + p + ")$");
      std::string error;
      if (!re.isValid(error))
        return anchor->emitError()
               << "oflow-autodiff: bad freeze pattern '" << p << "': " << error;
      patterns.push_back(std::move(re));
    }
    return patterns;
  }

  /// The loss: the first result, a 0-d float tensor.
  static FailureOr<Value> lossOf(func::FuncOp func) {
    auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
    auto type = ret && ret.getNumOperands()
                    ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                    : RankedTensorType();
    if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      return func.emitError()
             << "oflow-autodiff: the first result of @" << func.getSymName()
             << " must be the loss, a 0-d float tensor";
    return ret.getOperand(0);
  }

  LogicalResult differentiate(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitError() << "oflow-autodiff: @" << func.getSymName()
                              << " must have a body of one block";
    Block &block = func.getBody().front();
    FailureOr<Value> loss = lossOf(func);
    auto patterns = frozenPatterns(func);
    if (failed(loss) || failed(patterns))
      return failure();
    auto trainable = [&](WeightOp w) {
      return isFloatTensor(w.getOutput()) &&
             llvm::none_of(*patterns, [&](const llvm::Regex &re) {
               return re.match(w.getName());
             });
    };

    const GradRegistry &registry = gradRegistry();
    llvm::DenseSet<Value> active =
        activeValues(block, *loss, trainable, registry);
    OpBuilder builder(block.getTerminator());
    Backprop backprop(builder, registry, active);
    if (failed(backprop.run(block, *loss)))
      return failure();
    return emitGradients(block, builder, backprop);
  }

  /// One oflow.gradient per trained weight name (summed over the ops that
  /// carry the name), in the order of first appearance.
  static LogicalResult emitGradients(Block &block, OpBuilder &builder,
                                     const Backprop &backprop) {
    llvm::MapVector<StringRef, SmallVector<WeightOp>> byName;
    for (auto w : block.getOps<WeightOp>())
      byName[w.getName()].push_back(w);
    for (auto &[name, ops] : byName) {
      Value total;
      for (WeightOp w : ops) {
        Value g = backprop.gradient(w.getOutput());
        if (!g)
          continue;
        if (total && total.getType() != g.getType())
          return w.emitError() << "oflow-autodiff: weight \"" << name
                               << "\" is used with different types";
        total = total ? AddOp::create(builder, w.getLoc(), total, g).getResult()
                      : g;
      }
      if (!total)
        continue;
      for (WeightOp w : ops)
        w->setAttr(OFlowDialect::kTrainableAttrName, builder.getUnitAttr());
      GradientOp::create(builder, ops.front().getLoc(), name, total);
    }
    return success();
  }
};

} // namespace
} // namespace oflow
