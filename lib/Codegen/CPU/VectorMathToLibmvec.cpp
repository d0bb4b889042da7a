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

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// libmvec's expf leaves its fast path for a whole vector when any lane's
/// result is not a normal float: below ln(FLT_MIN), as for the -inf of a
/// masked softmax, it calls the scalar expf for each such lane (7x slower
/// with half the lanes -inf). exp(x) = exp(x/2)^2 keeps those lanes on the
/// fast path: a lane below the bound is halved and clamped at it (from
/// -174.7 down, the square is 0, as exp(x) rounds to), and its result is
/// squared, which rounds once more into the subnormal range.
constexpr float kExpNormalBound = -87.33654f; // ln(FLT_MIN)

std::pair<Value, Value> halveTinyExpArguments(OpBuilder &b, Location loc, Value x) {
  auto type = cast<VectorType>(x.getType());
  auto splat = [&](float v) {
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  };
  Value bound = splat(kExpNormalBound);
  Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, bound);
  Value half = arith::MulFOp::create(b, loc, x, splat(0.5f));
  Value halved = arith::SelectOp::create(b, loc, tiny, half, x);
  // maxnumf: NaN lanes are not tiny and keep their NaN.
  Value clamped = arith::SelectOp::create(
      b, loc, tiny, arith::MaxNumFOp::create(b, loc, halved, bound), x);
  return {clamped, tiny};
}

Value squareTinyExpResults(OpBuilder &b, Location loc, Value e, Value tiny) {
  Value square = arith::MulFOp::create(b, loc, e, e);
  return arith::SelectOp::create(b, loc, tiny, square, e);
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
      // The widest variant that divides the row: rows longer than a
      // register (softmax rows of oflow-vectorize-elementwise) are called
      // in slices.
      const Variant *variant = llvm::find_if(
          variants, [&](const Variant &v) { return n % v.width == 0; });
      if (variant == variants.end())
        continue;
      int64_t width = variant->width;
      auto flat = VectorType::get({n}, type.getElementType());
      auto slice = VectorType::get({width}, type.getElementType());
      std::string name = ("_ZGV" + Twine(variant->letter) + "N" + Twine(width) +
                          "v_" + baseName(op))
                             .str();
      OpBuilder b(op);
      func::FuncOp callee =
          declareFunction(module, name, b.getFunctionType({slice}, {slice}));
      Location loc = op->getLoc();
      Value arg = op->getOperand(0);
      if (type != flat)
        arg = vector::ShapeCastOp::create(b, loc, flat, arg);
      bool exp = llvm::isa<math::ExpOp>(op);
      Value tiny;
      if (exp)
        std::tie(arg, tiny) = halveTinyExpArguments(b, loc, arg);
      Value result;
      if (n == width) {
        result = func::CallOp::create(b, loc, callee, ValueRange{arg}).getResult(0);
      } else {
        result = arith::ConstantOp::create(b, loc, flat, b.getZeroAttr(flat));
        for (int64_t at = 0; at < n; at += width) {
          Value part = vector::ExtractStridedSliceOp::create(
              b, loc, arg, ArrayRef<int64_t>{at}, ArrayRef<int64_t>{width},
              ArrayRef<int64_t>{1});
          part = func::CallOp::create(b, loc, callee, ValueRange{part}).getResult(0);
          result = vector::InsertStridedSliceOp::create(
              b, loc, part, result, ArrayRef<int64_t>{at}, ArrayRef<int64_t>{1});
        }
      }
      if (exp)
        result = squareTinyExpResults(b, loc, result, tiny);
      if (type != flat)
        result = vector::ShapeCastOp::create(b, loc, type, result);
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

} // namespace
} // namespace oflow
