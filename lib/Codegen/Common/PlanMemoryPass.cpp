//===- PlanMemoryPass.cpp - entry buffers -> views of one static arena ----===//
#include "oflow/Codegen/MemoryPlan.h"
#include "oflow/Codegen/DeclareFunction.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace oflow {
#define GEN_PASS_DEF_PLANMEMORY
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Index of the top-level op of `block` that contains `op`.
int64_t topLevelIndex(Operation *op, Block &block,
                      const DenseMap<Operation *, int64_t> &index) {
  Operation *top = block.findAncestorOpInBlock(*op);
  return top ? index.lookup(top) : -1;
}

/// The last top-level step at which `root` or any view of it is used.
int64_t lastUse(Value root, Block &block,
                const DenseMap<Operation *, int64_t> &index) {
  int64_t last = -1;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      last = std::max(last, topLevelIndex(user, block, index));
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == v)
          llvm::append_range(worklist, user->getResults());
    }
  }
  return last;
}

/// The allocation `v` is a view of, or null.
memref::AllocOp allocOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      return alloc;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return {};
    v = view.getViewSource();
  }
  return {};
}

/// The allocations holding a weight gathered whole: what an all-gather of
/// a variable's pieces writes (kGatheredWeightAttr), and what one-input
/// linalg ops make of it (its bf16 rounding, a transpose).
llvm::DenseSet<Operation *> gatheredWeightAllocs(Block &block) {
  llvm::DenseSet<Operation *> gathered;
  for (Operation &op : block) {
    if (op.hasAttr(kGatheredWeightAttr)) {
      gathered.insert(&op);
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1)
      continue;
    memref::AllocOp in = allocOf(linalgOp.getDpsInputs()[0]);
    memref::AllocOp out = allocOf(linalgOp.getDpsInits()[0]);
    if (in && out && gathered.contains(in))
      gathered.insert(out);
  }
  return gathered;
}

/// One buffer access of a top-level op.
struct Access {
  unsigned buffer;
  bool write;
};

/// Records, per top-level step, the accesses to `root` (buffer `id`) and to
/// its views; an op that does not say what it does with the memref (a
/// runtime call) counts as writing it.
void collectAccesses(Value root, unsigned id, Block &block,
                     const DenseMap<Operation *, int64_t> &index,
                     std::vector<SmallVector<Access>> &accesses) {
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      int64_t step = topLevelIndex(user, block, index);
      if (step < 0)
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      bool write = !effects || effects.getEffectOnValue<MemoryEffects::Write>(v) ||
                   user->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
      accesses[step].push_back({id, write});
    }
  }
}

/// Records the accesses to the views of an entry argument (state, io), one
/// buffer per group of views whose bytes overlap (ids from `next` on), as
/// the layout of the program interface placed them; the whole argument is
/// one buffer when a use is not such a view. Returns the next free id.
unsigned collectArgumentAccesses(BlockArgument arg, unsigned next, Block &block,
                                 const DenseMap<Operation *, int64_t> &index,
                                 std::vector<SmallVector<Access>> &accesses) {
  struct Range {
    memref::ViewOp view;
    int64_t begin, end;
  };
  SmallVector<Range> ranges;
  for (Operation *user : arg.getUsers()) {
    auto view = dyn_cast<memref::ViewOp>(user);
    std::optional<int64_t> shift =
        view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
    if (!shift || !view.getType().hasStaticShape()) {
      collectAccesses(arg, next, block, index, accesses);
      return next + 1;
    }
    MemRefType type = view.getType();
    ranges.push_back({view, *shift,
                      *shift + std::max<int64_t>(1, type.getNumElements() *
                                                        elementBytes(type.getElementType()))});
  }
  llvm::sort(ranges, [](const Range &a, const Range &b) { return a.begin < b.begin; });
  int64_t groupEnd = -1;
  for (Range &r : ranges) {
    if (r.begin >= groupEnd)
      ++next; // a new group: no earlier view reaches these bytes
    groupEnd = std::max(groupEnd, r.end);
    collectAccesses(r.view.getResult(), next - 1, block, index, accesses);
  }
  return next;
}

/// Each top-level step's dependence level, as late as possible: one before
/// the lowest later step that accesses a common buffer, one of the two
/// writing it, with as many levels as the schedule as soon as possible
/// (`asap`). What the backward pass reads of the forward pass (casts,
/// transposes) is then made just before it, not kept from the forward pass.
/// No step goes more than kLevelSlack levels past the highest level as soon
/// as possible of the steps up to it in program order: a weight's gradient,
/// read only by the optimizer at the end, stays near the backward step that
/// makes it (left to float, every layer's gradient and what it is made of
/// would share the last levels, and no two of them could share bytes).
/// The slack trades memory for launches (sharing bytes orders kernels that
/// could share a launch): 0 pins steps to program order (a 4-layer ZeRO-3
/// GPT's arena on 8 devices 86 MB; GPT-2 small's step 396 launches), 8: 91
/// MB and 385 launches, unbounded: 144 MB and 383 launches.
constexpr int64_t kLevelSlack = 8;

std::vector<int64_t> lateLevels(ArrayRef<SmallVector<Access>> accesses,
                                unsigned buffers, ArrayRef<int64_t> asap) {
  int64_t levels = 0;
  std::vector<int64_t> frontier(asap.size());
  for (auto [step, l] : llvm::enumerate(asap)) {
    levels = std::max(levels, l + 1);
    frontier[step] = levels - 1;
  }
  std::vector<int64_t> level(accesses.size(), levels - 1);
  // Per buffer: the level of the next writer, and the lowest reader before it.
  std::vector<int64_t> written(buffers, levels), read(buffers, levels);
  for (size_t step = accesses.size(); step-- > 0;) {
    int64_t l = std::min(levels - 1, frontier[step] + kLevelSlack);
    for (const Access &a : accesses[step])
      l = std::min(l, (a.write ? std::min(written[a.buffer], read[a.buffer])
                               : written[a.buffer]) - 1);
    level[step] = l;
    for (const Access &a : accesses[step]) {
      if (a.write) {
        written[a.buffer] = l;
        read[a.buffer] = levels;
      } else {
        read[a.buffer] = std::min(read[a.buffer], l);
      }
    }
  }
  return level;
}

/// Each top-level step's dependence level, as soon as possible: one past
/// the highest earlier step that accesses a common buffer, one of the two
/// writing it.
std::vector<int64_t> earlyLevels(ArrayRef<SmallVector<Access>> accesses,
                                 unsigned buffers) {
  std::vector<int64_t> level(accesses.size(), 0);
  // Per buffer: the level of its last writer, and the highest reader since.
  std::vector<int64_t> written(buffers, -1), read(buffers, -1);
  for (size_t step = 0; step < accesses.size(); ++step) {
    int64_t l = 0;
    for (const Access &a : accesses[step])
      l = std::max(l, (a.write ? std::max(written[a.buffer], read[a.buffer])
                               : written[a.buffer]) + 1);
    level[step] = l;
    for (const Access &a : accesses[step]) {
      if (a.write) {
        written[a.buffer] = l;
        read[a.buffer] = -1;
      } else {
        read[a.buffer] = std::max(read[a.buffer], l);
      }
    }
  }
  return level;
}

struct PlanMemoryPass : impl::PlanMemoryBase<PlanMemoryPass> {
  using Base::Base;
  void runOnOperation() override;
  LogicalResult planEntry(func::FuncOp func, int64_t &arenaBytes);
};

} // namespace

/// The io offset of the i8 scalar `poison`, or -1.
static int64_t poisonOffset(ModuleOp module) {
  auto slots = module->getAttrOfType<ArrayAttr>(kIoLayoutAttr);
  if (!slots)
    return -1;
  for (auto slot : slots.getAsRange<DictionaryAttr>())
    if (slot.getAs<StringAttr>("kind").getValue() == "scalar" &&
        slot.getAs<StringAttr>("name").getValue() == "poison")
      return slot.getAs<IntegerAttr>("offset").getInt();
  return -1;
}

LogicalResult PlanMemoryPass::planEntry(func::FuncOp func, int64_t &arenaBytes) {
  Block &block = func.getBody().front();
  if (block.getNumArguments() != 3)
    return func.emitOpError("is not bound to the program interface; run "
                            "oflow-bind-program-interface first");
  Value arena = block.getArgument(2), io = block.getArgument(1);

  DenseMap<Operation *, int64_t> index;
  std::vector<Operation *> ops; // by step
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }

  SmallVector<memref::AllocOp> allocs;
  WalkResult walk = func.walk([&](memref::AllocOp alloc) -> WalkResult {
    if (alloc->getBlock() != &block)
      return alloc.emitOpError("inside a region cannot be planned statically "
                               "(it would be allocated on every iteration)");
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return alloc.emitOpError("needs a static shape and identity layout to "
                               "be planned, got ")
             << type;
    allocs.push_back(alloc);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Deallocations are the planner's business now.
  SmallVector<Operation *> deallocs;
  func.walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
  for (Operation *d : deallocs)
    d->erase();

  std::vector<BufferLifetime> lifetimes;
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    int64_t bytes = type.getNumElements() * elementBytes(type.getElementType());
    int64_t first = index.lookup(alloc);
    int64_t last = std::max(first, lastUse(alloc.getResult(), block, index));
    lifetimes.push_back({bytes, first, last});
  }
  std::vector<BufferLifetime> planned = lifetimes;
  if (byLevel) {
    // Buffers 0..n-1 are the allocations, then the entry's arguments
    // (state, io: whole, as their own planner laid them out).
    std::vector<SmallVector<Access>> accesses(ops.size());
    for (auto [i, alloc] : llvm::enumerate(allocs))
      collectAccesses(alloc.getResult(), i, block, index, accesses);
    unsigned buffers = allocs.size();
    for (BlockArgument arg : block.getArguments())
      if (arg != arena)
        buffers = collectArgumentAccesses(arg, buffers, block, index, accesses);
    std::vector<int64_t> level =
        lateLevels(accesses, buffers, earlyLevels(accesses, buffers));
    std::vector<int64_t> first(allocs.size(), INT64_MAX), last(allocs.size(), -1);
    for (size_t step = 0; step < ops.size(); ++step)
      for (const Access &a : accesses[step])
        if (a.buffer < allocs.size()) {
          first[a.buffer] = std::min(first[a.buffer], level[step]);
          last[a.buffer] = std::max(last[a.buffer], level[step]);
        }
    // Both orders: the program runs in steps (oflow-fuse-launches reorders
    // only what the plan lets it), and sharing within a level would chain it.
    for (size_t i = 0; i < allocs.size(); ++i)
      if (last[i] >= 0) {
        planned[i].firstLevel = first[i];
        planned[i].lastLevel = last[i];
      }
  }
  if (!reuse)
    for (BufferLifetime &l : planned)
      l = {l.bytes, 0, static_cast<int64_t>(ops.size())};
  MemoryPlan plan = planMemory(planned, kBufferAlignment);
  // Weights all-gathered whole (ZeRO-3): their bytes, and the most of them
  // live at one step (a layer's when each is gathered again for the
  // backward pass; all of them when the forward copies are kept).
  int64_t gathered = 0, gatheredPeak = 0;
  {
    std::map<int64_t, int64_t> delta;
    llvm::DenseSet<Operation *> weights = gatheredWeightAllocs(block);
    for (auto [i, alloc] : llvm::enumerate(allocs))
      if (weights.contains(alloc)) {
        gathered += lifetimes[i].bytes;
        delta[lifetimes[i].first] += lifetimes[i].bytes;
        delta[lifetimes[i].last + 1] -= lifetimes[i].bytes;
      }
    int64_t live = 0;
    for (auto [step, change] : delta)
      gatheredPeak = std::max(gatheredPeak, live += change);
  }
  arenaBytes = std::max(arenaBytes, plan.peak);

  OpBuilder b(func.getContext());
  Builder attrs(func.getContext());
  func->setAttr(kMemoryPlanAttr,
                attrs.getDictionaryAttr(
                    {attrs.getNamedAttr("peak", attrs.getI64IntegerAttr(plan.peak)),
                     attrs.getNamedAttr("naive", attrs.getI64IntegerAttr(plan.naive)),
                     attrs.getNamedAttr("lower_bound",
                                        attrs.getI64IntegerAttr(plan.lowerBound)),
                     attrs.getNamedAttr("buffers", attrs.getI64IntegerAttr(
                                                       lifetimes.size())),
                     attrs.getNamedAttr("gathered_weights",
                                        attrs.getI64IntegerAttr(gathered)),
                     attrs.getNamedAttr("gathered_weights_peak",
                                        attrs.getI64IntegerAttr(gatheredPeak))}));

  // Checking mode: load the flag once, poison each region after its last use.
  int64_t poisonAt = poisonOffset(func->getParentOfType<ModuleOp>());
  Value poison;
  if (poisonAt >= 0 && !allocs.empty()) {
    b.setInsertionPointToStart(&block);
    Location loc = func.getLoc();
    Value flag;
    if (hostFlag) {
      func::FuncOp query = declareFunction(
          func->getParentOfType<ModuleOp>(), "oflow_rt_check_memory",
          b.getFunctionType({}, {b.getI8Type()}));
      flag = func::CallOp::create(b, loc, query, ValueRange{}).getResult(0);
    } else {
      Value shift = arith::ConstantIndexOp::create(b, loc, poisonAt);
      auto flagType = MemRefType::get({}, b.getI8Type());
      Value flagView =
          memref::ViewOp::create(b, loc, flagType, io, shift, ValueRange{});
      flag = memref::LoadOp::create(b, loc, flagView, ValueRange{});
    }
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 8);
    poison = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, zero);
  }

  for (auto [i, alloc] : llvm::enumerate(allocs)) {
    Location loc = alloc.getLoc();
    b.setInsertionPoint(alloc);
    Value shift = arith::ConstantIndexOp::create(b, loc, plan.offsets[i]);
    Value view = memref::ViewOp::create(b, loc, alloc.getType(), arena, shift,
                                        ValueRange{});
    alloc.replaceAllUsesWith(view);
    alloc.erase();
    if (!poison)
      continue;
    if (lifetimes[i].last == lifetimes[i].first)
      continue; // never used: nothing to poison
    Operation *lastOp = ops[lifetimes[i].last];
    if (isa<func::ReturnOp>(lastOp))
      continue;
    b.setInsertionPointAfter(lastOp);
    // All-ones bytes (a NaN in every float), written as i32 words where the
    // size allows: a quarter of the stores, and of the GPU's threads.
    int64_t bytes = lifetimes[i].bytes;
    unsigned width = bytes % 4 == 0 ? 32 : 8;
    auto wordsType = MemRefType::get({bytes / (width / 8)}, b.getIntegerType(width));
    auto ifOp = scf::IfOp::create(b, loc, poison, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value at = arith::ConstantIndexOp::create(b, loc, plan.offsets[i]);
    Value words = memref::ViewOp::create(b, loc, wordsType, arena, at, ValueRange{});
    Value ones = arith::ConstantIntOp::create(b, loc, -1, width);
    linalg::FillOp::create(b, loc, ValueRange{ones}, ValueRange{words});
  }
  return success();
}

void PlanMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  int64_t arenaBytes = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kEntryAttr) && failed(planEntry(func, arenaBytes)))
      return signalPassFailure();
  module->setAttr(kArenaBytesAttr,
                  Builder(module.getContext()).getI64IntegerAttr(arenaBytes));
}

} // namespace oflow
