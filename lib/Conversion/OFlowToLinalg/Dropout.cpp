//===- Dropout.cpp - dropout masks from a counter-based generator ---------===//
//
// Each element's keep/drop draw is Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11) of (global element index,
// step) under the key `seed`: a pure function of where the element is in
// the global tensor, so the mask needs no state, no communication and no
// second pass, is the same on every mesh, and the gradient draws it again
// instead of storing it. The rounds are plain 32-bit arith (a product
// widened to 64 bits gives both halves), so every target lowers them.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include <cmath>

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

// Philox4x32's multipliers and Weyl key increments.
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

struct ArithBuilder {
  OpBuilder &b;
  Location loc;
  Type i32 = b.getI32Type(), i64 = b.getI64Type();

  Value c32(uint32_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, static_cast<int32_t>(v));
  }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); }
  Value lo(Value v64) { return arith::TruncIOp::create(b, loc, i32, v64); }
  Value hi(Value v64) {
    return lo(arith::ShRUIOp::create(b, loc, v64, c64(32)));
  }
  Value xorOf(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  /// The 64-bit product of two 32-bit words.
  Value wideMul(uint32_t m, Value x) {
    Value wide = arith::ExtUIOp::create(b, loc, i64, x);
    return arith::MulIOp::create(b, loc, c64(m), wide);
  }
};

/// Word 0 of Philox4x32-10 of `counter` under the key (k0, k1).
Value philoxWord0(ArithBuilder &a, std::array<Value, 4> c, uint32_t k0,
                  uint32_t k1) {
  for (int round = 0; round < kRounds; ++round) {
    Value p0 = a.wideMul(kMul0, c[0]), p1 = a.wideMul(kMul1, c[2]);
    c = {a.xorOf(a.xorOf(a.hi(p1), c[1]), a.c32(k0)), a.lo(p1),
         a.xorOf(a.xorOf(a.hi(p0), c[3]), a.c32(k1)), a.lo(p0)};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c[0];
}

/// The smallest 32-bit draw that keeps an element: ceil(ratio * 2^32).
uint32_t keepThreshold(double ratio) {
  double t = std::ceil(std::ldexp(ratio, 32));
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
}

/// 1 / (1 - ratio) in the element type's arithmetic, as PyTorch scales.
double keepScale(double ratio, Type elementType) {
  if (elementType.isF64())
    return 1.0 / (1.0 - ratio);
  return 1.0f / static_cast<float>(1.0 - ratio);
}

struct DropoutLowering : OpConversionPattern<of::DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    double ratio = op.getRatio().convertToDouble();
    if (ratio == 0.0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    if (!adaptor.getStep())
      return cannotLower(op, "dropout with a positive ratio draws its mask "
                             "per training step, and this one has no step "
                             "(oflow-build-train-step gives it one)");
    Location loc = op.getLoc();
    auto type = tensorType(op.getResult());
    Type element = type.getElementType();
    if (failed(checkArithType(op, element)))
      return failure();
    ArrayRef<int64_t> local = type.getShape();
    SmallVector<int64_t> global(local);
    if (std::optional<ArrayRef<int64_t>> g = op.getGlobalShape())
      global.assign(g->begin(), g->end());

    ArithBuilder a{rewriter, loc};
    auto scalarOf = [&](Value t) {
      return tensor::ExtractOp::create(rewriter, loc, t, ValueRange{}).getResult();
    };
    Value step = scalarOf(adaptor.getStep());
    Value stepLo = a.lo(step), stepHi = a.hi(step);
    Value eval = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                       step, a.c64(0));
    SmallVector<Value> offsets;
    for (Value off : adaptor.getOffsets())
      offsets.push_back(scalarOf(off));
    Value scale = arith::SelectOp::create(
        rewriter, loc, eval, scalarConstant(rewriter, loc, element, 1.0),
        scalarConstant(rewriter, loc, element, keepScale(ratio, element)));
    Value zero = scalarConstant(rewriter, loc, element, 0.0);
    uint64_t seed = static_cast<uint64_t>(op.getSeed().value_or(0));
    uint32_t threshold = keepThreshold(ratio);

    Value result = broadcastGeneric(
        rewriter, loc, local, element, adaptor.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          ArithBuilder e{b, loc};
          // The element's row-major index in the global tensor.
          Value index = e.c64(0);
          int64_t stride = 1;
          for (int64_t d = type.getRank() - 1; d >= 0; --d) {
            Value i = arith::IndexCastOp::create(
                b, loc, e.i64, linalg::IndexOp::create(b, loc, d));
            if (!offsets.empty())
              i = arith::AddIOp::create(b, loc, i, offsets[d]);
            index = arith::AddIOp::create(
                b, loc, index, arith::MulIOp::create(b, loc, i, e.c64(stride)));
            stride *= global[d];
          }
          Value draw = philoxWord0(e, {e.lo(index), e.hi(index), stepLo, stepHi},
                                   static_cast<uint32_t>(seed),
                                   static_cast<uint32_t>(seed >> 32));
          Value keep = arith::OrIOp::create(
              b, loc, eval,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, draw,
                                    e.c32(threshold)));
          Value scaled = arith::MulFOp::create(b, loc, args[0], scale);
          return arith::SelectOp::create(b, loc, keep, scaled, zero).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDropoutPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}

} // namespace oflow::lowering
