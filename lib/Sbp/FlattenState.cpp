//===- FlattenState.cpp - sharded state stored flat (FSDP) ----------------===//
//
// See Passes.td. --shard-state splits a variable along a tensor axis that a
// mesh axis divides. GPT-2 XL's 1600x1600 weights on 128x8 devices have
// none for the 128: each node would hold a whole copy of their state, 40x
// ZeRO-3's closed form. Stored as the row-major view [devices, n/devices]
// (padded with zeros where the devices do not divide it), the same bytes split
// over every device.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/Passes.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Sbp/SbpConversions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinDialect.h"
#include "llvm/Support/GlobPattern.h"


namespace oflow {
#define GEN_PASS_DEF_FLATTENSTATE
#include "oflow/Sbp/Passes.h.inc"
} // namespace oflow

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow {
namespace {

/// A variable's own shape, recorded where it is stored flat.
constexpr StringLiteral kViewAttr = of::OFlowDialect::kViewAttrName;

RankedTensorType withShape(Type type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, cast<RankedTensorType>(type).getElementType());
}

bool hasShape(Value value, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getShape() == shape;
}

bool isScalar(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 0;
}

/// Ops an update may be made of: elementwise, with scalars broadcast.
bool isElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<of::AddOp, of::SubOp, of::MulOp, of::DivOp, of::PowOp, of::MaxOp, of::MinOp,
             of::CompareOp, of::WhereOp>(op);
}

/// A parameter and its optimizer slots.
struct Group {
  of::VariableOp param;
  SmallVector<of::VariableOp> slots;
  SmallVector<int64_t> shape, flat;
  int64_t elements = 0; // of `shape`; `flat` holds more when padded
  llvm::StringSet<> names;      // every member
  llvm::StringSet<> flatNames;  // the members stored flat
};

/// The update of one group in one function: the ops between the reads of
/// its flat members and the writes of its members.
struct Update {
  llvm::SetVector<Operation *> ops; // in block order
  SmallVector<of::ReadVariableOp> reads;
  SmallVector<of::WriteVariableOp> writes;
};

class Flattener {
public:
  Flattener(ModuleOp module, of::MeshAttr mesh, StringRef shardState,
            ArrayRef<std::string> flat)
      : module(module), mesh(mesh), shardState(shardState),
        microAxis(sbp::microBatchAxis(mesh)) {
    for (const std::string &name : flat)
      named.insert(name);
  }

  LogicalResult parseHints(ArrayRef<std::string> texts);
  void run();

private:
  /// The layout a hint (or the variable's own `sbp`) gives `var`; null if none.
  of::NdSbpAttr hintFor(of::VariableOp var);
  bool wantsFlat(of::VariableOp var, bool isParam, bool paramHinted, const Group &g);
  /// One walk per function, before any rewrite: its variable reads and
  /// writes by name, and the position of each top-level op (the update's
  /// ops are never new, so the positions stay right for every group).
  struct FunctionIndex {
    func::FuncOp fn;
    llvm::StringMap<SmallVector<of::ReadVariableOp>> reads;
    llvm::StringMap<SmallVector<of::WriteVariableOp>> writes;
    DenseMap<Operation *, int64_t> position;
  };
  static FunctionIndex indexFunction(func::FuncOp fn);
  FailureOr<Update> findUpdate(const FunctionIndex &index, const Group &g);
  void flatten(Group &g, ArrayRef<std::pair<func::FuncOp, Update>> updates);
  Value toShape(OpBuilder &b, Value value, ArrayRef<int64_t> shape) {
    if (hasShape(value, shape))
      return value;
    return of::ReshapeOp::create(b, value.getLoc(), withShape(value.getType(), shape), value,
                                 b.getDenseI64ArrayAttr(shape));
  }
  /// A value of the group's own shape in its stored view: zeros after its
  /// elements where the view is padded.
  Value toStorage(OpBuilder &b, Value value, const Group &g) {
    int64_t stored = g.flat[0] * g.flat[1];
    if (stored == g.elements)
      return toShape(b, value, g.flat);
    Value row = toShape(b, value, {g.elements});
    Value padded = of::SliceBackwardOp::create(b, value.getLoc(), row, {stored}, {0},
                                               {g.elements}, {1});
    return toShape(b, padded, g.flat);
  }
  /// The inverse: the stored view's first elements in the group's shape.
  Value toOwn(OpBuilder &b, Value value, const Group &g) {
    int64_t stored = g.flat[0] * g.flat[1];
    if (stored == g.elements)
      return toShape(b, value, g.shape);
    Value row = toShape(b, value, {stored});
    Value head = of::SliceOp::create(b, value.getLoc(), row, {0}, {g.elements}, {1});
    return toShape(b, head, g.shape);
  }

  ModuleOp module;
  of::MeshAttr mesh;
  StringRef shardState;
  std::optional<int64_t> microAxis;
  SmallVector<std::pair<llvm::GlobPattern, of::NdSbpAttr>> hints;
  llvm::StringSet<> named; // stored flat whatever their hints say
};

LogicalResult Flattener::parseHints(ArrayRef<std::string> texts) {
  MLIRContext *ctx = module.getContext();
  int64_t userAxes = mesh.getNumAxes() - (microAxis ? 1 : 0);
  for (const std::string &text : texts) {
    auto [name, layoutText] = StringRef(text).split('=');
    FailureOr<of::NdSbpAttr> layout = sbp::parseLayoutText(ctx, layoutText, userAxes);
    auto pattern = llvm::GlobPattern::create(name);
    // oflow-infer-sbp reports bad hints; here they only go unused.
    if (failed(layout) || !pattern) {
      if (!pattern)
        llvm::consumeError(pattern.takeError());
      continue;
    }
    of::NdSbpAttr full = *layout;
    if (microAxis) {
      SmallVector<of::SbpAttr> entries(full.getEntries());
      entries.push_back(of::SbpAttr::getBroadcast(ctx));
      full = of::NdSbpAttr::get(ctx, entries);
    }
    hints.push_back({std::move(*pattern), full});
  }
  return success();
}

of::NdSbpAttr Flattener::hintFor(of::VariableOp var) {
  if (of::NdSbpAttr own = var.getSbpAttr())
    return own;
  for (auto &[pattern, layout] : hints)
    if (pattern.match(var.getSymName()))
      return layout;
  if (var.getModelName())
    for (auto &[pattern, layout] : hints)
      if (pattern.match(*var.getModelName()))
        return layout;
  return {};
}

bool Flattener::wantsFlat(of::VariableOp var, bool isParam, bool paramHinted,
                          const Group &g) {
  // A plan file's flat variable; a hinted one keeps its shape (a hint that
  // does not divide it is an error oflow-infer-sbp reports).
  if (named.contains(var.getSymName()))
    return true;
  if (hintFor(var))
    return false;
  bool node = shardState == "node";
  if (isParam ? !(shardState == "all" || node)
              : (shardState == "none" || paramHinted))
    return false;
  int64_t own = sbp::splitPieces(
      mesh, sbp::shardedLayout(mesh, microAxis, g.shape, nullptr, node));
  int64_t flat = sbp::splitPieces(
      mesh, sbp::shardedLayout(mesh, microAxis, g.flat, nullptr, node));
  return flat > own;
}

Flattener::FunctionIndex Flattener::indexFunction(func::FuncOp fn) {
  FunctionIndex index;
  index.fn = fn;
  fn.walk([&](Operation *op) {
    if (auto read = dyn_cast<of::ReadVariableOp>(op))
      index.reads[read.getVariable()].push_back(read);
    else if (auto write = dyn_cast<of::WriteVariableOp>(op))
      index.writes[write.getVariable()].push_back(write);
  });
  for (Operation &op : fn.getBody().front())
    index.position[&op] = index.position.size();
  return index;
}

FailureOr<Update> Flattener::findUpdate(const FunctionIndex &index, const Group &g) {
  Update u;
  for (const auto &name : g.names) {
    if (g.flatNames.contains(name.getKey()))
      if (auto it = index.reads.find(name.getKey()); it != index.reads.end())
        llvm::append_range(u.reads, it->second);
    if (auto it = index.writes.find(name.getKey()); it != index.writes.end())
      llvm::append_range(u.writes, it->second);
  }
  // Forward from the flat reads, backward from the writes.
  DenseSet<Operation *> downstream;
  SmallVector<Operation *> work;
  for (of::ReadVariableOp read : u.reads)
    work.push_back(read);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Operation *user : op->getUsers())
      if (isElementwise(user) && downstream.insert(user).second)
        work.push_back(user);
  }
  DenseSet<Operation *> upstream;
  for (of::WriteVariableOp write : u.writes)
    if (Operation *def = write.getValue().getDefiningOp())
      work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!downstream.contains(op) || !upstream.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  // In block order, each made of the group's shape or scalars.
  SmallVector<Operation *> ordered(upstream.begin(), upstream.end());
  if (llvm::any_of(ordered, [&](Operation *op) { return !index.position.count(op); }))
    return failure(); // an update op inside a region
  llvm::sort(ordered, [&](Operation *a, Operation *b) {
    return index.position.lookup(a) < index.position.lookup(b);
  });
  for (Operation *op : ordered) {
    if (!hasShape(op->getResult(0), g.shape))
      return failure();
    for (Value operand : op->getOperands())
      if (!isScalar(operand) && !hasShape(operand, g.shape))
        return failure();
    u.ops.insert(op);
  }
  // A flat member's new value must come out of the update (or be its read).
  for (of::WriteVariableOp write : u.writes) {
    if (!g.flatNames.contains(write.getVariable()))
      continue;
    Operation *def = write.getValue().getDefiningOp();
    auto read = dyn_cast_or_null<of::ReadVariableOp>(def);
    if (!def || (!u.ops.contains(def) && !(read && g.flatNames.contains(read.getVariable()))))
      return failure();
  }
  return u;
}

/// `init`'s elements as `flatType`: the same bytes, zeros after them where
/// the view is padded (a splat stays a splat: its value there is unused).
ElementsAttr storedInitialValue(ElementsAttr init, RankedTensorType flatType,
                                StringRef name) {
  if (auto dense = dyn_cast<DenseElementsAttr>(init)) {
    if (dense.isSplat())
      return DenseElementsAttr::get(flatType, dense.getSplatValue<Attribute>());
    if (dense.getNumElements() == flatType.getNumElements())
      return dense.reshape(flatType);
    SmallVector<char> bytes(dense.getRawData());
    bytes.resize(flatType.getNumElements() * (bytes.size() / dense.getNumElements()), 0);
    return DenseElementsAttr::getFromRawBuffer(flatType, bytes);
  }
  auto resource = cast<DenseResourceElementsAttr>(init);
  if (resource.getNumElements() == flatType.getNumElements())
    return DenseResourceElementsAttr::get(flatType, resource.getRawHandle());
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  SmallVector<char> bytes(data);
  bytes.resize(flatType.getNumElements() * (data.size() / resource.getNumElements()), 0);
  return DenseResourceElementsAttr::get(
      flatType, (name + ".stored").str(),
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<char>(bytes)));
}

void Flattener::flatten(Group &g, ArrayRef<std::pair<func::FuncOp, Update>> updates) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  auto view = DenseI64ArrayAttr::get(ctx, g.shape);
  SmallVector<of::VariableOp> members = {g.param};
  llvm::append_range(members, g.slots);
  for (of::VariableOp var : members) {
    if (!g.flatNames.contains(var.getSymName()))
      continue;
    RankedTensorType flatType = withShape(var.getType(), g.flat);
    if (auto init = var.getInitialValueAttr())
      var.setInitialValueAttr(storedInitialValue(init, flatType, var.getSymName()));
    // A recipe draws element i of the row-major order, whatever the shape.
    if (of::InitAttr recipe = var.getInitializerAttr())
      var.setInitializerAttr(of::InitAttr::get(ctx, recipe.getKind(), recipe.getA(),
                                               recipe.getB(), recipe.getSeed(), flatType));
    var.setType(flatType);
    var->setAttr(kViewAttr, view);
  }
  for (auto &[fn, u] : updates) {
    // Reads: flat; their users outside the update see the own shape.
    for (of::ReadVariableOp read : u.reads) {
      Value value = read.getValue();
      value.setType(withShape(value.getType(), g.flat));
      b.setInsertionPointAfter(read);
      Value own;
      for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
        if (u.ops.contains(use.getOwner()))
          continue;
        if (auto write = dyn_cast<of::WriteVariableOp>(use.getOwner()))
          if (g.flatNames.contains(write.getVariable()))
            continue;
        if (!own)
          own = toOwn(b, value, g);
        use.set(own);
      }
    }
    // The update on the flat view: other values of the own shape enter
    // through a reshape each (made once, before their first use here).
    DenseMap<Value, Value> entered;
    for (Operation *op : u.ops) {
      for (OpOperand &operand : op->getOpOperands()) {
        Value v = operand.get();
        Operation *def = v.getDefiningOp();
        if (isScalar(v) || (def && u.ops.contains(def)) || hasShape(v, g.flat))
          continue;
        Value &flat = entered[v];
        if (!flat) {
          b.setInsertionPoint(op);
          flat = toStorage(b, v, g);
        }
        operand.set(flat);
      }
      Value result = op->getResult(0);
      result.setType(withShape(result.getType(), g.flat));
    }
    // Users past the update (other than writes) see the own shape again.
    for (Operation *op : u.ops) {
      Value result = op->getResult(0);
      Value own;
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        if (u.ops.contains(use.getOwner()) || isa<of::WriteVariableOp>(use.getOwner()))
          continue;
        if (!own) {
          b.setInsertionPointAfter(op);
          own = toOwn(b, result, g);
        }
        use.set(own);
      }
    }
    for (of::WriteVariableOp write : u.writes) {
      bool flatVar = g.flatNames.contains(write.getVariable());
      Value value = write.getValue();
      if (flatVar == hasShape(value, g.flat))
        continue;
      b.setInsertionPoint(write);
      write.getValueMutable().assign(flatVar ? toStorage(b, value, g) : toOwn(b, value, g));
    }
  }
  // A grads entry's gradient of a flat parameter: returned flat, in the
  // parameter's layout (so that it is no larger than the parameter).
  if (!g.flatNames.contains(g.param.getSymName()))
    return;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    bool changed = false;
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto of = fn.getResultAttrOfType<StringAttr>(i, "oflow.grad_of");
      if (!of || of.getValue() != g.param.getSymName() ||
          !hasShape(ret.getOperand(i), g.shape))
        continue;
      b.setInsertionPoint(ret);
      ret->setOperand(i, toStorage(b, ret.getOperand(i), g));
      fn.setResultAttr(i, kViewAttr, view);
      changed = true;
    }
    if (changed)
      fn.setType(FunctionType::get(ctx, fn.getArgumentTypes(), ret.getOperandTypes()));
  }
}

void Flattener::run() {
  int64_t devices = 1;
  for (auto [a, size] : llvm::enumerate(mesh.getShape()))
    if (static_cast<int64_t>(a) != microAxis)
      devices *= size;
  if (devices == 1)
    return;
  llvm::StringMap<Group> groups;
  SmallVector<StringRef> order;
  for (auto var : module.getOps<of::VariableOp>())
    if (var.getRole() == of::VariableRole::param) {
      groups[var.getSymName()].param = var;
      order.push_back(var.getSymName());
    }
  for (auto var : module.getOps<of::VariableOp>())
    if (var.getRole() == of::VariableRole::optimizer && var.getOfAttr()) {
      auto it = groups.find(var.getOfAttr().getValue());
      if (it != groups.end())
        it->second.slots.push_back(var);
    }
  SmallVector<FunctionIndex> functions;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      functions.push_back(indexFunction(fn));
  for (StringRef name : order) {
    Group &g = groups[name];
    auto type = cast<RankedTensorType>(g.param.getType());
    g.shape.assign(type.getShape().begin(), type.getShape().end());
    int64_t n = type.getNumElements();
    if (type.getRank() == 0 || n == 0)
      continue;
    // One row per device, the last rows padded with zeros where the
    // devices do not divide the elements, as FSDP pads its flat parameters.
    // A short one (a 1600-element bias on 1024 devices) holds a few
    // elements per device; oflow-bucket-collectives gathers and scatters
    // such small pieces together, so their latency is paid once per bucket.
    g.elements = n;
    int64_t rows = devices;
    if (rows == 1)
      continue;
    g.flat = {rows, llvm::divideCeil(n, rows)};
    bool paramHinted = static_cast<bool>(hintFor(g.param));
    if (wantsFlat(g.param, /*isParam=*/true, paramHinted, g))
      g.flatNames.insert(g.param.getSymName());
    for (of::VariableOp slot : g.slots)
      if (cast<RankedTensorType>(slot.getType()).getShape() == ArrayRef(g.shape) &&
          wantsFlat(slot, /*isParam=*/false, paramHinted, g))
        g.flatNames.insert(slot.getSymName());
    if (g.flatNames.empty())
      continue;
    g.names.insert(g.param.getSymName());
    for (of::VariableOp slot : g.slots)
      g.names.insert(slot.getSymName());
    // Stored values that cannot be viewed flat leave the group as it is.
    auto viewable = [&](of::VariableOp var) {
      Attribute init = var.getInitialValueAttr();
      auto dense = dyn_cast_or_null<DenseElementsAttr>(init);
      auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(init);
      return !g.flatNames.contains(var.getSymName()) || !init ||
             (dense && !dense.getElementType().isInteger(1)) ||
             (resource && resource.getRawHandle().getBlob());
    };
    if (!viewable(g.param) || !llvm::all_of(g.slots, viewable))
      continue;
    SmallVector<std::pair<func::FuncOp, Update>> updates;
    bool ok = true;
    for (const FunctionIndex &index : functions) {
      FailureOr<Update> u = findUpdate(index, g);
      if (failed(u)) {
        ok = false;
        break;
      }
      updates.push_back({index.fn, std::move(*u)});
    }
    if (ok)
      flatten(g, updates);
  }
}

struct FlattenStatePass : impl::FlattenStateBase<FlattenStatePass> {
  using FlattenStateBase::FlattenStateBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
    if (!mesh)
      return;
    Flattener flattener(module, mesh, shardState, flat);
    if (failed(flattener.parseHints(hints)))
      return signalPassFailure();
    flattener.run();
  }
};

} // namespace
} // namespace oflow
