//===- Attention.cpp - fused attention as the runtime's kernels ------------===//
//
// oflow.attention and its backward op have no loop-nest lowering: the point
// of the fused op is that the [Tq, Tk] scores never exist, which takes the
// tiled online-softmax kernels the runtime ships (oflow_rt_attention_fwd /
// _bwd in oflow_rt/abi.h: tensor-core kernels on the CUDA target, the same
// function as a reference loop on the CPU runtime, which --target
// cuda-emulated links). The leading (batch, head) dims are collapsed into
// one, the buffers passed dense, as the convolution calls do.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"

#include "oflow/Codegen/RuntimeDtype.h"

namespace oflow::lowering {
namespace {

namespace of = mlir::oflow;

/// [..., T, D] -> [prod(...), T, D] (with trailing 2; [..., T] -> [prod(...),
/// T] with 1): the layout the runtime's calls take.
RankedTensorType collapsedType(Value v, unsigned trailing) {
  ArrayRef<int64_t> shape = shapeOf(v);
  int64_t rows = 1;
  for (int64_t d : shape.drop_back(trailing))
    rows *= d;
  SmallVector<int64_t> collapsed{rows};
  llvm::append_range(collapsed, shape.take_back(trailing));
  return RankedTensorType::get(collapsed, elementTypeOf(v));
}

Value collapseLeading(OpBuilder &b, Location loc, Value v, unsigned trailing) {
  return reshapeTo(b, loc, v, collapsedType(v, trailing).getShape());
}

/// The scalar arguments both calls start with: dtype, causal, bh, tq, tk,
/// d, scale.
template <typename OpT>
SmallVector<Value> attentionScalars(OpBuilder &b, Location loc, OpT op) {
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey());
  int64_t rows = collapsedType(op.getQuery(), 2).getDimSize(0);
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
  };
  return {i64(*runtimeDtype(op.getOperandType())),
          i64(op.getCausal() ? 1 : 0),
          i64(rows),
          i64(q[q.size() - 2]),
          i64(k[k.size() - 2]),
          i64(q.back()),
          arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                         op.getScaleAttr().getValue())};
}

struct AttentionLowering : OpConversionPattern<of::AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (Value v : {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()})
      inputs.push_back(collapseLeading(rewriter, loc, v, 2));
    SmallVector<Value> results = callRuntimeLibrary(
        rewriter, loc, op, "__oflow_rt_attention_fwd_f32",
        attentionScalars(rewriter, loc, op), inputs,
        {collapsedType(op.getOutput(), 2), collapsedType(op.getLogsumexp(), 1)});
    rewriter.replaceOp(
        op, {reshapeTo(rewriter, loc, results[0], shapeOf(op.getOutput())),
             reshapeTo(rewriter, loc, results[1], shapeOf(op.getLogsumexp()))});
    return success();
  }
};

struct AttentionBackwardLowering : OpConversionPattern<of::AttentionBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AttentionBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (Value v : {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
                    adaptor.getOutput()})
      inputs.push_back(collapseLeading(rewriter, loc, v, 2));
    inputs.push_back(collapseLeading(rewriter, loc, adaptor.getLogsumexp(), 1));
    inputs.push_back(collapseLeading(rewriter, loc, adaptor.getGradOutput(), 2));
    // The last buffer is the runtime's scratch (rowsum(dO * O), [bh, tq]).
    SmallVector<Value> results = callRuntimeLibrary(
        rewriter, loc, op, "__oflow_rt_attention_bwd_f32",
        attentionScalars(rewriter, loc, op), inputs,
        {collapsedType(op.getQuery(), 2), collapsedType(op.getKey(), 2),
         collapsedType(op.getValue(), 2), collapsedType(op.getLogsumexp(), 1)});
    rewriter.replaceOp(
        op, {reshapeTo(rewriter, loc, results[0], shapeOf(op.getGradQuery())),
             reshapeTo(rewriter, loc, results[1], shapeOf(op.getGradKey())),
             reshapeTo(rewriter, loc, results[2], shapeOf(op.getGradValue()))});
    return success();
  }
};

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, AttentionBackwardLowering>(
      patterns.getContext());
}

} // namespace oflow::lowering
