//===- DropRecomputeBarriers.cpp - oflow-recompute's barriers removed -----===//
//
// See Passes.td. After the last CSE nothing can fold a recomputed op into
// its original any more, so the barrier's copy is not needed.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace oflow {
#define GEN_PASS_DEF_DROPRECOMPUTEBARRIERS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

struct DropRecomputeBarriersPass
    : impl::DropRecomputeBarriersBase<DropRecomputeBarriersPass> {
  void runOnOperation() override {
    SmallVector<bufferization::AllocTensorOp> barriers;
    getOperation().walk([&](bufferization::AllocTensorOp op) {
      if ((op->hasAttr("oflow_recompute_barrier") ||
           op->hasAttr("oflow_accumulate_barrier")) &&
          op.getCopy())
        barriers.push_back(op);
    });
    for (bufferization::AllocTensorOp op : barriers) {
      op.getResult().replaceAllUsesWith(op.getCopy());
      op.erase();
    }
  }
};

} // namespace
} // namespace oflow
