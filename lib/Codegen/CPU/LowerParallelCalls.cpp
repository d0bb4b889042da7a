//===- LowerParallelCalls.cpp - parallel nests onto the runtime's threads -===//
//
// See Passes.td (oflow-lower-parallel-calls). Done on the LLVM dialect,
// where every argument (a memref's descriptor included) is a plain scalar
// that a struct on the caller's stack can carry to the threads.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "oflow/Codegen/ParallelNests.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace oflow {
#define GEN_PASS_DEF_LOWERPARALLELCALLS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

struct LowerParallelCallsPass : impl::LowerParallelCallsBase<LowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTable symbols(module);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    Type voidType = LLVM::LLVMVoidType::get(ctx);
    auto taskType = LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64});

    SmallVector<LLVM::LLVMFuncOp> nests;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn->hasAttr(kParallelIterationsAttr))
        nests.push_back(fn);
    if (nests.empty())
      return;

    // One walk for the calls of every nest (not one per nest).
    llvm::DenseMap<StringRef, SmallVector<LLVM::CallOp>> callsOf;
    for (LLVM::LLVMFuncOp fn : nests)
      callsOf[fn.getName()];
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && callsOf.count(*callee))
        callsOf[*callee].push_back(call);
    });

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto runtime = symbols.lookup<LLVM::LLVMFuncOp>(kParallelForFn);
    if (!runtime)
      runtime = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kParallelForFn,
          LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64}));

    for (LLVM::LLVMFuncOp fn : nests) {
      LLVM::LLVMFunctionType type = fn.getFunctionType();
      if (type.getNumParams() < 2 || type.getParamType(0) != i64 ||
          type.getParamType(1) != i64 || !isa<LLVM::LLVMVoidType>(type.getReturnType())) {
        fn.emitError("a parallel nest must take (i64 begin, i64 end, ...) and return nothing");
        return signalPassFailure();
      }
      ArrayRef<Type> carried = type.getParams().drop_front(2);
      auto frame = LLVM::LLVMStructType::getLiteral(ctx, carried);
      int64_t iterations = cast<IntegerAttr>(fn->getAttr(kParallelIterationsAttr)).getInt();
      int64_t grain = cast<IntegerAttr>(fn->getAttr(kParallelGrainAttr)).getInt();
      fn->removeAttr(kParallelIterationsAttr);
      fn->removeAttr(kParallelGrainAttr);

      // The calls to hand to the pool (the task's own call is made below).
      SmallVector<LLVM::CallOp> calls = callsOf.lookup(fn.getName());

      // <fn>_task(ctx, begin, end): unpack the frame, run the range.
      Location loc = fn.getLoc();
      b.setInsertionPointAfter(fn);
      auto task = LLVM::LLVMFuncOp::create(b, loc, (fn.getName() + "_task").str(), taskType,
                                           LLVM::Linkage::Internal);
      symbols.insert(task);
      Block *entry = task.addEntryBlock(b);
      b.setInsertionPointToStart(entry);
      SmallVector<Value> args{entry->getArgument(1), entry->getArgument(2)};
      for (auto [i, t] : llvm::enumerate(carried)) {
        Value field = LLVM::GEPOp::create(b, loc, ptr, frame, entry->getArgument(0),
                                          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        args.push_back(LLVM::LoadOp::create(b, loc, t, field));
      }
      LLVM::CallOp::create(b, loc, fn, args);
      LLVM::ReturnOp::create(b, loc, ValueRange{});

      // Each call: the frame on the caller's stack, then the pool.
      for (LLVM::CallOp call : calls) {
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        b.setInsertionPointToStart(&caller.getBody().front());
        Value one = LLVM::ConstantOp::create(b, call.getLoc(), i64, b.getI64IntegerAttr(1));
        Value frameAddr = LLVM::AllocaOp::create(b, call.getLoc(), ptr, frame, one, 8);
        b.setInsertionPoint(call);
        for (auto [i, v] : llvm::enumerate(call.getArgOperands().drop_front(2))) {
          Value field = LLVM::GEPOp::create(b, call.getLoc(), ptr, frame, frameAddr,
                                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(b, call.getLoc(), v, field);
        }
        Value taskAddr = LLVM::AddressOfOp::create(b, call.getLoc(), task);
        Value n = LLVM::ConstantOp::create(b, call.getLoc(), i64, b.getI64IntegerAttr(iterations));
        Value g = LLVM::ConstantOp::create(b, call.getLoc(), i64, b.getI64IntegerAttr(grain));
        LLVM::CallOp::create(b, call.getLoc(), runtime, ValueRange{taskAddr, frameAddr, n, g});
        call.erase();
      }
    }
  }
};

} // namespace
} // namespace oflow
