//===- FormGpuKernels.cpp - host code on device buffers -> gpu.launch -----===//
//
// On the CUDA target an entry's buffers hold device pointers, so after linalg
// became loops every top-level op that touches memory has to become (part
// of) a kernel: parallel loops one thread per point, the rest single-thread
// launches. See Passes.td for the steps.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_FORMGPUKERNELS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {

namespace {
constexpr int64_t kMaxGridX = 2147483647; // gridDim.x limit

/// Moves `ops` of a region's block into a new `scf.if cond` placed at `at`.
scf::IfOp wrapInIf(OpBuilder &b, Location loc, Value cond, Block *from,
                   Block::iterator begin, Block::iterator end) {
  auto guard = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  Block *then = guard.thenBlock();
  then->getOperations().splice(then->begin(), from->getOperations(), begin, end);
  return guard;
}

/// Replaces a top-level `scf.if` without results by its contents, each op
/// under the condition it ran under: pure ops run unconditionally, a
/// parallel loop tests the condition in its body (so it stays one kernel),
/// a nested `scf.if` gets the conjunction (and is distributed in turn), and
/// anything else is wrapped in an `scf.if` of its own.
LogicalResult distributeIf(scf::IfOp ifOp, SmallVectorImpl<scf::IfOp> &worklist) {
  Location loc = ifOp.getLoc();
  OpBuilder b(ifOp);
  auto distribute = [&](Block *block, Value cond) -> LogicalResult {
    for (Operation &op : llvm::make_early_inc_range(block->without_terminator())) {
      op.moveBefore(ifOp);
      if (isMemoryEffectFree(&op))
        continue;
      b.setInsertionPoint(&op);
      if (auto par = dyn_cast<scf::ParallelOp>(op)) {
        if (par.getNumResults())
          return par.emitError("parallel loops with reductions are not "
                               "supported on the CUDA target");
        Block *body = par.getBody();
        b.setInsertionPointToStart(body);
        wrapInIf(b, loc, cond, body, body->begin(), std::prev(body->end()));
        continue;
      }
      if (auto inner = dyn_cast<scf::IfOp>(op); inner && !inner.getNumResults()) {
        Value innerCond = inner.getCondition();
        Value both = arith::AndIOp::create(b, loc, cond, innerCond);
        Block *then = inner.thenBlock();
        worklist.push_back(
            wrapInIf(b, loc, both, then, then->begin(), std::prev(then->end())));
        if (Block *otherwise = inner.elseBlock()) {
          Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
          Value notInner = arith::XOrIOp::create(b, loc, innerCond, yes);
          Value other = arith::AndIOp::create(b, loc, cond, notInner);
          worklist.push_back(wrapInIf(b, loc, other, otherwise, otherwise->begin(),
                                      std::prev(otherwise->end())));
        }
        inner.erase();
        continue;
      }
      if (!isHostOp(&op) && op.getNumResults() == 0) {
        wrapInIf(b, loc, cond, op.getBlock(), op.getIterator(),
                 std::next(op.getIterator()));
        continue;
      }
      return op.emitError("on the CUDA target this op cannot run under a "
                          "condition that the host cannot evaluate");
    }
    return success();
  };
  if (failed(distribute(ifOp.thenBlock(), ifOp.getCondition())))
    return failure();
  if (Block *otherwise = ifOp.elseBlock()) {
    b.setInsertionPoint(ifOp);
    Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value notCond = arith::XOrIOp::create(b, loc, ifOp.getCondition(), yes);
    if (failed(distribute(otherwise, notCond)))
      return failure();
  }
  ifOp.erase();
  return success();
}

/// `for (i) { reads; parallel (j) { body } }` -> `parallel (j) { for (i)
/// { reads; body } }` when the parallel bounds do not depend on i (nests of
/// such loops from the inside out): linalg ops whose leading loops reduce,
/// and scatter-adds, then run one thread per parallel point instead of one
/// thread in all. Valid because parallel iterations touch disjoint outputs
/// for every i. Returns the new parallel loop, or null.
scf::ParallelOp hoistParallel(scf::ForOp forOp) {
  if (forOp.getNumResults())
    return nullptr;
  Operation *inner = nullptr;
  SmallVector<memref::LoadOp> reads;
  for (Operation &op : forOp.getBody()->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      reads.push_back(load);
    if (isMemoryEffectFree(&op) || isa<memref::LoadOp>(op))
      continue;
    if (inner)
      return nullptr;
    inner = &op;
  }
  if (auto innerFor = dyn_cast_or_null<scf::ForOp>(inner))
    inner = hoistParallel(innerFor);
  auto par = dyn_cast_or_null<scf::ParallelOp>(inner);
  if (!par || par.getNumResults() ||
      !llvm::all_of(par.getOperands(),
                    [&](Value v) { return forOp.isDefinedOutsideOfLoop(v); }))
    return nullptr;
  // The reads before the parallel loop run in every thread after the
  // interchange: what they read must not be what other threads write.
  for (memref::LoadOp load : reads) {
    std::optional<ByteRange> range = rootRange(load.getMemRef());
    if (!range || mayWrite(par, *range))
      return nullptr;
  }
  OpBuilder b(forOp);
  auto outer = scf::ParallelOp::create(b, par.getLoc(), par.getLowerBound(),
                                       par.getUpperBound(), par.getStep());
  forOp->moveBefore(outer.getBody()->getTerminator());
  Block *body = par.getBody();
  for (auto [from, to] :
       llvm::zip(body->getArguments(), outer.getBody()->getArguments()))
    from.replaceAllUsesWith(to);
  par->getBlock()->getOperations().splice(par->getIterator(),
                                          body->getOperations(), body->begin(),
                                          std::prev(body->end()));
  par.erase();
  return outer;
}

/// A scatter-add, `for (i) { reads; parallel (j) { M[idx] = M[idx] + x } }`
/// where idx may repeat across i (an embedding's gradient: token i adds its
/// row into row tokens[i]), becomes `parallel (i, j) { reads;
/// atomic_rmw addf x, M[idx] }`: one thread per element of the gradient
/// rather than one per column walking every token. The sum's order then
/// varies from run to run on the GPU, as PyTorch's atomics-based kernels'
/// does. Requires: the parallel loop's only write is that store, fed by an
/// addf of its only load of M at the same indices; the reads before it do
/// not read M. Returns the new loop, or null.
scf::ParallelOp atomicScatterAdd(scf::ForOp forOp) {
  if (forOp.getNumResults())
    return nullptr;
  scf::ParallelOp par;
  SmallVector<memref::LoadOp> reads;
  for (Operation &op : forOp.getBody()->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      reads.push_back(load);
      continue;
    }
    if (isMemoryEffectFree(&op))
      continue;
    if (par || !isa<scf::ParallelOp>(op))
      return nullptr;
    par = cast<scf::ParallelOp>(op);
  }
  if (!par || par.getNumResults() ||
      !llvm::all_of(par.getOperands(),
                    [&](Value v) { return forOp.isDefinedOutsideOfLoop(v); }))
    return nullptr;
  memref::StoreOp store;
  for (Operation &op : par.getBody()->without_terminator()) {
    if (isa<memref::LoadOp>(op) || isMemoryEffectFree(&op))
      continue;
    if (store || !isa<memref::StoreOp>(op))
      return nullptr;
    store = cast<memref::StoreOp>(op);
  }
  if (!store || !isa<FloatType>(store.getValueToStore().getType()))
    return nullptr;
  auto add = store.getValueToStore().getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != par.getBody())
    return nullptr;
  memref::LoadOp old;
  Value addend;
  for (auto [mine, other] : {std::pair{add.getLhs(), add.getRhs()},
                             std::pair{add.getRhs(), add.getLhs()}}) {
    auto load = mine.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == store.getMemRef() &&
        load.getIndices() == store.getIndices() && load->hasOneUse() &&
        add->hasOneUse()) {
      old = load;
      addend = other;
      break;
    }
  }
  if (!old || addend.getDefiningOp() == old.getOperation())
    return nullptr;
  // Only where the address comes from data read in the loop (a scatter):
  // a plain column sum is better served by the sequential loop per column.
  SmallVector<Value> worklist(store.getIndices());
  worklist.push_back(store.getMemRef());
  llvm::DenseSet<Operation *> seen;
  bool dataDependent = false;
  while (!worklist.empty() && !dataDependent) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !forOp->isProperAncestor(def) || !seen.insert(def).second)
      continue;
    if (isa<memref::LoadOp>(def)) {
      dataDependent = true;
      break;
    }
    llvm::append_range(worklist, def->getOperands());
  }
  if (!dataDependent)
    return nullptr;
  // Other loads of M in the loop would see partial sums.
  std::optional<ByteRange> target = rootRange(store.getMemRef());
  if (!target)
    return nullptr;
  for (memref::LoadOp load : reads) {
    std::optional<ByteRange> range = rootRange(load.getMemRef());
    if (!range || range->overlaps(*target))
      return nullptr;
  }
  WalkResult otherRead = par.getBody()->walk([&](memref::LoadOp load) {
    if (load == old)
      return WalkResult::advance();
    std::optional<ByteRange> range = rootRange(load.getMemRef());
    return !range || range->overlaps(*target) ? WalkResult::interrupt()
                                              : WalkResult::advance();
  });
  if (otherRead.wasInterrupted())
    return nullptr;

  OpBuilder b(forOp);
  SmallVector<Value> lbs = {forOp.getLowerBound()}, ubs = {forOp.getUpperBound()},
                     steps = {forOp.getStep()};
  llvm::append_range(lbs, par.getLowerBound());
  llvm::append_range(ubs, par.getUpperBound());
  llvm::append_range(steps, par.getStep());
  auto both = scf::ParallelOp::create(b, par.getLoc(), lbs, ubs, steps);
  Block *body = both.getBody();
  forOp.getInductionVar().replaceAllUsesWith(body->getArgument(0));
  for (auto [from, to] : llvm::zip(par.getBody()->getArguments(),
                                   body->getArguments().drop_front()))
    from.replaceAllUsesWith(to);
  // The for body's reads and index math, then the parallel body.
  Operation *terminator = body->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(forOp.getBody()->without_terminator()))
    if (&op != par.getOperation())
      op.moveBefore(terminator);
  for (Operation &op : llvm::make_early_inc_range(par.getBody()->without_terminator()))
    op.moveBefore(terminator);
  OpBuilder at(store);
  memref::AtomicRMWOp::create(at, store.getLoc(), arith::AtomicRMWKind::addf,
                              addend, store.getMemRef(), store.getIndices());
  store.erase();
  add.erase();
  old.erase();
  par.erase();
  forOp.erase();
  return both;
}

/// Whether `ifOp` can run on the host: its condition is not read from
/// device memory, it has no else, and its then-block holds only parallel
/// loops and pure ops computing from host values.
bool staysOnHost(scf::IfOp ifOp, const llvm::DenseSet<Operation *> &device) {
  Operation *cond = ifOp.getCondition().getDefiningOp();
  if (ifOp.elseBlock() || (cond && device.contains(cond)))
    return false;
  for (Operation &op : ifOp.thenBlock()->without_terminator()) {
    if (auto par = dyn_cast<scf::ParallelOp>(op)) {
      if (par.getNumResults())
        return false;
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return false;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp(); def && device.contains(def))
        return false;
  }
  return true;
}

struct FormGpuKernelsPass : impl::FormGpuKernelsBase<FormGpuKernelsPass> {
  using Base::Base;

  unsigned kernelCount = 0;

  unsigned checkingCount = 0;

  /// A launch named `<func>_k<N>`, or `<func>_check<N>` for the kernels
  /// that run only under a host condition (checking mode).
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, func::FuncOp func,
                             Value grid, Value block, bool checking = false) {
    std::string name =
        checking ? (func.getSymName() + "_check" + Twine(checkingCount++)).str()
                 : (func.getSymName() + "_k" + Twine(kernelCount++)).str();
    return createKernelLaunch(b, loc, name, grid, block);
  }

  /// Checking mode's poisoning of a dead buffer (a 1-D loop storing one
  /// 16- or 32-bit constant into each element of a contiguous buffer) as a
  /// `gpu.memset`: the runtime's cuMemsetD16/D32Async on the compute stream
  /// instead of a generated kernel (thousands of them on a big model, a
  /// third of its PTX). True when `par` was replaced.
  static bool memsetParallel(scf::ParallelOp par) {
    if (par.getNumLoops() != 1 || par.getNumResults() ||
        getConstantIntValue(par.getLowerBound()[0]) != 0 ||
        getConstantIntValue(par.getStep()[0]) != 1)
      return false;
    Block *body = par.getBody();
    if (body->getOperations().size() != 2) // the store and the terminator
      return false;
    auto store = dyn_cast<memref::StoreOp>(body->front());
    if (!store || store.getIndices().size() != 1 ||
        store.getIndices()[0] != par.getInductionVars()[0])
      return false;
    // The loop covers the whole buffer: a static 1-D one of 16/32-bit words.
    auto type = cast<MemRefType>(store.getMemRef().getType());
    std::optional<int64_t> count = getConstantIntValue(par.getUpperBound()[0]);
    if (!type.hasStaticShape() || !count || type.getNumElements() != *count ||
        !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
      return false;
    unsigned width = type.getElementType().getIntOrFloatBitWidth();
    Value value = store.getValueToStore();
    if ((width != 16 && width != 32) || !par.isDefinedOutsideOfLoop(value) ||
        !par.isDefinedOutsideOfLoop(store.getMemRef()))
      return false;
    OpBuilder b(par);
    Location loc = par.getLoc();
    Type token = gpu::AsyncTokenType::get(b.getContext());
    Value start = gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
    auto memset = gpu::MemsetOp::create(b, loc, token, ValueRange{start},
                                        store.getMemRef(), value);
    gpu::WaitOp::create(b, loc, Type(), ValueRange{memset.getAsyncToken()});
    par.erase();
    return true;
  }

  LogicalResult launchParallel(scf::ParallelOp par, func::FuncOp func,
                               bool checking = false) {
    if (par.getNumResults())
      return par.emitError("parallel loops with reductions are not supported "
                           "on the CUDA target");
    OpBuilder b(par);
    Location loc = par.getLoc();
    unsigned rank = par.getNumLoops();
    SmallVector<Value> counts;
    std::optional<int64_t> total = 1;
    for (unsigned i = 0; i < rank; ++i) {
      Value lb = par.getLowerBound()[i], ub = par.getUpperBound()[i],
            step = par.getStep()[i];
      auto clb = getConstantIntValue(lb), cub = getConstantIntValue(ub),
           cstep = getConstantIntValue(step);
      if (clb && cub && cstep) {
        int64_t n = *cub > *clb ? llvm::divideCeil(*cub - *clb, *cstep) : 0;
        counts.push_back(arith::ConstantIndexOp::create(b, loc, n));
        if (total)
          *total *= n;
        continue;
      }
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value n = arith::CeilDivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, ub, lb), step);
      counts.push_back(arith::MaxSIOp::create(b, loc, n, zero));
      total = std::nullopt;
    }
    if (total && *total == 0) {
      par.erase();
      return success();
    }
    Value count, grid, block;
    bool needsBoundsCheck = true;
    int64_t copies = 1;
    if (total && pointsPerThread > 1 && *total % (pointsPerThread * blockSize) == 0 &&
        *total / pointsPerThread >= minThreads)
      copies = pointsPerThread;
    if (copies > 1) {
      needsBoundsCheck = false;
      count = arith::ConstantIndexOp::create(b, loc, *total);
      grid = arith::ConstantIndexOp::create(b, loc, *total / copies / blockSize);
      block = arith::ConstantIndexOp::create(b, loc, blockSize);
    } else if (total) {
      int64_t threads = std::min<int64_t>(blockSize, *total);
      int64_t blocks = llvm::divideCeil(*total, threads);
      if (blocks > kMaxGridX)
        return par.emitError("this loop needs ")
               << blocks << " thread blocks, more than a CUDA grid holds";
      needsBoundsCheck = blocks * threads != *total;
      count = arith::ConstantIndexOp::create(b, loc, *total);
      grid = arith::ConstantIndexOp::create(b, loc, blocks);
      block = arith::ConstantIndexOp::create(b, loc, threads);
    } else {
      count = counts.front();
      for (Value n : ArrayRef(counts).drop_front())
        count = arith::MulIOp::create(b, loc, count, n);
      block = arith::ConstantIndexOp::create(b, loc, blockSize);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      // A grid of 0 blocks is a launch error: launch one idle block instead.
      grid = arith::MaxSIOp::create(
          b, loc, arith::CeilDivUIOp::create(b, loc, count, block), one);
    }
    gpu::LaunchOp launch = createLaunch(b, loc, func, grid, block, checking);
    if (copies > 1)
      launch->setAttr("oflow.strategy",
                      b.getStringAttr("pointwise-x" + std::to_string(copies)));
    Block &body = launch.getBody().front();
    b.setInsertionPoint(body.getTerminator());
    Value id = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                              launch.getBlockSize().x),
        launch.getThreadIds().x);
    if (needsBoundsCheck) {
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, count);
      auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      b.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
    // The loop point of flattened index `linear`.
    auto pointOf = [&](Value linear) {
      SmallVector<Value> ivs(rank);
      Value rest = linear;
      for (int i = rank - 1; i >= 0; --i) {
        Value index = rest;
        if (i > 0) {
          index = arith::RemUIOp::create(b, loc, rest, counts[i]);
          rest = arith::DivUIOp::create(b, loc, rest, counts[i]);
        }
        Value lb = par.getLowerBound()[i], step = par.getStep()[i];
        Value iv = index;
        if (getConstantIntValue(step) != 1)
          iv = arith::MulIOp::create(b, loc, iv, step);
        if (getConstantIntValue(lb) != 0)
          iv = arith::AddIOp::create(b, loc, iv, lb);
        ivs[i] = iv;
      }
      return ivs;
    };
    Block *loopBody = par.getBody();
    if (copies == 1) {
      for (auto [arg, iv] : llvm::zip(loopBody->getArguments(), pointOf(id)))
        arg.replaceAllUsesWith(iv);
      Block *dest = b.getInsertionBlock();
      dest->getOperations().splice(b.getInsertionPoint(), loopBody->getOperations(),
                                   loopBody->begin(), std::prev(loopBody->end()));
    } else {
      emitCopies(b, loc, loopBody, copies, *total / copies, pointOf, id);
    }
    par.erase();
    return success();
  }

  /// The loop body `loopBody` for the points id, id + stride, ... (`copies`
  /// of them): first the leading loads and pure ops of every copy, then the
  /// rest of each copy in order.
  static void emitCopies(OpBuilder &b, Location loc, Block *loopBody, int64_t copies,
                         int64_t stride,
                         function_ref<SmallVector<Value>(Value)> pointOf, Value id) {
    auto ops = loopBody->without_terminator();
    auto restBegin = llvm::find_if(ops, [](Operation &op) {
      return op.getNumRegions() ||
             !(isMemoryEffectFree(&op) || isa<memref::LoadOp>(op));
    });
    SmallVector<IRMapping> mappings(copies);
    for (int64_t c = 0; c < copies; ++c) {
      Value linear = id;
      if (c)
        linear = arith::AddIOp::create(
            b, loc, id, arith::ConstantIndexOp::create(b, loc, c * stride));
      mappings[c].map(loopBody->getArguments(), pointOf(linear));
      for (Operation &op : llvm::make_range(ops.begin(), restBegin))
        b.clone(op, mappings[c]);
    }
    for (int64_t c = 0; c < copies; ++c)
      for (Operation &op : llvm::make_range(restBegin, ops.end()))
        b.clone(op, mappings[c]);
  }

  /// Moves `group` (ops in block order; loads and pure ops computing from
  /// device values are cloned, the rest moved) into one single-thread launch
  /// placed before its last op.
  LogicalResult launchSingleThread(ArrayRef<Operation *> group,
                                   const llvm::DenseSet<Operation *> &cloned,
                                   func::FuncOp func) {
    Operation *last = group.back();
    OpBuilder b(last);
    Location loc = group.front()->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    gpu::LaunchOp launch = createLaunch(b, loc, func, one, one);
    Operation *terminator = launch.getBody().front().getTerminator();
    SmallVector<std::pair<Operation *, Operation *>> clones;
    for (Operation *op : group) {
      if (!cloned.contains(op)) {
        op->moveBefore(terminator);
        continue;
      }
      b.setInsertionPoint(terminator);
      clones.push_back({op, b.clone(*op)});
    }
    for (auto [op, clone] : clones)
      op->replaceUsesWithIf(clone->getResults(), [&](OpOperand &use) {
        return launch->isProperAncestor(use.getOwner());
      });
    for (Operation *op : group) {
      if (cloned.contains(op))
        continue;
      for (Operation *user : op->getUsers())
        if (!launch->isProperAncestor(user)) {
          InFlightDiagnostic diag = user->emitError(
              "on the CUDA target the host cannot use a value computed on "
              "the device");
          diag.attachNote(op->getLoc()) << "computed here";
          return diag;
        }
    }
    return success();
  }

  /// Groups consecutive memory-touching top-level ops (with the device reads
  /// between them) into single-thread launches.
  LogicalResult launchRemaining(func::FuncOp func) {
    Block &body = func.getBody().front();
    SmallVector<Operation *> ops = llvm::map_to_vector(body, [](Operation &op) {
      return &op;
    });
    // device: values that exist only on the device; computed: those that
    // depend on a memory-touching op of a group (moved with it, not cloned).
    llvm::DenseSet<Operation *> device, computed, cloned;
    SmallVector<Operation *> group;
    size_t lastWork = 0;
    auto flush = [&]() -> LogicalResult {
      group.resize(lastWork);
      LogicalResult result = group.empty()
                                 ? success()
                                 : launchSingleThread(group, cloned, func);
      group.clear();
      lastWork = 0;
      return result;
    };
    for (Operation *op : ops) {
      auto dependsOn = [&](const llvm::DenseSet<Operation *> &set) {
        return llvm::any_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && set.contains(def);
        });
      };
      bool pure = isMemoryEffectFree(op) && op->getNumResults();
      if (pure && dependsOn(computed)) {
        computed.insert(op);
        group.push_back(op);
        continue;
      }
      if (isa<memref::LoadOp>(op) || (pure && dependsOn(device))) {
        device.insert(op);
        if (!group.empty()) {
          group.push_back(op);
          cloned.insert(op);
        }
        continue;
      }
      if (isMemoryEffectFree(op))
        continue;
      if (isHostOp(op) ||
          isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op)) {
        if (failed(flush()))
          return failure();
        continue;
      }
      computed.insert(op);
      group.push_back(op);
      lastWork = group.size();
    }
    return flush();
  }

  LogicalResult formKernels(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitError("oflow-form-gpu-kernels expects single-block "
                            "functions");
    Block &body = func.getBody().front();
    // An scf.if on a host condition (the checking-mode flag from the
    // runtime) around parallel loops stays on the host: its loops launch
    // only when it holds.
    llvm::DenseSet<Operation *> device = findDeviceValues(body);
    SmallVector<scf::IfOp> ifs;
    for (auto ifOp : body.getOps<scf::IfOp>()) {
      if (ifOp.getNumResults())
        continue;
      if (!staysOnHost(ifOp, device)) {
        ifs.push_back(ifOp);
        continue;
      }
      for (auto par : llvm::make_early_inc_range(
               ifOp.thenBlock()->getOps<scf::ParallelOp>()))
        if (!memsetParallel(par) && failed(launchParallel(par, func, /*checking=*/true)))
          return failure();
    }
    while (!ifs.empty())
      if (failed(distributeIf(ifs.pop_back_val(), ifs)))
        return failure();
    for (auto forOp : llvm::make_early_inc_range(body.getOps<scf::ForOp>()))
      if (!atomicScatterAdd(forOp))
        hoistParallel(forOp);
    for (auto par : llvm::make_early_inc_range(body.getOps<scf::ParallelOp>()))
      if (failed(launchParallel(par, func)))
        return failure();
    if (failed(launchRemaining(func)))
      return failure();

    if (failed(sinkDeviceValues(func, findDeviceValues(body))))
      return failure();
    for (Operation &op : body)
      if (!isHostOp(&op))
        return op.emitError("on the CUDA target this op would touch device "
                            "memory on the host, and oflow-form-gpu-kernels "
                            "cannot move it into a kernel");
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      kernelCount = checkingCount = 0;
      if (failed(formKernels(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace oflow
