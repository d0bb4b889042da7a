//===- GpuRowReductions.cpp - row reductions, one warp per row ------------===//
//
// The fallback runs a reduction one thread per output: a softmax over 1024
// columns is then 32 lanes each walking its own row, 32 sectors per warp
// load, and (with split-reductions) several kernels per reduction. Here a
// row reduction and the row-wise ops after it become one kernel in which a
// warp owns a row: lanes read consecutive columns (coalesced), a butterfly
// of shuffles combines the lanes' partials, and the next members of the
// group reuse the result from registers. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_GPUROWREDUCTIONS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {

int64_t WarpRowReduction::rowCount() const { return ShapedType::getNumElements(rows); }

int64_t WarpRowReduction::colCount() const { return ShapedType::getNumElements(cols); }

/// Whether `map`'s results are loops 0..n-1, each once: every point of
/// those loops writes its own element.
static bool writesEachPointOnce(AffineMap map, unsigned n) {
  if (map.getNumResults() != n)
    return false;
  llvm::SmallBitVector seen(n);
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || d.getPosition() >= n || seen.test(d.getPosition()))
      return false;
    seen.set(d.getPosition());
  }
  return true;
}

std::optional<WarpRowReduction> matchWarpRowReduction(linalg::GenericOp op,
                                                      int64_t maxChain) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.getNumLoops() == 0)
    return std::nullopt;
  WarpRowReduction r;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  bool inCols = false;
  for (auto [extent, it] : llvm::zip(ranges, op.getIteratorTypesArray())) {
    bool reduction = it == utils::IteratorType::reduction;
    if (inCols && !reduction)
      return std::nullopt;
    inCols |= reduction;
    (reduction ? r.cols : r.rows).push_back(extent);
  }
  int64_t cols = r.colCount();
  if (cols < 32 || cols > 32 * maxChain)
    return std::nullopt;
  OpOperand &init = op.getDpsInitsMutable()[0];
  if (!getElementTypeOrSelf(init.get().getType()).isF32())
    return std::nullopt;
  if (!writesEachPointOnce(op.getMatchingIndexingMap(&init), r.rows.size()))
    return std::nullopt;
  r.combiner = floatCombiner(op);
  if (!r.combiner)
    return std::nullopt;
  return r;
}

namespace {

/// How many ops outside a group its scan looks past (each moves after the
/// kernel): enough for a norm's weight and bias gradients, partial and fold.
constexpr unsigned kMaxSkipped = 8;

/// One access of a group member to a buffer.
struct Access {
  Value memref;
  AffineMap map;
  bool write = false;
  bool reductionResult = false; ///< a reduction's output, stored by lane 0
  BufferBytes bytes;
  size_t member = 0; ///< the index of the member that makes it
};

struct Member {
  linalg::GenericOp op;
  std::optional<WarpRowReduction> reduction;
  linalg::FillOp initFill; ///< folded into the reduction's initial value
  /// Loops over the rows only (`mean = sum / n`): every lane computes the
  /// value, lane 0 stores it, like a reduction's result.
  bool rowScalar = false;
};

/// A run of row-wise generics over the same rows and columns.
class Group {
public:
  Group(const WarpRowReduction &shape) : rows(shape.rows), cols(shape.cols) {}

  /// Adds `op` if it runs over this group's loops without a hazard.
  bool tryAdd(linalg::GenericOp op, int64_t maxChain) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0)
      return false;
    SmallVector<int64_t> ranges(rows);
    llvm::append_range(ranges, cols);
    Member m{op, std::nullopt, nullptr};
    if (!rows.empty() && op.getStaticLoopRanges() == ArrayRef<int64_t>(rows) &&
        op.getNumReductionLoops() == 0)
      m.rowScalar = true;
    else if (op.getStaticLoopRanges() != ArrayRef<int64_t>(ranges))
      return false;
    if (op.getNumReductionLoops()) {
      m.reduction = matchWarpRowReduction(op, maxChain);
      if (!m.reduction || m.reduction->rows != rows)
        return false;
    }
    bool laneZeroWrites = m.reduction || m.rowScalar;
    for (OpOperand &out : op.getDpsInitsMutable())
      if (!writesEachPointOnce(op.getMatchingIndexingMap(&out),
                               laneZeroWrites ? rows.size()
                                              : rows.size() + cols.size()))
        return false;
    SmallVector<Access> mine;
    // What the body reads at computed indices: anywhere (a null map).
    std::optional<SmallVector<Value>> reads = bodyReads(op);
    if (!reads)
      return false;
    for (Value read : *reads)
      mine.push_back(access(read, AffineMap(), false, false));
    for (OpOperand *in : op.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()))
        mine.push_back(access(in->get(), groupMap(op, in), false, false));
    for (OpOperand &out : op.getDpsInitsMutable()) {
      AffineMap map = groupMap(op, &out);
      if (m.reduction || op.payloadUsesValueFromOperand(&out))
        mine.push_back(access(out.get(), map, false, false));
      mine.push_back(access(out.get(), map, true, laneZeroWrites));
    }
    for (const Access &a : mine)
      for (const Access &b : accesses)
        if (conflicts(a, b))
          return false;
    for (Access &a : mine)
      a.member = members.size();
    members.push_back(m);
    llvm::append_range(accesses, mine);
    return true;
  }

  /// Whether an access of member `from` or later may conflict with
  /// `touches` (one of the two writes, and their bytes may overlap).
  bool touchedFrom(size_t from, ArrayRef<Touch> touches) const {
    return llvm::any_of(accesses, [&](const Access &a) {
      return a.member >= from && llvm::any_of(touches, [&](const Touch &t) {
               return (a.write || t.write) && a.bytes.mayOverlap({t.range});
             });
    });
  }

  /// The indexing map of `operand` over the group's loops (rows, then
  /// columns): a row-scalar member's maps gain the column loops, unused.
  AffineMap groupMap(linalg::GenericOp op, OpOperand *operand) const {
    AffineMap map = op.getMatchingIndexingMap(operand);
    return AffineMap::get(rows.size() + cols.size(), map.getNumSymbols(),
                          map.getResults(), map.getContext());
  }

  SmallVector<int64_t> rows, cols;
  SmallVector<Member> members;

  /// One value per buffer: views of the same bytes with the same type (the
  /// memory plan's reuse makes several) address the same elements.
  Value canonical(Value memref) const {
    for (Value seen : canonicals)
      if (sameBuffer(seen, memref))
        return seen;
    canonicals.push_back(memref);
    return memref;
  }

private:
  Access access(Value memref, AffineMap map, bool write, bool result) const {
    return {canonical(memref), map, write, result, bufferBytes(memref)};
  }

  mutable SmallVector<Value> canonicals;

  /// Whether `a` (of the new op) and `b` (of an earlier member) may not run
  /// lane by lane in program order.
  static bool conflicts(const Access &a, const Access &b) {
    if ((!a.write && !b.write) || !a.bytes.mayOverlap(b.bytes))
      return false;
    if (!a.map || !b.map || a.memref != b.memref || a.map != b.map)
      return true;
    // Same element at the same loop point. Lane 0 stores a reduction's
    // result: a later read takes the register instead; any other write of
    // it by another lane would race.
    // Two such stores are lane 0's, in program order.
    if (a.write && b.write && a.reductionResult && b.reductionResult)
      return false;
    if (b.reductionResult && b.write)
      return a.write;
    if (a.reductionResult && a.write)
      return b.write;
    return false;
  }

  SmallVector<Access> accesses;
};

/// Builds the group's kernel.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const Group &group)
      : b(b), loc(loc), group(group) {}

  void build(gpu::LaunchOp launch, int64_t warpsPerBlock) {
    b.setInsertionPoint(launch.getBody().front().getTerminator());
    int64_t rowCount = ShapedType::getNumElements(group.rows);
    Value t = launch.getThreadIds().x;
    Value warpSize = arith::ConstantIndexOp::create(b, loc, kWarp);
    lane = arith::RemUIOp::create(b, loc, t, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, t, warpSize);
    Value row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                              arith::ConstantIndexOp::create(b, loc, warpsPerBlock)),
        warp);
    // A partial last block: its idle warps compute (and never store) the
    // last row, so every shuffle runs in full warps at the top level.
    if (rowCount % warpsPerBlock) {
      Value last = arith::ConstantIndexOp::create(b, loc, rowCount - 1);
      inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, row, last);
      row = arith::MinUIOp::create(b, loc, row, last);
    }
    rowIvs = delinearize(b, loc, row, group.rows);
    for (const Member &m : group.members) {
      if (m.reduction)
        buildReduction(m);
      else if (m.rowScalar)
        buildRowScalar(m);
      else
        buildElementwise(m);
    }
  }

private:
  using LoadFn = function_ref<SmallVector<Value>(ArrayRef<Value> ivs)>;
  using ApplyFn = function_ref<SmallVector<Value>(ArrayRef<Value> ivs,
                                                  ArrayRef<Value> operands,
                                                  ValueRange iters)>;

  /// This lane's columns lane, lane + 32, ... in order, carrying `inits`
  /// (stridedLoops: kUnroll columns' loads in flight): `load` reads a
  /// column's operands, `apply` computes it.
  SmallVector<Value> columnLoops(ValueRange inits, LoadFn load, ApplyFn apply) {
    auto step = [&](Value column) -> StridedStep {
      SmallVector<Value> ivs(rowIvs);
      llvm::append_range(ivs, delinearize(b, loc, column, group.cols));
      SmallVector<Value> operands = load(ivs);
      return [apply, ivs, operands](ValueRange carried) {
        return apply(ivs, operands, carried);
      };
    };
    return stridedLoops(b, loc, lane, ShapedType::getNumElements(group.cols), kWarp, inits,
                        step);
  }

  /// An operand's value at loop point `ivs`: a reduction result of an
  /// earlier member from its register, else a load.
  Value read(Value memref, AffineMap map, ArrayRef<Value> ivs) {
    if (Value reg = registers.lookup({group.canonical(memref), map}))
      return reg;
    return memref::LoadOp::create(b, loc, memref, applyMap(b, loc, map, ivs));
  }

  /// The body of `op` at `ivs` with its block arguments `args`; returns the
  /// yielded values.
  SmallVector<Value> cloneBody(linalg::GenericOp op, ArrayRef<Value> ivs,
                               ArrayRef<Value> args) {
    IRMapping mapping;
    Block *body = op.getBody();
    for (auto [arg, value] : llvm::zip(body->getArguments(), args))
      if (value)
        mapping.map(arg, value);
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return llvm::map_to_vector(body->getTerminator()->getOperands(),
                               [&](Value v) { return mapping.lookupOrDefault(v); });
  }

  /// Stores only for rows that exist (and, if `lane0`, from lane 0).
  void guarded(bool lane0, function_ref<void()> body) {
    Value cond = inRange;
    if (lane0) {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
      cond = cond ? arith::AndIOp::create(b, loc, cond, first) : first;
    }
    if (!cond) {
      body();
      return;
    }
    auto guard = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard restore(b);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    body();
  }

  void buildReduction(Member m) {
    linalg::GenericOp op = m.op;
    Operation *combiner = m.reduction->combiner;
    BlockArgument accArg = op.getRegionOutputArgs()[0];
    unsigned accPosition = combiner->getOperand(0) == accArg ? 0 : 1;
    OpOperand &out = op.getDpsInitsMutable()[0];
    AffineMap outMap = group.groupMap(op, &out);
    SmallVector<Value> ivs = rowPoint();
    // Every lane reads the initial value before the shuffles, so before
    // lane 0 stores the result over it: read after them, lanes 1..31 could
    // see lane 0's result and add the row twice (s7-O0-480-cuda-emulated).
    Value init = m.initFill ? m.initFill->getOperand(0) : read(out.get(), outMap, ivs);
    Value neutral = arith::ConstantOp::create(b, loc, *arith::getNeutralElement(combiner));
    Value partial = columnLoops(
        {neutral},
        [&](ArrayRef<Value> ivs) {
          SmallVector<Value> operands;
          for (OpOperand *in : op.getDpsInputOperands())
            operands.push_back(isa<MemRefType>(in->get().getType())
                                   ? read(in->get(), group.groupMap(op, in), ivs)
                                   : in->get());
          return operands;
        },
        [&](ArrayRef<Value> ivs, ArrayRef<Value> operands, ValueRange iters) {
          SmallVector<Value> args(operands);
          args.push_back(iters[0]);
          return cloneBody(op, ivs, args);
        })[0];
    for (int32_t offset = kWarp / 2; offset >= 1; offset /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, partial, offset, kWarp,
                                            gpu::ShuffleMode::XOR);
      partial = combine(b, combiner, accPosition, partial, shuffle.getShuffleResult());
    }
    Value result = combine(b, combiner, accPosition, init, partial);
    guarded(/*lane0=*/true, [&] {
      memref::StoreOp::create(b, loc, result, out.get(), applyMap(b, loc, outMap, ivs));
    });
    registers[{group.canonical(out.get()), outMap}] = result;
  }

  /// The row's point with every column index 0.
  SmallVector<Value> rowPoint() {
    SmallVector<Value> ivs(rowIvs);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    ivs.append(group.cols.size(), zero);
    return ivs;
  }

  void buildRowScalar(Member m) {
    linalg::GenericOp op = m.op;
    SmallVector<Value> ivs = rowPoint();
    SmallVector<Value> args;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()))
        args.push_back(v);
      else if (op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand))
        args.push_back(Value());
      else
        args.push_back(read(v, group.groupMap(op, &operand), ivs));
    }
    SmallVector<Value> yields = cloneBody(op, ivs, args);
    for (auto [out, value] : llvm::zip(op.getDpsInitsMutable(), yields)) {
      AffineMap map = group.groupMap(op, &out);
      guarded(/*lane0=*/true, [&] {
        memref::StoreOp::create(b, loc, value, out.get(), applyMap(b, loc, map, ivs));
      });
      registers[{group.canonical(out.get()), map}] = value;
    }
  }

  void buildElementwise(Member m) {
    linalg::GenericOp op = m.op;
    guarded(/*lane0=*/false, [&] {
      columnLoops(
          {},
          [&](ArrayRef<Value> ivs) {
            SmallVector<Value> args;
            for (OpOperand &operand : op->getOpOperands()) {
              Value v = operand.get();
              if (!isa<MemRefType>(v.getType()))
                args.push_back(v);
              else if (op.isDpsInit(&operand) &&
                       !op.payloadUsesValueFromOperand(&operand))
                args.push_back(Value()); // an unused block argument
              else
                args.push_back(read(v, group.groupMap(op, &operand), ivs));
            }
            return args;
          },
          [&](ArrayRef<Value> ivs, ArrayRef<Value> args, ValueRange) {
            SmallVector<Value> yields = cloneBody(op, ivs, args);
            for (auto [out, value] : llvm::zip(op.getDpsInitsMutable(), yields))
              memref::StoreOp::create(
                  b, loc, value, out.get(),
                  applyMap(b, loc, op.getMatchingIndexingMap(&out), ivs));
            return SmallVector<Value>{};
          });
    });
  }

  OpBuilder &b;
  Location loc;
  const Group &group;
  Value lane, inRange;
  SmallVector<Value> rowIvs;
  llvm::DenseMap<std::pair<Value, AffineMap>, Value> registers;
};

struct GpuRowReductionsPass : impl::GpuRowReductionsBase<GpuRowReductionsPass> {
  using Base::Base;

  /// The fill of `reduction`'s output before it, with only pure ops and
  /// members of `group` in between (none of them touching that output; a
  /// later member's fill must lie inside the group), or null.
  static linalg::FillOp initFill(linalg::GenericOp reduction, const Group &group) {
    Value out = reduction.getDpsInits()[0];
    std::optional<ByteRange> range = rootRange(out);
    Operation *first = group.members.front().op;
    for (Operation *op = reduction->getPrevNode(); op; op = op->getPrevNode()) {
      if (auto fill = dyn_cast<linalg::FillOp>(op);
          fill && fill.getOutputs()[0] == out)
        return fill;
      auto member = llvm::find_if(group.members, [&](const Member &m) {
        return m.op == op || m.initFill == op;
      });
      if (member == group.members.end()) {
        if (!isMemoryEffectFree(op))
          return nullptr;
        continue;
      }
      if (op == first && op != reduction.getOperation())
        return nullptr;
      // A member in between would read the filled value.
      for (Value v : op->getOperands()) {
        if (!isa<MemRefType>(v.getType()))
          continue;
        std::optional<ByteRange> other = rootRange(v);
        if (v == out || !range || !other || range->overlaps(*other))
          return nullptr;
      }
    }
    return nullptr;
  }

  /// The bytes `op` may read and write (as program-buffer byte ranges,
  /// from the memory effects of the ops in it) if it has no results and
  /// can run later: nullopt otherwise.
  static std::optional<SmallVector<Touch>> deferrableRanges(Operation *op) {
    if (op->getNumResults())
      return std::nullopt;
    WalkResult calls = op->walk([](Operation *inner) {
      return isa<func::CallOp, gpu::LaunchOp>(inner) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
    });
    if (calls.wasInterrupted())
      return std::nullopt;
    return memoryTouches(op);
  }

  /// Whether `op` is checking mode's poisoning of a dead buffer: an scf.if
  /// on `oflow_rt_check_memory()` around fills.
  static bool isPoisoning(Operation *op) {
    auto ifOp = dyn_cast<scf::IfOp>(op);
    if (!ifOp || ifOp.elseBlock())
      return false;
    auto cmp = ifOp.getCondition().getDefiningOp<arith::CmpIOp>();
    auto call = cmp ? cmp.getLhs().getDefiningOp<func::CallOp>() : func::CallOp();
    if (!call || call.getCallee() != "oflow_rt_check_memory")
      return false;
    return llvm::all_of(ifOp.thenBlock()->without_terminator(), [](Operation &inner) {
      return isa<linalg::FillOp>(inner) || isMemoryEffectFree(&inner);
    });
  }

  /// The non-member ops between the group's members, which move after its
  /// kernel; the group is first cut before the first member that may touch
  /// what such an op touches (or that follows one that cannot move).
  static SmallVector<Operation *> cutAtHazards(Group &group,
                                              SmallVectorImpl<Operation *> &dropped) {
    while (true) {
      SmallVector<Operation *> deferred;
      dropped.clear();
      llvm::DenseSet<Operation *> members;
      for (const Member &m : group.members) {
        members.insert(m.op);
        if (m.initFill)
          members.insert(m.initFill);
      }
      size_t seen = 0, cut = group.members.size();
      for (Operation *x = group.members.front().op; seen < cut; x = x->getNextNode()) {
        if (members.contains(x)) {
          if (x == group.members[seen].op.getOperation())
            ++seen;
          continue;
        }
        if (isMemoryEffectFree(x))
          continue;
        std::optional<SmallVector<Touch>> ranges = deferrableRanges(x);
        if (ranges && !group.touchedFrom(seen, *ranges)) {
          deferred.push_back(x);
          continue;
        }
        // A buffer that dies inside the kernel and whose bytes a later
        // member reuses: checking mode cannot poison it in between.
        if (ranges && isPoisoning(x)) {
          dropped.push_back(x);
          continue;
        }
        cut = seen;
        break;
      }
      if (cut == group.members.size())
        return deferred;
      group.members.resize(cut);
    }
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Every reduction split-reductions left whole must run here.
    WalkResult nested = func.walk([&](linalg::GenericOp op) {
      if (op->getParentOp() != func.getOperation() &&
          matchWarpRowReduction(op, maxChain)) {
        op.emitError("oflow-gpu-row-reductions: a row reduction nested in "
                     "control flow cannot become a warp-per-row kernel");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return signalPassFailure();

    Block &body = func.getBody().front();
    unsigned count = 0;
    for (Operation *op = &body.front(); op;) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      std::optional<WarpRowReduction> shape;
      if (generic && generic.hasPureBufferSemantics())
        shape = matchWarpRowReduction(generic, maxChain);
      if (!shape) {
        op = op->getNextNode();
        continue;
      }
      Group group(*shape);
      unsigned skipped = 0;
      for (Operation *next = op; next; next = next->getNextNode()) {
        if (next != op && isMemoryEffectFree(next))
          continue;
        // Fills (taken by a reduction, or deferred) and the checking
        // mode's conditional poisoning may lie between members.
        if (isa<linalg::FillOp, scf::IfOp>(next) && deferrableRanges(next))
          continue;
        auto candidate = dyn_cast<linalg::GenericOp>(next);
        if (candidate && group.tryAdd(candidate, maxChain)) {
          Member &m = group.members.back();
          if (m.reduction)
            m.initFill = initFill(candidate, group);
          continue;
        }
        // Another op that can run after the kernel (a column reduction
        // over the same rows: a norm's weight gradient between its
        // statistics and its input gradient) is looked past; cutAtHazards
        // ends the group before a member that depends on it.
        if (++skipped > kMaxSkipped || !deferrableRanges(next))
          break;
      }
      SmallVector<Operation *> dropped;
      SmallVector<Operation *> deferred = cutAtHazards(group, dropped);
      Operation *last = group.members.back().op;
      Operation *after = last->getNextNode();
      OpBuilder b(last);
      Location loc = FusedLoc::get(
          &getContext(), llvm::map_to_vector(group.members, [](const Member &m) {
            return m.op->getLoc();
          }));
      int64_t rowCount = shape->rowCount();
      int64_t warps = std::min(kWarpsPerBlock, rowCount);
      Value grid =
          arith::ConstantIndexOp::create(b, loc, llvm::divideCeil(rowCount, warps));
      Value block = arith::ConstantIndexOp::create(b, loc, kWarp * warps);
      gpu::LaunchOp launch = createKernelLaunch(
          b, loc, (func.getSymName() + "_row" + Twine(count++)).str(), grid, block);
      launch->setAttr("oflow.strategy", b.getStringAttr("warp-row"));
      KernelBuilder(b, loc, group).build(launch, warps);
      for (Member &m : group.members) {
        if (m.initFill)
          m.initFill.erase();
        m.op.erase();
      }
      for (Operation *x : dropped)
        x->erase();
      // What lay between the members runs after them.
      Operation *at = launch;
      for (Operation *x : deferred) {
        x->moveAfter(at);
        at = x;
      }
      op = after;
    }
  }
};

} // namespace
} // namespace oflow
