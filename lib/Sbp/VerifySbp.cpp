//===- VerifySbp.cpp - every op runs one of its SBP signatures ------------===//
//
// The check that closes SBP choice and boxing: with every value's nd-SBP
// fixed, each op's operands and results must form one of its signatures on
// each mesh axis, or the program would compute something else than on one
// device.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "oflow/Sbp/SbpConversions.h"
#include "OFlow/OFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_VERIFYSBP
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = ::mlir::oflow;

/// The layouts that are not an op's signature: a boxing op changes exactly
/// its mesh axis's entry as its kind says; variables are read and written in
/// their own layout; entries return in their results' layouts.
static LogicalResult verifyLayoutTransfer(Operation *op) {
  using ::oflow::sbp::getValueSbp;
  auto expect = [&](Value value, of::NdSbpAttr wanted,
                    const Twine &what) -> LogicalResult {
    of::NdSbpAttr actual = getValueSbp(value);
    if (!wanted || !actual || actual == wanted)
      return success();
    return op->emitError() << what << " is " << actual.str() << " but must be "
                           << wanted.str();
  };
  if (std::optional<int64_t> meshAxis = of::getBoxingMeshAxis(op)) {
    for (auto [in, out] : llvm::zip(op->getOperands(), op->getResults())) {
      of::NdSbpAttr source = getValueSbp(in), result = getValueSbp(out);
      if (!source || !result)
        return op->emitError("boxing operand and result need an nd-SBP");
      SmallVector<of::SbpAttr> entries(source.getEntries());
      std::optional<of::SbpAttr> target =
          of::getBoxingTarget(op, entries[*meshAxis]);
      if (!target)
        return op->emitError() << "cannot convert " << source.str()
                               << " on mesh axis " << *meshAxis;
      entries[*meshAxis] = *target;
      if (result != of::NdSbpAttr::get(op->getContext(), entries))
        return op->emitError() << "converts " << source.str() << " to "
                               << result.str() << ", expected "
                               << of::NdSbpAttr::get(op->getContext(), entries).str();
    }
    return success();
  }
  auto variableLayout = [&](FlatSymbolRefAttr name) {
    auto var = SymbolTable::lookupNearestSymbolFrom<of::VariableOp>(op, name);
    return var ? var.getSbpAttr() : of::NdSbpAttr();
  };
  if (auto read = dyn_cast<of::ReadVariableOp>(op))
    return expect(read.getResult(), variableLayout(read.getVariableAttr()),
                  "the value read");
  if (auto write = dyn_cast<of::WriteVariableOp>(op))
    return expect(write.getValue(), variableLayout(write.getVariableAttr()),
                  "the value written");
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    auto fn = cast<FunctionOpInterface>(op->getParentOp());
    for (auto [i, value] : llvm::enumerate(ret.getOperands()))
      if (failed(expect(value,
                        fn.getResultAttrOfType<of::NdSbpAttr>(
                            i, of::OFlowDialect::kSbpAttrName),
                        "result #" + Twine(i))))
        return failure();
  }
  return success();
}

namespace {
struct VerifySbp : ::oflow::impl::VerifySbpBase<VerifySbp> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!mesh)
      mesh = of::MeshAttr::get(&getContext(), {1});
    bool ok = true;
    // Types are local pieces after partitioning: the signatures' shape checks
    // no longer apply.
    if (of::isPartitioned(module))
      return;
    module.walk([&](Operation *op) {
      if (failed(verifyLayoutTransfer(op)))
        ok = false;
    });
    module.walk([&](of::SbpSignatureOpInterface op) {
      auto collect = [&](ValueRange values, StringRef what,
                         SmallVectorImpl<of::NdSbpAttr> &out) {
        for (auto [i, value] : llvm::enumerate(values)) {
          of::NdSbpAttr ndSbp = ::oflow::sbp::getValueSbp(value);
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
