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
/// nullopt.
template <typename OpT>
std::optional<int64_t> blasOperandType(OpT op) {
  if (op.hasUserDefinedMaps() || !op.hasPureBufferSemantics())
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

struct LinalgToBlasPass : impl::LinalgToBlasBase<LinalgToBlasPass> {
  void runOnOperation() override {
    // A module pass: it declares the runtime functions in the module, which
    // function passes running in parallel must not do.
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, int64_t>> gemms;
    module.walk([&](Operation *op) {
      std::optional<int64_t> dtype;
      if (auto mm = dyn_cast<linalg::MatmulOp>(op))
        dtype = blasOperandType(mm);
      if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op))
        dtype = blasOperandType(bmm);
      if (dtype)
        gemms.push_back({op, *dtype});
    });
    for (auto [op, dtype] : gemms) {
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
      Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
      Value one = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                 llvm::APFloat(1.0f));
      SmallVector<Value> args;
      if (dtype != OFLOW_DT_F32)
        args.push_back(arith::ConstantIntOp::create(b, loc, dtype, 64));
      if (batched)
        args.push_back(dim(c, 0));
      args.append({zero, zero, dim(c, r), dim(c, r + 1), dim(a, r + 1), one,
                   A.pointer, A.leading});
      if (batched)
        args.push_back(A.batch);
      args.append({B.pointer, B.leading});
      if (batched)
        args.push_back(B.batch);
      args.append({one, C.pointer, C.leading});
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
