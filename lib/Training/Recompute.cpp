//===- Recompute.cpp - activation recomputation on the training graph -----===//
//
// See Passes.td. Each entry is one block: the forward ops, the op that
// reduces an activation to the loss, then the backward ops (and the
// optimizer), in that order. A forward value read in the backward part is
// live from its definition to its last backward use, across the peak at the
// forward/backward boundary; a copy computed right before its first backward
// use, from values live there anyway, lets the original die in the forward.
//
//===----------------------------------------------------------------------===//
#include "oflow/Training/Passes.h"

#include "OFlow/OFlowOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

namespace oflow {
#define GEN_PASS_DEF_RECOMPUTE
#include "oflow/Training/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

enum class Kind { Never, Cheap, Gemm };

/// What recomputing `op` costs, by kind: elementwise ops, views, copies and
/// normalisations are cheap in FLOPs; GEMMs are not; the rest (random,
/// stateful, reductions, collectives, variables) is never recomputed.
Kind kindOf(Operation *op) {
  if (!isa<mlir::oflow::OFlowDialect>(op->getDialect()) || op->getNumRegions() ||
      op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return Kind::Never;
  static const llvm::StringSet<> cheap = {
      "neg",     "exp",       "log",         "sqrt",      "rsqrt",   "reciprocal",
      "tanh",    "sigmoid",   "relu",        "erf",       "abs",     "not",
      "gelu",    "add",       "sub",         "mul",       "div",     "pow",
      "max",     "min",       "compare",     "where",     "cast",    "softmax",
      "log_softmax", "layer_norm", "reshape", "flatten", "transpose", "squeeze",
      "unsqueeze", "expand",  "concat",      "slice",     "split",   "gather",
      "trilu"};
  static const llvm::StringSet<> gemm = {"matmul", "gemm", "conv2d"};
  StringRef name = op->getName().stripDialect();
  if (cheap.contains(name))
    return Kind::Cheap;
  if (gemm.contains(name))
    return Kind::Gemm;
  return Kind::Never;
}

int64_t bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

int64_t numElements(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// The FLOPs of recomputing `op`: 2 x outputs x the contraction length for
/// GEMMs and convolutions, a few per output for the rest.
int64_t flopsOf(Operation *op) {
  int64_t out = 0;
  for (Value result : op->getResults())
    out += numElements(result);
  if (kindOf(op) != Kind::Gemm || op->getNumOperands() < 2)
    return 8 * out;
  auto a = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  if (!a || !w || a.getRank() < 2 || w.getRank() < 1)
    return 8 * out;
  int64_t k;
  if (op->getName().stripDialect() == "conv2d")
    k = w.getNumElements() / std::max<int64_t>(1, w.getDimSize(0));
  else
    k = op->hasAttr("transpose_a") ? a.getDimSize(a.getRank() - 2)
                                   : a.getDimSize(a.getRank() - 1);
  return 2 * out * k;
}

/// Selective recomputation's limit: FLOPs recomputed per byte of activation
/// freed. Elementwise chains are a few FLOPs per byte, attention's scores
/// and probabilities (QK^T from q and k, which backward keeps anyway) half
/// the head size, a GEMM with a weight half the model width: the limit
/// takes the first two and leaves weight GEMMs of real models to `all`.
constexpr int64_t kSelectiveFlopsPerByte = 128;

bool isScalar(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 0;
}

class EntryRecomputer {
public:
  EntryRecomputer(func::FuncOp func, Kind allowed, const llvm::Regex *names)
      : block(func.getBody().front()), allowed(allowed), names(names) {
    int64_t i = 0;
    for (Operation &op : block)
      pos[&op] = kSpacing * ++i;
  }

  /// The position of the last op that reduces an activation to the loss,
  /// or nullopt when the entry returns no loss.
  std::optional<int64_t> lossBoundary(func::FuncOp func) {
    if (Operation *boundary = mlir::oflow::getLossBoundary(func))
      return pos.lookup(boundary);
    return std::nullopt;
  }

  /// Ops copied, their FLOPs and the bytes they write (this device's).
  int64_t copiedOps = 0, copiedFlops = 0, copiedBytes = 0;

  /// Recomputes, last forward op first, every root whose backward uses can
  /// read a copy. Returns the number of roots recomputed.
  int64_t run(int64_t boundary) {
    SmallVector<Operation *> forward;
    for (Operation &op : block)
      if (pos.lookup(&op) < boundary)
        forward.push_back(&op);
    int64_t count = 0;
    for (Operation *op : llvm::reverse(forward))
      if (isRoot(op) && recompute(op, boundary))
        ++count;
    return count;
  }

private:
  static constexpr int64_t kSpacing = 1 << 16;

  bool recomputable(Operation *op) const { return kindOf(op) != Kind::Never; }

  bool isRoot(Operation *op) const {
    if (!names)
      return allowed == Kind::Gemm || kindOf(op) == Kind::Cheap;
    std::optional<StringRef> name = mlir::oflow::getNodeName(op->getLoc());
    return recomputable(op) && name && names->match(*name);
  }

  /// `v` is live at `p` whatever is recomputed: an argument, a constant or
  /// variable, or a value read at `p` or later.
  bool liveAt(Value v, int64_t p) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block)
      return true;
    StringRef name = def->getName().stripDialect();
    if (isa<mlir::oflow::OFlowDialect>(def->getDialect()) &&
        (name == "constant" || name == "read_variable" || name == "weight"))
      return true;
    for (Operation *user : v.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (top && pos.lookup(top) >= p)
        return true;
    }
    return false;
  }

  /// Whether `v` can be read at `p`: live there, small next to the root
  /// (kept a little longer), or recomputed by `chain` (ops in dependency
  /// order) from such values.
  bool available(Value v, int64_t p, int64_t rootBytes,
                 llvm::SetVector<Operation *> &chain, int depth) {
    if (liveAt(v, p) || bytesOf(v) * 8 <= rootBytes)
      return true;
    Operation *def = v.getDefiningOp();
    if (chain.contains(def))
      return true;
    if (depth > 8 || !recomputable(def))
      return false;
    for (Value operand : def->getOperands())
      if (!available(operand, p, rootBytes, chain, depth + 1))
        return false;
    chain.insert(def);
    return true;
  }

  bool recompute(Operation *root, int64_t boundary) {
    // The backward uses of the root's results, and the first of them.
    Operation *first = nullptr;
    int64_t rootBytes = 0;
    for (Value result : root->getResults()) {
      rootBytes += bytesOf(result);
      for (Operation *user : result.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!top || pos.lookup(top) <= boundary)
          continue;
        // Copies share the position of the op they were made before; the
        // block orders them.
        if (!first || pos.lookup(top) < pos.lookup(first) ||
            (pos.lookup(top) == pos.lookup(first) && top->isBeforeInBlock(first)))
          first = top;
      }
    }
    if (!first || llvm::all_of(root->getResults(), isScalar))
      return false;
    int64_t at = pos.lookup(first);
    llvm::SetVector<Operation *> chain;
    for (Value operand : root->getOperands())
      if (!available(operand, at, rootBytes, chain, 1))
        return false;
    chain.insert(root);
    if (allowed == Kind::Cheap) {
      int64_t flops = 0;
      for (Operation *op : chain)
        flops += flopsOf(op);
      if (flops > kSelectiveFlopsPerByte * rootBytes)
        return false;
    }

    // Clone the chain before the first backward use; operands from outside
    // it go through a barrier that no CSE merges.
    OpBuilder b(first);
    IRMapping map;
    for (Operation *op : chain) {
      for (Value operand : op->getOperands()) {
        if (map.contains(operand) || !isa<RankedTensorType>(operand.getType()))
          continue;
        Operation *def = operand.getDefiningOp();
        if (def && chain.contains(def))
          continue;
        auto barrier = bufferization::AllocTensorOp::create(
            b, op->getLoc(), cast<RankedTensorType>(operand.getType()),
            ValueRange{}, operand);
        barrier->setAttr("oflow_recompute_barrier", b.getUnitAttr());
        pos[barrier] = at;
        map.map(operand, barrier.getResult());
      }
      Operation *copy = b.clone(*op, map);
      pos[copy] = at;
      ++copiedOps;
      copiedFlops += flopsOf(op);
      for (Value result : op->getResults())
        copiedBytes += bytesOf(result);
    }
    for (Value result : root->getResults()) {
      Value copy = map.lookup(result);
      result.replaceUsesWithIf(copy, [&](OpOperand &use) {
        Operation *top = block.findAncestorOpInBlock(*use.getOwner());
        return top && pos.lookup(top) > boundary;
      });
    }
    return true;
  }

  Block &block;
  Kind allowed;
  const llvm::Regex *names;
  DenseMap<Operation *, int64_t> pos;
};

struct RecomputePass : impl::RecomputeBase<RecomputePass> {
  using RecomputeBase::RecomputeBase;

  void runOnOperation() override {
    if (mode != "selective" && mode != "all") {
      getOperation().emitError()
          << "oflow-recompute: mode must be selective or all, not '" << mode << "'";
      return signalPassFailure();
    }
    std::optional<llvm::Regex> regex;
    if (!names.empty()) {
      regex.emplace("^(" + names + ")$");
      std::string error;
      if (!regex->isValid(error)) {
        getOperation().emitError()
            << "--recompute: '" << names << "' is not a regular expression: " << error;
        return signalPassFailure();
      }
    }
    Kind allowed = mode == "all" ? Kind::Gemm : Kind::Cheap;
    // What each entry recomputes, for --emit=simulate and --emit=plan:
    // oflow.recompute = {<entry> = [ops, FLOPs, bytes written]}.
    SmallVector<NamedAttribute> report;
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto entry = func->getAttrOfType<StringAttr>("oflow.entry");
      if (func.isExternal() || !entry || !func.getBody().hasOneBlock())
        continue;
      EntryRecomputer recomputer(func, allowed, regex ? &*regex : nullptr);
      if (std::optional<int64_t> boundary = recomputer.lossBoundary(func))
        recomputer.run(*boundary);
      report.push_back(b.getNamedAttr(
          entry, b.getDenseI64ArrayAttr({recomputer.copiedOps, recomputer.copiedFlops,
                                         recomputer.copiedBytes})));
    }
    getOperation()->setAttr("oflow.recompute", b.getDictionaryAttr(report));
  }
};

} // namespace
} // namespace oflow
