//===- InsertBoxing.cpp - collectives between mismatched layouts ----------===//
//
// After SBP choice each op says in `oflow.operand_sbp` which layout it runs
// its operands in. Where a value was produced in another layout, the boxing
// planner's cheapest chain of one-mesh-axis conversions is materialized as
// boxing ops, once per (value, layout): a second consumer wanting the same
// layout reuses the first conversion, so no redundant pair is emitted.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "oflow/Sbp/SbpConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace oflow {
#define GEN_PASS_DEF_INSERTBOXING
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

/// One boxing op for `step`, converting `value` (global type) at `builder`.
static Value createStep(OpBuilder &builder, Location loc, Value value,
                        const sbp::BoxingStep &step) {
  Type type = value.getType();
  uint64_t axis = step.meshAxis;
  switch (step.kind) {
  case sbp::BoxingKind::AllReduce:
    return of::AllReduceOp::create(builder, loc, TypeRange{type},
                                   ValueRange{value}, axis, step.max)
        .getResult(0);
  case sbp::BoxingKind::ReduceScatter:
    return of::ReduceScatterOp::create(builder, loc, TypeRange{type}, ValueRange{value},
                                       axis, step.splitAxis, step.max)
        .getOutput();
  case sbp::BoxingKind::AllGather:
    return of::AllGatherOp::create(builder, loc, TypeRange{type}, ValueRange{value},
                                   axis, step.splitAxis)
        .getOutput();
  case sbp::BoxingKind::AllToAll:
    return of::AllToAllOp::create(builder, loc, type, value, axis,
                                  step.sourceSplitAxis, step.splitAxis);
  case sbp::BoxingKind::LocalSlice:
    return of::LocalSliceOp::create(builder, loc, type, value, axis,
                                    step.splitAxis);
  case sbp::BoxingKind::BroadcastToPartial:
    return of::BroadcastToPartialOp::create(builder, loc, type, value, axis,
                                            step.max);
  case sbp::BoxingKind::SplitToPartial:
    return of::SplitToPartialOp::create(builder, loc, type, value, axis,
                                        step.splitAxis);
  }
  llvm_unreachable("unknown boxing kind");
}

namespace {
struct InsertBoxing : ::oflow::impl::InsertBoxingBase<InsertBoxing> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto meshAttr =
        module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!meshAttr)
      meshAttr = of::MeshAttr::get(ctx, {1});
    sbp::Mesh mesh = sbp::toPlanner(meshAttr);
    StringRef wantedName = of::OFlowDialect::kOperandSbpAttrName;

    DenseMap<std::pair<Value, Attribute>, Value> converted;
    WalkResult walk = module.walk([&](Operation *op) -> WalkResult {
      auto wanted = op->getAttrOfType<ArrayAttr>(wantedName);
      if (!wanted)
        return WalkResult::advance();
      op->removeAttr(wantedName);
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        auto to = cast<of::NdSbpAttr>(wanted[operand.getOperandNumber()]);
        of::NdSbpAttr from = sbp::getValueSbp(value);
        if (!from)
          return op->emitError() << "operand #" << operand.getOperandNumber()
                                 << " has no nd-SBP (run oflow-infer-sbp)";
        if (from == to)
          continue;
        if (Value done = converted.lookup({value, to})) {
          operand.set(done);
          continue;
        }
        auto type = cast<RankedTensorType>(value.getType());
        std::optional<sbp::BoxingPlan> plan =
            sbp::planBoxing(mesh, type.getShape(), sbp::elementBytes(type),
                            sbp::toPlanner(from), sbp::toPlanner(to));
        if (!plan)
          return op->emitError()
                 << "operand #" << operand.getOperandNumber() << " of type "
                 << type << " cannot be converted from " << from.str()
                 << " to " << to.str() << " on this mesh";
        OpBuilder builder(op);
        Value current = value;
        for (const sbp::BoxingStep &step : plan->steps) {
          current = createStep(builder, op->getLoc(), current, step);
          current.getDefiningOp()->setAttr(
              of::OFlowDialect::kSbpAttrName,
              ArrayAttr::get(ctx, {sbp::toAttr(ctx, step.to)}));
        }
        converted[{value, to}] = current;
        operand.set(current);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // A hint has done its work once its operand arrives in its layout.
    module.walk([](of::SbpHintOp hint) {
      hint.replaceAllUsesWith(hint.getInput());
      hint.erase();
    });
  }
};
} // namespace
