//===- OFlowSbpLinalg.cpp - SBP signatures of matmul, gemm, conv ----------===//
//
// A contraction splits its free axes through (S(M)·B -> S(M), B·S(N) ->
// S(N)); splitting the contracted axis on both sides leaves each device a
// partial sum (S(K)·S(K) -> P); and it is linear in each operand alone
// (P·B -> P, B·P -> P). Batch axes split like elementwise ones.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Contraction signatures; `mA`/`kA` are the lhs's free and contracted axes,
/// `kB`/`nB` the rhs's, `mOut`/`nOut` the result's free axes.
static void addContraction(MLIRContext *ctx, SmallVector<SbpSignature> &sigs,
                           int64_t mA, int64_t kA, int64_t kB, int64_t nB,
                           int64_t mOut, int64_t nOut) {
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  sigs.push_back({{b, b}, {b}, ""});
  sigs.push_back({{sbpS(ctx, mA), b}, {sbpS(ctx, mOut)}, ""});
  sigs.push_back({{b, sbpS(ctx, nB)}, {sbpS(ctx, nOut)}, ""});
  sigs.push_back({{sbpS(ctx, kA), sbpS(ctx, kB)}, {p}, ""});
  sigs.push_back({{p, b}, {p}, ""});
  sigs.push_back({{b, p}, {p}, ""});
}

SmallVector<SbpSignature> MatmulOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  ArrayRef<int64_t> out = shapeOf(getOutput());
  int64_t l = lhs.size(), r = rhs.size(), o = out.size();
  SmallVector<SbpSignature> sigs;
  if (l < 2 || r < 2) {
    // Vector operands: only the linear rules.
    SbpAttr b = sbpB(ctx), p = sbpP(ctx);
    return {{{b, b}, {b}, ""}, {{p, b}, {p}, ""}, {{b, p}, {p}, ""}};
  }
  bool ta = getTransposeA(), tb = getTransposeB();
  addContraction(ctx, sigs, ta ? l - 1 : l - 2, ta ? l - 2 : l - 1,
                 tb ? r - 1 : r - 2, tb ? r - 2 : r - 1, o - 2, o - 1);
  // Batch axes broadcast like elementwise ones (aligned on the right).
  for (int64_t axis = 0; axis < o - 2; ++axis) {
    auto sbpFor = [&](ArrayRef<int64_t> shape) {
      int64_t own = axis - (o - static_cast<int64_t>(shape.size()));
      return own >= 0 && shape[own] == out[axis] ? sbpS(ctx, own) : sbpB(ctx);
    };
    sigs.push_back({{sbpFor(lhs), sbpFor(rhs)}, {sbpS(ctx, axis)}, ""});
  }
  return sigs;
}

SmallVector<SbpSignature> GemmOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  bool ta = getTransposeA(), tb = getTransposeB();
  SmallVector<SbpSignature> sigs;
  addContraction(ctx, sigs, ta ? 1 : 0, ta ? 0 : 1, tb ? 1 : 0, tb ? 0 : 1, 0, 1);
  if (!getC())
    return sigs;
  // The bias C broadcasts to [M, N]: it follows a split result axis where it
  // holds that axis, and must itself be partial where the product is (it is
  // added once, so each device may add only its share).
  ArrayRef<int64_t> c = shapeOf(getC()), out = shapeOf(getOutput());
  int64_t rank = c.size();
  for (SbpSignature &sig : sigs) {
    SbpAttr result = sig.results[0];
    SbpAttr cSbp = result;
    if (result.isSplit()) {
      int64_t own = result.getAxis() - (2 - rank);
      cSbp = own >= 0 && c[own] == out[result.getAxis()] ? sbpS(ctx, own) : sbpB(ctx);
    }
    sig.operands.push_back(cSbp);
  }
  return sigs;
}

/// Conv input [N, C, H, W], weight [O, C/g, kh, kw], output [N, O, H', W'].
/// Channels split only without groups (a group mixes its own channels).
SmallVector<SbpSignature> Conv2dOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  bool hasBias = static_cast<bool>(getBias());
  auto sig = [&](SbpAttr x, SbpAttr w, SbpAttr bias, SbpAttr y) {
    SbpSignature s{{x, w}, {y}, ""};
    if (hasBias)
      s.operands.push_back(bias);
    return s;
  };
  SmallVector<SbpSignature> sigs{sig(b, b, b, b),
                                 sig(sbpS(ctx, 0), b, b, sbpS(ctx, 0)),
                                 sig(p, b, p, p), sig(b, p, p, p)};
  if (getGroups() == 1) {
    sigs.push_back(sig(b, sbpS(ctx, 0), sbpS(ctx, 0), sbpS(ctx, 1)));
    sigs.push_back(sig(sbpS(ctx, 1), sbpS(ctx, 1), p, p));
  }
  return sigs;
}

/// grad_input [N, C, H, W] from grad_output [N, O, H', W'] and weight.
SmallVector<SbpSignature> Conv2dBackwardInputOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""},
                                 {{sbpS(ctx, 0), b}, {sbpS(ctx, 0)}, ""},
                                 {{p, b}, {p}, ""},
                                 {{b, p}, {p}, ""}};
  if (getGroups() == 1) {
    sigs.push_back({{sbpS(ctx, 1), sbpS(ctx, 0)}, {p}, ""});
    sigs.push_back({{b, sbpS(ctx, 1)}, {sbpS(ctx, 1)}, ""});
  }
  return sigs;
}

/// grad_filter [O, C, kh, kw] from grad_output [N, O, ...] and input
/// [N, C, ...]: a split batch leaves each device a partial weight gradient.
SmallVector<SbpSignature> Conv2dBackwardFilterOp::getSbpCandidates(int64_t) {
  MLIRContext *ctx = getContext();
  SbpAttr b = sbpB(ctx), p = sbpP(ctx);
  SmallVector<SbpSignature> sigs{{{b, b}, {b}, ""},
                                 {{sbpS(ctx, 0), sbpS(ctx, 0)}, {p}, ""},
                                 {{p, b}, {p}, ""},
                                 {{b, p}, {p}, ""}};
  if (getGroups() == 1) {
    sigs.push_back({{sbpS(ctx, 1), b}, {sbpS(ctx, 0)}, ""});
    sigs.push_back({{b, sbpS(ctx, 1)}, {sbpS(ctx, 1)}, ""});
  }
  return sigs;
}
