//===- Elementwise.cpp - element-wise and broadcasting ops -----------------===//
//
// Each op becomes one all-parallel linalg.generic whose operands are read
// through numpy-broadcasting indexing maps (a size-1 dim reads index 0), so
// that linalg-fuse-elementwise-ops can fuse chains of them afterwards.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include <cmath>

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// Lowers an element-wise op through a scalar function of its operands'
/// elements (operands broadcast to the result's shape).
template <typename OpT>
struct ElementwiseLowering : OpConversionPattern<OpT> {
  using ScalarFn = Value (*)(OpBuilder &, Location, OpT, ValueRange);
  ElementwiseLowering(MLIRContext *ctx, ScalarFn fn)
      : OpConversionPattern<OpT>(ctx), fn(fn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    for (Value v : adaptor.getOperands())
      if (failed(checkArithType(op, elementTypeOf(v))))
        return failure();
    if (failed(checkArithType(op, resultType.getElementType())))
      return failure();
    Value result = broadcastGeneric(
        rewriter, op.getLoc(), resultType.getShape(),
        resultType.getElementType(), adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return fn(b, loc, op, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  ScalarFn fn;
};

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value one(OpBuilder &b, Location loc, Value like) {
  return scalarConstant(b, loc, like.getType(), 1.0);
}

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

Value negate(OpBuilder &b, Location loc, of::NegOp, ValueRange a) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc,
                               scalarConstant(b, loc, a[0].getType(), 0), a[0]);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one(b, loc, x),
                               arith::AddFOp::create(b, loc, one(b, loc, x), e));
}

Value relu(OpBuilder &b, Location loc, of::ReluOp, ValueRange a) {
  return maxValues(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), 0));
}

Value absolute(OpBuilder &b, Location loc, of::AbsOp, ValueRange a) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, loc, a[0]);
  return math::AbsIOp::create(b, loc, a[0]);
}

Value logicalNot(OpBuilder &b, Location loc, of::NotOp, ValueRange a) {
  return arith::XOrIOp::create(b, loc, a[0],
                               scalarConstant(b, loc, a[0].getType(), 1));
}

Value gelu(OpBuilder &b, Location loc, of::GeluOp op, ValueRange a) {
  Value x = a[0];
  Type t = x.getType();
  Value half = scalarConstant(b, loc, t, 0.5);
  Value phi2; // 1 + erf(x / sqrt 2), or its tanh approximation
  if (op.getApproximate() == of::GeluApproximation::none) {
    Value scaled = arith::MulFOp::create(b, loc, x,
                                         scalarConstant(b, loc, t, M_SQRT1_2));
    phi2 = math::ErfOp::create(b, loc, scaled);
  } else {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Value x3 = arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value inner = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, scalarConstant(b, loc, t, 0.044715), x3));
    Value scaled = arith::MulFOp::create(
        b, loc, scalarConstant(b, loc, t, std::sqrt(2.0 / M_PI)), inner);
    phi2 = math::TanhOp::create(b, loc, scaled);
  }
  phi2 = arith::AddFOp::create(b, loc, one(b, loc, x), phi2);
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, x),
                               phi2);
}

Value divide(OpBuilder &b, Location loc, of::DivOp, ValueRange a) {
  if (isFloat(a[0]))
    return arith::DivFOp::create(b, loc, a[0], a[1]);
  // ONNX Div on signed integers truncates toward zero, as divsi does.
  return arith::DivSIOp::create(b, loc, a[0], a[1]);
}

Value minimum(OpBuilder &b, Location loc, of::MinOp, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MinimumFOp::create(b, loc, a[0], a[1]);
  if (a[0].getType().isInteger(1))
    return arith::AndIOp::create(b, loc, a[0], a[1]);
  return arith::MinSIOp::create(b, loc, a[0], a[1]);
}

Value compare(OpBuilder &b, Location loc, of::CompareOp op, ValueRange a) {
  using P = of::ComparePredicate;
  P p = op.getPredicate();
  if (isFloat(a[0])) {
    // Ordered predicates (false on NaN) except ne, which is true on NaN, as
    // in IEEE, numpy and PyTorch.
    arith::CmpFPredicate fp;
    switch (p) {
    case P::eq: fp = arith::CmpFPredicate::OEQ; break;
    case P::ne: fp = arith::CmpFPredicate::UNE; break;
    case P::lt: fp = arith::CmpFPredicate::OLT; break;
    case P::le: fp = arith::CmpFPredicate::OLE; break;
    case P::gt: fp = arith::CmpFPredicate::OGT; break;
    case P::ge: fp = arith::CmpFPredicate::OGE; break;
    }
    return arith::CmpFOp::create(b, loc, fp, a[0], a[1]);
  }
  // Booleans order false < true, which the signed predicates get wrong
  // (i1 true is -1 when read as signed).
  bool isBool = a[0].getType().isInteger(1);
  arith::CmpIPredicate ip;
  switch (p) {
  case P::eq: ip = arith::CmpIPredicate::eq; break;
  case P::ne: ip = arith::CmpIPredicate::ne; break;
  case P::lt: ip = isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; break;
  case P::le: ip = isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; break;
  case P::gt: ip = isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; break;
  case P::ge: ip = isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; break;
  }
  return arith::CmpIOp::create(b, loc, ip, a[0], a[1]);
}

Value castElement(OpBuilder &b, Location loc, of::CastOp op, ValueRange a) {
  Value x = a[0];
  Type from = x.getType(), to = op.getTo();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    // Any non-zero value is true (ONNX Cast to bool).
    if (isFloat(x))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 scalarConstant(b, loc, from, 0));
  }
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    if (fw == tw) // f16 <-> bf16: through f32, which holds both exactly
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    if (fw < tw)
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (isa<FloatType>(from)) // float -> int truncates toward zero
    return arith::FPToSIOp::create(b, loc, to, x);
  if (isa<FloatType>(to)) {
    if (from.isInteger(1)) // true is 1, not -1
      return arith::UIToFPOp::create(b, loc, to, x);
    return arith::SIToFPOp::create(b, loc, to, x);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) ? Value(arith::ExtUIOp::create(b, loc, to, x))
                             : Value(arith::ExtSIOp::create(b, loc, to, x));
  return arith::TruncIOp::create(b, loc, to, x);
}

#define OFLOW_UNARY(NAME, OP, BODY)                                            \
  Value NAME(OpBuilder &b, Location loc, of::OP, ValueRange a) {               \
    Value x = a[0];                                                            \
    (void)x;                                                                   \
    return BODY;                                                               \
  }
OFLOW_UNARY(expBody, ExpOp, math::ExpOp::create(b, loc, x))
OFLOW_UNARY(logBody, LogOp, math::LogOp::create(b, loc, x))
OFLOW_UNARY(sqrtBody, SqrtOp, math::SqrtOp::create(b, loc, x))
OFLOW_UNARY(rsqrtBody, RsqrtOp, math::RsqrtOp::create(b, loc, x))
OFLOW_UNARY(reciprocalBody, ReciprocalOp,
            arith::DivFOp::create(b, loc, one(b, loc, x), x))
OFLOW_UNARY(tanhBody, TanhOp, math::TanhOp::create(b, loc, x))
OFLOW_UNARY(sigmoidBody, SigmoidOp, sigmoid(b, loc, x))
OFLOW_UNARY(erfBody, ErfOp, math::ErfOp::create(b, loc, x))
#undef OFLOW_UNARY

#define OFLOW_BINARY(NAME, OP, BODY)                                           \
  Value NAME(OpBuilder &b, Location loc, of::OP, ValueRange a) {               \
    return BODY;                                                               \
  }
OFLOW_BINARY(addBody, AddOp, addValues(b, loc, a[0], a[1]))
OFLOW_BINARY(subBody, SubOp, subValues(b, loc, a[0], a[1]))
OFLOW_BINARY(mulBody, MulOp, mulValues(b, loc, a[0], a[1]))
OFLOW_BINARY(maxBody, MaxOp, maxValues(b, loc, a[0], a[1]))
OFLOW_BINARY(powBody, PowOp, math::PowFOp::create(b, loc, a[0], a[1]))
OFLOW_BINARY(whereBody, WhereOp,
             arith::SelectOp::create(b, loc, a[0], a[1], a[2]))
OFLOW_BINARY(expandBody, ExpandOp, a[0])
#undef OFLOW_BINARY

//===----------------------------------------------------------------------===//
// Ops that are not a scalar function
//===----------------------------------------------------------------------===//

/// oflow.constant and oflow.weight hold their value as an attribute, which
/// arith.constant takes as is (dense_resource blobs included).
template <typename OpT>
struct ConstantLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Attribute value = op.getValueAttr();
    if (!value) // a weight with an initializer recipe: only variables draw it
      return rewriter.notifyMatchFailure(op, "a weight without data");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, cast<TypedAttr>(value));
    return success();
  }
};

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering<of::ConstantOp>,
               ConstantLowering<of::WeightOp>>(ctx);
#define ADD(OP, FN) patterns.add<ElementwiseLowering<of::OP>>(ctx, FN)
  ADD(NegOp, negate);
  ADD(ExpOp, expBody);
  ADD(LogOp, logBody);
  ADD(SqrtOp, sqrtBody);
  ADD(RsqrtOp, rsqrtBody);
  ADD(ReciprocalOp, reciprocalBody);
  ADD(TanhOp, tanhBody);
  ADD(SigmoidOp, sigmoidBody);
  ADD(ReluOp, relu);
  ADD(ErfOp, erfBody);
  ADD(AbsOp, absolute);
  ADD(NotOp, logicalNot);
  ADD(GeluOp, gelu);
  ADD(AddOp, addBody);
  ADD(SubOp, subBody);
  ADD(MulOp, mulBody);
  ADD(DivOp, divide);
  ADD(PowOp, powBody);
  ADD(MaxOp, maxBody);
  ADD(MinOp, minimum);
  ADD(CompareOp, compare);
  ADD(WhereOp, whereBody);
  ADD(CastOp, castElement);
  ADD(ExpandOp, expandBody);
#undef ADD
}

} // namespace oflow::lowering
