//===- ExpandStridedCopies.cpp - strided memref.copy -> linalg.copy -------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"

namespace oflow {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIES
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

bool isContiguous(Value v) {
  auto type = cast<MemRefType>(v.getType());
  return type.getLayout().isIdentity() || memref::isStaticShapeAndContiguousRowMajor(type);
}

struct ExpandStridedCopiesPass
    : impl::ExpandStridedCopiesBase<ExpandStridedCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (allCopies || !isContiguous(copy.getSource()) ||
          !isContiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      // A copy onto itself (left by bufferization of in-place updates) would
      // be a kernel that does nothing.
      if (allCopies && copy.getSource() == copy.getTarget()) {
        copy.erase();
        continue;
      }
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace oflow
