//===- LowerRuntimeCalls.cpp - placeholder calls -> calls with addresses ---===//
//
// See Passes.td. The buffers are 1-D and contiguous (the boxing lowering
// copies into fresh ones), so an address is the aligned base pointer plus
// the offset the memory planner gave the view.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/DeclareFunction.h"

#include "mlir/IR/Builders.h"

namespace oflow {
#define GEN_PASS_DEF_LOWERRUNTIMECALLS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// The address of element 0 of `memref`, as an index.
Value addressOf(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  // Bool buffers hold one byte per element.
  unsigned bytes = std::max<unsigned>(
      1, (cast<MemRefType>(memref.getType()).getElementTypeBitWidth() + 7) / 8);
  Value offset = arith::MulIOp::create(
      b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  return arith::AddIOp::create(b, loc, base, offset);
}

struct LowerRuntimeCallsPass
    : impl::LowerRuntimeCallsBase<LowerRuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef prefix = "__oflow_rt_";
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(prefix))
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      Location loc = call.getLoc();
      SmallVector<Value> args;
      SmallVector<Type> types;
      for (Value arg : call.getOperands()) {
        if (isa<MemRefType>(arg.getType())) {
          // Look through the cast to the dynamic placeholder type.
          if (auto cast = arg.getDefiningOp<memref::CastOp>())
            arg = cast.getSource();
          arg = addressOf(b, loc, arg);
        }
        args.push_back(arg);
        types.push_back(arg.getType());
      }
      // __oflow_rt_<kind>_<dtype> -> oflow_rt_<kind>
      StringRef callee = call.getCallee().drop_front(2);
      std::string name = callee.rsplit('_').first.str();
      declareFunction(module, name, b.getFunctionType(types, {}));
      func::CallOp::create(b, loc, name, TypeRange{}, args);
      call.erase();
    }
    for (auto fn : module.getOps<func::FuncOp>())
      fn->removeAttr(kLibraryCallsAttr);
    // The placeholders are now unused declarations.
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (fn.isDeclaration() && fn.getSymName().starts_with(prefix))
        fn.erase();
  }
};

} // namespace
} // namespace oflow
