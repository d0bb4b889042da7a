//===- FuseAttention.cpp - the oflow-fuse-attention pass -------------------===//
//
// Unfused, attention writes and reads its [Tq, Tk] scores, probabilities and
// their gradients through HBM several times per layer: for GPT-2 small
// (T 1024, 96 batch-heads) about 43 GB a step, a third of the step's
// traffic. The fused op computes the same function tile by tile in the
// runtime's kernels (FlashAttention-2), so this pass only has to recognise
// the pattern and prove that it is the function the kernels compute: the
// scale a constant, the mask a constant that is exactly causal.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace oflow {
#define GEN_PASS_DEF_OFLOWFUSEATTENTION
#include "oflow/Conversion/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow {
namespace {

/// The value of a constant splat (any shape) as a double.
std::optional<double> splatValue(Value v) {
  auto constant = v.getDefiningOp<of::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// The elements of a constant boolean tensor (an oflow.constant or the
/// value of an oflow.weight, a buffer such as GPT's `causal_mask`).
std::optional<SmallVector<bool>> booleanConstant(Value v) {
  Attribute value;
  if (auto constant = v.getDefiningOp<of::ConstantOp>())
    value = constant.getValue();
  else if (auto weight = v.getDefiningOp<of::WeightOp>())
    value = weight.getValueAttr();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(value);
  if (!dense || !dense.getElementType().isInteger(1))
    return std::nullopt;
  return llvm::to_vector(dense.getValues<bool>());
}

/// Whether `mask` (true = masked out), broadcast to [..., tq, tk] from a
/// shape whose leading dims are 1, masks exactly the keys after each query.
bool isCausalMask(ArrayRef<bool> mask, ArrayRef<int64_t> shape, int64_t tq,
                  int64_t tk) {
  if (tq != tk || shape.size() < 2 || shape.take_back(2) != ArrayRef<int64_t>{tq, tk})
    return false;
  for (int64_t d : shape.drop_back(2))
    if (d != 1)
      return false;
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j)
      if (mask[i * tk + j] != (j > i))
        return false;
  return true;
}

/// An attention pattern found at its final matmul.
struct Match {
  Value query, keyTransposed, key, value;
  double scale = 1.0;
  bool causal = false;
  SmallVector<Operation *> chain; // softmax's producers, to erase after
};

/// The scale around the scores (`s * c`, `c * s`, `s / c`), if `v` is one;
/// sets `scale` and returns the unscaled scores.
Value throughScale(Value v, double &scale) {
  if (auto mul = v.getDefiningOp<of::MulOp>()) {
    if (std::optional<double> c = splatValue(mul.getRhs())) {
      scale = *c;
      return mul.getLhs();
    }
    if (std::optional<double> c = splatValue(mul.getLhs())) {
      scale = *c;
      return mul.getRhs();
    }
  }
  if (auto div = v.getDefiningOp<of::DivOp>())
    if (std::optional<double> c = splatValue(div.getRhs()); c && *c != 0) {
      scale = 1.0 / *c;
      return div.getLhs();
    }
  return v;
}

std::optional<Match> matchAttention(of::MatmulOp pv, int64_t maxHeadDim) {
  Match m;
  if (pv.getTransposeA() || pv.getTransposeB())
    return std::nullopt;
  auto softmax = pv.getLhs().getDefiningOp<of::SoftmaxOp>();
  if (!softmax || !softmax.getResult().hasOneUse())
    return std::nullopt;
  auto probs = cast<RankedTensorType>(softmax.getType());
  int64_t rank = probs.getRank();
  if (rank < 3 || static_cast<int64_t>(softmax.getAxis()) != rank - 1 || !probs.getElementType().isF32())
    return std::nullopt;
  m.chain.push_back(softmax);
  Value scores = softmax.getInput();
  int64_t tq = probs.getDimSize(rank - 2), tk = probs.getDimSize(rank - 1);
  // The mask: where(m, -inf, s) masks where m holds, where(m, s, -inf)
  // where it does not; m may be an oflow.not of the constant.
  if (auto where = scores.getDefiningOp<of::WhereOp>()) {
    if (!where.getResult().hasOneUse())
      return std::nullopt;
    bool masksWhereTrue;
    Value kept;
    auto isNegInf = [](Value v) {
      std::optional<double> c = splatValue(v);
      return c && std::isinf(*c) && *c < 0;
    };
    if (isNegInf(where.getLhs())) {
      masksWhereTrue = true;
      kept = where.getRhs();
    } else if (isNegInf(where.getRhs())) {
      masksWhereTrue = false;
      kept = where.getLhs();
    } else {
      return std::nullopt;
    }
    Value condition = where.getCondition();
    if (auto negated = condition.getDefiningOp<of::NotOp>()) {
      condition = negated.getInput();
      masksWhereTrue = !masksWhereTrue;
    }
    std::optional<SmallVector<bool>> bits = booleanConstant(condition);
    if (!bits)
      return std::nullopt;
    if (!masksWhereTrue)
      for (auto &&bit : *bits)
        bit = !bit;
    if (!isCausalMask(*bits, cast<RankedTensorType>(condition.getType()).getShape(),
                      tq, tk) ||
        kept.getType() != probs)
      return std::nullopt;
    m.causal = true;
    m.chain.push_back(where);
    scores = kept;
  }
  Value unscaled = throughScale(scores, m.scale);
  if (unscaled != scores) {
    if (!scores.hasOneUse() || unscaled.getType() != probs)
      return std::nullopt;
    m.chain.push_back(scores.getDefiningOp());
    scores = unscaled;
  }
  auto qk = scores.getDefiningOp<of::MatmulOp>();
  if (!qk || !qk.getResult().hasOneUse() || qk.getTransposeA())
    return std::nullopt;
  m.chain.push_back(qk);
  m.query = qk.getLhs();
  m.value = pv.getRhs();
  if (qk.getTransposeB())
    m.key = qk.getRhs();
  else
    m.keyTransposed = qk.getRhs();
  // No broadcasting between the operands: the same [..., T, D] leading dims.
  auto q = cast<RankedTensorType>(m.query.getType());
  auto v = cast<RankedTensorType>(m.value.getType());
  auto kOperand = cast<RankedTensorType>(qk.getRhs().getType());
  int64_t d = q.getDimSize(rank - 1);
  SmallVector<int64_t> keyShape(q.getShape().drop_back(2));
  keyShape.append({tk, d});
  SmallVector<int64_t> kOperandShape(keyShape);
  if (!qk.getTransposeB())
    std::swap(kOperandShape[rank - 2], kOperandShape[rank - 1]);
  if (q.getRank() != rank || kOperand.getShape() != ArrayRef<int64_t>(kOperandShape) ||
      v.getShape() != ArrayRef<int64_t>(keyShape) || !q.getElementType().isF32() ||
      !v.getElementType().isF32() || !kOperand.getElementType().isF32() ||
      d > maxHeadDim || !std::isfinite(m.scale))
    return std::nullopt;
  return m;
}

struct FuseAttentionPass
    : impl::OFlowFuseAttentionBase<FuseAttentionPass> {
  using OFlowFuseAttentionBase::OFlowFuseAttentionBase;

  void runOnOperation() override {
    Type operandType;
    OpBuilder b(&getContext());
    if (precision == "bf16")
      operandType = b.getBF16Type();
    else if (precision == "fp16")
      operandType = b.getF16Type();
    else {
      getOperation().emitError("oflow-fuse-attention: precision must be bf16 "
                               "or fp16, not '")
          << precision << "'";
      return signalPassFailure();
    }
    SmallVector<of::MatmulOp> candidates;
    getOperation().walk([&](of::MatmulOp op) { candidates.push_back(op); });
    for (of::MatmulOp pv : candidates) {
      std::optional<Match> m = matchAttention(pv, maxHeadDim);
      if (!m)
        continue;
      b.setInsertionPoint(pv);
      Location loc = pv.getLoc();
      Value key = m->key;
      if (!key) {
        int64_t rank = cast<RankedTensorType>(m->query.getType()).getRank();
        SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
        std::swap(perm[rank - 2], perm[rank - 1]);
        // k^T is usually itself a transpose (of the key projection's heads):
        // one transpose instead of two.
        Value source = m->keyTransposed;
        auto producer = source.getDefiningOp<of::TransposeOp>();
        if (producer && producer->hasOneUse()) {
          source = producer.getInput();
          perm = llvm::map_to_vector(
              perm, [&](int64_t p) { return producer.getPerm()[p]; });
        }
        key = of::TransposeOp::create(b, loc, source,
                                      b.getDenseI64ArrayAttr(perm));
      }
      auto attention = of::AttentionOp::create(
          b, loc, m->query, key, m->value,
          b.getF32FloatAttr(static_cast<float>(m->scale)),
          m->causal ? b.getUnitAttr() : UnitAttr(), TypeAttr::get(operandType));
      pv.getResult().replaceAllUsesWith(attention.getOutput());
      pv->erase();
      // The chain from the softmax back to the first matmul, each used only
      // by the next; their operands (the mask, constants) may die with them.
      for (Operation *op : m->chain)
        op->erase();
    }
  }
};

} // namespace
} // namespace oflow
