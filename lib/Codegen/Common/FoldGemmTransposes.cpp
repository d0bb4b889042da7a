//===- FoldGemmTransposes.cpp - GEMM operands read transposed in place ----===//
//
// A linear layer's weight reaches its GEMM as transpose(W), or as
// cast(transpose(W)) under --precision bf16/fp16: a kernel that writes the
// transposed copy into the arena and another that rounds it. The GEMM call
// can read W transposed itself (BLAS's transa/transb), so the transpose
// goes into the matmul's indexing map and a cast, if any, rounds W as it
// lies. On the GPU that removes one kernel per weight per step and the
// scratch buffer the weights' transposes shared, whose reuse ordered one
// GEMM's operand preparation after the previous GEMM.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

namespace oflow {
#define GEN_PASS_DEF_FOLDGEMMTRANSPOSES
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// A 2-D transpose's input.
Value transposed(Value v) {
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  return t.getInput();
}

/// An elementwise generic of one input and one output over 2-D tensors,
/// both with identity maps (a cast), or null.
linalg::GenericOp unaryElementwise(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !g.hasPureTensorSemantics() || g.getNumLoops() != 2 ||
      g.getNumParallelLoops() != 2 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
    return {};
  return g;
}

/// Whether every use of `v` is an input (A or B) of a matmul on tensors
/// whose map for it has two results, which reading the transpose's input
/// instead swaps.
bool onlyGemmInputs(Value v) {
  if (v.use_empty())
    return false;
  for (OpOperand &use : v.getUses()) {
    auto gemm = dyn_cast<linalg::MatmulOp>(use.getOwner());
    if (!gemm || !gemm.hasPureTensorSemantics() || use.getOperandNumber() > 1 ||
        gemm.getMatchingIndexingMap(&use).getNumResults() != 2)
      return false;
  }
  return true;
}

/// Makes every matmul that reads `v` read `replacement` (v transposed),
/// with that operand's map's results swapped.
void readTransposed(Value v, Value replacement) {
  for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
    auto gemm = cast<linalg::MatmulOp>(use.getOwner());
    SmallVector<AffineMap> maps = gemm.getIndexingMapsArray();
    AffineMap &m = maps[use.getOperandNumber()];
    m = AffineMap::get(m.getNumDims(), 0, {m.getResult(1), m.getResult(0)},
                       m.getContext());
    use.set(replacement);
    gemm.setIndexingMapsAttr(OpBuilder(gemm).getAffineMapArrayAttr(maps));
  }
}

struct FoldGemmTransposesPass
    : impl::FoldGemmTransposesBase<FoldGemmTransposesPass> {
  void runOnOperation() override {
    // Casts of transposes first: their transposes are then often unused.
    SmallVector<linalg::GenericOp> casts;
    getOperation().walk([&](linalg::GenericOp g) {
      if (unaryElementwise(g->getResult(0)) &&
          transposed(g.getDpsInputOperand(0)->get()) && onlyGemmInputs(g->getResult(0)))
        casts.push_back(g);
    });
    for (linalg::GenericOp rounding : casts) {
      // The same elementwise body over the transpose's input as it lies.
      Value x = transposed(rounding.getDpsInputOperand(0)->get());
      OpBuilder b(rounding);
      auto xType = cast<RankedTensorType>(x.getType());
      Type elem = getElementTypeOrSelf(rounding.getResult(0).getType());
      Value init =
          tensor::EmptyOp::create(b, rounding.getLoc(), xType.getShape(), elem);
      AffineMap id = b.getMultiDimIdentityMap(2);
      auto copy = linalg::GenericOp::create(
          b, rounding.getLoc(), TypeRange{init.getType()}, ValueRange{x},
          ValueRange{init}, ArrayRef<AffineMap>{id, id},
          rounding.getIteratorTypesArray());
      IRMapping mapping;
      rounding.getRegion().cloneInto(&copy.getRegion(), mapping);
      readTransposed(rounding.getResult(0), copy.getResult(0));
      rounding->erase();
    }
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp t) {
      if (t.hasPureTensorSemantics() && transposed(t->getResult(0)) &&
          onlyGemmInputs(t->getResult(0)))
        transposes.push_back(t);
    });
    for (linalg::TransposeOp t : transposes) {
      readTransposed(t->getResult(0), t.getInput());
      t->erase();
    }
    // Transposes only the erased casts read.
    SmallVector<linalg::TransposeOp> dead;
    getOperation().walk([&](linalg::TransposeOp t) {
      if (t.hasPureTensorSemantics() && t->use_empty())
        dead.push_back(t);
    });
    for (linalg::TransposeOp t : dead)
      t->erase();
  }
};

} // namespace
} // namespace oflow
