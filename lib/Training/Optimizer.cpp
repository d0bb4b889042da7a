//===- Optimizer.cpp - optimizer updates and gradient clipping ------------===//
//
// Mirrors torch 1.13's single-tensor (foreach=False) code paths: scalars that
// torch computes in Python doubles are computed here in f64 (or at compile
// time) and rounded to the parameter's type where torch hands them to a
// tensor op; tensor expressions keep ATen's operation order (e.g. addcdiv is
// `p + (value * m) / denom`, addcmul `v + (value * g) * g`).
//
//===----------------------------------------------------------------------===//
#include "Optimizer.h"

#include "llvm/ADT/DenseMap.h"
#include <map>
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace oflow {

std::optional<OptimizerKind> parseOptimizerKind(StringRef name) {
  return llvm::StringSwitch<std::optional<OptimizerKind>>(name)
      .Case("sgd", OptimizerKind::sgd)
      .Case("adam", OptimizerKind::adam)
      .Case("adamw", OptimizerKind::adamw)
      .Default(std::nullopt);
}

StringRef stringifyOptimizerKind(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::sgd:
    return "sgd";
  case OptimizerKind::adam:
    return "adam";
  case OptimizerKind::adamw:
    return "adamw";
  }
  llvm_unreachable("unknown optimizer");
}

SmallVector<StringRef, 2> optimizerSlots(const OptimizerConfig &config) {
  if (config.kind == OptimizerKind::sgd)
    return config.momentum != 0 ? SmallVector<StringRef, 2>{"momentum_buffer"}
                                : SmallVector<StringRef, 2>{};
  return {"exp_avg", "exp_avg_sq"};
}

namespace {

/// Builds the updates; caches the scalars each element type needs once.
class UpdateBuilder {
public:
  UpdateBuilder(ScalarBuilder &sb, const OptimizerConfig &config, Value lr,
                Value step)
      : sb(sb), c(config), lr(lr), step(step) {}

  SmallVector<VariableWrite> build(ArrayRef<ParamUpdate> params) {
    SmallVector<Value> grads = clip(params);
    prepareStepScalars();
    SmallVector<VariableWrite> writes;
    for (auto [param, grad] : llvm::zip(params, grads)) {
      if (c.kind == OptimizerKind::sgd)
        sgd(param, grad, writes);
      else
        adam(param, grad, writes);
    }
    return writes;
  }

private:
  Value read(FlatSymbolRefAttr variable, RankedTensorType type) {
    return of::ReadVariableOp::create(sb.builder(), sb.location(), type,
                                      variable);
  }

  /// A compile-time constant (computed in double) in element type `type`.
  Value constant(double value, Type type) {
    Value &slot = constants[{type.getAsOpaquePointer(), value}];
    if (!slot)
      slot = sb.constant(value, type);
    return slot;
  }

  /// A run-time f64 scalar rounded to `type`, once per type.
  Value rounded(Value f64, Type type) {
    Value &slot = roundings[{f64, type}];
    if (!slot)
      slot = sb.cast(f64, type);
    return slot;
  }

  /// clip_grad_norm_: total = ||all grads||_2, coef = max_norm / (total +
  /// 1e-6) clamped to <= 1, every grad scaled by coef (even when coef is 1,
  /// as torch does).
  SmallVector<Value> clip(ArrayRef<ParamUpdate> params) {
    SmallVector<Value> grads;
    for (const ParamUpdate &p : params)
      grads.push_back(p.grad);
    if (c.clipGradNorm <= 0 || grads.empty())
      return grads;
    Type normType = sb.builder().getF32Type();
    for (Value g : grads)
      if (elementTypeOf(g).isF64())
        normType = sb.builder().getF64Type();
    Value total;
    for (Value g : grads) {
      Value squares = sb.cast(sb.sumOfSquares(g), normType);
      total = total ? sb.add(total, squares) : squares;
    }
    total = sb.sqrt(total);
    Value coef = sb.div(constant(c.clipGradNorm, normType),
                        sb.add(total, constant(1e-6, normType)));
    coef = sb.min(coef, constant(1.0, normType));
    for (Value &g : grads)
      g = sb.mul(g, sb.cast(coef, elementTypeOf(g)));
    return grads;
  }

  /// The step's scalars in f64, as torch computes them in Python.
  void prepareStepScalars() {
    Type f64 = sb.builder().getF64Type();
    if (c.kind == OptimizerKind::sgd) {
      if (c.momentum != 0 && c.dampening != 0)
        firstStep = sb.compare(of::ComparePredicate::eq, step, sb.i64(0));
      return;
    }
    Value t = sb.add(sb.cast(step, f64), sb.f64(1.0));
    Value one = sb.f64(1.0);
    Value bc1 = sb.sub(one, sb.pow(sb.f64(c.beta1), t));
    Value bc2 = sb.sub(one, sb.pow(sb.f64(c.beta2), t));
    stepSize = sb.div(lr, bc1);
    bc2Sqrt = sb.sqrt(bc2);
    if (c.kind == OptimizerKind::adamw && c.weightDecay != 0)
      decay = sb.sub(one, sb.mul(lr, sb.f64(c.weightDecay)));
  }

  void sgd(const ParamUpdate &param, Value grad,
           SmallVector<VariableWrite> &writes) {
    Type type = param.type.getElementType();
    Value p = read(param.param, param.type);
    Value d = grad;
    if (c.weightDecay != 0)
      d = sb.add(d, sb.mul(p, constant(c.weightDecay, type)));
    if (c.momentum != 0) {
      Value mu = constant(c.momentum, type);
      Value buf = read(param.slots[0], param.type);
      Value fresh = c.dampening == 0
                        ? d
                        : sb.mul(d, constant(1.0 - c.dampening, type));
      Value next = sb.add(sb.mul(buf, mu), fresh);
      // torch starts the buffer as a copy of d; mu * 0 + (1 - dampening) * d
      // equals it only without dampening.
      if (firstStep)
        next = sb.where(firstStep, d, next);
      writes.push_back({param.slots[0], next});
      d = c.nesterov ? sb.add(d, sb.mul(next, mu)) : next;
    }
    Value pNew = sb.sub(p, sb.mul(d, rounded(lr, type)));
    writes.push_back({param.param, pNew});
  }

  void adam(const ParamUpdate &param, Value grad,
            SmallVector<VariableWrite> &writes) {
    Type type = param.type.getElementType();
    Value p = read(param.param, param.type);
    Value g = grad;
    if (decay) // AdamW: decoupled weight decay, before the moments.
      p = sb.mul(p, rounded(decay, type));
    else if (c.weightDecay != 0) // Adam: L2 added to the gradient.
      g = sb.add(g, sb.mul(p, constant(c.weightDecay, type)));
    Value m = read(param.slots[0], param.type);
    Value v = read(param.slots[1], param.type);
    Value mNew = sb.add(sb.mul(m, constant(c.beta1, type)),
                        sb.mul(g, constant(1.0 - c.beta1, type)));
    Value vNew = sb.add(sb.mul(v, constant(c.beta2, type)),
                        sb.mul(sb.mul(g, constant(1.0 - c.beta2, type)), g));
    Value denom = sb.add(sb.div(sb.sqrt(vNew), rounded(bc2Sqrt, type)),
                         constant(c.eps, type));
    Value pNew =
        sb.sub(p, sb.div(sb.mul(mNew, rounded(stepSize, type)), denom));
    writes.push_back({param.slots[0], mNew});
    writes.push_back({param.slots[1], vNew});
    writes.push_back({param.param, pNew});
  }

  ScalarBuilder &sb;
  const OptimizerConfig &c;
  Value lr, step;
  // Per-step scalars (f64 unless noted).
  Value firstStep; // i1: step == 0 (SGD with dampening)
  Value stepSize, bc2Sqrt, decay;
  std::map<std::pair<const void *, double>, Value> constants;
  llvm::DenseMap<std::pair<Value, Type>, Value> roundings;
};

} // namespace

SmallVector<VariableWrite>
buildOptimizerStep(ScalarBuilder &sb, const OptimizerConfig &config,
                          Value lr, Value step, ArrayRef<ParamUpdate> params) {
  return UpdateBuilder(sb, config, lr, step).build(params);
}

} // namespace oflow
