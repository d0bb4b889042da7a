//===- UnrollMicroBatches.cpp - the micro-batch mesh axis becomes time ----===//
//
// Gradient accumulation (--micro-batches K) is planned as data parallelism
// over one more mesh axis, the last, whose K "devices" are one device taking
// turns (link kind `sequential`): the planner, boxing and partitioning need
// nothing new, and the step's numbers are the single-batch step's by
// construction. After partitioning every value is one micro-batch's piece;
// this pass runs the K pieces one after the other on the same device:
//
//  - a value that is B on the micro axis is computed once (weights, the
//    optimizer update);
//  - S on the micro axis: K lanes, one per micro-batch (activations);
//  - P on the micro axis: summed (or maxed) as the lanes produce it, so one
//    accumulator lives, not K partial values (gradient accumulation). Ops
//    that take a P value are linear in it, so they run once on the sum. A
//    gradient reduce-scattered over another axis (ZeRO-2/3) is scattered
//    once per lane and its shards summed: the accumulator is a shard.
//
// Boxing on the micro axis becomes local ops: all-reduce is the accumulator
// itself, all-gather a concat of the lanes, local-slice and reduce-scatter
// slices. Collectives on the other axes then run once per step on the
// accumulated gradients. Last, the ops are ordered lane by lane (a lane's
// forward and backward before the next lane's forward, what it reads just
// before), which is what bounds activation memory to one micro-batch.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "oflow/Sbp/SbpConversions.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

namespace oflow {
#define GEN_PASS_DEF_UNROLLMICROBATCHES
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

namespace {

/// `layout` without the micro-batch axis; on a mesh of that axis alone, the
/// one-device layout [B].
of::NdSbpAttr dropMicro(of::NdSbpAttr layout, int64_t axis) {
  if (layout.getNumMeshAxes() == 1)
    return sbp::broadcastNdSbp(layout.getContext(), 1);
  return sbp::dropMeshAxis(layout, axis);
}

/// What one value of the partitioned program became.
struct Unrolled {
  enum Kind { Shared, Accumulated, Lanes } kind = Shared;
  Value value;              // Shared, Accumulated (the sum over the lanes)
  SmallVector<Value> lanes; // Lanes: one per micro-batch
};

class Unroller {
public:
  Unroller(func::FuncOp fn, int64_t axis, int64_t count)
      : fn(fn), axis(axis), count(count), laneOps(count) {}

  /// Unrolls the function's ops in place of its originals, then orders them.
  LogicalResult run();

private:
  of::SbpAttr microEntry(Value v) const { return sbp::getValueSbpOnAxis(v, axis); }
  /// The value's layout on the other axes (for the ops made here).
  of::NdSbpAttr restLayout(Value v) const {
    of::NdSbpAttr layout = sbp::getValueSbp(v);
    return layout ? dropMicro(layout, axis) : of::NdSbpAttr();
  }
  void annotate(Operation *op, of::NdSbpAttr layout) {
    if (layout && op->getNumResults() == 1)
      op->setAttr(of::OFlowDialect::kSbpAttrName,
                  ArrayAttr::get(op->getContext(), {layout}));
  }
  void stripAnnotation(Operation *op) {
    auto list = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName);
    if (!list)
      return;
    SmallVector<Attribute> entries;
    for (Attribute a : list)
      entries.push_back(dropMicro(cast<of::NdSbpAttr>(a), axis));
    op->setAttr(of::OFlowDialect::kSbpAttrName, ArrayAttr::get(op->getContext(), entries));
  }
  /// `op` made for lane `lane` (-1: once), to be scheduled with its lane.
  Operation *record(Operation *op, int64_t lane) {
    if (lane >= 0)
      laneOps[lane].push_back(op);
    return op;
  }
  Value slice(OpBuilder &b, Location loc, Value whole, int64_t dim, int64_t lane,
              of::NdSbpAttr layout);
  Value concat(OpBuilder &b, Location loc, ArrayRef<Value> lanes, int64_t dim,
               of::NdSbpAttr layout);
  /// `whole` cut along `dim` into one part per lane.
  Unrolled lanesOf(OpBuilder &b, Location loc, Value whole, int64_t dim,
                   of::NdSbpAttr layout);
  /// Adds `lanePartial` (lane `lane`'s P value) into `result`'s accumulator.
  void accumulate(OpBuilder &b, Value result, Value lanePartial, int64_t lane,
                  bool max);
  LogicalResult unrollArguments();
  LogicalResult unrollOp(Operation *op);
  LogicalResult unrollMicroBoxing(Operation *op);
  LogicalResult unrollShardOffset(of::ShardOffsetOp op);
  LogicalResult unrollGeneric(Operation *op);
  LogicalResult unrollBucket(of::AllReduceOp op);
  LogicalResult unrollReturn(func::ReturnOp ret);
  void schedule();
  /// The lane each op made for one lane belongs to.
  DenseMap<Operation *, int64_t> laneOfOps() const {
    DenseMap<Operation *, int64_t> laneOf;
    for (int64_t k = 0; k < count; ++k)
      for (Operation *op : laneOps[k])
        laneOf[op] = k;
    return laneOf;
  }
  /// Gives each lane its own copy of a weight all-gathered once for
  /// several lanes.
  void gatherWeightsPerLane();
  /// Marks the values that per-micro-batch ops read, directly or through
  /// ops run once (a loss's global count feeds every lane's backward).
  void findValuesFeedingLanes();

  func::FuncOp fn;
  DenseSet<Value> feedsLanes;
  /// Reduce-scatters made once per lane where their input was (see
  /// sbp::scattersEachMicroBatch).
  DenseSet<Operation *> scatteredEarly;
  int64_t axis, count;
  DenseMap<Value, Unrolled> values;
  std::vector<SmallVector<Operation *>> laneOps;
};

Value Unroller::slice(OpBuilder &b, Location loc, Value whole, int64_t dim,
                      int64_t lane, of::NdSbpAttr layout) {
  auto type = cast<RankedTensorType>(whole.getType());
  int64_t piece = type.getDimSize(dim) / count;
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  offsets[dim] = lane * piece;
  sizes[dim] = piece;
  auto op = of::SliceOp::create(b, loc, whole, offsets, sizes, strides);
  annotate(op, layout);
  record(op, lane);
  return op;
}

Unrolled Unroller::lanesOf(OpBuilder &b, Location loc, Value whole, int64_t dim,
                           of::NdSbpAttr layout) {
  Unrolled u{Unrolled::Lanes, {}, {}};
  for (int64_t k = 0; k < count; ++k)
    u.lanes.push_back(slice(b, loc, whole, dim, k, layout));
  return u;
}

Value Unroller::concat(OpBuilder &b, Location loc, ArrayRef<Value> lanes,
                       int64_t dim, of::NdSbpAttr layout) {
  auto op = of::ConcatOp::create(b, loc, lanes, dim);
  annotate(op, layout);
  return op;
}

void Unroller::accumulate(OpBuilder &b, Value result, Value lanePartial,
                          int64_t lane, bool max) {
  Unrolled &u = values[result];
  u.kind = Unrolled::Accumulated;
  if (!u.value) {
    u.value = lanePartial;
    return;
  }
  // The sum so far goes through a barrier that elementwise fusion does not
  // cross (dropped before bufferization): fused, the chain of additions
  // would run at the end, with every lane's partial value alive until then.
  Location loc = result.getLoc();
  auto barrier = bufferization::AllocTensorOp::create(
      b, loc, cast<RankedTensorType>(u.value.getType()), ValueRange{}, u.value);
  barrier->setAttr("oflow_accumulate_barrier", b.getUnitAttr());
  record(barrier, lane);
  Operation *op = max ? of::MaxOp::create(b, loc, barrier, lanePartial).getOperation()
                      : of::AddOp::create(b, loc, barrier, lanePartial).getOperation();
  annotate(op, restLayout(result));
  record(op, lane);
  u.value = op->getResult(0);
}

LogicalResult Unroller::unrollArguments() {
  StringRef sbpName = of::OFlowDialect::kSbpAttrName;
  Block &entry = fn.front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> argTypes;
  for (BlockArgument arg : fn.getArguments()) {
    of::SbpAttr micro = microEntry(arg);
    of::NdSbpAttr layout = fn.getArgAttrOfType<of::NdSbpAttr>(arg.getArgNumber(), sbpName);
    if (layout)
      fn.setArgAttr(arg.getArgNumber(), sbpName, dropMicro(layout, axis));
    if (!micro || micro.isBroadcast()) {
      values[arg] = {Unrolled::Shared, arg, {}};
    } else if (micro.isSplit()) {
      // The whole step's piece of this device; lane k reads the k-th part.
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[micro.getAxis()] *= count;
      arg.setType(RankedTensorType::get(shape, type.getElementType()));
      values[arg] = lanesOf(b, arg.getLoc(), arg, micro.getAxis(),
                            layout ? dropMicro(layout, axis) : nullptr);
    } else {
      return fn.emitError() << "argument " << arg.getArgNumber()
                            << " is partial on the micro-batch axis";
    }
    argTypes.push_back(arg.getType());
  }
  fn.setType(FunctionType::get(fn.getContext(), argTypes, fn.getResultTypes()));
  return success();
}

LogicalResult Unroller::unrollShardOffset(of::ShardOffsetOp op) {
  // The global index of a piece is row-major over `mesh_axes`; the micro
  // axis is the last mesh axis, so it is the least significant: piece
  // (other coordinates) * K + lane.
  ArrayRef<int64_t> meshAxes = op.getMeshAxes();
  if (meshAxes.empty() || meshAxes.back() != axis)
    return op.emitOpError("splits along the micro-batch axis before another mesh axis");
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  SmallVector<int64_t> others(meshAxes.drop_back());
  int64_t piece = op.getPiece();
  Value base;
  if (!others.empty())
    base = of::ShardOffsetOp::create(b, loc, i64, b.getDenseI64ArrayAttr(others),
                                     b.getI64IntegerAttr(piece * count));
  Unrolled u{Unrolled::Lanes, {}, {}};
  for (int64_t k = 0; k < count; ++k) {
    Value lane = of::ConstantOp::create(
        b, loc, DenseElementsAttr::get(i64, b.getI64IntegerAttr(k * piece)));
    record(lane.getDefiningOp(), k);
    if (base)
      lane = record(of::AddOp::create(b, loc, base, lane), k)->getResult(0);
    u.lanes.push_back(lane);
  }
  values[op.getResult()] = std::move(u);
  return success();
}

LogicalResult Unroller::unrollMicroBoxing(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto kindOf = [&](Value v) { return values.lookup(v).kind; };
  auto expect = [&](Value v, Unrolled::Kind kind, StringRef what) -> LogicalResult {
    if (kindOf(v) == kind)
      return success();
    return op->emitOpError("on the micro-batch axis expects ") << what;
  };
  if (auto reduce = dyn_cast<of::AllReduceOp>(op)) {
    // P -> B: the accumulator is the sum.
    for (auto [in, out] : llvm::zip(reduce.getInputs(), reduce.getOutputs())) {
      if (failed(expect(in, Unrolled::Accumulated, "a partial value")))
        return failure();
      values[out] = {Unrolled::Shared, values[in].value, {}};
    }
    return success();
  }
  if (auto scatter = dyn_cast<of::ReduceScatterOp>(op)) {
    if (failed(expect(scatter.getInput(), Unrolled::Accumulated, "a partial value")))
      return failure();
    Value sum = values[scatter.getInput()].value;
    values[scatter.getOutput()] =
        lanesOf(b, loc, sum, scatter.getAxis(), restLayout(scatter.getOutput()));
    return success();
  }
  if (auto gather = dyn_cast<of::AllGatherOp>(op)) {
    if (failed(expect(gather.getInput(), Unrolled::Lanes, "one value per micro-batch")))
      return failure();
    values[gather.getOutput()] = {
        Unrolled::Shared,
        concat(b, loc, values[gather.getInput()].lanes, gather.getAxis(),
               restLayout(gather.getOutput())),
        {}};
    return success();
  }
  if (auto toAll = dyn_cast<of::AllToAllOp>(op)) {
    // S(source) -> S(axis): lane k joins, along `source`, the k-th part
    // along `axis` of every lane.
    if (failed(expect(toAll.getInput(), Unrolled::Lanes, "one value per micro-batch")))
      return failure();
    SmallVector<Value> in = values[toAll.getInput()].lanes;
    Unrolled u{Unrolled::Lanes, {}, {}};
    of::NdSbpAttr inLayout = restLayout(toAll.getInput());
    for (int64_t k = 0; k < count; ++k) {
      SmallVector<Value> parts;
      for (Value lane : in)
        parts.push_back(slice(b, loc, lane, toAll.getAxis(), k, inLayout));
      Value joined = concat(b, loc, parts, toAll.getSourceAxis(),
                            restLayout(toAll.getOutput()));
      record(joined.getDefiningOp(), k);
      u.lanes.push_back(joined);
    }
    values[toAll.getOutput()] = std::move(u);
    return success();
  }
  if (auto local = dyn_cast<of::LocalSliceOp>(op)) {
    if (failed(expect(local.getInput(), Unrolled::Shared, "a whole value")))
      return failure();
    Value whole = values[local.getInput()].value;
    values[local.getOutput()] =
        lanesOf(b, loc, whole, local.getAxis(), restLayout(local.getOutput()));
    return success();
  }
  if (auto toPartial = dyn_cast<of::BroadcastToPartialOp>(op)) {
    // One lane holds the value, the others zero (or, for max, all hold it):
    // either way the accumulated value is the value.
    if (failed(expect(toPartial.getInput(), Unrolled::Shared, "a whole value")))
      return failure();
    values[toPartial.getOutput()] = {Unrolled::Accumulated,
                                     values[toPartial.getInput()].value, {}};
    return success();
  }
  if (auto toPartial = dyn_cast<of::SplitToPartialOp>(op)) {
    // Each lane zero-padded to the whole: their sum is their concatenation.
    if (failed(expect(toPartial.getInput(), Unrolled::Lanes, "one value per micro-batch")))
      return failure();
    values[toPartial.getOutput()] = {
        Unrolled::Accumulated,
        concat(b, loc, values[toPartial.getInput()].lanes, toPartial.getAxis(),
               restLayout(toPartial.getOutput())),
        {}};
    return success();
  }
  return op->emitOpError("is a collective on the micro-batch axis that "
                         "oflow-unroll-micro-batches does not know");
}

LogicalResult Unroller::unrollGeneric(Operation *op) {
  bool anyLanes = false, anyAccumulated = false;
  for (Value v : op->getOperands()) {
    Unrolled::Kind kind = values.lookup(v).kind;
    anyLanes |= kind == Unrolled::Lanes;
    anyAccumulated |= kind == Unrolled::Accumulated;
  }
  if (anyLanes && anyAccumulated)
    return op->emitOpError("mixes per-micro-batch values with values summed over "
                           "the micro-batches");
  OpBuilder b(op);
  if (!anyLanes) {
    // Once: on whole values, or (linear in them) on the accumulated sums.
    IRMapping map;
    for (Value v : op->getOperands())
      map.map(v, values[v].value);
    Operation *copy = b.clone(*op, map);
    stripAnnotation(copy);
    for (auto [old, now] : llvm::zip(op->getResults(), copy->getResults())) {
      of::SbpAttr micro = microEntry(old);
      bool partial = micro && micro.isPartial();
      if (partial != anyAccumulated && micro)
        return op->emitOpError("has a result ")
               << (partial ? "partial" : "not partial")
               << " on the micro-batch axis from operands that are "
               << (anyAccumulated ? "" : "not ") << "partial";
      values[old] = {anyAccumulated ? Unrolled::Accumulated : Unrolled::Shared, now, {}};
    }
    return success();
  }
  // Once per micro-batch.
  // A fresh tensor (oflow-recompute's barrier copies) is one per lane.
  if (!isMemoryEffectFree(op) && !isa<bufferization::AllocTensorOp>(op))
    return op->emitOpError("would run once per micro-batch, but has side effects");
  for (int64_t k = 0; k < count; ++k) {
    IRMapping map;
    for (Value v : op->getOperands()) {
      const Unrolled &u = values[v];
      map.map(v, u.kind == Unrolled::Lanes ? u.lanes[k] : u.value);
    }
    Operation *copy = record(b.clone(*op, map), k);
    stripAnnotation(copy);
    for (auto [old, now] : llvm::zip(op->getResults(), copy->getResults())) {
      of::SbpAttr micro = microEntry(old);
      if (micro && micro.isPartial()) {
        // A sharded gradient: this lane's partial is scattered now and its
        // shard summed, so the accumulator is a shard, not the whole.
        Operation *user = old.hasOneUse() ? *old.getUsers().begin() : nullptr;
        if (user && sbp::scattersEachMicroBatch(user, axis)) {
          auto scatter = cast<of::ReduceScatterOp>(user);
          IRMapping laneMap;
          laneMap.map(old, now);
          Operation *piece = record(b.clone(*scatter, laneMap), k);
          stripAnnotation(piece);
          accumulate(b, scatter.getOutput(), piece->getResult(0), k, scatter.getMax());
          scatteredEarly.insert(scatter);
          continue;
        }
        accumulate(b, old, now, k, micro.getKind() == of::SbpKind::PartialMax);
        continue;
      }
      if (micro && micro.isBroadcast())
        return op->emitOpError("has a result whole on the micro-batch axis "
                               "from per-micro-batch operands");
      Unrolled &u = values[old];
      u.kind = Unrolled::Lanes;
      u.lanes.push_back(now);
    }
  }
  return success();
}

LogicalResult Unroller::unrollReturn(func::ReturnOp ret) {
  StringRef sbpName = of::OFlowDialect::kSbpAttrName;
  OpBuilder b(ret);
  SmallVector<Value> operands;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    const Unrolled &u = values[v];
    auto layout = fn.getResultAttrOfType<of::NdSbpAttr>(i, sbpName);
    if (layout)
      fn.setResultAttr(i, sbpName, dropMicro(layout, axis));
    if (u.kind != Unrolled::Lanes) {
      operands.push_back(u.value);
      continue;
    }
    of::SbpAttr micro = layout ? layout.getEntries()[axis] : of::SbpAttr();
    if (!micro || !micro.isSplit())
      return ret.emitOpError("returns result ") << i << " per micro-batch";
    operands.push_back(concat(b, ret.getLoc(), u.lanes, micro.getAxis(),
                              dropMicro(layout, axis)));
  }
  func::ReturnOp::create(b, ret.getLoc(), operands);
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               ValueRange(operands).getTypes()));
  return success();
}

LogicalResult Unroller::unrollBucket(of::AllReduceOp op) {
  // P -> B on another axis leaves the micro axis's entry as it is: summed
  // (or whole) values in one collective, per-micro-batch ones in one per
  // lane (a bucket may hold both).
  OpBuilder b(op);
  auto layouts = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName);
  auto emit = [&](ArrayRef<unsigned> members, int64_t lane) {
    SmallVector<Value> inputs;
    SmallVector<Type> types;
    SmallVector<Attribute> kept;
    for (unsigned i : members) {
      const Unrolled &u = values[op.getInputs()[i]];
      inputs.push_back(lane >= 0 ? u.lanes[lane] : u.value);
      types.push_back(op.getOutputs()[i].getType());
      if (layouts)
        kept.push_back(dropMicro(cast<of::NdSbpAttr>(layouts[i]), axis));
    }
    auto part = of::AllReduceOp::create(b, op.getLoc(), types, inputs, op.getMeshAxis(),
                                        op.getMax());
    if (layouts)
      part->setAttr(of::OFlowDialect::kSbpAttrName, b.getArrayAttr(kept));
    record(part, lane);
    for (auto [i, now] : llvm::zip(members, part.getOutputs())) {
      Unrolled::Kind kind = values.lookup(op.getInputs()[i]).kind;
      Unrolled &u = values[op.getOutputs()[i]];
      u.kind = kind;
      if (lane >= 0)
        u.lanes.push_back(now);
      else
        u.value = now;
    }
  };
  // What the lanes wait for travels alone: in a bucket with the loss, a
  // loss's count would make every lane's backward wait for every lane's
  // forward (all micro-batches' activations live at once).
  SmallVector<unsigned> once, perLane;
  for (auto [i, v] : llvm::enumerate(op.getInputs())) {
    if (values.lookup(v).kind == Unrolled::Lanes)
      perLane.push_back(i);
    else if (feedsLanes.contains(op.getOutputs()[i]))
      emit({i}, -1);
    else
      once.push_back(i);
  }
  if (!once.empty())
    emit(once, -1);
  if (!perLane.empty())
    for (int64_t k = 0; k < count; ++k)
      emit(perLane, k);
  return success();
}

LogicalResult Unroller::unrollOp(Operation *op) {
  if (scatteredEarly.contains(op))
    return success(); // once per lane, with the lane's partial value
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return unrollReturn(ret);
  if (auto offset = dyn_cast<of::ShardOffsetOp>(op);
      offset && llvm::is_contained(offset.getMeshAxes(), axis))
    return unrollShardOffset(offset);
  if (isa<of::AllReduceOp, of::ReduceScatterOp, of::AllGatherOp, of::AllToAllOp,
          of::LocalSliceOp, of::BroadcastToPartialOp, of::SplitToPartialOp>(op) &&
      op->getAttrOfType<IntegerAttr>("mesh_axis").getInt() == axis)
    return unrollMicroBoxing(op);
  if (auto reduce = dyn_cast<of::AllReduceOp>(op))
    return unrollBucket(reduce);
  return unrollGeneric(op);
}

void Unroller::schedule() {
  Block &block = fn.front();
  SmallVector<Operation *> order;
  DenseSet<Operation *> placed;
  // Places `root` after everything in this block it reads (depth first,
  // without recursion: dependency chains are as long as the program).
  auto place = [&](Operation *root) {
    if (placed.contains(root))
      return;
    SmallVector<std::pair<Operation *, unsigned>> stack = {{root, 0}};
    DenseSet<Operation *> onStack = {root};
    while (!stack.empty()) {
      Operation *op = stack.back().first;
      unsigned i = stack.back().second;
      if (i < op->getNumOperands()) {
        ++stack.back().second;
        Operation *def = op->getOperand(i).getDefiningOp();
        if (def && def->getBlock() == &block && !placed.contains(def) &&
            onStack.insert(def).second)
          stack.push_back({def, 0});
        continue;
      }
      stack.pop_back();
      placed.insert(op);
      order.push_back(op);
    }
  };
  DenseMap<Operation *, int64_t> laneOf = laneOfOps();
  // The last lane each op waits for through ops not placed yet (-1: none).
  DenseMap<Operation *, int64_t> lastLane;
  auto findLastLanes = [&] {
    lastLane.clear();
    for (Operation &op : block) {
      if (placed.contains(&op))
        continue;
      int64_t last = laneOf.lookup_or(&op, -1);
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp(); def && def->getBlock() == &block)
          last = std::max(last, lastLane.lookup_or(def, -1));
      lastLane[&op] = last;
    }
  };
  // First what every lane waits for: values made once from all lanes that
  // lanes read (a mean loss's count of labels feeds each lane's backward),
  // with what they need of each lane (its labels, not its forward).
  findLastLanes();
  for (Operation &op : block)
    if (!laneOf.count(&op) && lastLane.lookup(&op) >= 0 &&
        llvm::any_of(op.getUsers(), [&](Operation *user) { return laneOf.count(user); }))
      place(&op);
  // Then lane by lane. A lane's op that waits for a later lane (one lane's
  // rows of a gradient summed over all lanes) is left to the final sweep,
  // or it would pull that lane in.
  findLastLanes();
  for (int64_t k = 0; k < count; ++k)
    for (Operation *op : laneOps[k])
      if (lastLane.lookup_or(op, -1) <= k)
        place(op);
  for (Operation &op : block)
    place(&op);
  for (Operation *op : order)
    op->moveBefore(&block, block.end());
}

void Unroller::findValuesFeedingLanes() {
  auto splitOnMicro = [&](Value v) {
    of::SbpAttr micro = microEntry(v);
    return micro && micro.isSplit();
  };
  for (Operation &op : llvm::reverse(fn.front())) {
    bool lane = llvm::any_of(op.getOperands(), splitOnMicro) ||
                llvm::any_of(op.getResults(), splitOnMicro) ||
                llvm::any_of(op.getResults(), [&](Value r) { return feedsLanes.contains(r); });
    if (lane)
      for (Value v : op.getOperands())
        feedsLanes.insert(v);
  }
}

LogicalResult Unroller::run() {
  findValuesFeedingLanes();
  SmallVector<Operation *> originals;
  for (Operation &op : fn.front())
    originals.push_back(&op);
  if (failed(unrollArguments()))
    return failure();
  for (Operation *op : originals)
    if (failed(unrollOp(op)))
      return failure();
  for (Operation *op : llvm::reverse(originals)) {
    op->dropAllUses();
    op->erase();
  }
  gatherWeightsPerLane();
  schedule();
  return success();
}

// A split weight's all-gather made once and read by every lane would stay
// whole from the first lane's use to the last one's, across the other
// lanes' forward and backward passes: every gathered weight at once, what
// oflow-regather-for-backward avoids. Each lane gathers its own, as FSDP
// does under gradient accumulation (one all-gather per weight and lane).
void Unroller::gatherWeightsPerLane() {
  DenseMap<Operation *, int64_t> laneOf = laneOfOps();
  SmallVector<Operation *> ops;
  for (Operation &op : fn.front())
    ops.push_back(&op);
  // Last first: the end of a chain is copied before what is inside it.
  for (Operation *op : llvm::reverse(ops)) {
    if (laneOf.count(op) || op->getNumResults() != 1)
      continue;
    Value value = op->getResult(0);
    std::map<int64_t, SmallVector<OpOperand *>> usesByLane;
    for (OpOperand &use : value.getUses())
      if (auto it = laneOf.find(use.getOwner()); it != laneOf.end())
        usesByLane[it->second].push_back(&use);
    if (usesByLane.size() < 2)
      continue;
    SmallVector<Operation *> chain = of::getWeightGatherChain(op);
    if (chain.empty() || llvm::any_of(chain, [&](Operation *c) { return laneOf.count(c); }))
      continue;
    // The first lane keeps the original; the others get copies.
    for (auto &[lane, uses] : llvm::drop_begin(usesByLane)) {
      OpBuilder b(op);
      IRMapping map;
      for (Operation *link : chain)
        record(b.clone(*link, map), lane);
      for (OpOperand *use : uses)
        use->set(map.lookup(value));
    }
  }
}

struct UnrollMicroBatches
    : ::oflow::impl::UnrollMicroBatchesBase<UnrollMicroBatches> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    std::optional<int64_t> axis = sbp::microBatchAxis(mesh);
    if (!axis)
      return;
    if (!of::isPartitioned(module)) {
      module.emitError("oflow-unroll-micro-batches runs after oflow-partition");
      return signalPassFailure();
    }
    int64_t count = mesh.getShape()[*axis];
    for (auto var : module.getOps<of::VariableOp>()) {
      of::NdSbpAttr layout = var.getSbpAttr();
      if (!layout)
        continue;
      if (!layout.getEntries()[*axis].isBroadcast()) {
        var.emitError() << "variable '" << var.getSymName() << "' is "
                        << layout.getEntries()[*axis].str()
                        << " on the micro-batch axis: state is whole on it";
        return signalPassFailure();
      }
      var.setSbpAttr(dropMicro(layout, *axis));
    }
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isDeclaration())
        continue;
      if (failed(Unroller(fn, *axis, count).run()))
        return signalPassFailure();
    }
    module->removeAttr(sbp::kScatterEachMicroBatchAttr); // done: no micro axis left
    // The mesh left: the other axes.
    SmallVector<int64_t> shape(mesh.getShape());
    SmallVector<StringAttr> names(mesh.getAxisNames()), links(mesh.getLinks());
    shape.erase(shape.begin() + *axis);
    if (!names.empty())
      names.erase(names.begin() + *axis);
    links.erase(links.begin() + *axis);
    // `local` is every axis's default: a mesh of only local links (a CPU
    // mesh given micro-batches) reads as it did before.
    if (llvm::all_of(links, [](StringAttr l) { return l.getValue() == "local"; }))
      links.clear();
    if (shape.empty()) {
      shape = {1};
      names.clear();
      links.clear();
    }
    module->setAttr(of::OFlowDialect::kMeshAttrName,
                    of::MeshAttr::get(&getContext(), shape, names, links));
  }
};

} // namespace
