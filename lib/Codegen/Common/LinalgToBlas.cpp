//===- LinalgToBlas.cpp - matmuls on memrefs -> runtime BLAS calls --------===//
//
// GEMMs are where the time goes; OpenBLAS runs them several times faster
// than the loops linalg would lower to. The runtime wraps cblas behind the
// C ABI in oflow_rt/abi.h; operands are passed as pointers (index) plus
// leading dimensions, read from each memref's strided metadata.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/DeclareFunction.h"
#include "oflow/Codegen/RuntimeDtype.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"

namespace oflow {
#define GEN_PASS_DEF_LINALGTOBLAS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// A memref operand of a GEMM as BLAS sees it.
struct BlasMatrix {
  Value pointer;   // index: address of element [0, ..., 0]
  Value leading;   // i64: stride of the row dim (elements)
  Value batch;     // i64: stride of the batch dim (elements), 3-D only
};

BlasMatrix describe(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  int64_t elemBytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value elem = arith::ConstantIndexOp::create(b, loc, elemBytes);
  Value offsetBytes = arith::MulIOp::create(b, loc, meta.getOffset(), elem);
  BlasMatrix m;
  m.pointer = arith::AddIOp::create(b, loc, base, offsetBytes);
  auto strides = meta.getStrides();
  unsigned rank = strides.size();
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  m.leading = toI64(strides[rank - 2]);
  if (rank == 3)
    m.batch = toI64(strides[0]);
  return m;
}

/// The runtime's OFLOW_DT_* code of the GEMM's A and B (f32, or bf16/f16
/// under --precision, C always f32) when the op maps onto a BLAS call, else
/// nullopt. (Its indexing maps are checked by transposeFlags.)
std::optional<int64_t> blasOperandType(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<Type> elems;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.isLastDimUnitStride())
      return std::nullopt;
    elems.push_back(type.getElementType());
  }
  if (!elems[2].isF32() || elems[0] != elems[1] ||
      !isa<Float32Type, BFloat16Type, Float16Type>(elems[0]))
    return std::nullopt;
  return runtimeDtype(elems[0]);
}

/// Whether a (batch_)matmul reads A and B transposed, from its indexing
/// maps; none when they are neither the default nor transposed ones.
std::optional<std::pair<bool, bool>> transposeFlags(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool batched = isa<linalg::BatchMatmulOp>(op);
  unsigned first = batched ? 1 : 0;
  unsigned m = first, n = first + 1, k = first + 2;
  auto map = [&](unsigned r, unsigned c) {
    SmallVector<AffineExpr> results;
    if (batched)
      results.push_back(getAffineDimExpr(0, op->getContext()));
    results.append({getAffineDimExpr(r, op->getContext()),
                    getAffineDimExpr(c, op->getContext())});
    return AffineMap::get(first + 3, 0, results, op->getContext());
  };
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  auto flag = [&](AffineMap actual, AffineMap plain,
                  AffineMap transposed) -> std::optional<bool> {
    if (actual == plain)
      return false;
    if (actual == transposed)
      return true;
    return std::nullopt;
  };
  std::optional<bool> ta = flag(maps[0], map(m, k), map(k, m));
  std::optional<bool> tb = flag(maps[1], map(k, n), map(n, k));
  if (!ta || !tb)
    return std::nullopt;
  return std::make_pair(*ta, *tb);
}

/// The zero fill of `gemm`'s output C right before it (only ops without
/// memory effects in between), which the call's beta = 0 makes redundant.
linalg::FillOp zeroFillOfOutput(Operation *gemm) {
  Value c = gemm->getOperand(2);
  Operation *prev = gemm->getPrevNode();
  while (prev && isMemoryEffectFree(prev))
    prev = prev->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || !fill.hasPureBufferSemantics() || fill.getOutputs()[0] != c ||
      !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return {};
  return fill;
}

struct LinalgToBlasPass : impl::LinalgToBlasBase<LinalgToBlasPass> {
  void runOnOperation() override {
    // A module pass: it declares the runtime functions in the module, which
    // function passes running in parallel must not do.
    ModuleOp module = getOperation();
    struct Gemm {
      Operation *op;
      int64_t dtype;
      bool ta, tb;
    };
    SmallVector<Gemm> gemms;
    module.walk([&](Operation *op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        return;
      auto gemm = cast<linalg::LinalgOp>(op);
      std::optional<int64_t> dtype = blasOperandType(gemm);
      std::optional<std::pair<bool, bool>> flags = transposeFlags(gemm);
      if (dtype && flags)
        gemms.push_back({op, *dtype, flags->first, flags->second});
    });
    for (auto [op, dtype, ta, tb] : gemms) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto dim = [&](Value v, int64_t d) {
        return arith::ConstantIntOp::create(
                   b, loc, cast<MemRefType>(v.getType()).getDimSize(d), 64)
            .getResult();
      };
      Value a = op->getOperand(0), bm = op->getOperand(1), c = op->getOperand(2);
      bool batched = isa<linalg::BatchMatmulOp>(op);
      int r = batched ? 1 : 0;
      BlasMatrix A = describe(b, loc, a), B = describe(b, loc, bm),
                 C = describe(b, loc, c);
      auto flag = [&](bool set) {
        return arith::ConstantIntOp::create(b, loc, set ? 1 : 0, 64).getResult();
      };
      Value one = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                 llvm::APFloat(1.0f));
      // C = op(A) op(B) rather than C += ...: BLAS then never reads C.
      Value beta = one;
      if (linalg::FillOp fill = zeroFillOfOutput(op)) {
        fill->erase();
        beta = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                              llvm::APFloat(0.0f));
      }
      SmallVector<Value> args;
      if (dtype != OFLOW_DT_F32)
        args.push_back(arith::ConstantIntOp::create(b, loc, dtype, 64));
      if (batched)
        args.push_back(dim(c, 0));
      // K: the columns of A, or its rows when A is stored transposed.
      args.append({flag(ta), flag(tb), dim(c, r), dim(c, r + 1),
                   dim(a, ta ? r : r + 1), one,
                   A.pointer, A.leading});
      if (batched)
        args.push_back(A.batch);
      args.append({B.pointer, B.leading});
      if (batched)
        args.push_back(B.batch);
      args.append({beta, C.pointer, C.leading});
      if (batched)
        args.push_back(C.batch);
      SmallVector<Type> types;
      for (Value v : args)
        types.push_back(v.getType());
      StringRef name = dtype == OFLOW_DT_F32
                           ? (batched ? "oflow_rt_sgemm_batched" : "oflow_rt_sgemm")
                           : (batched ? "oflow_rt_gemm_lowp_batched"
                                      : "oflow_rt_gemm_lowp");
      func::FuncOp callee =
          declareFunction(module, name, FunctionType::get(b.getContext(), types, {}));
      func::CallOp::create(b, loc, callee, args);
      op->erase();
    }
  }
};

} // namespace
} // namespace oflow
