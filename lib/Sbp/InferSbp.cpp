//===- InferSbp.cpp - choose an nd-SBP for every value --------------------===//
//
// A greedy planner in program order, like OneFlow's default: every producer
// is decided before its consumers, so each op picks the nd-signature with the
// least estimated time given its operands' layouts: its local compute (the
// term that makes splitting pay; without it replicating everything would win)
// plus the alpha-beta time of the boxing its operands need, plus a look-ahead
// at the layouts its results must end in (hints, variable writes, returns).
// Hints and variable layouts are fixed first, so they are always honoured.
// With `planner=ilp` the greedy plan is then the start of an exact one: the
// whole function as an integer program (ExactPlanner.h).
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "PartitionGather.h"
#include "oflow/Sbp/ExactPlanner.h"
#include "oflow/Sbp/SbpConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace oflow {
#define GEN_PASS_DEF_INFERSBP
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

static constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Far below any real cost (a collective's latency is microseconds).
static constexpr double kPartialPenaltySeconds = 1e-10;

namespace {

/// One `--sbp NAME=LAYOUT` hint.
struct Hint {
  std::string text;
  llvm::GlobPattern pattern;
  of::NdSbpAttr layout;
  bool used = false;
};

class Planner {
public:
  /// Node: parameters and slots split over the last mesh axis only (the
  /// devices of a node), whole across the others: ZeRO-3 inside a node,
  /// data parallelism between nodes (PyTorch's HSDP).
  enum class ShardState { None, Optimizer, All, Node };

  Planner(ModuleOp module, of::MeshAttr meshAttr, sbp::Device device,
          ShardState shardState, bool paramsWhole)
      : ctx(module.getContext()), meshAttr(meshAttr),
        mesh(sbp::toPlanner(meshAttr)), device(device), shardState(shardState),
        paramsWhole(paramsWhole), microAxis(sbp::microBatchAxis(meshAttr)) {}

  /// Parses the hints; false after reporting a malformed one.
  bool parseHints(ArrayRef<std::string> texts, Location loc);
  /// Fixes the layouts of variables (hint, else B; optimizer slots follow
  /// their parameter).
  LogicalResult layOutVariables(ModuleOp module);
  /// Chooses layouts in one entry function.
  LogicalResult planFunction(func::FuncOp fn);
  /// Errors for hints that named nothing.
  LogicalResult checkHintsUsed(Location loc);
  /// Re-chooses every op's layouts of a function planned by planFunction
  /// (whose inputs and fixed layouts it keeps) by solving the integer
  /// program of ExactPlanner.h, starting from the greedy choice. Records
  /// what it found on the function (`oflow.planner`).
  LogicalResult planFunctionExactly(func::FuncOp fn, bool tieLayers,
                                    double maxSeconds);

private:
  /// The hint for `name`, if any (the first that matches).
  of::NdSbpAttr hintFor(StringRef name);
  /// Seconds to convert `value` from `from` to `to`; infinity without a plan.
  double boxingSeconds(Value value, of::NdSbpAttr from, of::NdSbpAttr to);
  /// Estimated local compute seconds of `op` under the given layouts.
  double computeSeconds(Operation *op, ArrayRef<of::NdSbpAttr> operands,
                        ArrayRef<of::NdSbpAttr> results);
  /// Layouts results must end in: hints, variable writes, returns.
  double lookAheadSeconds(Operation *op, ArrayRef<of::NdSbpAttr> results);
  /// Boxing from `layout` to the nearest layout each op using `value` can
  /// take it in (one signature per use, the others' operands aside).
  double usersSeconds(Value value, of::NdSbpAttr layout);
  /// Per op, the distinct layouts each operand has in its candidates.
  DenseMap<Operation *, SmallVector<SmallVector<of::NdSbpAttr, 4>>> acceptedLayouts;
  /// One jointly valid nd-signature of an op.
  struct Candidate {
    SmallVector<of::NdSbpAttr> operands, results;
    bool operator==(const Candidate &o) const {
      return operands == o.operands && results == o.results;
    }
  };
  /// Its signatures on each mesh axis (none needing a collective inside),
  /// combined over the axes, valid for the shapes, without repeats.
  SmallVector<Candidate> candidates(of::SbpSignatureOpInterface op);
  /// The hair that makes ties reduce partial results early.
  static double partialSeconds(ArrayRef<of::NdSbpAttr> results);
  /// Boxing from `layout` to what hints, variable writes and returns that
  /// use `value` require (each distinct target once).
  double fixedUsersSeconds(Value value, of::NdSbpAttr layout);
  LogicalResult chooseSignature(of::SbpSignatureOpInterface op);
  of::NdSbpAttr layoutOf(Value value) { return layouts.lookup(value); }
  void setResults(Operation *op, ArrayRef<of::NdSbpAttr> results);
  void setOperands(Operation *op, ArrayRef<of::NdSbpAttr> operands);
  bool isValid(Value value, of::NdSbpAttr layout) {
    return sbp::isValidLayout(
        mesh, cast<RankedTensorType>(value.getType()).getShape(),
        sbp::toPlanner(layout));
  }

  MLIRContext *ctx;
  of::MeshAttr meshAttr;
  sbp::Mesh mesh;
  sbp::Device device;
  ShardState shardState;
  /// tensor-parallel=none: ops use parameters whole (see paramUses).
  bool paramsWhole;
  /// --micro-batches' axis (the last): hints and stored layouts name the
  /// other axes; variables are whole on it and inputs split their batch.
  std::optional<int64_t> microAxis;
  /// A layout over the other axes, with `entry` on the micro-batch axis.
  of::NdSbpAttr withMicroEntry(of::NdSbpAttr layout, of::SbpAttr entry) {
    if (!layout || !microAxis ||
        layout.getNumMeshAxes() == meshAttr.getNumAxes())
      return layout;
    SmallVector<of::SbpAttr> entries(layout.getEntries());
    entries.push_back(entry);
    return of::NdSbpAttr::get(ctx, entries);
  }
  /// sbp::shardedLayout on this mesh.
  of::NdSbpAttr shardedLayout(ArrayRef<int64_t> shape, of::NdSbpAttr base,
                              bool lastAxisOnly = false) {
    return sbp::shardedLayout(meshAttr, microAxis, shape, base, lastAxisOnly);
  }
  SmallVector<Hint> hints;
  DenseMap<Value, of::NdSbpAttr> layouts;
  DenseMap<std::tuple<Type, Attribute, Attribute>, double> boxingCache;
  /// Where a value is headed: the layout of the variable write, return or
  /// hint at the end of its chain of same-shaped ops (an optimizer update).
  DenseMap<Value, of::NdSbpAttr> preferred;
  /// The values among them headed for a variable write: an update's math.
  DenseSet<Value> headedForVariable;
  /// Gradient contributions summed before their update (a tied weight's two
  /// uses: a GPT's token lookup and its LM head), each mapped to the other
  /// addend: one reduction of the sum serves both.
  DenseMap<Value, Value> summedWith;
  void computePreferred(func::FuncOp fn);
  /// Whether `candidate` starts a split that its variable does not have.
  bool splitsReplicatedUpdate(Operation *op, const Candidate &candidate);
  /// Whether `candidate` uses a parameter split, where ops must use
  /// parameters whole (tensor-parallel=none).
  bool splitsParamUse(Operation *op, const Candidate &candidate);
  /// The candidates both planners choose from: `candidates`, less those
  /// that split the update of a whole variable and, with tensor-parallel=none,
  /// those that use a parameter split (each where any remain).
  SmallVector<Candidate> plannedCandidates(of::SbpSignatureOpInterface op) {
    SmallVector<Candidate> all = candidates(op);
    SmallVector<Candidate> kept(llvm::make_filter_range(all, [&](const Candidate &c) {
      return !splitsReplicatedUpdate(op.getOperation(), c);
    }));
    if (kept.empty())
      kept = all;
    if (!paramsWhole)
      return kept;
    SmallVector<Candidate> whole(llvm::make_filter_range(kept, [&](const Candidate &c) {
      return !splitsParamUse(op.getOperation(), c);
    }));
    return whole.empty() ? kept : whole;
  }
  /// Values that are a parameter, as read or only moved or cast (a
  /// transposed weight): with tensor-parallel=none their users take them
  /// whole, outside the optimizer update (whatever the layout it is stored
  /// in: a split one is all-gathered where it is used, as ZeRO-3).
  DenseSet<Value> paramUses;
  /// Values computed from the step's data (its batched inputs): with
  /// tensor-parallel=none, a parameter's gradient made from them is partial
  /// along every mesh axis that splits them, as data parallelism makes it
  /// (not computed whole from gathered activations, nor split from
  /// activations re-laid out along channels: tensor parallelism by other
  /// names).
  DenseSet<Value> fromData;
  /// The parameters' names (variables of role param).
  llvm::StringSet<> paramNames;

  of::NdSbpAttr operandLayoutFor(Operation *op, of::NdSbpAttr result);
  double manufacturedSplitSeconds(Operation *op, ArrayRef<of::NdSbpAttr> results);
  llvm::StringMap<of::NdSbpAttr> variableLayouts;
  llvm::StringMap<Type> variableTypes;
  /// The layout each entry function returns its results in (B).
  of::NdSbpAttr returnLayout;
  /// The layout `use`'s return passes its value in: a gradient result
  /// (`oflow.grad_of`) in its parameter's layout, so that a split
  /// parameter's gradient is reduce-scattered, not all-reduced, and the
  /// grads entry's outputs take no more memory than the parameters (the
  /// runtime assembles the pieces when it writes them: --dump-grads);
  /// every other result whole (B).
  of::NdSbpAttr returnLayoutOf(func::FuncOp fn, unsigned result);
  /// The layout `use` needs its value in when its owner is a hint, a
  /// variable write or a return; null for other users.
  of::NdSbpAttr fixedLayoutOf(OpOperand &use);
};

} // namespace

bool Planner::parseHints(ArrayRef<std::string> texts, Location loc) {
  for (const std::string &text : texts) {
    auto [name, layoutText] = StringRef(text).split('=');
    int64_t userAxes = meshAttr.getNumAxes() - (microAxis ? 1 : 0);
    FailureOr<of::NdSbpAttr> layout = sbp::parseLayoutText(ctx, layoutText, userAxes);
    if (name.empty() || failed(layout)) {
      emitError(loc) << "--sbp " << text << ": expected NAME=LAYOUT with one "
                     << "of S(i), B, P per mesh axis ("
                     << userAxes << " for this mesh), e.g. "
                     << "fc1.weight=S(0)"
                     << (userAxes > 1 ? ",B" : "");
      return false;
    }
    auto pattern = llvm::GlobPattern::create(name);
    if (!pattern) {
      llvm::consumeError(pattern.takeError());
      emitError(loc) << "--sbp " << text << ": bad name pattern '" << name << "'";
      return false;
    }
    hints.push_back({text, std::move(*pattern), *layout});
  }
  return true;
}

of::NdSbpAttr Planner::hintFor(StringRef name) {
  for (Hint &hint : hints)
    if (hint.pattern.match(name)) {
      hint.used = true;
      return hint.layout;
    }
  return {};
}

LogicalResult Planner::checkHintsUsed(Location loc) {
  for (const Hint &hint : hints)
    if (!hint.used)
      return emitError(loc) << "--sbp " << hint.text
                            << ": names no variable or graph input";
  return success();
}

LogicalResult Planner::layOutVariables(ModuleOp module) {
  of::NdSbpAttr all = sbp::broadcastNdSbp(ctx, meshAttr.getNumAxes());
  returnLayout = all;
  auto variables = llvm::to_vector(module.getOps<of::VariableOp>());
  // Parameters first: optimizer slots default to their parameter's layout.
  std::stable_partition(variables.begin(), variables.end(), [](of::VariableOp v) {
    return v.getRole() != of::VariableRole::optimizer;
  });
  of::SbpAttr whole = of::SbpAttr::getBroadcast(ctx);
  for (of::VariableOp var : variables) {
    of::NdSbpAttr layout = withMicroEntry(var.getSbpAttr(), whole);
    if (!layout)
      layout = withMicroEntry(hintFor(var.getSymName()), whole);
    if (!layout && var.getModelName())
      layout = withMicroEntry(hintFor(*var.getModelName()), whole);
    // A scalar cannot be split (the loss scaler's state is optimizer state
    // of the first parameter, whatever that parameter's layout).
    if (!layout && cast<RankedTensorType>(var.getType()).getRank() == 0)
      layout = all;
    // shard-state: a slot starts from its parameter's layout (a hint's
    // tensor parallelism, or the parameter's own sharding) and splits the
    // mesh axes that leave whole.
    of::NdSbpAttr parent =
        var.getOfAttr() ? variableLayouts.lookup(var.getOfAttr().getValue()) : nullptr;
    // A slot stored in another shape than its parameter (oflow-flatten-state)
    // cannot take the parameter's splits.
    if (parent && var.getOfAttr() &&
        variableTypes.lookup(var.getOfAttr().getValue()) != var.getType())
      parent = nullptr;
    bool slot = var.getRole() == of::VariableRole::optimizer;
    bool params = shardState == ShardState::All || shardState == ShardState::Node;
    // Buffers (batch norm's running statistics) stay whole, as in FSDP:
    // split, their update took its statistics reduce-scattered besides the
    // all-reduce the normalisation needs (ResNet-50 on 128x8: 113 more
    // collectives, 3 ms of a 58 ms step, to save 212 KB per device).
    if (!layout && ((slot && shardState != ShardState::None) ||
                    (var.getRole() == of::VariableRole::param && params)))
      layout = shardedLayout(cast<RankedTensorType>(var.getType()).getShape(), parent,
                             shardState == ShardState::Node);
    if (!layout && parent)
      layout = parent;
    if (!layout)
      layout = all;
    if (llvm::any_of(layout.getEntries(),
                     [](of::SbpAttr e) { return e.isPartial(); }))
      return var.emitError() << "variable '" << var.getSymName()
                             << "' cannot be stored as " << layout.str()
                             << ": a stored value is whole (B) or split (S)";
    if (microAxis && layout.getNumMeshAxes() == meshAttr.getNumAxes() &&
        !layout.getEntries()[*microAxis].isBroadcast())
      return var.emitError() << "variable '" << var.getSymName() << "' cannot be stored as "
                             << layout.str()
                             << ": the last mesh axis runs the micro-batches "
                                "(--micro-batches), over which state is whole (B)";
    if (failed(layout.verifyFor(meshAttr, cast<RankedTensorType>(var.getType()).getShape(), [&] {
          return var.emitError() << "variable '" << var.getSymName()
                                 << "' as " << layout.str() << ": ";
        })))
      return failure();
    var.setSbpAttr(layout);
    variableLayouts[var.getSymName()] = layout;
    if (var.getRole() == of::VariableRole::param)
      paramNames.insert(var.getSymName());
    variableTypes[var.getSymName()] = var.getType();
  }
  return success();
}

double Planner::boxingSeconds(Value value, of::NdSbpAttr from,
                              of::NdSbpAttr to) {
  if (from == to)
    return 0;
  // The same (type, from, to) comes up for every candidate of every op with
  // operands of that type: plan each once.
  auto key = std::make_tuple(value.getType(), Attribute(from), Attribute(to));
  auto [it, inserted] = boxingCache.try_emplace(key, kInfinity);
  if (!inserted)
    return it->second;
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<sbp::BoxingPlan> plan =
      sbp::planBoxing(mesh, type.getShape(), sbp::elementBytes(type),
                      sbp::toPlanner(from), sbp::toPlanner(to));
  if (plan)
    it->second = plan->seconds;
  return it->second;
}

double Planner::computeSeconds(Operation *op, ArrayRef<of::NdSbpAttr> operands,
                               ArrayRef<of::NdSbpAttr> results) {
  // Micro-batches take turns on one device: splitting an op over them
  // saves no time, so compute is priced as if that axis were one device.
  if (microAxis) {
    sbp::Mesh turns = mesh;
    turns.shape[*microAxis] = 1;
    return sbp::opComputeSeconds(op, operands, results, turns, device);
  }
  return sbp::opComputeSeconds(op, operands, results, mesh, device);
}

double Planner::lookAheadSeconds(Operation *op, ArrayRef<of::NdSbpAttr> results) {
  double seconds = 0;
  for (auto [value, layout] : llvm::zip(op->getResults(), results)) {
    // Each distinct target is charged once: insert-boxing converts a value
    // to a layout once for all its consumers (and the preferred layout often
    // is that of a direct user: a return or a variable write).
    llvm::SmallDenseSet<Attribute, 4> targets;
    // The other addend of a summed gradient already partial in this layout:
    // the sum's reduction, which it was charged, serves this one too.
    Value sibling = summedWith.lookup(value);
    bool partial =
        llvm::any_of(layout.getEntries(), [](of::SbpAttr e) { return e.isPartial(); });
    if (sibling && partial && layoutOf(sibling) == layout)
      continue;
    // Not laid out yet: that reduction is expected to serve both addends,
    // each charged half (else the first, seeing all of it, reduces early and
    // the second must reduce its own).
    double share = sibling && partial && !layoutOf(sibling) ? 0.5 : 1.0;
    if (of::NdSbpAttr target = preferred.lookup(value)) {
      targets.insert(target);
    } else {
      SmallVector<of::SbpAttr> reduced(layout.getEntries());
      for (of::SbpAttr &entry : reduced)
        if (entry.isPartial())
          entry = of::SbpAttr::getBroadcast(ctx);
      targets.insert(of::NdSbpAttr::get(ctx, reduced));
    }
    for (OpOperand &use : value.getUses())
      if (of::NdSbpAttr wanted = fixedLayoutOf(use))
        targets.insert(wanted);
    for (Attribute target : targets)
      seconds += share * boxingSeconds(value, layout, cast<of::NdSbpAttr>(target));
    // Headed nowhere fixed, and whole or split (a partial one is charged
    // its reduction above): what its users cannot take it in. A GPT's LM
    // head computed on its tied weight's vocabulary slice (the hidden
    // states all-gathered, cheaper than the weight) gave logits split along
    // the vocabulary, which its cross-entropy cannot take: an all-to-all of
    // every logit, 2.5x the bytes of the weight the op saved gathering.
    if (!partial && !preferred.lookup(value))
      seconds += usersSeconds(value, layout);
  }
  return seconds;
}

double Planner::usersSeconds(Value value, of::NdSbpAttr layout) {
  double seconds = 0;
  for (OpOperand &use : value.getUses()) {
    auto user = dyn_cast<of::SbpSignatureOpInterface>(use.getOwner());
    if (!user)
      continue;
    auto [it, inserted] = acceptedLayouts.try_emplace(user.getOperation());
    if (inserted) {
      it->second.resize(user->getNumOperands());
      for (const Candidate &c : candidates(user))
        for (auto [i, l] : llvm::enumerate(c.operands))
          if (!llvm::is_contained(it->second[i], l))
            it->second[i].push_back(l);
    }
    ArrayRef<of::NdSbpAttr> accepted = it->second[use.getOperandNumber()];
    if (accepted.empty() || llvm::is_contained(accepted, layout))
      continue;
    double nearest = kInfinity;
    for (of::NdSbpAttr l : accepted)
      nearest = std::min(nearest, boxingSeconds(value, layout, l));
    if (nearest < kInfinity)
      seconds += nearest;
  }
  return seconds;
}

void Planner::setResults(Operation *op, ArrayRef<of::NdSbpAttr> results) {
  for (auto [value, layout] : llvm::zip(op->getResults(), results))
    layouts[value] = layout;
  op->setAttr(of::OFlowDialect::kSbpAttrName,
              ArrayAttr::get(ctx, SmallVector<Attribute>(results.begin(),
                                                         results.end())));
}

void Planner::setOperands(Operation *op, ArrayRef<of::NdSbpAttr> operands) {
  op->setAttr(of::OFlowDialect::kOperandSbpAttrName,
              ArrayAttr::get(ctx, SmallVector<Attribute>(operands.begin(),
                                                         operands.end())));
}

SmallVector<Planner::Candidate>
Planner::candidates(of::SbpSignatureOpInterface op) {
  Operation *operation = op.getOperation();
  int64_t numAxes = meshAttr.getNumAxes();
  // Per mesh axis, the signatures that need no collective inside.
  SmallVector<SmallVector<of::SbpSignature>> perAxis;
  for (int64_t axis = 0; axis < numAxes; ++axis) {
    SmallVector<of::SbpSignature> sigs;
    for (of::SbpSignature &sig :
         of::getSbpSignatures(op, meshAttr.getShape()[axis]))
      // Notes that oflow-partition implements are fine too.
      if (sig.collective.empty() || sig.collective == ::oflow::sbp::kMaskRowsNote)
        sigs.push_back(std::move(sig));
    // One device along this axis (one device with --micro-batches is mesh
    // [1, K]): every layout is the whole tensor, but a split or a partial
    // here constrains the other axes' choices and leaves no-op collectives
    // in the program (which joined the micro-batches' lanes before the
    // backward pass): replicate.
    if (meshAttr.getShape()[axis] == 1) {
      auto replicated = [](const of::SbpSignature &sig) {
        auto isB = [](of::SbpAttr a) { return a.isBroadcast(); };
        return llvm::all_of(sig.operands, isB) && llvm::all_of(sig.results, isB);
      };
      if (llvm::any_of(sigs, replicated))
        llvm::erase_if(sigs, [&](const of::SbpSignature &sig) { return !replicated(sig); });
    }
    perAxis.push_back(std::move(sigs));
  }
  SmallVector<Candidate> found;
  if (llvm::any_of(perAxis, [](auto &s) { return s.empty(); }))
    return found;
  SmallVector<size_t> index(numAxes, 0);
  auto ndOf = [&](auto pick) {
    SmallVector<of::SbpAttr> entries;
    for (int64_t axis = 0; axis < numAxes; ++axis)
      entries.push_back(pick(perAxis[axis][index[axis]]));
    return of::NdSbpAttr::get(ctx, entries);
  };
  while (true) {
    Candidate candidate;
    for (unsigned i = 0; i < operation->getNumOperands(); ++i)
      candidate.operands.push_back(
          ndOf([&](const of::SbpSignature &s) { return s.operands[i]; }));
    for (unsigned i = 0; i < operation->getNumResults(); ++i)
      candidate.results.push_back(
          ndOf([&](const of::SbpSignature &s) { return s.results[i]; }));
    bool valid = true;
    for (auto [v, l] : llvm::zip(operation->getOperands(), candidate.operands))
      valid &= isValid(v, l);
    for (auto [v, l] : llvm::zip(operation->getResults(), candidate.results))
      valid &= isValid(v, l);
    // Signatures of different mesh axes can combine to the same layouts.
    if (valid && !llvm::is_contained(found, candidate))
      found.push_back(std::move(candidate));
    // Next combination (the last mesh axis varies fastest).
    int64_t axis = numAxes - 1;
    while (axis >= 0 && ++index[axis] == perAxis[axis].size())
      index[axis--] = 0;
    if (axis < 0)
      break;
  }
  return found;
}

double Planner::partialSeconds(ArrayRef<of::NdSbpAttr> results) {
  double seconds = 0;
  for (of::NdSbpAttr layout : results)
    for (of::SbpAttr entry : layout.getEntries())
      seconds += entry.isPartial() ? kPartialPenaltySeconds : 0;
  return seconds;
}

LogicalResult Planner::chooseSignature(of::SbpSignatureOpInterface op) {
  Operation *operation = op.getOperation();
  double best = kInfinity;
  const Candidate *chosen = nullptr;
  SmallVector<Candidate> all = plannedCandidates(op);
  for (const Candidate &candidate : all) {
    // A partial result must be reduced somewhere: it is charged that
    // reduction now, plus a hair, so that ties reduce early (a gradient is
    // all-reduced as soon as it is computed, where buckets can form) rather
    // than after more local ops.
    double cost =
        computeSeconds(operation, candidate.operands, candidate.results) +
        lookAheadSeconds(operation, candidate.results) +
        partialSeconds(candidate.results);
    // A gradient contribution summed before its update stays partial where
    // that ties (the sum is reduced once, not each addend).
    for (auto [value, layout] : llvm::zip(operation->getResults(), candidate.results))
      if (summedWith.count(value))
        cost -= 2 * partialSeconds({layout});
    for (auto [v, l] : llvm::zip(operation->getOperands(), candidate.operands))
      cost += boxingSeconds(v, layoutOf(v), l);
    cost += manufacturedSplitSeconds(operation, candidate.results);
    if (cost < best * (1 - 1e-9)) {
      best = cost;
      chosen = &candidate;
    }
  }
  if (!chosen)
    return operation->emitError()
           << "no SBP signature of this op fits the mesh "
           << meshAttr.getNumDevices() << " (shapes do not divide, or every "
           << "split form needs a collective inside that is not supported)";
  setOperands(operation, chosen->operands);
  setResults(operation, chosen->results);
  return success();
}

/// A split that no operand had on a mesh axis (all of them arrive B there) is
/// made by slicing: free now, but consumers of such values (weights and what
/// is computed from them alone) want them whole again, so it is charged the
/// all-gather that undoes it. Splits that come from the data or from hinted
/// weights are not charged.
double Planner::manufacturedSplitSeconds(Operation *op,
                                         ArrayRef<of::NdSbpAttr> results) {
  double seconds = 0;
  for (auto [value, layout] : llvm::zip(op->getResults(), results)) {
    if (preferred.lookup(value))
      continue; // the look-ahead already prices where it is headed
    SmallVector<of::SbpAttr> whole(layout.getEntries());
    bool manufactured = false;
    for (auto [axis, entry] : llvm::enumerate(layout.getEntries())) {
      if (!entry.isSplit())
        continue;
      bool allBroadcast = llvm::all_of(op->getOperands(), [&](Value v) {
        of::NdSbpAttr in = layoutOf(v);
        return in && in.getEntries()[axis].isBroadcast();
      });
      if (allBroadcast && op->getNumOperands() > 0) {
        whole[axis] = of::SbpAttr::getBroadcast(ctx);
        manufactured = true;
      }
    }
    if (manufactured)
      seconds += boxingSeconds(value, layout, of::NdSbpAttr::get(ctx, whole));
  }
  return seconds;
}

/// The layout of a one-operand op's operand under which it produces
/// `result`, from its signatures on each mesh axis; null if there is none.
of::NdSbpAttr Planner::operandLayoutFor(Operation *op, of::NdSbpAttr result) {
  auto sigOp = dyn_cast<of::SbpSignatureOpInterface>(op);
  if (!sigOp || op->getNumOperands() != 1)
    return {};
  SmallVector<of::SbpAttr> entries;
  for (auto [axis, wanted] : llvm::enumerate(result.getEntries())) {
    of::SbpAttr found;
    for (const of::SbpSignature &sig :
         of::getSbpSignatures(sigOp, meshAttr.getShape()[axis]))
      if (sig.collective.empty() && sig.results[0] == wanted) {
        found = sig.operands[0];
        break;
      }
    if (!found)
      return {};
    entries.push_back(found);
  }
  auto layout = of::NdSbpAttr::get(ctx, entries);
  return isValid(op->getOperand(0), layout) ? layout : of::NdSbpAttr();
}

/// Views and casts: a value's elements, moved or converted, one to one.
static bool onlyMovesElements(Operation *op) {
  return isa<of::ReshapeOp, of::TransposeOp, of::SqueezeOp, of::UnsqueezeOp,
             of::FlattenOp, of::CastOp>(op);
}

void Planner::computePreferred(func::FuncOp fn) {
  preferred.clear();
  headedForVariable.clear();
  summedWith.clear();
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : llvm::reverse(ops)) {
    if (auto write = dyn_cast<of::WriteVariableOp>(op)) {
      if (preferred.try_emplace(write.getValue(),
                                variableLayouts.lookup(write.getVariable()))
              .second)
        headedForVariable.insert(write.getValue());
    } else if (auto hint = dyn_cast<of::SbpHintOp>(op)) {
      preferred.try_emplace(hint.getInput(), hint.getSbp());
    } else if (isa<func::ReturnOp>(op)) {
      for (OpOperand &operand : op->getOpOperands())
        preferred.try_emplace(operand.get(),
                              returnLayoutOf(fn, operand.getOperandNumber()));
    } else if (op->getNumResults() == 1) {
      of::NdSbpAttr target = preferred.lookup(op->getResult(0));
      if (!target)
        continue;
      // Through ops that only move elements (a weight gradient reshaped or
      // transposed on its way to the update): the operand layout that gives
      // the target.
      bool toVariable = headedForVariable.contains(op->getResult(0));
      auto prefer = [&](Value v, of::NdSbpAttr layout) {
        if (preferred.try_emplace(v, layout).second && toVariable)
          headedForVariable.insert(v);
      };
      if (onlyMovesElements(op)) {
        if (of::NdSbpAttr source = operandLayoutFor(op, target))
          prefer(op->getOperand(0), source);
        continue;
      }
      // Through ops whose operand has the result's shape (elementwise), not
      // contractions: a weight gradient dW = X^T dY whose dY happens to
      // have dW's shape (a 256x64 gradient of 256 tokens by 64 features)
      // gave dY, and every activation before it, the weight's layout, and
      // a GPT's tokens were gathered whole to match.
      if (isa<of::MatmulOp, of::GemmOp, of::Conv2dOp, of::Conv2dBackwardInputOp,
              of::Conv2dBackwardFilterOp>(op))
        continue;
      if (auto add = dyn_cast<of::AddOp>(op); add && toVariable) {
        Value a = add.getOperand(0), b = add.getOperand(1);
        // A contribution: made by a contraction, a lookup's backward or a
        // reduction over the batch, seen through views (not the update's
        // own sums of scaled state and gradient).
        auto contribution = [&](Value v) {
          if (v.getType() != add.getType())
            return false;
          Operation *def = v.getDefiningOp();
          while (def && onlyMovesElements(def))
            def = def->getOperand(0).getDefiningOp();
          return def && isa<of::MatmulOp, of::GemmOp, of::GatherBackwardOp,
                            of::Conv2dBackwardFilterOp, of::ReduceSumOp>(def);
        };
        if (a != b && contribution(a) && contribution(b)) {
          summedWith.try_emplace(a, b);
          summedWith.try_emplace(b, a);
        }
      }
      for (Value v : op->getOperands())
        if (v.getType() == op->getResult(0).getType())
          prefer(v, target);
    }
  }
}

/// An optimizer update of a variable that is whole on a mesh axis runs
/// whole on that axis, as data parallelism does: the gradient is reduced
/// (all-reduce) and every device updates its copy. Splitting the update
/// there (reduce-scatter, a slice of the parameter and of each state slot,
/// then an all-gather of each updated tensor) saves elementwise work but
/// moves the parameter and every slot once more; a greedy choice, op by op,
/// sees one all-gather at a time and took it (a GPT 1.5B's "data parallel"
/// plan moved 70% more bytes than the gradients' all-reduce). Splits the
/// update inherits from an operand already split there (ZeRO-2's slots,
/// whole parameters) stay allowed.
bool Planner::splitsReplicatedUpdate(Operation *op, const Candidate &candidate) {
  for (auto [value, layout] : llvm::zip(op->getResults(), candidate.results)) {
    if (!headedForVariable.contains(value))
      continue;
    of::NdSbpAttr target = preferred.lookup(value);
    for (auto [axis, entry] : llvm::enumerate(layout.getEntries())) {
      if (!entry.isSplit() || !target.getEntries()[axis].isBroadcast())
        continue;
      bool inherited = llvm::any_of(op->getOperands(), [&](Value v) {
        of::NdSbpAttr in = layoutOf(v);
        return in && in.getEntries()[axis].isSplit();
      });
      if (!inherited)
        return true;
    }
  }
  return false;
}

bool Planner::splitsParamUse(Operation *op, const Candidate &candidate) {
  // The optimizer update computes on the parameter as stored (split under
  // ZeRO-3): not a use of the weight. Where a gradient is made from the
  // data (no operand is headed for the update yet), it is made partial
  // along the axes that split the data: reducing it (all-reduce,
  // reduce-scatter) is the boxing's job.
  if (llvm::any_of(op->getResults(), [&](Value v) { return headedForVariable.contains(v); })) {
    bool born = llvm::none_of(op->getOperands(),
                              [&](Value v) { return headedForVariable.contains(v); }) &&
                llvm::any_of(op->getOperands(), [&](Value v) { return fromData.contains(v); });
    if (!born)
      return false;
    for (int64_t axis = 0, e = meshAttr.getNumAxes(); axis < e; ++axis) {
      bool dataSplit = llvm::any_of(op->getOperands(), [&](Value v) {
        of::NdSbpAttr in = layoutOf(v);
        return fromData.contains(v) && in && in.getEntries()[axis].isSplit();
      });
      for (auto [value, layout] : llvm::zip(op->getResults(), candidate.results))
        if (dataSplit && headedForVariable.contains(value) &&
            !layout.getEntries()[axis].isPartial())
          return true;
    }
    return false;
  }
  for (auto [value, layout] : llvm::zip(op->getOperands(), candidate.operands))
    if (paramUses.contains(value) &&
        !llvm::all_of(layout.getEntries(), [](of::SbpAttr e) { return e.isBroadcast(); }))
      return true;
  return false;
}

LogicalResult Planner::planFunction(func::FuncOp fn) {
  computePreferred(fn);
  paramUses.clear();
  fromData.clear();
  if (paramsWhole) {
    for (BlockArgument arg : fn.getArguments())
      if (cast<RankedTensorType>(arg.getType()).getRank() > 0)
        fromData.insert(arg);
    fn.walk([&](Operation *op) {
      if (auto read = dyn_cast<of::ReadVariableOp>(op)) {
        if (paramNames.contains(read.getVariable()))
          paramUses.insert(read.getResult());
      } else if (onlyMovesElements(op) && paramUses.contains(op->getOperand(0))) {
        paramUses.insert(op->getResult(0));
      }
      if (llvm::any_of(op->getOperands(), [&](Value v) { return fromData.contains(v); }))
        fromData.insert(op->result_begin(), op->result_end());
    });
  }
  int64_t numAxes = meshAttr.getNumAxes();
  of::NdSbpAttr all = sbp::broadcastNdSbp(ctx, numAxes);
  // Arguments: hint, else data parallel on the batch axis.
  for (BlockArgument arg : fn.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    of::NdSbpAttr layout = fn.getArgAttrOfType<of::NdSbpAttr>(
        arg.getArgNumber(), of::OFlowDialect::kSbpAttrName);
    auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                of::OFlowDialect::kNameAttrName);
    of::SbpAttr batchSplit = of::SbpAttr::getSplit(ctx, 0);
    if (!layout && name)
      layout = withMicroEntry(hintFor(name.getValue()), batchSplit);
    else
      layout = withMicroEntry(layout, batchSplit);
    if (!layout && name && type.getRank() > 0) {
      SmallVector<of::SbpAttr> entries;
      int64_t factor = 1;
      for (int64_t axis = 0; axis < numAxes; ++axis) {
        int64_t n = meshAttr.getShape()[axis];
        // One device along the axis: whole (see chooseSignature).
        bool split = (n > 1 || axis == microAxis) && type.getDimSize(0) % (factor * n) == 0;
        if (axis == microAxis && !split)
          return fn.emitError()
                 << "input '" << name.getValue() << "': its "
                 << type.getDimSize(0) / factor
                 << " rows per device do not divide into " << n
                 << " micro-batches (--micro-batches)";
        factor *= split ? n : 1;
        entries.push_back(split ? of::SbpAttr::getSplit(ctx, 0)
                                : of::SbpAttr::getBroadcast(ctx));
      }
      layout = of::NdSbpAttr::get(ctx, entries);
    }
    if (!layout)
      layout = all;
    // A graph input is fed by the runtime: whole or split, never partial.
    if (name && llvm::any_of(layout.getEntries(),
                             [](of::SbpAttr e) { return e.isPartial(); }))
      return fn.emitError() << "input '"
                            << (name ? name.getValue() : StringRef("?"))
                            << "' cannot be fed as " << layout.str()
                            << ": each rank reads whole (B) or split (S) data";
    if (failed(layout.verifyFor(meshAttr, type.getShape(), [&] {
          return fn.emitError() << "input '"
                                << (name ? name.getValue() : StringRef("?"))
                                << "' as " << layout.str() << ": ";
        })))
      return failure();
    fn.setArgAttr(arg.getArgNumber(), of::OFlowDialect::kSbpAttrName, layout);
    layouts[arg] = layout;
  }
  WalkResult walk = fn.walk([&](Operation *op) -> WalkResult {
    if (op == fn.getOperation())
      return WalkResult::advance();
    if (auto read = dyn_cast<of::ReadVariableOp>(op)) {
      setResults(op, {variableLayouts.lookup(read.getVariable())});
      return WalkResult::advance();
    }
    if (auto write = dyn_cast<of::WriteVariableOp>(op)) {
      setOperands(op, {variableLayouts.lookup(write.getVariable())});
      return WalkResult::advance();
    }
    if (auto hint = dyn_cast<of::SbpHintOp>(op)) {
      if (!isValid(hint.getInput(), hint.getSbp()))
        return hint.emitError() << "hinted layout " << hint.getSbp().str()
                                << " does not fit " << hint.getInput().getType()
                                << " on this mesh";
      setOperands(op, {hint.getSbp()});
      setResults(op, {hint.getSbp()});
      return WalkResult::advance();
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<of::NdSbpAttr> returned;
      for (unsigned i = 0; i < ret.getNumOperands(); ++i)
        returned.push_back(returnLayoutOf(fn, i));
      setOperands(op, returned);
      return WalkResult::advance();
    }
    if (isa<of::ConstantOp>(op)) {
      setResults(op, {all});
      return WalkResult::advance();
    }
    if (auto sig = dyn_cast<of::SbpSignatureOpInterface>(op))
      return failed(chooseSignature(sig)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
    if (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<TensorType>) ||
        llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>))
      return op->emitError() << "has no SBP signatures: cannot place it on "
                             << "the mesh";
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    fn.setResultAttr(i, of::OFlowDialect::kSbpAttrName, returnLayoutOf(fn, i));
  return success();
}

of::NdSbpAttr Planner::returnLayoutOf(func::FuncOp fn, unsigned result) {
  if (auto param = fn.getResultAttrOfType<StringAttr>(result, "oflow.grad_of"))
    if (of::NdSbpAttr layout = variableLayouts.lookup(param.getValue()))
      return layout;
  return returnLayout;
}

of::NdSbpAttr Planner::fixedLayoutOf(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto hint = dyn_cast<of::SbpHintOp>(user))
    return hint.getSbp();
  if (auto write = dyn_cast<of::WriteVariableOp>(user))
    return variableLayouts.lookup(write.getVariable());
  if (isa<func::ReturnOp>(user))
    return returnLayoutOf(user->getParentOfType<func::FuncOp>(), use.getOperandNumber());
  return {};
}

double Planner::fixedUsersSeconds(Value value, of::NdSbpAttr layout) {
  llvm::SmallDenseSet<Attribute, 4> targets;
  for (OpOperand &use : value.getUses())
    if (of::NdSbpAttr wanted = fixedLayoutOf(use))
      targets.insert(wanted);
  double seconds = 0;
  for (Attribute target : targets)
    seconds += boxingSeconds(value, layout, cast<of::NdSbpAttr>(target));
  return seconds;
}

/// The node name of a repeated layer's op with its layer index replaced
/// (`/blocks.3/attn/q/matmul` -> `/blocks.#/attn/q/matmul`, a weight's
/// `blocks.3.attn.q.weight` -> `blocks.#.attn.q.weight`): ops of different
/// layers with the same such name and occurrence are tied.
static std::string layerTemplate(StringRef nodeName) {
  static const llvm::Regex layerIndex("\\.[0-9]+(/|\\.|$)");
  std::string name = nodeName.str();
  while (true) {
    SmallVector<StringRef> match;
    if (!layerIndex.match(name, &match))
      return name;
    size_t at = match[0].data() - name.data();
    name.replace(at, match[0].size(), ".#" + match[1].str());
  }
}

LogicalResult Planner::planFunctionExactly(func::FuncOp fn, bool tieLayers,
                                           double maxSeconds) {
  // The nodes: ops whose layouts are chosen (planFunction fixes the rest).
  SmallVector<Operation *> nodes;
  SmallVector<SmallVector<Candidate>> choices;
  DenseMap<Operation *, int> nodeOf;
  fn.walk([&](of::SbpSignatureOpInterface op) {
    Operation *operation = op.getOperation();
    if (isa<of::ReadVariableOp, of::WriteVariableOp, of::SbpHintOp,
            of::ConstantOp>(operation))
      return;
    nodeOf[operation] = nodes.size();
    nodes.push_back(operation);
    choices.push_back(plannedCandidates(op));
  });
  if (nodes.empty())
    return success();
  // An op that takes a value twice in the same layout converts it once.
  // (Across ops, each consumer is charged its conversion, Alpa's
  // approximation: insert-boxing converts a value once per layout.)
  auto usedBefore = [](Operation *op, const Candidate &c, size_t k) {
    for (size_t e = 0; e < k; ++e)
      if (op->getOperand(e) == op->getOperand(k) && c.operands[e] == c.operands[k])
        return true;
    return false;
  };
  sbp::PlanProblem problem;
  std::vector<int> greedy;
  for (auto [n, op] : llvm::enumerate(nodes)) {
    std::vector<double> cost;
    for (const Candidate &c : choices[n]) {
      double seconds = computeSeconds(op, c.operands, c.results) +
                       partialSeconds(c.results);
      for (auto [k, v] : llvm::enumerate(op->getOperands()))
        if (!nodeOf.count(v.getDefiningOp()) && !usedBefore(op, c, k))
          seconds += boxingSeconds(v, layoutOf(v), c.operands[k]);
      for (auto [v, l] : llvm::zip(op->getResults(), c.results))
        seconds += fixedUsersSeconds(v, l);
      cost.push_back(seconds);
    }
    problem.addNode(std::move(cost));
    // The greedy choice, the solver's start.
    auto operandAttr = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kOperandSbpAttrName);
    auto resultAttr = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName);
    int start = -1;
    for (auto [k, c] : llvm::enumerate(choices[n]))
      if (operandAttr && resultAttr &&
          llvm::equal(c.operands, operandAttr.getAsRange<of::NdSbpAttr>()) &&
          llvm::equal(c.results, resultAttr.getAsRange<of::NdSbpAttr>()))
        start = k;
    greedy.push_back(start);
  }
  // Edges: values from one node to another, summed per pair.
  DenseMap<std::pair<int, int>, size_t> edgeOf;
  for (auto [u, op] : llvm::enumerate(nodes))
    for (auto [k, v] : llvm::enumerate(op->getOperands())) {
      auto producer = nodeOf.find(v.getDefiningOp());
      if (producer == nodeOf.end())
        continue;
      int p = producer->second;
      unsigned r = cast<OpResult>(v).getResultNumber();
      auto [it, inserted] = edgeOf.try_emplace({p, static_cast<int>(u)},
                                               problem.edges.size());
      if (inserted)
        problem.edges.push_back(
            {p, static_cast<int>(u),
             std::vector<double>(choices[p].size() * choices[u].size(), 0)});
      std::vector<double> &cost = problem.edges[it->second].cost;
      for (auto [i, from] : llvm::enumerate(choices[p]))
        for (auto [j, to] : llvm::enumerate(choices[u]))
          if (!usedBefore(op, to, k))
            cost[i * choices[u].size() + j] +=
                boxingSeconds(v, from.results[r], to.operands[k]);
    }
  // Ties: the same op of each repeated layer (named alike up to the layer
  // index, the same occurrence among the ops of its node, the same types and
  // candidates).
  if (tieLayers) {
    llvm::StringMap<int> occurrence;
    std::map<std::string, std::vector<int>> groups;
    for (auto [n, op] : llvm::enumerate(nodes)) {
      std::optional<StringRef> name = of::getNodeName(op->getLoc());
      if (!name || name->empty())
        continue;
      std::string exact = op->getName().getStringRef().str() + "|" + name->str();
      int seen = occurrence[exact]++;
      std::string key;
      llvm::raw_string_ostream os(key);
      os << op->getName() << "|" << layerTemplate(*name) << "|" << seen << "|";
      for (Type t : op->getOperandTypes())
        os << t << ";";
      for (Type t : op->getResultTypes())
        os << t << ";";
      groups[key].push_back(n);
    }
    for (auto &[key, members] : groups) {
      // Members whose candidates are not the first member's stay free.
      std::vector<int> tied;
      for (int n : members)
        if (choices[n] == choices[members.front()])
          tied.push_back(n);
      if (tied.size() > 1)
        problem.ties.push_back(std::move(tied));
    }
  }
  sbp::ExactOptions options;
  options.maxSeconds = maxSeconds;
  if (!llvm::is_contained(greedy, -1))
    options.start = greedy;
  std::string error;
  std::optional<sbp::PlanSolution> solution =
      sbp::solveExactly(problem, options, error);
  if (!solution) {
    // No plan from the solver within its limit (it had no start, or none
    // fits): the greedy plan stands, and the user hears why.
    if (options.start.empty())
      return fn.emitError() << "--planner ilp: " << error;
    fn.emitWarning() << "--planner ilp: " << error << "; the greedy plan is kept";
    solution.emplace();
    solution->choice = options.start;
    solution->seconds = sbp::evaluate(problem, options.start);
  }
  double greedySeconds =
      options.start.empty() ? kInfinity : sbp::evaluate(problem, options.start);
  for (auto [n, op] : llvm::enumerate(nodes)) {
    const Candidate &c = choices[n][solution->choice[n]];
    setOperands(op, c.operands);
    setResults(op, c.results);
  }
  Builder b(ctx);
  SmallVector<NamedAttribute> record = {
      b.getNamedAttr("seconds", b.getF64FloatAttr(solution->seconds)),
      b.getNamedAttr("optimal", b.getBoolAttr(solution->optimal)),
      b.getNamedAttr("ops", b.getI64IntegerAttr(nodes.size())),
      b.getNamedAttr("tied_groups", b.getI64IntegerAttr(problem.ties.size())),
      b.getNamedAttr("solver_ops", b.getI64IntegerAttr(solution->solverNodes)),
      b.getNamedAttr("solver_edges", b.getI64IntegerAttr(solution->solverEdges)),
      b.getNamedAttr("solver_variables",
                     b.getI64IntegerAttr(solution->solverVariables))};
  if (std::isfinite(greedySeconds))
    record.push_back(
        b.getNamedAttr("greedy_seconds", b.getF64FloatAttr(greedySeconds)));
  fn->setAttr("oflow.planner", b.getDictionaryAttr(record));
  return success();
}

namespace {
struct InferSbp : ::oflow::impl::InferSbpBase<InferSbp> {
  using InferSbpBase::InferSbpBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!mesh)
      mesh = of::MeshAttr::get(&getContext(), {1});
    llvm::Expected<::oflow::DeviceProfile> profile = ::oflow::loadDeviceProfile(device);
    if (!profile) {
      module.emitError() << "oflow-infer-sbp: " << llvm::toString(profile.takeError());
      return signalPassFailure();
    }
    static constexpr StringRef kPrecisions[] = {"fp32", "tf32", "bf16", "fp16"};
    if (!llvm::is_contained(kPrecisions, StringRef(precision))) {
      module.emitError() << "oflow-infer-sbp: unknown precision '" << precision
                         << "' (fp32, tf32, bf16 or fp16)";
      return signalPassFailure();
    }
    std::optional<Planner::ShardState> shard =
        llvm::StringSwitch<std::optional<Planner::ShardState>>(shardState)
            .Case("none", Planner::ShardState::None)
            .Case("optimizer", Planner::ShardState::Optimizer)
            .Case("all", Planner::ShardState::All)
            .Case("node", Planner::ShardState::Node)
            .Default(std::nullopt);
    if (!shard) {
      module.emitError() << "oflow-infer-sbp: unknown shard-state '" << shardState
                         << "' (none, optimizer, all or node)";
      return signalPassFailure();
    }
    if (planner_ != "greedy" && planner_ != "ilp") {
      module.emitError() << "oflow-infer-sbp: unknown planner '" << planner_
                         << "' (greedy or ilp)";
      return signalPassFailure();
    }
    if (tensorParallel != "cost" && tensorParallel != "none") {
      module.emitError() << "oflow-infer-sbp: unknown tensor-parallel '" << tensorParallel
                         << "' (cost or none)";
      return signalPassFailure();
    }
    Planner planner(module, mesh, sbp::deviceFor(*profile, precision), *shard,
                    tensorParallel == "none");
    if (!planner.parseHints(hints, module.getLoc()) ||
        failed(planner.layOutVariables(module)))
      return signalPassFailure();
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isDeclaration() &&
          (failed(planner.planFunction(fn)) ||
           (planner_ == "ilp" &&
            failed(planner.planFunctionExactly(fn, tieLayers, ilpSeconds)))))
        return signalPassFailure();
    if (failed(planner.checkHintsUsed(module.getLoc())))
      return signalPassFailure();
  }
};
} // namespace
