//===- BuildInferEntry.cpp - the inference entry function -----------------===//
//
// The inference program: the imported entry under the runtime's name, its
// weights read-only variables (so the runtime loads them like a trained
// program's state, and `--weights` can replace them), every output named.
//
//===----------------------------------------------------------------------===//
#include "oflow/Training/Passes.h"

#include "WeightVariables.h"

#include "OFlow/OFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace oflow {
#define GEN_PASS_DEF_BUILDINFERENTRY
#include "oflow/Training/Passes.h.inc"
} // namespace oflow

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace {

constexpr StringLiteral kInferEntry = "oflow_infer";

struct BuildInferEntry : ::oflow::impl::BuildInferEntryBase<BuildInferEntry> {
  using BuildInferEntryBase::BuildInferEntryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isExternal()) {
      module.emitError("oflow-build-infer-entry: no function @")
          << entry << " with a body";
      return signalPassFailure();
    }
    if (entry != kInferEntry && module.lookupSymbol(kInferEntry)) {
      module.emitError("oflow-build-infer-entry: the module already has @")
          << kInferEntry;
      return signalPassFailure();
    }
    WalkResult walk = fn.walk([&](of::GradientOp op) {
      op.emitOpError("in @")
          << entry << ": an inference entry computes no gradients (build it "
                      "from the imported model, before oflow-autodiff)";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // ONNX's training-mode dropout draws a random mask even at inference;
    // oflow's masks are its own (Philox), so no inference could match
    // another runtime's. Dropout in eval mode (ratio 0 or training_mode
    // false) was the identity since import.
    walk = fn.walk([&](of::DropoutOp op) {
      if (op.getRatio().convertToDouble() == 0.0)
        return WalkResult::advance();
      op.emitOpError("in @")
          << entry << ": dropout in training mode (ratio "
          << op.getRatio().convertToDouble()
          << ") in an inference program draws a random mask; export the "
             "model in eval mode (training_mode false) to infer with it";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    FailureOr<SmallVector<Weight>> weights = collectWeights(fn, {kInferEntry});
    if (failed(weights))
      return signalPassFailure();
    // Variables go first in the module, in order.
    Operation *anchor = &module.getBody()->front();
    SymbolTable symbols(module);
    replaceWeightsWithVariables(symbols, anchor, *weights, [](const Weight &) {
      return of::VariableRole::constant;
    });

    MLIRContext *ctx = module.getContext();
    if (failed(symbols.rename(fn, kInferEntry))) {
      fn.emitError("cannot rename @") << entry << " to @" << kInferEntry;
      return signalPassFailure();
    }
    fn->setAttr(of::OFlowDialect::kEntryAttrName,
                StringAttr::get(ctx, "infer"));
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      if (!fn.getResultAttr(i, of::OFlowDialect::kNameAttrName))
        fn.setResultAttr(i, of::OFlowDialect::kNameAttrName,
                         StringAttr::get(ctx, "output_" + Twine(i).str()));
  }
};

} // namespace
