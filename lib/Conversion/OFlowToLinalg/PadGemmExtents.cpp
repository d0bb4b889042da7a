//===- PadGemmExtents.cpp - the oflow-pad-gemm-extents pass ----------------===//
//
// cuBLASLt runs a tensor-core GEMM whose extent is not a multiple of 16
// bytes 5-6x slower (GPT-2's vocabulary of 50257: docs/benchmarks.md, GPU
// runs 4-5). The CUDA runtime pads such GEMMs on the fly, but its copies of
// the logits in and out of the padded scratch cost GPT-2 small 3.7 ms a
// step. Padding the weight in the graph instead pads the whole chain at
// once: the logits are computed [M, N'] and read through a slice (a strided
// view, no copy), their gradient is written into the padded buffer, and the
// two backward GEMMs see the even extent too. The padded rows are zeros, so
// the sliced result and every gradient are those of the unpadded GEMM.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

namespace oflow {
#define GEN_PASS_DEF_OFLOWPADGEMMEXTENTS
#include "oflow/Conversion/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow {
namespace {

struct PadGemmExtentsPass
    : impl::OFlowPadGemmExtentsBase<PadGemmExtentsPass> {
  using OFlowPadGemmExtentsBase::OFlowPadGemmExtentsBase;

  void runOnOperation() override {
    if (multiple < 1 || padTo < multiple) {
      getOperation().emitError("oflow-pad-gemm-extents: needs 1 <= multiple <= pad-to");
      return signalPassFailure();
    }
    SmallVector<of::MatmulOp> candidates;
    getOperation().walk([&](of::MatmulOp op) { candidates.push_back(op); });
    for (of::MatmulOp op : candidates)
      padColumns(op);
  }

  /// matmul(x [..., M, K], B [K, N]) with N not a multiple of `multiple`:
  /// B padded with zero columns to a multiple of `padTo` (B = W^T padded as
  /// W's rows), the result sliced back to N columns.
  void padColumns(of::MatmulOp op) {
    if (op.getTransposeA())
      return;
    auto out = cast<RankedTensorType>(op.getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    if (rhs.getRank() != 2 || !out.getElementType().isF32())
      return;
    int64_t rank = out.getRank();
    int64_t n = out.getDimSize(rank - 1), k = rhs.getDimSize(op.getTransposeB() ? 1 : 0);
    int64_t m = out.getNumElements() / n;
    if (n % multiple == 0 || m * n * k < minMacs)
      return;
    int64_t padded = (n + padTo - 1) / padTo * padTo;
    OpBuilder b(op);
    Location loc = op.getLoc();
    // Pad the weight as it is stored ([N, K]: through its transpose, or with
    // transpose_b), so that the GEMM reads the same layout.
    Value weight = op.getRhs();
    bool throughTranspose = false;
    if (auto transpose = weight.getDefiningOp<of::TransposeOp>();
        transpose && !op.getTransposeB() &&
        transpose.getPerm() == ArrayRef<int64_t>{1, 0}) {
      weight = transpose.getInput();
      throughTranspose = true;
    }
    bool rowsAreN = throughTranspose || op.getTransposeB();
    auto wType = cast<RankedTensorType>(weight.getType());
    SmallVector<int64_t> zeroShape(wType.getShape());
    zeroShape[rowsAreN ? 0 : 1] = padded - n;
    auto zeroType = RankedTensorType::get(zeroShape, wType.getElementType());
    Value zeros = of::ConstantOp::create(
        b, loc, DenseElementsAttr::get(zeroType, b.getZeroAttr(wType.getElementType())));
    Value paddedWeight = of::ConcatOp::create(b, loc, ValueRange{weight, zeros},
                                              rowsAreN ? 0 : 1);
    // A weight stored [N, K] is read transposed by the GEMM (transpose_b):
    // no transposed copy forward, and its gradient comes out [N', K].
    auto product = of::MatmulOp::create(
        b, loc, op.getLhs(), paddedWeight, op.getTransposeAAttr(),
        rowsAreN ? b.getUnitAttr() : UnitAttr());
    SmallVector<int64_t> offsets(rank, 0), sizes(out.getShape()), strides(rank, 1);
    auto sliced = of::SliceOp::create(b, loc, product.getOutput(), offsets, sizes, strides);
    op.getResult().replaceAllUsesWith(sliced.getOutput());
    Operation *transpose = op.getRhs().getDefiningOp();
    op->erase();
    if (throughTranspose && transpose->use_empty())
      transpose->erase();
  }
};

} // namespace
} // namespace oflow
