//===- TestSbpSignatures.cpp - print SBP signatures as remarks ------------===//
//
// Makes the op interface's answers visible to lit: one remark per op and mesh
// axis, with the signatures that pass that axis's divisibility check.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "OFlow/OFlowOps.h"
#include "llvm/ADT/STLExtras.h"

namespace oflow {
#define GEN_PASS_DEF_TESTSBPSIGNATURES
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = ::mlir::oflow;

namespace {
struct TestSbpSignatures
    : ::oflow::impl::TestSbpSignaturesBase<TestSbpSignatures> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<int64_t> sizes(mesh.begin(), mesh.end());
    if (sizes.empty())
      sizes.push_back(2);
    if (llvm::any_of(sizes, [](int64_t size) { return size <= 0; })) {
      getOperation()->emitError("mesh axis sizes must be positive");
      return signalPassFailure();
    }
    // An op that computes on tensors without signatures would leave the SBP
    // planner stuck: name it (function boundaries and terminators only pass
    // values on).
    WalkResult missing = getOperation()->walk([&](Operation *op) {
      if (isa<of::SbpSignatureOpInterface>(op) ||
          op->hasTrait<OpTrait::IsTerminator>() || op->getNumRegions() != 0)
        return WalkResult::advance();
      auto isTensor = [](Type type) { return isa<RankedTensorType>(type); };
      if (llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor)) {
        op->emitError("has no SBP signatures");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (missing.wasInterrupted())
      return signalPassFailure();
    getOperation()->walk([&](of::SbpSignatureOpInterface op) {
      for (auto [axis, size] : llvm::enumerate(sizes)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "axis " << axis << " (size " << size << "): ";
        llvm::interleave(
            of::getSbpSignatures(op, size), os,
            [&](const of::SbpSignature &sig) { os << sig.str(); }, " | ");
        op->emitRemark(text);
      }
    });
  }
};
} // namespace
