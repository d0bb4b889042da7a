//===- Optimizer.h - optimizer updates and gradient clipping ---*- C++ -*-===//
//
// The update math of torch.optim's SGD, Adam and AdamW and of
// torch.nn.utils.clip_grad_norm_, written with oflow ops. The formulas (and
// the order of the floating-point operations, which follows ATen's kernels)
// are documented in Passes.td (oflow-build-train-step).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_TRAINING_OPTIMIZER_H
#define OFLOW_LIB_TRAINING_OPTIMIZER_H

#include "ScalarBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

namespace oflow {

enum class OptimizerKind { sgd, adam, adamw };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::sgd;
  double lr = 0.01;
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0;
  /// Maximum global gradient norm; 0 = no clipping.
  double clipGradNorm = 0;
};

std::optional<OptimizerKind> parseOptimizerKind(llvm::StringRef name);
llvm::StringRef stringifyOptimizerKind(OptimizerKind kind);

/// The state slots one parameter needs, by torch's state names
/// (`momentum_buffer`; `exp_avg`, `exp_avg_sq`), in a fixed order.
llvm::SmallVector<llvm::StringRef, 2> optimizerSlots(const OptimizerConfig &config);

/// One parameter to update.
struct ParamUpdate {
  mlir::FlatSymbolRefAttr param;
  mlir::RankedTensorType type;
  mlir::Value grad;
  /// Its state variables, in `optimizerSlots` order.
  llvm::SmallVector<mlir::FlatSymbolRefAttr, 2> slots;
};

/// A new value for a variable.
struct VariableWrite {
  mlir::FlatSymbolRefAttr variable;
  mlir::Value value;
};

/// Emits, at the builder's insertion point, the clipping (when configured)
/// and the update of every parameter: reads of the parameters and their
/// state, and the math. `lr` is the scheduled learning rate (f64, 0-d);
/// `step` the optimizer steps taken before this one (i64, 0-d). Returns the
/// writes to emit after every read, in parameter order (state, then the
/// parameter).
llvm::SmallVector<VariableWrite>
buildOptimizerStep(ScalarBuilder &sb, const OptimizerConfig &config,
                   mlir::Value lr, mlir::Value step,
                   llvm::ArrayRef<ParamUpdate> params);

} // namespace oflow

#endif
