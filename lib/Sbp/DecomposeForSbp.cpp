//===- DecomposeForSbp.cpp - ops whose split forms need a collective ------===//
//
// A mean over a split axis, a loss averaged over a split batch and batch
// norm's statistics on a split batch are only right with a collective inside
// (the global count, all-reduced statistics). Rewritten here into sums and
// elementwise ops, whose split forms need none, the SBP planner handles them
// like any other op: the sum over a split axis becomes P, and boxing
// all-reduces it where a consumer needs the whole value. So no lowering ever
// has to know about meshes. Runs only on meshes of more than one device.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "../Autodiff/GradRules.h"
#include "OFlow/OFlowOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace oflow {
#define GEN_PASS_DEF_DECOMPOSEFORSBP
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
using namespace mlir::oflow;
using ::oflow::autodiff::GradBuilder;
using ::oflow::autodiff::axesExcept;
using ::oflow::autodiff::shapeOf;
using ::oflow::autodiff::tensorType;

static int64_t numElements(Value v) {
  return tensorType(v).getNumElements();
}

/// The number of labels a mean loss divides by, as a 0-d tensor like `like`:
/// all of them, or those not equal to `ignoreIndex`.
static Value lossCount(GradBuilder &b, Value labels,
                       std::optional<int64_t> ignoreIndex, Value like) {
  if (!ignoreIndex)
    return b.scalarLike(double(numElements(labels)), like);
  Type labelType = tensorType(labels).getElementType();
  auto ignore = DenseElementsAttr::get(
      RankedTensorType::get({}, labelType),
      ArrayRef<Attribute>{IntegerAttr::get(labelType, *ignoreIndex)});
  Value kept = b.compare(ComparePredicate::ne, labels,
                         b.op<ConstantOp>(cast<ElementsAttr>(ignore)));
  Value ones = CastOp::create(b.b, b.loc, kept, tensorType(like).getElementType());
  return b.sum(ones, axesExcept(tensorType(labels).getRank(), {}),
               /*keepdims=*/false);
}

/// loss(mean) = loss(sum) / count; d loss(mean) = d loss(sum) with
/// grad_loss / count.
template <typename LossOp, typename BackwardOp>
static void decomposeLoss(ModuleOp module) {
  module.walk([](LossOp op) {
    if (op.getReduction() != LossReduction::mean)
      return;
    OpBuilder builder(op);
    GradBuilder b(builder, op.getLoc());
    Value count =
        lossCount(b, op.getLabels(), op.getIgnoreIndex(), op.getResult());
    op.setReduction(LossReduction::sum);
    builder.setInsertionPointAfter(op);
    Value mean = b.div(op.getResult(), count);
    op.getResult().replaceAllUsesExcept(mean, mean.getDefiningOp());
  });
  module.walk([](BackwardOp op) {
    if (op.getReduction() != LossReduction::mean)
      return;
    OpBuilder builder(op);
    GradBuilder b(builder, op.getLoc());
    Value count =
        lossCount(b, op.getLabels(), op.getIgnoreIndex(), op.getGradLoss());
    op.getGradLossMutable().assign(b.div(op.getGradLoss(), count));
    op.setReduction(LossReduction::sum);
  });
}

/// reduce_mean = reduce_sum * (1 / count) for floats; integers divide by the
/// count (truncating, as the single-device mean does).
static void decomposeMean(ReduceMeanOp op) {
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  Value sum = b.op<ReduceSumOp>(op.getInput(), op.getAxes(), op.getKeepdims());
  int64_t count = numElements(op.getInput()) / numElements(sum);
  Type element = tensorType(sum).getElementType();
  Value mean;
  if (isa<FloatType>(element)) {
    mean = b.scale(sum, 1.0 / double(count));
  } else {
    auto type = RankedTensorType::get({}, element);
    Value divisor = b.op<ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
        type, ArrayRef<Attribute>{IntegerAttr::get(element, count)})));
    mean = b.div(sum, divisor);
  }
  op.replaceAllUsesWith(mean);
  op.erase();
}

/// mse(mean) = mse(sum) / numel.
static void decomposeMse(MseLossOp op) {
  if (op.getReduction() != LossReduction::mean)
    return;
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  op.setReduction(LossReduction::sum);
  builder.setInsertionPointAfter(op);
  Value mean = b.scale(op.getResult(), 1.0 / numElements(op.getInput()));
  op.getResult().replaceAllUsesExcept(mean, mean.getDefiningOp());
}

/// Batch statistics from sums over [N, d...] (keepdims), in the statistics
/// type (f64 for f32), as the ops' lowering computes them; the partial sums
/// a mesh all-reduces are then f64 too. batch_norm_training and
/// batch_norm_statistics build the same ops here, which CSE then shares.
struct BatchSums {
  Value x, mean, centered, sumSq;
  double count;
};

static BatchSums batchSums(GradBuilder &b, Value input) {
  Type wide = BatchNormTrainingOp::getStatisticsType(
      tensorType(input).getElementType());
  Value x = b.convert(input, wide);
  SmallVector<int64_t> axes = axesExcept(tensorType(x).getRank(), {1});
  double count = double(numElements(x)) / shapeOf(x)[1];
  Value mean = b.scale(b.sum(x, axes, /*keepdims=*/true), 1.0 / count);
  Value centered = b.sub(x, mean);
  Value sumSq = b.sum(b.mul(centered, centered), axes, /*keepdims=*/true);
  return {x, mean, centered, sumSq, count};
}

/// Mean and biased variance as [C].
static void decomposeBatchStatistics(BatchNormStatisticsOp op) {
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  BatchSums s = batchSums(b, op.getInput());
  int64_t channels = shapeOf(op.getInput())[1];
  op.getMean().replaceAllUsesWith(b.reshape(s.mean, {channels}));
  op.getVariance().replaceAllUsesWith(
      b.reshape(b.scale(s.sumSq, 1.0 / s.count), {channels}));
  op.erase();
}

/// Batch norm with batch statistics: mean, biased variance for the output,
/// the unbiased one for the running variance (PyTorch), then the
/// running-statistics update.
static void decomposeBatchNorm(BatchNormTrainingOp op) {
  OpBuilder builder(op);
  GradBuilder b(builder, op.getLoc());
  Type type = tensorType(op.getInput()).getElementType();
  Type wide = BatchNormTrainingOp::getStatisticsType(type);
  BatchSums s = batchSums(b, op.getInput());
  Value mean = s.mean, centered = s.centered, sumSq = s.sumSq, x = s.x;
  double count = s.count;
  int64_t rank = tensorType(x).getRank();
  int64_t channels = shapeOf(x)[1];
  SmallVector<int64_t> channelShape(rank, 1);
  channelShape[1] = channels;
  Value var = b.scale(sumSq, 1.0 / count);
  Value eps = b.scalarLike(op.getEpsilon().convertToDouble(), x);
  Value rstd = b.op<RsqrtOp>(b.add(var, eps));
  Value y = b.add(b.mul(b.mul(centered, rstd),
                        b.reshape(b.convert(op.getScale(), wide), channelShape)),
                  b.reshape(b.convert(op.getBias(), wide), channelShape));
  y = b.convert(y, type);

  double momentum = op.getMomentum().convertToDouble();
  auto running = [&](Value old, Value batch) {
    return b.convert(b.add(b.scale(b.convert(old, wide), momentum),
                        b.scale(b.reshape(batch, {channels}), 1.0 - momentum)),
                  type);
  };
  Value unbiased = b.scale(sumSq, 1.0 / std::max(count - 1.0, 1.0));
  op.getOutput().replaceAllUsesWith(y);
  op.getNewRunningMean().replaceAllUsesWith(running(op.getRunningMean(), mean));
  op.getNewRunningVar().replaceAllUsesWith(running(op.getRunningVar(), unbiased));
  op.erase();
}

namespace {
struct DecomposeForSbp : ::oflow::impl::DecomposeForSbpBase<DecomposeForSbp> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<MeshAttr>(OFlowDialect::kMeshAttrName);
    if (!mesh || mesh.getNumDevices() == 1)
      return;
    decomposeLoss<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp>(module);
    decomposeLoss<NllLossOp, NllLossBackwardOp>(module);
    module.walk(decomposeMse);
    module.walk(decomposeMean);
    module.walk(decomposeBatchNorm);
    module.walk(decomposeBatchStatistics);
  }
};
} // namespace
