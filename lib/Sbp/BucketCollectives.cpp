//===- BucketCollectives.cpp - fuse all-reduces into buckets --------------===//
//
// Data parallelism all-reduces every gradient; one collective per weight
// pays the latency once per weight. Like PyTorch DDP's buckets, all-reduces
// on the same mesh axis are fused into few large ones. Each all-reduce is
// first hoisted to just after its operand is computed; a bucket then closes
// when it is full or when a member's result is needed before the next
// candidate is ready, and the fused op takes the place of the bucket's last
// member: it is issued as soon as its last gradient is ready, and every rank
// issues the same buckets in the same order.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "oflow/Sbp/SbpConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace oflow {
#define GEN_PASS_DEF_BUCKETCOLLECTIVES
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

/// Bytes of the piece of `value` each rank holds.
static double localBytes(const sbp::Mesh &mesh, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  of::NdSbpAttr layout = sbp::getValueSbp(value);
  SmallVector<int64_t> shape(type.getShape());
  if (layout && !of::isPartitioned(value.getParentBlock()->getParentOp()))
    shape = sbp::localShape(mesh, type.getShape(), sbp::toPlanner(layout));
  double n = sbp::elementBytes(type);
  for (int64_t d : shape)
    n *= double(d);
  return n;
}

/// Whether `value` is converted along `axis` with nothing before it (every
/// dim before it 1): each rank's piece is then one run of elements, as a
/// bucket packs it (a bias gradient reduced as 1x1xN is one).
static bool leadingAxis(Value value, int64_t axis) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  return llvm::all_of(shape.take_front(axis), [](int64_t d) { return d == 1; });
}

/// Whether `gather` brings a ZeRO-1/2 updated parameter whole only to store
/// it: its results are stored, or gathered on the next mesh axis by gathers
/// that are such gathers themselves (on 8x4, a node's piece first).
static bool gathersOnlyToStore(of::AllGatherOp gather) {
  return llvm::all_of(gather->getUsers(), [](Operation *user) {
    if (isa<of::WriteVariableOp>(user))
      return true;
    auto next = dyn_cast<of::AllGatherOp>(user);
    return next && gathersOnlyToStore(next);
  });
}

/// The member of `bucket` (non-empty) that comes last in its block now:
/// fusing an earlier bucket may have moved members after later ones (their
/// users move after the fused op, and an all-reduce on another mesh axis
/// can be such a user), so the order of `bucket` is not block order.
static Operation *lastMember(ArrayRef<Operation *> bucket) {
  Operation *last = bucket.front();
  for (Operation *op : bucket)
    if (last->isBeforeInBlock(op))
      last = op;
  return last;
}

/// What is computed from a bucket's members (then it cannot join the
/// bucket: the bucket would wait for itself). Each member's users are
/// followed forward once, so a bucket's dependents cost one walk over what
/// follows its members, not one walk back per candidate.
class Dependents {
public:
  void add(Operation *member) {
    SmallVector<Operation *> work = {member};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!reached.insert(op).second)
        continue;
      for (Operation *user : op->getUsers())
        if (Operation *top = op->getBlock()->findAncestorOpInBlock(*user))
          work.push_back(top);
    }
  }
  bool contains(Value value) const {
    Operation *def = value.getDefiningOp();
    return def && reached.contains(def);
  }
  void clear() { reached.clear(); }

private:
  DenseSet<Operation *> reached;
};

/// Marks oflow-regather-for-backward's copies.
constexpr StringLiteral kRegatherAttr = "oflow.regather";

/// One collective of `bucket`'s kind (all members alike but for their
/// operand) over all their operands, built at `builder`.
static Operation *createFused(OpBuilder &builder, ArrayRef<Operation *> bucket) {
  Operation *proto = bucket.front();
  SmallVector<Value> inputs;
  SmallVector<Type> types;
  SmallVector<Attribute> layouts;
  for (Operation *op : bucket) {
    inputs.push_back(op->getOperand(0));
    types.push_back(op->getResult(0).getType());
    if (auto sbps = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName))
      layouts.push_back(sbps[0]);
  }
  Location loc = proto->getLoc();
  Operation *fused;
  if (auto reduce = dyn_cast<of::AllReduceOp>(proto))
    fused = of::AllReduceOp::create(builder, loc, types, inputs, reduce.getMeshAxis(),
                                    reduce.getMax());
  else if (auto scatter = dyn_cast<of::ReduceScatterOp>(proto))
    fused = of::ReduceScatterOp::create(builder, loc, types, inputs, scatter.getMeshAxis(),
                                        scatter.getAxis(), scatter.getMax());
  else {
    auto gather = cast<of::AllGatherOp>(proto);
    fused = of::AllGatherOp::create(builder, loc, types, inputs, gather.getMeshAxis(),
                                    gather.getAxis());
  }
  if (layouts.size() == bucket.size())
    fused->setAttr(of::OFlowDialect::kSbpAttrName, builder.getArrayAttr(layouts));
  // The backward pass's own gathers (oflow-regather-for-backward) stay
  // apart from the forward's: CSE would merge equal buckets.
  if (Attribute regather = proto->getAttr(kRegatherAttr))
    fused->setAttr(kRegatherAttr, regather);
  return fused;
}

static void replaceMembers(ArrayRef<Operation *> bucket, Operation *fused) {
  for (auto [i, op] : llvm::enumerate(bucket)) {
    op->getResult(0).replaceAllUsesWith(fused->getResult(i));
    op->erase();
  }
}

/// Replaces `bucket` (two or more single-operand reductions) by one at the
/// place of the member that comes last in the block; the members' users that
/// come earlier (and what depends on them) move after it, in order.
static void fuseAtLast(SmallVector<Operation *> bucket) {
  Operation *last = lastMember(bucket);
  llvm::SetVector<Operation *> toMove;
  SmallVector<Operation *> work;
  for (Operation *op : bucket)
    for (Operation *user : op->getUsers())
      work.push_back(user);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!op->isBeforeInBlock(last) || !toMove.insert(op))
      continue;
    for (Operation *user : op->getUsers())
      work.push_back(user);
  }
  SmallVector<Operation *> moving = toMove.takeVector();
  llvm::sort(moving, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  OpBuilder builder(last);
  Operation *fused = createFused(builder, bucket);
  Operation *cursor = fused;
  for (Operation *op : moving) {
    op->moveAfter(cursor);
    cursor = op;
  }
  replaceMembers(bucket, fused);
}

/// Replaces `bucket` (weight all-gathers whose chains from their variable
/// were moved before the first member) by one at the first member's place:
/// every member's weight is gathered where the first is needed.
static Operation *fuseAtFirst(SmallVector<Operation *> bucket, Operation *first) {
  OpBuilder builder(first);
  // A weight gathered twice in the bucket is gathered once.
  SmallVector<Operation *> unique;
  DenseMap<Value, Operation *> byOperand;
  for (Operation *op : bucket) {
    auto [it, inserted] = byOperand.try_emplace(op->getOperand(0), op);
    if (inserted) {
      unique.push_back(op);
      continue;
    }
    op->getResult(0).replaceAllUsesWith(it->second->getResult(0));
    op->erase();
  }
  if (unique.size() == 1)
    return nullptr;
  Operation *fused = createFused(builder, unique);
  replaceMembers(unique, fused);
  return fused;
}

namespace {
/// Members of gather and scatter buckets: pieces of at most 1 MiB (larger
/// ones pay their latency once for many bytes) and at most a quarter of
/// their bucket's limit.
constexpr double kLargestSmallMember = 1024 * 1024;

/// A gather or scatter bucket keeps whole what its members would have
/// kept whole one at a time (the gathered weights from the first member's
/// use, the unreduced gradients until the last one's): at most as many
/// bytes as the largest single piece of its kind in the function (which
/// the plan holds whole anyway), and at most `bucket-mb`.
struct BucketLimits {
  double bucket, member;
};
BucketLimits limitsFor(double bucketMb, double largest) {
  double bucket = std::min(bucketMb * 1024 * 1024, largest);
  return {bucket, std::min(kLargestSmallMember, bucket / 4)};
}

/// A reduction's member limit on `meshAxis`: besides 1 MiB, any piece that
/// moves in at most two of the link's latencies (bucketing it saves at
/// least a third of its cost): 4 MB on InfiniBand (46 us, 46 GB/s), where
/// ZeRO's per-weight scatters and gathers are latency-bound; still at most
/// a quarter of the bucket.
double memberLimit(const BucketLimits &limits, const sbp::Mesh &mesh, int64_t meshAxis) {
  sbp::Link link = mesh.link(meshAxis);
  double latencyBytes = 2 * link.alphaSeconds * link.bytesPerSecond;
  return std::min(limits.bucket / 4, std::max(limits.member, latencyBytes));
}

/// The ops from a variable's read to the weight all-gather `gather` (the
/// read first): views and gathers of one operand each, or of a bucket
/// (the gathers on an earlier mesh axis); empty if `gather` is not such a
/// gather.
SmallVector<Operation *> weightChain(of::AllGatherOp gather) {
  SmallVector<Operation *> chain = {gather};
  Value value = gather.getInput();
  for (int depth = 0; depth < 6; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != gather->getBlock())
      return {};
    chain.push_back(def);
    if (isa<of::ReadVariableOp>(def)) {
      std::reverse(chain.begin(), chain.end());
      return chain;
    }
    if (isa<of::AllGatherOp>(def)) {
      value = def->getOperand(cast<OpResult>(value).getResultNumber());
      continue;
    }
    if (def->getNumOperands() != 1 || def->getNumResults() != 1 || def->getNumRegions() ||
        !isMemoryEffectFree(def))
      return {};
    value = def->getOperand(0);
  }
  return {};
}

struct BucketCollectives
    : ::oflow::impl::BucketCollectivesBase<BucketCollectives> {
  using BucketCollectivesBase::BucketCollectivesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto meshAttr =
        module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!meshAttr || bucketMb <= 0)
      return;
    sbp::Mesh mesh = sbp::toPlanner(meshAttr);
    limit = bucketMb * 1024 * 1024;
    // Under --micro-batches, oflow-unroll-micro-batches gives each
    // micro-batch its own scatters and gathers, one operand each.
    bool pieces = !sbp::microBatchAxis(meshAttr);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      bucketReductions<of::AllReduceOp>(fn, mesh, [](Operation *op) {
        return std::make_tuple(int64_t(cast<of::AllReduceOp>(op).getMeshAxis()), int64_t(-1),
                               cast<of::AllReduceOp>(op).getMax());
      });
      if (!pieces)
        continue;
      bucketReductions<of::ReduceScatterOp>(fn, mesh, [](Operation *op) {
        auto scatter = cast<of::ReduceScatterOp>(op);
        return std::make_tuple(int64_t(scatter.getMeshAxis()), int64_t(scatter.getAxis()),
                               scatter.getMax());
      });
      // A chain of gathers over several mesh axes: the second axis's
      // gathers read the first's results, which are bucketed by then.
      for (int64_t round = 0; round < mesh.rank(); ++round)
        bucketWeightGathers(fn, mesh);
      // ZeRO-1/2's updated parameters, gathered whole only to be stored,
      // and gradients gathered for the update (reduce-scattered in a node,
      // reduced across nodes, gathered: a two-axis all-reduce): as the
      // reductions, issued once the bucket's last member is ready.
      DenseSet<Value> forState = sbp::valuesOnlyFeedingState(fn);
      bucketReductions<of::AllGatherOp>(
          fn, mesh,
          [](Operation *op) {
            auto gather = cast<of::AllGatherOp>(op);
            return std::make_tuple(int64_t(gather.getMeshAxis()), int64_t(gather.getAxis()),
                                   false);
          },
          [&](of::AllGatherOp gather) {
            return gathersOnlyToStore(gather) || forState.contains(gather.getOutput());
          });
    }
  }

private:
  using Key = std::tuple<int64_t, int64_t, bool, const void *>;
  double limit = 0;

  /// All-reduces (any size), and reduce-scatters and gathers of small pieces
  /// (memberLimit; along any axis: the lowering packs each rank's piece of
  /// a member into one run): each is first hoisted to just after its
  /// operand is computed, then buckets form in program order and are
  /// issued at their last member.
  template <typename OpT, typename KeyFn>
  void bucketReductions(func::FuncOp fn, const sbp::Mesh &mesh, KeyFn keyOf,
                        llvm::function_ref<bool(OpT)> accept = {}) {
    constexpr bool kAllReduce = std::is_same_v<OpT, of::AllReduceOp>;
    BucketLimits limits{limit, 0};
    if constexpr (!kAllReduce) {
      double largest = 0;
      fn.walk([&](OpT op) {
        if (!accept || accept(op))
          for (Value input : op->getOperands())
            largest = std::max(largest, localBytes(mesh, input));
      });
      limits = limitsFor(bucketMb, largest);
    }
    SmallVector<Operation *> candidates;
    fn.walk([&](OpT op) {
      if (op->getNumOperands() != 1 || (accept && !accept(op)))
        return;
      if constexpr (!kAllReduce)
        if (localBytes(mesh, op->getOperand(0)) > memberLimit(limits, mesh, op.getMeshAxis()))
          return;
      candidates.push_back(op);
    });
    // Issue each as soon as its operand exists.
    for (Operation *op : candidates) {
      Value input = op->getOperand(0);
      if (Operation *def = input.getDefiningOp())
        op->moveAfter(def);
      else
        op->moveBefore(&fn.front().front());
    }
    llvm::sort(candidates, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    // Buckets per (mesh axis, tensor axis, reduction, element type), in
    // program order.
    std::map<Key, SmallVector<Operation *>> open;
    std::map<Key, double> openBytes;
    // What each open bucket's members reach; rebuilt after a fusion, which
    // moves and replaces ops (the flush below checks again exactly).
    std::map<Key, Dependents> reach;
    auto rebuild = [&] {
      for (auto &[key, members] : open) {
        reach[key].clear();
        for (Operation *member : members)
          reach[key].add(member);
      }
    };
    // Fusing one bucket can make another's member depend on a fellow
    // member: an all-reduce on axis 0 fused with one that reads an axis-1
    // member's result now waits for it, and so does everything computed
    // from the fused op (a loss count feeding the gradients). So the
    // members are checked again when their bucket is fused, in block
    // order, and the bucket is cut where one would wait for itself.
    auto flush = [&](const Key &key) {
      SmallVector<Operation *> members = open[key];
      llvm::sort(members, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      SmallVector<Operation *> part;
      Dependents dependents;
      for (Operation *op : members) {
        if (!part.empty() && dependents.contains(op->getOperand(0))) {
          if (part.size() > 1)
            fuseAtLast(part);
          part.clear();
          dependents.clear();
        }
        part.push_back(op);
        dependents.add(op);
      }
      if (part.size() > 1)
        fuseAtLast(part);
      open[key].clear();
      openBytes[key] = 0;
      rebuild();
    };
    for (Operation *op : candidates) {
      Value input = op->getOperand(0);
      auto [meshAxis, axis, max] = keyOf(op);
      Key key = std::make_tuple(
          meshAxis, axis, max,
          cast<RankedTensorType>(input.getType()).getElementType().getAsOpaquePointer());
      double bytes = localBytes(mesh, input);
      SmallVector<Operation *> &bucket = open[key];
      if (!bucket.empty() && (reach[key].contains(input) ||
                              openBytes[key] + bytes > limits.bucket))
        flush(key);
      open[key].push_back(op);
      openBytes[key] += bytes;
      reach[key].add(op);
    }
    for (auto &entry : open)
      flush(entry.first);
  }

  /// Small weights' all-gathers along their first axis (leadingAxis;
  /// ZeRO-3's biases and norm weights, stored flat): in program order, each joins the open
  /// bucket of its kind, its chain from the variable's read moved before
  /// the bucket's first member, so that one collective gathers them all
  /// where the first is needed (DeepSpeed's coalesced parameter gathers).
  /// A read moves only where no write of its variable lies between.
  void bucketWeightGathers(func::FuncOp fn, const sbp::Mesh &mesh) {
    llvm::StringMap<SmallVector<Operation *>> writes;
    fn.walk([&](of::WriteVariableOp write) {
      writes[write.getVariable()].push_back(write);
    });
    // Block order, kept by hand: ops only move up to just before a bucket's
    // first member, so a moved op (or a fused gather) sits between that
    // member and the op before it. Asking the block instead renumbers it
    // after every move (48 layers on 128x8: seconds).
    DenseMap<Operation *, double> position;
    for (Operation &op : fn.getBody().front())
      position[&op] = position.size();
    auto before = [&](Operation *a, Operation *b) { return position[a] < position[b]; };
    struct Open {
      SmallVector<Operation *> members; // the first one first in the block
      double bytes = 0;
    };
    std::map<Key, Open> open;
    auto flush = [&](const Key &key) {
      SmallVector<Operation *> &members = open[key].members;
      if (members.size() > 1) {
        Operation *first = members.front();
        double at = position[first];
        if (Operation *fused = fuseAtFirst(members, first))
          position[fused] = at - 0.25;
      }
      open[key] = Open();
    };
    double largest = 0;
    SmallVector<std::pair<of::AllGatherOp, double>> gathers;
    fn.walk([&](of::AllGatherOp op) {
      for (Value output : op->getResults())
        largest = std::max(largest, localBytes(mesh, output));
      if (op->getNumOperands() == 1 && leadingAxis(op.getInput(), op.getAxis()))
        gathers.push_back({op, localBytes(mesh, op.getOutput())});
    });
    BucketLimits limits = limitsFor(bucketMb, largest);
    SmallVector<of::AllGatherOp> candidates;
    for (auto [op, bytes] : gathers)
      if (bytes <= limits.member)
        candidates.push_back(op);
    for (of::AllGatherOp gather : candidates) {
      SmallVector<Operation *> chain = weightChain(gather);
      if (chain.empty())
        continue;
      Key key = std::make_tuple(int64_t(gather.getMeshAxis()), int64_t(gather.getAxis()),
                                gather->hasAttr(kRegatherAttr),
                                cast<RankedTensorType>(gather.getInput().getType())
                                    .getElementType()
                                    .getAsOpaquePointer());
      double bytes = localBytes(mesh, gather.getOutput());
      Open &bucket = open[key];
      if (!bucket.members.empty()) {
        Operation *first = bucket.members.front();
        auto read = cast<of::ReadVariableOp>(chain.front());
        bool blocked = bucket.bytes + bytes > limits.bucket;
        if (!blocked && before(first, read))
          for (Operation *write : writes.lookup(read.getVariable()))
            blocked |= before(first, write) && before(write, read);
        // Another bucket in the chain stays where it is, and so does a
        // gather on another mesh axis: it may be a member of a bucket still
        // open, which is fused at that bucket's first member, perhaps after
        // this one's.
        for (Operation *op : llvm::ArrayRef(chain).drop_back())
          blocked |= (op->getNumOperands() > 1 || isa<of::AllGatherOp>(op)) && before(first, op);
        if (blocked) {
          flush(key);
        } else {
          // Before the first member, in chain order.
          for (Operation *op : llvm::ArrayRef(chain).drop_back())
            if (before(first, op)) {
              op->moveBefore(first);
              position[op] = position[first] - 0.5;
            }
        }
      }
      open[key].members.push_back(gather);
      open[key].bytes += bytes;
    }
    for (auto &entry : open)
      flush(entry.first);
  }
};
} // namespace
