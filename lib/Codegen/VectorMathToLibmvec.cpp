//===- VectorMathToLibmvec.cpp - vector exp/erf -> glibc libmvec calls ----===//
//
// convert-math-to-llvm/-libm leave a vector exp or erf to LLVM, which splits
// it into one scalar libm call per element. glibc ships vectorized versions
// with the x86-64 vector function ABI names (_ZGV<isa>N<width>v_<name>f);
// calling them keeps the tiles of oflow-vectorize-elementwise vectorized.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/DeclareFunction.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "llvm/TargetParser/Host.h"

namespace oflow {
#define GEN_PASS_DEF_VECTORMATHTOLIBMVEC
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// The widest libmvec variant the ISA allows: its width and ABI letter.
struct Variant {
  int64_t width;
  char letter;
};

SmallVector<Variant> variantsFor(StringRef isa) {
  std::string name = isa.str();
  if (isa == "host") {
    llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
    name = f.lookup("avx512f") ? "avx512"
           : f.lookup("avx2")  ? "avx2"
           : f.lookup("sse4.1") ? "sse4"
                               : "none";
  }
  SmallVector<Variant> v;
  if (name == "avx512")
    v.push_back({16, 'e'});
  if (name == "avx512" || name == "avx2")
    v.push_back({8, 'd'});
  if (name == "avx512" || name == "avx2" || name == "sse4")
    v.push_back({4, 'b'});
  return v;
}

StringRef baseName(Operation *op) {
  if (isa<math::ExpOp>(op)) return "expf";
  if (isa<math::ErfOp>(op)) return "erff";
  if (isa<math::TanhOp>(op)) return "tanhf";
  if (isa<math::LogOp>(op)) return "logf";
  return {};
}

struct VectorMathToLibmvecPass
    : impl::VectorMathToLibmvecBase<VectorMathToLibmvecPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Variant> variants = variantsFor(isa);
    if (variants.empty())
      return;
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      auto type = op->getNumResults() == 1
                      ? dyn_cast<VectorType>(op->getResult(0).getType())
                      : VectorType();
      if (!baseName(op).empty() && type && type.getElementType().isF32() &&
          !type.isScalable() &&
          llvm::all_of(type.getShape().drop_back(), [](int64_t d) { return d == 1; }))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto type = cast<VectorType>(op->getResult(0).getType());
      int64_t n = type.getShape().back();
      const Variant *variant = llvm::find_if(
          variants, [&](const Variant &v) { return v.width == n; });
      if (variant == variants.end())
        continue;
      auto flat = VectorType::get({n}, type.getElementType());
      std::string name = ("_ZGV" + Twine(variant->letter) + "N" + Twine(n) +
                          "v_" + baseName(op))
                             .str();
      OpBuilder b(op);
      func::FuncOp callee =
          declareFunction(module, name, b.getFunctionType({flat}, {flat}));
      Location loc = op->getLoc();
      Value arg = op->getOperand(0);
      if (type != flat)
        arg = vector::ShapeCastOp::create(b, loc, flat, arg);
      Value result = func::CallOp::create(b, loc, callee, ValueRange{arg}).getResult(0);
      if (type != flat)
        result = vector::ShapeCastOp::create(b, loc, type, result);
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

} // namespace
} // namespace oflow
