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
#include "llvm/ADT/SetVector.h"

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

/// The member of `bucket` (non-empty) that comes first or last in its block
/// now: fusing an earlier bucket may have moved members after later ones
/// (their users move after the fused op, and an all-reduce on another mesh
/// axis can be such a user), so the order of `bucket` is not block order.
static of::AllReduceOp firstMember(ArrayRef<of::AllReduceOp> bucket) {
  of::AllReduceOp first = bucket.front();
  for (of::AllReduceOp op : bucket)
    if (op->isBeforeInBlock(first))
      first = op;
  return first;
}
static of::AllReduceOp lastMember(ArrayRef<of::AllReduceOp> bucket) {
  of::AllReduceOp last = bucket.front();
  for (of::AllReduceOp op : bucket)
    if (last->isBeforeInBlock(op))
      last = op;
  return last;
}

/// Whether `value` is computed from a result of one of `bucket`'s members
/// (then it cannot join the bucket: the bucket would wait for itself).
static bool dependsOnBucket(Value value, ArrayRef<of::AllReduceOp> bucket) {
  if (bucket.empty())
    return false;
  Operation *first = firstMember(bucket);
  llvm::SmallPtrSet<Operation *, 8> members;
  for (of::AllReduceOp op : bucket)
    members.insert(op);
  llvm::SmallPtrSet<Operation *, 32> seen;
  SmallVector<Operation *> work;
  if (Operation *def = value.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second || op->getBlock() != first->getBlock() ||
        op->isBeforeInBlock(first))
      continue;
    if (members.contains(op))
      return true;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  return false;
}

/// Replaces `bucket` (two or more single-operand all-reduces) by one at the
/// place of the member that comes last in the block; the members' users that
/// come earlier (and what depends on them) move after it, in order.
static void fuse(SmallVector<of::AllReduceOp> bucket) {
  of::AllReduceOp last = lastMember(bucket);
  llvm::SetVector<Operation *> toMove;
  SmallVector<Operation *> work;
  for (of::AllReduceOp op : bucket)
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
  SmallVector<Value> inputs;
  SmallVector<Type> types;
  SmallVector<Attribute> layouts;
  for (of::AllReduceOp &op : bucket) {
    inputs.push_back(op.getInputs()[0]);
    types.push_back(op.getOutputs()[0].getType());
    if (auto sbps = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName))
      layouts.push_back(sbps[0]);
  }
  auto fused = of::AllReduceOp::create(builder, last.getLoc(), types, inputs,
                                       last.getMeshAxis(), last.getMax());
  if (layouts.size() == bucket.size())
    fused->setAttr(of::OFlowDialect::kSbpAttrName,
                   builder.getArrayAttr(layouts));
  Operation *cursor = fused;
  for (Operation *op : moving) {
    op->moveAfter(cursor);
    cursor = op;
  }
  for (auto [i, op] : llvm::enumerate(bucket)) {
    op.getOutputs()[0].replaceAllUsesWith(fused.getOutputs()[i]);
    op.erase();
  }
}

namespace {
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
    double limit = bucketMb * 1024 * 1024;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      SmallVector<of::AllReduceOp> candidates;
      fn.walk([&](of::AllReduceOp op) {
        if (op.getInputs().size() == 1)
          candidates.push_back(op);
      });
      // Issue each as soon as its operand exists.
      for (of::AllReduceOp op : candidates) {
        Value input = op.getInputs()[0];
        if (Operation *def = input.getDefiningOp())
          op->moveAfter(def);
        else
          op->moveBefore(&fn.front().front());
      }
      llvm::sort(candidates, [](of::AllReduceOp a, of::AllReduceOp b) {
        return a->isBeforeInBlock(b);
      });
      // Buckets per (mesh axis, reduction, element type), in program order.
      using Key = std::tuple<int64_t, bool, const void *>;
      std::map<Key, SmallVector<of::AllReduceOp>> open;
      std::map<Key, double> openBytes;
      // Fusing one bucket can make another's member depend on a fellow
      // member: an all-reduce on axis 0 fused with one that reads an axis-1
      // member's result now waits for it, and so does everything computed
      // from the fused op (a loss count feeding the gradients). So the
      // members are checked again when their bucket is fused, in block
      // order, and the bucket is cut where one would wait for itself.
      auto flush = [&](const Key &key) {
        SmallVector<of::AllReduceOp> members = open[key];
        llvm::sort(members, [](of::AllReduceOp a, of::AllReduceOp b) {
          return a->isBeforeInBlock(b);
        });
        SmallVector<of::AllReduceOp> part;
        for (of::AllReduceOp op : members) {
          if (!part.empty() && dependsOnBucket(op.getInputs()[0], part)) {
            if (part.size() > 1)
              fuse(part);
            part.clear();
          }
          part.push_back(op);
        }
        if (part.size() > 1)
          fuse(part);
        open[key].clear();
        openBytes[key] = 0;
      };
      for (of::AllReduceOp op : candidates) {
        Value input = op.getInputs()[0];
        Key key = std::make_tuple(
            int64_t(op.getMeshAxis()), op.getMax(),
            cast<RankedTensorType>(input.getType()).getElementType().getAsOpaquePointer());
        double bytes = localBytes(mesh, input);
        SmallVector<of::AllReduceOp> &bucket = open[key];
        if (!bucket.empty() && (dependsOnBucket(input, bucket) ||
                                openBytes[key] + bytes > limit))
          flush(key);
        open[key].push_back(op);
        openBytes[key] += bytes;
      }
      for (auto &entry : open)
        flush(entry.first);
    }
  }
};
} // namespace
