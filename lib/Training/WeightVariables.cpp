//===- WeightVariables.cpp - weights become program variables -------------===//
#include "WeightVariables.h"

#include "OFlow/OFlowDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace oflow {

FailureOr<SmallVector<Weight>> collectWeights(func::FuncOp fn,
                                              ArrayRef<StringRef> reserved) {
  SmallVector<Weight> weights;
  llvm::StringMap<size_t> index;
  WalkResult walk = fn.walk([&](of::WeightOp op) {
    if (llvm::is_contained(reserved, op.getName())) {
      op.emitOpError("weight name '")
          << op.getName() << "' is reserved for an entry function";
      return WalkResult::interrupt();
    }
    auto type = cast<RankedTensorType>(op.getType());
    auto [it, inserted] = index.try_emplace(op.getName(), weights.size());
    if (inserted) {
      weights.push_back(Weight{op.getName().str(), type, op.getValueAttr(), op.getInitAttr()});
    } else if (weights[it->second].type != type) {
      op.emitOpError("weight '")
          << op.getName() << "' appears with types "
          << weights[it->second].type << " and " << type
          << "; ops of one name must be one weight";
      return WalkResult::interrupt();
    }
    Weight &weight = weights[it->second];
    weight.ops.push_back(op);
    weight.trainable |= op->hasAttr(of::OFlowDialect::kTrainableAttrName);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return weights;
}

void replaceWeightsWithVariables(
    SymbolTable &symbols, Operation *anchor, MutableArrayRef<Weight> weights,
    function_ref<of::VariableRole(const Weight &)> roleOf) {
  MLIRContext *ctx = anchor->getContext();
  OpBuilder detached(ctx);
  for (Weight &weight : weights) {
    // Locate the variable at its first weight op: the ONNX initializer.
    auto variable = of::VariableOp::create(
        detached, weight.ops.front().getLoc(), weight.name, roleOf(weight),
        weight.type, weight.value, weight.init, StringAttr::get(ctx, weight.name),
        /*of=*/nullptr, /*sbp=*/nullptr);
    symbols.insert(variable, Block::iterator(anchor));
    weight.variable = variable;
    for (of::WeightOp op : weight.ops) {
      OpBuilder builder(op);
      auto read = of::ReadVariableOp::create(builder, op.getLoc(), weight.type,
                                             variable.getSymName());
      op.replaceAllUsesWith(read.getValue());
      op.erase();
    }
    weight.ops.clear();
  }
}

void eraseDeadOps(func::FuncOp fn) {
  for (Block &block : fn.getBody())
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
}

} // namespace oflow
