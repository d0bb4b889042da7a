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
