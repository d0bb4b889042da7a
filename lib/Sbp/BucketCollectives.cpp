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

#include "SbpConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

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

/// Replaces `bucket` (two or more single-operand all-reduces) by one.
static void fuse(SmallVector<of::AllReduceOp> bucket) {
  of::AllReduceOp last = bucket.back();
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
      auto flush = [&](const Key &key) {
        if (open[key].size() > 1)
          fuse(open[key]);
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
        // Every member's users must still follow the fused op's place.
        bool usersLater = llvm::all_of(bucket, [&](of::AllReduceOp member) {
          return llvm::all_of(member->getUsers(), [&](Operation *user) {
            return op->isBeforeInBlock(user);
          });
        });
        if (!bucket.empty() && (!usersLater || openBytes[key] + bytes > limit))
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
