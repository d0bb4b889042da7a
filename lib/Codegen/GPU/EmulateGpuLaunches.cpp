//===- EmulateGpuLaunches.cpp - gpu.launch -> host scf.parallel -----------===//
//
// The CUDA pipeline turns every memory-touching op of an entry into a
// `gpu.launch`. Running those launches as host loops (and linking the CPU
// runtime) checks, on a machine without a GPU, everything the kernel
// formation decided: the index mapping, the bounds checks, which scalars were
// sunk into which kernel. Only the NVVM lowering and the CUDA runtime are left
// for a real GPU to check.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_EMULATEGPULAUNCHES
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Ops that need the threads of a block (or warp) to run together.
bool isCollective(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp>(op) ||
         op->getName().getStringRef().starts_with("gpu.subgroup");
}

/// Whether `launch`'s threads must run together somewhere.
bool hasCollectives(gpu::LaunchOp launch) {
  return launch.getBody()
      .walk([](Operation *op) {
        return isCollective(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Why `launch` cannot run as host loops, or an empty string.
std::string unsupportedReason(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return "it is asynchronous";
  if (launch.hasClusterSize())
    return "it has a cluster size";
  if (launch.getDynamicSharedMemorySize())
    return "it uses dynamic shared memory";
  if (!launch.getPrivateAttributions().empty())
    return "it has private memory attributions";
  for (BlockArgument shared : launch.getWorkgroupAttributions())
    if (!cast<MemRefType>(shared.getType()).hasStaticShape())
      return "its shared memory has a dynamic shape";
  if (!launch.getBody().hasOneBlock())
    return "its body has more than one block";
  Block &body = launch.getBody().front();
  std::string reason;
  bool collectives = false;
  launch.getBody().walk([&](Operation *op) {
    if (!isCollective(op) || !reason.empty())
      return;
    collectives = true;
    auto shuffle = dyn_cast<gpu::ShuffleOp>(op);
    if (!shuffle && !isa<gpu::BarrierOp>(op)) {
      reason = "it uses " + op->getName().getStringRef().str() +
               ", which needs threads that run together";
      return;
    }
    if (op->getBlock() != &body) {
      reason = "it uses " + op->getName().getStringRef().str() +
               " inside control flow (only at the top level of the body can "
               "the emulator run the threads up to it)";
      return;
    }
    if (shuffle && (shuffle.getMode() != gpu::ShuffleMode::XOR ||
                    !getConstantIntValue(shuffle.getOffset()) ||
                    getConstantIntValue(shuffle.getWidth()) != 32))
      reason = "it uses a gpu.shuffle other than xor with a constant offset "
               "and width 32";
  });
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  if (reason.empty() && (collectives || !launch.getWorkgroupAttributions().empty()))
    for (Value size : {block.x, block.y, block.z})
      if (!getConstantIntValue(size))
        reason = "its block size is not constant";
  return reason;
}

/// The value of dimension `dim` of `dims` (x, y, z).
Value component(const gpu::KernelDim3 &dims, gpu::Dimension dim) {
  switch (dim) {
  case gpu::Dimension::x: return dims.x;
  case gpu::Dimension::y: return dims.y;
  case gpu::Dimension::z: return dims.z;
  }
  return dims.x;
}

/// A launch whose threads meet at top-level shuffles and barriers, as
/// host loops: a parallel loop over the blocks; in it, per interval between
/// those ops, a sequential loop over the block's threads (MCUDA). A value
/// used after the interval that computes it is kept in a per-thread array
/// (allocated per block, so blocks may run in parallel), unless it is pure
/// arithmetic, which later intervals recompute; a shuffle reads its
/// operand's array at the partner thread.
class SegmentedEmulation {
public:
  SegmentedEmulation(gpu::LaunchOp launch, bool reverse)
      : launch(launch), body(launch.getBody().front()), reverse(reverse) {}

  void run() {
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    bx = *getConstantIntValue(block.x);
    by = *getConstantIntValue(block.y);
    int64_t bz = *getConstantIntValue(block.z);
    threads = bx * by * bz;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blocks = scf::ParallelOp::create(b, loc, ValueRange{zero, zero, zero},
                                          ValueRange{grid.z, grid.y, grid.x},
                                          ValueRange{one, one, one});
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    ValueRange ivs = blocks.getInductionVars();
    fixed.map(launch.getBlockIds().x, ivs[2]);
    fixed.map(launch.getBlockIds().y, ivs[1]);
    fixed.map(launch.getBlockIds().z, ivs[0]);
    fixed.map(launch.getGridSize().x, grid.x);
    fixed.map(launch.getGridSize().y, grid.y);
    fixed.map(launch.getGridSize().z, grid.z);
    fixed.map(launch.getBlockSize().x, block.x);
    fixed.map(launch.getBlockSize().y, block.y);
    fixed.map(launch.getBlockSize().z, block.z);
    // Each block's shared memory, poisoned: a read before the block's
    // threads wrote it gives NaN (or all ones), not a previous block's data.
    SmallVector<Value> sharedBuffers;
    for (BlockArgument shared : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(shared.getType());
      Value buffer = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      poison(b, loc, buffer);
      fixed.map(shared, buffer);
      sharedBuffers.push_back(buffer);
    }

    // Intervals: a shuffle starts one, a barrier ends one.
    SmallVector<SmallVector<Operation *>> intervals(1);
    for (Operation &op : body.without_terminator()) {
      if (isa<gpu::BarrierOp>(op)) {
        intervals.emplace_back();
        continue;
      }
      if (isa<gpu::ShuffleOp>(op) && !intervals.back().empty())
        intervals.emplace_back();
      intervals.back().push_back(&op);
      interval[&op] = intervals.size() - 1;
    }
    // Per-thread arrays for the values that outlive their interval.
    for (Operation &op : body.without_terminator()) {
      for (Value result : op.getResults()) {
        bool later = usedAfter(result, interval[&op]);
        bool shuffled = llvm::any_of(result.getUses(), [](OpOperand &use) {
          auto shuffle = dyn_cast<gpu::ShuffleOp>(use.getOwner());
          return shuffle && use.get() == shuffle.getValue();
        });
        if ((later && !recomputable(&op)) || shuffled)
          arrays[result] = memref::AllocOp::create(
              b, loc, MemRefType::get({threads}, result.getType()));
      }
    }
    for (ArrayRef<Operation *> ops : intervals)
      emitInterval(b, loc, ops);
    for (auto [value, array] : arrays)
      memref::DeallocOp::create(b, loc, array);
    for (Value buffer : sharedBuffers)
      memref::DeallocOp::create(b, loc, buffer);
    launch.erase();
  }

private:
  /// Fills `buffer` (static shape) with NaN, or all ones for integers.
  static void poison(OpBuilder &b, Location loc, Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    Type element = type.getElementType();
    TypedAttr bits;
    if (auto f = dyn_cast<FloatType>(element))
      bits = b.getFloatAttr(f, APFloat::getNaN(f.getFloatSemantics()));
    else if (auto i = dyn_cast<IntegerType>(element))
      bits = b.getIntegerAttr(i, APInt::getAllOnes(i.getWidth()));
    else
      return; // index: nothing to poison it with
    Value value = arith::ConstantOp::create(b, loc, bits);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> indices;
    for (int64_t extent : type.getShape()) {
      auto loop = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                                     arith::ConstantIndexOp::create(b, loc, extent),
                                     arith::ConstantIndexOp::create(b, loc, 1));
      indices.push_back(loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    memref::StoreOp::create(b, loc, value, buffer, indices);
  }

  /// Pure arithmetic whose operands a later interval can also produce.
  static bool recomputable(Operation *op) {
    return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
           !isa<gpu::ShuffleOp>(op);
  }

  /// Whether an interval after `k` uses `v`, directly or through pure
  /// arithmetic it recomputes.
  bool usedAfter(Value v, size_t k) {
    for (Operation *user : v.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || isa<gpu::TerminatorOp>(top))
        continue;
      if (interval.lookup(top) > k)
        return true;
      if (top == user && recomputable(user) &&
          llvm::any_of(user->getResults(), [&](Value r) { return usedAfter(r, k); }))
        return true;
    }
    return false;
  }

  void emitInterval(OpBuilder &outer, Location loc, ArrayRef<Operation *> ops) {
    Value zero = arith::ConstantIndexOp::create(outer, loc, 0);
    Value one = arith::ConstantIndexOp::create(outer, loc, 1);
    Value count = arith::ConstantIndexOp::create(outer, loc, threads);
    auto loop = scf::ForOp::create(outer, loc, zero, count, one);
    OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
    Value t = loop.getInductionVar();
    if (reverse) // threads - 1 down to 0
      t = arith::SubIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, threads - 1), t);
    IRMapping mapping = fixed;
    Value cx = arith::ConstantIndexOp::create(b, loc, bx);
    Value cy = arith::ConstantIndexOp::create(b, loc, by);
    mapping.map(launch.getThreadIds().x, arith::RemUIOp::create(b, loc, t, cx));
    Value rest = arith::DivUIOp::create(b, loc, t, cx);
    mapping.map(launch.getThreadIds().y, arith::RemUIOp::create(b, loc, rest, cy));
    mapping.map(launch.getThreadIds().z, arith::DivUIOp::create(b, loc, rest, cy));
    for (Operation *op : ops) {
      if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
        emitShuffle(b, loc, shuffle, t, mapping);
        continue;
      }
      // Values of earlier intervals, also those used inside op's regions.
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          resolve(b, loc, v, t, mapping);
      });
      Operation *clone = b.clone(*op, mapping);
      storeArrays(b, loc, op, clone, t);
    }
  }

  /// Makes `v` available in the current interval: mapped already, defined
  /// outside the launch, recomputed, or loaded from its array.
  Value resolve(OpBuilder &b, Location loc, Value v, Value t, IRMapping &mapping) {
    if (Value m = mapping.lookupOrNull(v))
      return m;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return v; // from outside the launch, or defined inside the op itself
    if (auto it = arrays.find(v); it != arrays.end()) {
      Value loaded = memref::LoadOp::create(b, loc, it->second, ValueRange{t});
      mapping.map(v, loaded);
      return loaded;
    }
    for (Value operand : def->getOperands())
      resolve(b, loc, operand, t, mapping);
    Operation *clone = b.clone(*def, mapping);
    return clone->getResult(cast<OpResult>(v).getResultNumber());
  }

  void storeArrays(OpBuilder &b, Location loc, Operation *op, Operation *clone,
                   Value t) {
    for (auto [result, value] : llvm::zip(op->getResults(), clone->getResults()))
      if (auto it = arrays.find(result); it != arrays.end())
        memref::StoreOp::create(b, loc, value, it->second, ValueRange{t});
  }

  /// Lane l of a warp reads lane l ^ offset's operand (always a lane of
  /// the same warp for width 32 and offsets below 32).
  void emitShuffle(OpBuilder &b, Location loc, gpu::ShuffleOp shuffle, Value t,
                   IRMapping &mapping) {
    int64_t offset = *getConstantIntValue(shuffle.getOffset());
    Value partner = arith::XOrIOp::create(
        b, loc, t, arith::ConstantIndexOp::create(b, loc, offset & 31));
    Value inBlock = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, partner,
        arith::ConstantIndexOp::create(b, loc, threads));
    Value operand = shuffle.getValue();
    Value value;
    if (auto it = arrays.find(operand); it != arrays.end()) {
      // A missing partner (a partial last warp) reads the thread's own.
      Value safe = arith::SelectOp::create(b, loc, inBlock, partner, t);
      value = memref::LoadOp::create(b, loc, it->second, ValueRange{safe});
    } else {
      value = resolve(b, loc, operand, t, mapping); // the same in every thread
    }
    mapping.map(shuffle.getShuffleResult(), value);
    mapping.map(shuffle.getValid(), inBlock);
    Operation *marker = shuffle.getOperation();
    // The results may be kept for later intervals too.
    for (auto [result, mapped] :
         llvm::zip(marker->getResults(), ValueRange{value, inBlock}))
      if (auto it = arrays.find(result); it != arrays.end())
        memref::StoreOp::create(b, loc, mapped, it->second, ValueRange{t});
  }

  gpu::LaunchOp launch;
  Block &body;
  int64_t bx = 1, by = 1, threads = 1;
  bool reverse = false;
  IRMapping fixed;
  llvm::DenseMap<Operation *, size_t> interval;
  llvm::DenseMap<Value, Value> arrays;
};

/// A fused launch (oflow-fuse-launches) whose members' threads meet: one
/// launch per block range, running that member (the i-th top-level scf.if)
/// with the range's first block added back to its block id. The
/// members touch disjoint bytes, so running them one after the other is
/// what the fused grid computes; the MCUDA emulation needs each member's
/// barriers and shuffles at the top level of a launch.
SmallVector<gpu::LaunchOp> splitSegments(gpu::LaunchOp launch) {
  auto segments = launch->getAttrOfType<DenseI64ArrayAttr>("oflow.segments");
  if (!segments || !(hasCollectives(launch) ||
                     !launch.getWorkgroupAttributions().empty()))
    return {launch};
  ArrayRef<int64_t> starts = segments.asArrayRef();
  Block &body = launch.getBody().front();
  SmallVector<scf::IfOp> members;
  for (Operation &op : body)
    if (auto member = dyn_cast<scf::IfOp>(op))
      members.push_back(member);
  if (members.size() + 1 != starts.size())
    return {launch};
  SmallVector<gpu::LaunchOp> out;
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Type> shared = llvm::map_to_vector(
      launch.getWorkgroupAttributions(), [](BlockArgument a) { return a.getType(); });
  for (auto [i, member] : llvm::enumerate(members)) {
    Value count = arith::ConstantIndexOp::create(b, loc, starts[i + 1] - starts[i]);
    auto part = gpu::LaunchOp::create(
        b, loc, count, launch.getGridSizeOperandValues().y,
        launch.getGridSizeOperandValues().z, block.x, block.y, block.z,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, shared);
    OpBuilder inner = OpBuilder::atBlockBegin(&part.getBody().front());
    IRMapping mapping;
    Value first = arith::ConstantIndexOp::create(inner, loc, starts[i]);
    mapping.map(launch.getBlockIds().x,
                arith::AddIOp::create(inner, loc, part.getBlockIds().x, first).getResult());
    mapping.map(launch.getBlockIds().y, part.getBlockIds().y);
    mapping.map(launch.getBlockIds().z, part.getBlockIds().z);
    mapping.map(launch.getThreadIds().x, part.getThreadIds().x);
    mapping.map(launch.getThreadIds().y, part.getThreadIds().y);
    mapping.map(launch.getThreadIds().z, part.getThreadIds().z);
    mapping.map(launch.getGridSize().x, launch.getGridSizeOperandValues().x);
    mapping.map(launch.getGridSize().y, part.getGridSize().y);
    mapping.map(launch.getGridSize().z, part.getGridSize().z);
    mapping.map(launch.getBlockSize().x, part.getBlockSize().x);
    mapping.map(launch.getBlockSize().y, part.getBlockSize().y);
    mapping.map(launch.getBlockSize().z, part.getBlockSize().z);
    for (auto [from, to] : llvm::zip(launch.getWorkgroupAttributions(),
                                     part.getWorkgroupAttributions()))
      mapping.map(from, to);
    // The top-level ops before the member (its constants), then its body.
    for (Operation &op : body) {
      if (&op == member.getOperation())
        break;
      if (!isa<scf::IfOp>(op))
        inner.clone(op, mapping);
    }
    // A member whose threads meet runs whole blocks (the condition is its
    // block range, true here): its body at the top level. Another keeps
    // its condition, which also masks off threads past its block size.
    bool meets = member.getThenRegion()
                     .walk([](Operation *op) {
                       return isCollective(op) ? WalkResult::interrupt()
                                               : WalkResult::advance();
                     })
                     .wasInterrupted();
    if (meets) {
      for (Operation &op : member.thenBlock()->without_terminator())
        inner.clone(op, mapping);
    } else {
      inner.clone(*member, mapping);
    }
    gpu::TerminatorOp::create(inner, loc);
    out.push_back(part);
  }
  launch.erase();
  return out;
}

LogicalResult emulateOne(gpu::LaunchOp launch, bool reverse);

LogicalResult emulate(gpu::LaunchOp launch, bool reverse) {
  for (gpu::LaunchOp part : splitSegments(launch))
    if (failed(emulateOne(part, reverse)))
      return failure();
  return success();
}

LogicalResult emulateOne(gpu::LaunchOp launch, bool reverse) {
  std::string reason = unsupportedReason(launch);
  if (!reason.empty())
    return launch.emitOpError("cannot be emulated on the host: ") << reason;
  if (hasCollectives(launch) || !launch.getWorkgroupAttributions().empty()) {
    SegmentedEmulation(launch, reverse).run();
    return success();
  }
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(6, zero), steps(6, one);
  SmallVector<Value> ubs = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
  auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  ValueRange ivs = loop.getInductionVars();
  gpu::KernelDim3 blockIds{ivs[2], ivs[1], ivs[0]};
  gpu::KernelDim3 threadIds{ivs[5], ivs[4], ivs[3]};

  // The region's arguments, then the id/size ops its body may use instead.
  Block &body = launch.getBody().front();
  auto replaceDims = [](gpu::KernelDim3 from, gpu::KernelDim3 to) {
    from.x.replaceAllUsesWith(to.x);
    from.y.replaceAllUsesWith(to.y);
    from.z.replaceAllUsesWith(to.z);
  };
  replaceDims(launch.getBlockIds(), blockIds);
  replaceDims(launch.getThreadIds(), threadIds);
  replaceDims(launch.getGridSize(), grid);
  replaceDims(launch.getBlockSize(), block);
  SmallVector<Operation *> idOps;
  body.walk([&](Operation *op) {
    Value v;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      v = component(blockIds, id.getDimension());
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      v = component(threadIds, id.getDimension());
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      v = component(grid, dim.getDimension());
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      v = component(block, dim.getDimension());
    if (v) {
      op->getResult(0).replaceAllUsesWith(v);
      idOps.push_back(op);
    }
  });
  for (Operation *op : idOps)
    op->erase();

  // Everything but gpu.terminator moves into the loop, before its scf.reduce.
  Block *dst = loop.getBody();
  dst->getOperations().splice(std::prev(dst->end()), body.getOperations(),
                              body.begin(), std::prev(body.end()));
  launch.erase();
  return success();
}

/// A `gpu.memset` (the stream's memset, between `gpu.wait`s that order it)
/// as a host loop storing its value; the waits go.
LogicalResult emulateMemset(gpu::MemsetOp memset) {
  auto type = cast<MemRefType>(memset.getDst().getType());
  if (type.getRank() != 1)
    return memset.emitError("oflow-emulate-gpu-launches: only 1-D gpu.memset is emulated");
  OpBuilder b(memset);
  Location loc = memset.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = memref::DimOp::create(b, loc, memset.getDst(), 0);
  auto loop = scf::ForOp::create(b, loc, zero, size, one);
  b.setInsertionPointToStart(loop.getBody());
  memref::StoreOp::create(b, loc, memset.getValue(), memset.getDst(),
                          ValueRange{loop.getInductionVar()});
  return success();
}

struct EmulateGpuLaunchesPass
    : impl::EmulateGpuLaunchesBase<EmulateGpuLaunchesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch, reverseThreads)))
        return signalPassFailure();
    SmallVector<gpu::MemsetOp> memsets;
    getOperation().walk([&](gpu::MemsetOp memset) { memsets.push_back(memset); });
    for (gpu::MemsetOp memset : memsets)
      if (failed(emulateMemset(memset)))
        return signalPassFailure();
    // Waits, then the memsets their tokens order, then the waits that
    // start the chains (a token's users go before it).
    SmallVector<gpu::WaitOp> starts, ends;
    getOperation().walk([&](gpu::WaitOp wait) {
      (wait.getAsyncToken() ? starts : ends).push_back(wait);
    });
    for (gpu::WaitOp wait : ends)
      wait.erase();
    for (gpu::MemsetOp memset : memsets)
      memset.erase();
    for (gpu::WaitOp wait : starts) {
      if (!wait.getAsyncToken().use_empty()) {
        wait.emitError("oflow-emulate-gpu-launches: an async token used by other "
                       "than a memset");
        return signalPassFailure();
      }
      wait.erase();
    }
  }
};

} // namespace
} // namespace oflow
