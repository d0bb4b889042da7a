//===- SbpConversions.cpp - IR attributes <-> the planner's value types ---===//
#include "oflow/Sbp/SbpConversions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow::sbp {

Sbp toPlanner(of::SbpAttr attr) {
  switch (attr.getKind()) {
  case of::SbpKind::Split:
    return Sbp::split(attr.getAxis());
  case of::SbpKind::Broadcast:
    return Sbp::broadcast();
  case of::SbpKind::PartialSum:
    return Sbp::partialSum();
  case of::SbpKind::PartialMax:
    return Sbp::partialMax();
  }
  llvm_unreachable("unknown SBP kind");
}

NdSbp toPlanner(of::NdSbpAttr attr) {
  NdSbp nd;
  for (of::SbpAttr entry : attr.getEntries())
    nd.push_back(toPlanner(entry));
  return nd;
}

Mesh toPlanner(of::MeshAttr mesh) {
  Mesh m;
  m.shape.assign(mesh.getShape().begin(), mesh.getShape().end());
  for (StringAttr link : mesh.getLinks())
    m.links.push_back(linkByName(link.getValue()).value_or(defaultLink()));
  return m;
}

of::SbpAttr toAttr(MLIRContext *ctx, const Sbp &sbp) {
  switch (sbp.kind) {
  case SbpKind::Split:
    return of::SbpAttr::getSplit(ctx, sbp.axis);
  case SbpKind::Broadcast:
    return of::SbpAttr::getBroadcast(ctx);
  case SbpKind::PartialSum:
    return of::SbpAttr::getPartialSum(ctx);
  case SbpKind::PartialMax:
    return of::SbpAttr::getPartialMax(ctx);
  }
  llvm_unreachable("unknown SBP kind");
}

of::NdSbpAttr toAttr(MLIRContext *ctx, const NdSbp &nd) {
  SmallVector<of::SbpAttr> entries;
  for (const Sbp &sbp : nd)
    entries.push_back(toAttr(ctx, sbp));
  return of::NdSbpAttr::get(ctx, entries);
}

of::NdSbpAttr broadcastNdSbp(MLIRContext *ctx, int64_t numAxes) {
  return of::NdSbpAttr::get(
      ctx, SmallVector<of::SbpAttr>(numAxes, of::SbpAttr::getBroadcast(ctx)));
}

FailureOr<of::NdSbpAttr> parseLayoutText(MLIRContext *ctx, StringRef text,
                                         int64_t numAxes) {
  std::string normalized = text.str();
  for (char &c : normalized)
    if (c == ';' || c == '/')
      c = ',';
  std::optional<NdSbp> nd = parseNdSbp(normalized);
  if (!nd || int64_t(nd->size()) != numAxes)
    return failure();
  return toAttr(ctx, *nd);
}

of::NdSbpAttr shardedLayout(of::MeshAttr mesh, std::optional<int64_t> microAxis,
                            ArrayRef<int64_t> shape, of::NdSbpAttr base,
                            bool lastAxisOnly) {
  MLIRContext *ctx = mesh.getContext();
  ArrayRef<int64_t> sizes = mesh.getShape();
  // The node's axis: the last one with devices on it (micro-batches aside).
  std::optional<int64_t> onlyAxis;
  if (lastAxisOnly)
    for (int64_t a = static_cast<int64_t>(sizes.size()) - 1; a >= 0 && !onlyAxis; --a)
      if (sizes[a] > 1 && a != microAxis)
        onlyAxis = a;
  SmallVector<of::SbpAttr> entries(sizes.size(), of::SbpAttr::getBroadcast(ctx));
  SmallVector<int64_t> factor(shape.size(), 1);
  if (base)
    for (auto [a, entry] : llvm::enumerate(base.getEntries())) {
      entries[a] = entry;
      if (entry.isSplit())
        factor[entry.getAxis()] *= sizes[a];
    }
  // Each mesh axis splits a tensor axis no other one splits where it can:
  // two mesh axes on one tensor axis ([S(0), S(0)]) order the pieces
  // first-axis-major, so the gradients' reduce-scatters, issued on the
  // node's fast axis first, and the parameters' all-gathers need an
  // all-to-all to reorder them (ZeRO-2 on 8x4: one per weight and
  // direction); on distinct tensor axes each is a plain scatter or gather.
  for (auto [a, size] : llvm::enumerate(sizes)) {
    if (!entries[a].isBroadcast() || size == 1 ||
        static_cast<int64_t>(a) == microAxis ||
        (lastAxisOnly && static_cast<int64_t>(a) != onlyAxis))
      continue;
    std::optional<size_t> pick;
    for (auto [d, extent] : llvm::enumerate(shape))
      if (factor[d] == 1 && extent % size == 0) {
        pick = d;
        break;
      }
    if (!pick)
      for (auto [d, extent] : llvm::enumerate(shape))
        if (extent % (factor[d] * size) == 0) {
          pick = d;
          break;
        }
    if (pick) {
      factor[*pick] *= size;
      entries[a] = of::SbpAttr::getSplit(ctx, *pick);
    }
  }
  return of::NdSbpAttr::get(ctx, entries);
}

int64_t splitPieces(of::MeshAttr mesh, of::NdSbpAttr layout) {
  int64_t pieces = 1;
  for (auto [size, entry] : llvm::zip(mesh.getShape(), layout.getEntries()))
    if (entry.isSplit())
      pieces *= size;
  return pieces;
}

int64_t elementBytes(Type tensorType) {
  Type element = cast<ShapedType>(tensorType).getElementType();
  return std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
}

std::optional<int64_t> microBatchAxis(of::MeshAttr mesh) {
  if (!mesh || mesh.getLinks().empty() || mesh.getLinks().back().getValue() != kSequentialLink)
    return std::nullopt;
  return mesh.getNumAxes() - 1;
}

of::SbpAttr getValueSbpOnAxis(Value value, int64_t axis) {
  of::NdSbpAttr layout = getValueSbp(value);
  if (!layout || axis < 0 || static_cast<int64_t>(layout.getEntries().size()) <= axis)
    return {};
  return layout.getEntries()[axis];
}

bool scattersEachMicroBatch(Operation *op, int64_t microAxis) {
  auto scatter = dyn_cast<of::ReduceScatterOp>(op);
  if (!scatter || static_cast<int64_t>(scatter.getMeshAxis()) == microAxis ||
      !scatter.getInput().hasOneUse())
    return false;
  auto module = scatter->getParentOfType<ModuleOp>();
  if (!module || !module->hasAttr(kScatterEachMicroBatchAttr))
    return false;
  auto entryOnMicro = [&](Value v) { return getValueSbpOnAxis(v, microAxis); };
  auto partialOnMicro = [&](Value v) {
    of::SbpAttr entry = entryOnMicro(v);
    return entry && entry.isPartial();
  };
  // Made in each lane: from a micro-batch's piece. (A sum of accumulated
  // gradients, a tied weight's two uses, is made once, from the sums.)
  Operation *def = scatter.getInput().getDefiningOp();
  bool perLane = def && llvm::any_of(def->getOperands(), [&](Value v) {
                   of::SbpAttr entry = entryOnMicro(v);
                   return entry && entry.isSplit();
                 });
  return perLane && partialOnMicro(scatter.getInput()) &&
         partialOnMicro(scatter.getOutput());
}

of::NdSbpAttr dropMeshAxis(of::NdSbpAttr layout, int64_t axis) {
  SmallVector<of::SbpAttr> entries(layout.getEntries());
  if (axis >= 0 && axis < static_cast<int64_t>(entries.size()))
    entries.erase(entries.begin() + axis);
  return of::NdSbpAttr::get(layout.getContext(), entries);
}

of::NdSbpAttr getValueSbp(Value value) {
  StringRef name = of::OFlowDialect::kSbpAttrName;
  if (auto result = dyn_cast<OpResult>(value)) {
    auto list = result.getOwner()->getAttrOfType<ArrayAttr>(name);
    return list ? dyn_cast<of::NdSbpAttr>(list[result.getResultNumber()])
                : of::NdSbpAttr();
  }
  auto arg = cast<BlockArgument>(value);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || !arg.getOwner()->isEntryBlock())
    return {};
  return fn.getArgAttrOfType<of::NdSbpAttr>(arg.getArgNumber(), name);
}

/// Elements of the local piece of `value` under `layout`.
static double localElements(const Mesh &mesh, Value value,
                            of::NdSbpAttr layout) {
  auto type = cast<RankedTensorType>(value.getType());
  double n = 1;
  for (int64_t d : localShape(mesh, type.getShape(), toPlanner(layout)))
    n *= double(d);
  return n;
}

double opComputeSeconds(Operation *op, ArrayRef<of::NdSbpAttr> operands,
                        ArrayRef<of::NdSbpAttr> results, const Mesh &mesh,
                        const Device &device) {
  double bytes = 0, elements = 0;
  for (auto [value, layout] : llvm::zip(op->getResults(), results)) {
    double n = localElements(mesh, value, layout);
    elements += n;
    bytes += n * elementBytes(value.getType());
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(op->getOperands(), operands))) {
    auto [value, layout] = pair;
    double read = localElements(mesh, value, layout) * elementBytes(value.getType());
    // A lookup reads the rows it gathers, not its whole table: an
    // embedding's 50304x1600 table priced in full made a GPT's token
    // lookup look 8x cheaper on a slice of its columns (then an all-to-all
    // of every activation back to the batch split).
    if (i == 0 && isa<of::GatherOp>(op))
      read = std::min(read, elements * elementBytes(value.getType()));
    bytes += read;
  }
  // Contractions: 2 flops per multiply-add over the local contracted size,
  // which the local operand shapes carry.
  double flops = elements;
  auto localShapeOf = [&](Value v, of::NdSbpAttr layout) {
    return localShape(mesh, cast<RankedTensorType>(v.getType()).getShape(), toPlanner(layout));
  };
  auto contracted = [&](unsigned operand, int64_t dim) {
    SmallVector<int64_t> shape = localShapeOf(op->getOperand(operand), operands[operand]);
    return double(shape[dim < 0 ? dim + int64_t(shape.size()) : dim]);
  };
  // A convolution and both its gradients multiply each element of the
  // forward output (or its gradient) with one filter's (C/groups) x kH x kW
  // elements: the filter's local size over its local output channels.
  auto convFlops = [&](Value output, of::NdSbpAttr outputLayout, Value filter,
                       of::NdSbpAttr filterLayout) {
    SmallVector<int64_t> f = localShapeOf(filter, filterLayout);
    double perOutput = 1;
    for (int64_t d : ArrayRef<int64_t>(f).drop_front())
      perOutput *= double(d);
    return 2 * localElements(mesh, output, outputLayout) * perOutput;
  };
  // Convolutions run at their own (fp32) rate.
  Device rates = device;
  if (device.convFlopsPerSecond > 0 &&
      isa<of::Conv2dOp, of::Conv2dBackwardInputOp, of::Conv2dBackwardFilterOp>(op))
    rates.flopsPerSecond = device.convFlopsPerSecond;
  if (auto mm = dyn_cast<of::MatmulOp>(op))
    flops = 2 * elements * contracted(0, mm.getTransposeA() ? -2 : -1);
  else if (auto gemm = dyn_cast<of::GemmOp>(op))
    flops = 2 * elements * contracted(0, gemm.getTransposeA() ? 0 : 1);
  else if (auto c = dyn_cast<of::Conv2dOp>(op))
    flops = convFlops(c.getOutput(), results[0], c.getWeight(), operands[1]);
  else if (auto c = dyn_cast<of::Conv2dBackwardInputOp>(op))
    flops = convFlops(c.getGradOutput(), operands[0], c.getWeight(), operands[1]);
  else if (auto c = dyn_cast<of::Conv2dBackwardFilterOp>(op))
    flops = convFlops(c.getGradOutput(), operands[0], c.getGradFilter(), results[0]);
  return computeSeconds(rates, flops, bytes);
}

llvm::DenseSet<Value> valuesOnlyFeedingState(FunctionOpInterface fn) {
  llvm::DenseSet<Value> only;
  if (fn.isExternal())
    return only;
  Block &body = fn.getFunctionBody().front();
  // The update's math: elementwise ops, views, the reductions of a
  // gradient norm, and collectives. Not contractions and the other ops of
  // the backward pass, every value of which also ends in variable writes
  // (through the gradients) but is waited for by the rest of that pass.
  auto updateMath = [](Operation *op) {
    return op->hasTrait<OpTrait::Elementwise>() ||
           isa<of::AddOp, of::SubOp, of::MulOp, of::DivOp, of::PowOp, of::MaxOp, of::MinOp,
               of::CompareOp, of::WhereOp, of::ReshapeOp, of::FlattenOp, of::TransposeOp,
               of::SqueezeOp, of::UnsqueezeOp, of::ExpandOp, of::ReduceSumOp,
               of::ReduceMeanOp, of::ReduceMaxOp, of::ConcatOp, of::SliceOp>(op) ||
           of::getBoxingMeshAxis(op).has_value();
  };
  // Users come after their operands in the body: one walk from its end.
  auto feedsState = [&](Operation *user) {
    if (isa<of::WriteVariableOp>(user))
      return true;
    return user->getBlock() == &body && user->getNumResults() > 0 && updateMath(user) &&
           llvm::all_of(user->getResults(), [&](Value r) { return only.contains(r); });
  };
  for (Operation &op : llvm::reverse(body))
    for (Value result : op.getResults())
      if (!result.use_empty() && llvm::all_of(result.getUsers(), feedsState))
        only.insert(result);
  return only;
}

} // namespace oflow::sbp
