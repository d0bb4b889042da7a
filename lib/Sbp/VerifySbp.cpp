//===- VerifySbp.cpp - every op runs one of its SBP signatures ------------===//
//
// The check that closes SBP choice and boxing: with every value's nd-SBP
// fixed, each op's operands and results must form one of its signatures on
// each mesh axis, or the program would compute something else than on one
// device.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "OFlow/OFlowOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_VERIFYSBP
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = ::mlir::oflow;

/// The nd-SBP of `value`: from its defining op's `oflow.sbp` list, or from its
/// function's argument attributes. Null when it has none.
static of::NdSbpAttr getNdSbp(Value value) {
  StringRef name = of::OFlowDialect::kSbpAttrName;
  if (auto result = dyn_cast<OpResult>(value)) {
    auto list = result.getOwner()->getAttrOfType<ArrayAttr>(name);
    return list ? dyn_cast<of::NdSbpAttr>(list[result.getResultNumber()])
                : of::NdSbpAttr();
  }
  auto arg = cast<BlockArgument>(value);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || !arg.getOwner()->isEntryBlock())
    return {};
  return fn.getArgAttrOfType<of::NdSbpAttr>(arg.getArgNumber(), name);
}

namespace {
struct VerifySbp : ::oflow::impl::VerifySbpBase<VerifySbp> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!mesh)
      mesh = of::MeshAttr::get(&getContext(), {1});
    bool ok = true;
    module.walk([&](of::SbpSignatureOpInterface op) {
      auto collect = [&](ValueRange values, StringRef what,
                         SmallVectorImpl<of::NdSbpAttr> &out) {
        for (auto [i, value] : llvm::enumerate(values)) {
          of::NdSbpAttr ndSbp = getNdSbp(value);
          if (!ndSbp) {
            op->emitError() << what << " #" << i << " has no nd-SBP";
            return false;
          }
          out.push_back(ndSbp);
        }
        return true;
      };
      SmallVector<of::NdSbpAttr> operands, results;
      if (!collect(op->getOperands(), "operand", operands) ||
          !collect(op->getResults(), "result", results) ||
          failed(of::verifyNdSbpSignature(op, mesh, operands, results,
                                          [&] { return op->emitError(); })))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
