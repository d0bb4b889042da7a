//===- DropUnitLoops.cpp - unit loops out of top-level generics -----------===//
//
// Upstream's unit-extent folding, limited to the generics at the top level
// of a function: see oflow-drop-unit-loops in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace oflow {
#define GEN_PASS_DEF_DROPUNITLOOPS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

struct DropUnitLoopsPass : impl::DropUnitLoopsBase<DropUnitLoopsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    linalg::ControlDropUnitDims control;
    Operation *root = func.getOperation();
    control.controlFn = [root](Operation *op) -> SmallVector<unsigned> {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      // Only maps of plain loop indices: generics with window indices
      // (`d2 * 2 + d5`, ResNet-18's im2col at batch 1 or stride 2) keep their
      // loops; upstream's folding gave one of them an operand of the wrong
      // extent (e2e-torchvision-resnet18-cuda-emulated).
      if (!generic || op->getParentOp() != root ||
          !generic.hasPureTensorSemantics() ||
          !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) {
            return map.isProjectedPermutation(/*allowZeroInResults=*/true);
          }))
        return {};
      return llvm::to_vector(llvm::seq<unsigned>(0, generic.getNumLoops()));
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldUnitExtentDimsPatterns(patterns, control);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace oflow
