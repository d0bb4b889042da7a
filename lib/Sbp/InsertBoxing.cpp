//===- InsertBoxing.cpp - collectives between mismatched layouts ----------===//
//
// After SBP choice each op says in `oflow.operand_sbp` which layout it runs
// its operands in. Where a value was produced in another layout, the boxing
// planner's cheapest chain of one-mesh-axis conversions is materialized as
// boxing ops, once per (value, layout): a second consumer wanting the same
// layout reuses the first conversion, so no redundant pair is emitted.
//
// A conversion whose result only feeds the optimizer update (a gradient's
// reduction) is planned with the links' latencies left out: nothing waits
// for it before the step's end, and oflow-bucket-collectives fuses such
// collectives into few large ones, each member paying a share of one
// latency. Priced one by one, a small gradient on a two-axis mesh was
// all-reduced whole along each axis (two latencies, 1.7x the bytes of the
// ring formula) rather than reduce-scattered in the node, reduced across
// nodes on its piece and gathered (three latencies): after bucketing, the
// latencies are few either way and the bytes are not. (Not under
// --micro-batches, whose scatters and gathers are not bucketed.)
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

/// `mesh` with every link's latency left out.
static sbp::Mesh withoutLatency(sbp::Mesh mesh) {
  for (int64_t axis = 0; axis < mesh.rank(); ++axis) {
    sbp::Link link = mesh.link(axis);
    link.alphaSeconds = 0;
    if (axis < static_cast<int64_t>(mesh.links.size()))
      mesh.links[axis] = link;
    else
      mesh.links.push_back(link);
  }
  return mesh;
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
    // Under --micro-batches each micro-batch's scatters and gathers stay
    // apart (oflow-bucket-collectives buckets only all-reduces there): the
    // latencies stay in.
    sbp::Mesh deferred = sbp::microBatchAxis(meshAttr) ? mesh : withoutLatency(mesh);
    StringRef wantedName = of::OFlowDialect::kOperandSbpAttrName;
    DenseSet<Value> toState;
    for (auto fn : module.getOps<func::FuncOp>())
      for (Value v : sbp::valuesOnlyFeedingState(fn))
        toState.insert(v);
    auto onlyForState = [&](Operation *op) {
      return isa<of::WriteVariableOp>(op) ||
             (op->getNumResults() > 0 &&
              llvm::all_of(op->getResults(), [&](Value r) { return toState.contains(r); }));
    };

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
            sbp::planBoxing(onlyForState(op) ? deferred : mesh, type.getShape(),
                            sbp::elementBytes(type),
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
