//===- Partition.cpp - global shapes to per-rank local shapes (SPMD) ------===//
//
// One program for every rank: each value's type becomes the piece its nd-SBP
// gives a rank (the same shape on every rank, since splits divide evenly).
// Types change in place; only the attributes that restate a result shape
// follow. Rank-dependent parts (which piece, which group) are left to the
// boxing ops' lowering and to the runtime.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "PartitionGather.h"
#include "oflow/Sbp/SbpConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace oflow {
#define GEN_PASS_DEF_PARTITION
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

static RankedTensorType localType(const sbp::Mesh &mesh, Type type,
                                  of::NdSbpAttr layout) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(
      sbp::localShape(mesh, tensor.getShape(), sbp::toPlanner(layout)),
      tensor.getElementType());
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Attributes that restate a result (or operand) shape.
static void updateShapeAttributes(Operation *op) {
  if (auto reshape = dyn_cast<of::ReshapeOp>(op))
    reshape.setShape(shapeOf(reshape.getResult()));
  else if (auto expand = dyn_cast<of::ExpandOp>(op))
    expand.setShape(shapeOf(expand.getResult()));
  else if (auto slice = dyn_cast<of::SliceOp>(op))
    slice.setSizes(shapeOf(slice.getResult()));
  else if (auto back = dyn_cast<of::SliceBackwardOp>(op)) {
    back.setInputShape(shapeOf(back.getResult()));
    back.setSizes(shapeOf(back.getGradOutput()));
  } else if (auto gather = dyn_cast<of::GatherBackwardOp>(op))
    gather.setDataShape(shapeOf(gather.getResult()));
  else if (auto conv = dyn_cast<of::Conv2dBackwardInputOp>(op))
    conv.setInputShape(shapeOf(conv.getResult()));
  else if (auto conv = dyn_cast<of::Conv2dBackwardFilterOp>(op))
    conv.setFilterShape(shapeOf(conv.getResult()));
  else if (auto pool = dyn_cast<of::AvgPool2dBackwardOp>(op))
    pool.setInputShape(shapeOf(pool.getResult()));
}

namespace {
struct Partition : ::oflow::impl::PartitionBase<Partition> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto meshAttr =
        module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!meshAttr)
      meshAttr = of::MeshAttr::get(&getContext(), {1});
    if (of::isPartitioned(module))
      return;
    sbp::Mesh mesh = sbp::toPlanner(meshAttr);
    StringRef sbpName = of::OFlowDialect::kSbpAttrName;
    bool failedAny = false;

    for (auto var : module.getOps<of::VariableOp>())
      if (of::NdSbpAttr layout = var.getSbpAttr())
        var.setType(localType(mesh, var.getType(), layout));

    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      SmallVector<Type> argTypes, resultTypes;
      for (BlockArgument arg : fn.getArguments()) {
        auto layout = fn.getArgAttrOfType<of::NdSbpAttr>(arg.getArgNumber(), sbpName);
        if (layout)
          arg.setType(localType(mesh, arg.getType(), layout));
        argTypes.push_back(arg.getType());
      }
      fn.walk([&](Operation *op) {
        if (op == fn.getOperation())
          return;
        auto layouts = op->getAttrOfType<ArrayAttr>(sbpName);
        if (!layouts) {
          if (op->getNumResults() && !isa<of::MeshCoordOp>(op)) {
            op->emitError("has no nd-SBP: run oflow-infer-sbp and "
                          "oflow-insert-boxing before oflow-partition");
            failedAny = true;
          }
          return;
        }
        for (auto [result, layout] : llvm::zip(op->getResults(), layouts))
          result.setType(localType(mesh, result.getType(),
                                   cast<of::NdSbpAttr>(layout)));
        updateShapeAttributes(op);
      });
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        auto layout = fn.getResultAttrOfType<of::NdSbpAttr>(i, sbpName);
        Type type = fn.getResultTypes()[i];
        resultTypes.push_back(layout ? localType(mesh, type, layout) : type);
      }
      fn.setType(FunctionType::get(&getContext(), argTypes, resultTypes));
    }
    if (failedAny)
      return signalPassFailure();
    // Ops whose split signature means more than local shapes.
    module.walk([&](of::GatherOp op) { ::oflow::sbp::partitionRowSplitGather(op, mesh); });
    module.walk([&](of::GatherBackwardOp op) {
      ::oflow::sbp::partitionRowSplitGatherBackward(op, mesh);
    });
    module.walk([&](of::DropoutOp op) { ::oflow::sbp::partitionSplitDropout(op, mesh); });
    module->setAttr(of::OFlowDialect::kPartitionedAttrName,
                    UnitAttr::get(&getContext()));
  }
};
} // namespace
