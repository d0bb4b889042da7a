//===- MergeSiblingMatmuls.cpp - the oflow-merge-sibling-matmuls pass -----===//
//
// A transformer layer multiplies its normalised input by three weights (q, k
// and v): three cuBLASLt calls forward, and after autodiff three input
// gradients summed and three weight gradients, nine calls in all, each of
// 8192x768x768 for GPT-2 small. One matmul by the joined weights is one call
// forward, and autodiff then gives one call for the input gradient (the
// reduction runs over the joined extent) and one for the joined weight
// gradient: three calls, and no partial input gradients to add. XLA's
// DotMerger does the same for dots sharing an operand. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include <map>

namespace oflow {
#define GEN_PASS_DEF_OFLOWMERGESIBLINGMATMULS
#include "oflow/Conversion/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow {
namespace {

/// How a sibling's weight is stored and read.
struct Sibling {
  of::MatmulOp op;
  /// The weight as stored: [N, K] when `rowsAreN` (read through a 2-D
  /// transpose or with transpose_b), else [K, N].
  Value stored;
  bool rowsAreN = false;
  /// The transpose the matmul read the weight through, if any.
  of::TransposeOp transpose;
};

std::optional<Sibling> asSibling(of::MatmulOp op) {
  if (op.getTransposeA())
    return std::nullopt;
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  if (rhs.getRank() != 2 || lhs.getRank() < 2 || !rhs.hasStaticShape())
    return std::nullopt;
  Sibling s{op, op.getRhs(), op.getTransposeB(), nullptr};
  if (auto t = op.getRhs().getDefiningOp<of::TransposeOp>();
      t && !op.getTransposeB() && t.getPerm() == ArrayRef<int64_t>{1, 0}) {
    s.stored = t.getInput();
    s.rowsAreN = true;
    s.transpose = t;
  }
  return s;
}

/// What siblings must share: the left operand, the weight's storage, its
/// element type and reduction extent, and the result's element type.
struct GroupKey {
  Value lhs;
  bool rowsAreN;
  Type weightElement, resultElement;
  int64_t k;
  bool operator<(const GroupKey &o) const {
    auto tie = [](const GroupKey &g) {
      return std::make_tuple(g.lhs.getAsOpaquePointer(), g.rowsAreN,
                             g.weightElement.getAsOpaquePointer(),
                             g.resultElement.getAsOpaquePointer(), g.k);
    };
    return tie(*this) < tie(o);
  }
};

struct MergeSiblingMatmulsPass
    : impl::OFlowMergeSiblingMatmulsBase<MergeSiblingMatmulsPass> {
  using OFlowMergeSiblingMatmulsBase::OFlowMergeSiblingMatmulsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
        mesh && mesh.getNumDevices() != 1)
      return;
    // Groups in program order, per block (siblings never cross blocks).
    std::map<std::pair<Block *, GroupKey>, SmallVector<Sibling>> groups;
    SmallVector<std::pair<Block *, GroupKey>> order;
    module.walk([&](of::MatmulOp op) {
      std::optional<Sibling> s = asSibling(op);
      if (!s)
        return;
      auto stored = cast<RankedTensorType>(s->stored.getType());
      GroupKey key{op.getLhs(), s->rowsAreN, stored.getElementType(),
                   getElementTypeOrSelf(op.getType()),
                   stored.getDimSize(s->rowsAreN ? 1 : 0)};
      auto slot = std::make_pair(op->getBlock(), key);
      auto [it, inserted] = groups.try_emplace(slot);
      if (inserted)
        order.push_back(slot);
      it->second.push_back(*s);
    });
    DominanceInfo dominance(module);
    for (auto &slot : order)
      merge(groups[slot], dominance);
  }

  /// Joins `siblings` (program order) into one matmul at the first one;
  /// those whose weight is defined later stay as they are.
  void merge(SmallVector<Sibling> siblings, DominanceInfo &dominance) {
    if (siblings.size() < 2)
      return;
    Operation *first = siblings.front().op;
    SmallVector<Sibling> members;
    for (Sibling &s : siblings)
      if (dominance.properlyDominates(s.stored, first))
        members.push_back(s);
    if (members.size() < 2)
      return;
    bool rowsAreN = members.front().rowsAreN;
    int64_t nAxis = rowsAreN ? 0 : 1;
    SmallVector<Value> weights;
    SmallVector<int64_t> sizes;
    for (Sibling &s : members) {
      weights.push_back(s.stored);
      sizes.push_back(cast<RankedTensorType>(s.stored.getType()).getDimSize(nAxis));
    }
    OpBuilder b(first);
    Location loc = b.getFusedLoc(llvm::to_vector(
        llvm::map_range(members, [](Sibling &s) { return s.op.getLoc(); })));
    Value joined = of::ConcatOp::create(b, loc, weights, nAxis);
    // Stored [N, K]: the GEMM reads the joined weight transposed, so the
    // weight gradient comes out [N, K] too and its pieces are contiguous.
    auto product = of::MatmulOp::create(b, loc, members.front().op.getLhs(), joined,
                                        UnitAttr(),
                                        rowsAreN ? b.getUnitAttr() : UnitAttr());
    int64_t lastAxis = cast<RankedTensorType>(product.getType()).getRank() - 1;
    auto pieces = of::SplitOp::create(b, loc, product.getOutput(), lastAxis, sizes);
    for (auto [s, piece] : llvm::zip(members, pieces.getOutputs())) {
      s.op.getResult().replaceAllUsesWith(piece);
      s.op->erase();
      if (s.transpose && s.transpose->use_empty())
        s.transpose->erase();
    }
  }
};

} // namespace
} // namespace oflow
