//===- FuseLaunches.cpp - independent kernels -> one launch ---------------===//
//
// After the strategies, a training step is still thousands of launches, most
// of them small (a weight's transpose, a fill, one parameter's update), each
// paying ~4 us of launch overhead for a few microseconds of work. Kernels
// next to each other that touch disjoint bytes (or only read the same ones)
// need no order between them, so they can run as one launch whose blocks
// are split into ranges, one range per former kernel (horizontal fusion, as
// XLA's). See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <map>
#include <vector>

namespace oflow {
#define GEN_PASS_DEF_FUSELAUNCHES
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// The bytes one kernel reads and writes: ranges of the program's buffers,
/// nullopt for bytes that may be anywhere.
struct Footprint {
  SmallVector<std::optional<ByteRange>> reads, writes;

  static bool overlap(const std::optional<ByteRange> &a,
                      const std::optional<ByteRange> &b) {
    return !a || !b || a->overlaps(*b);
  }
  bool conflicts(const Footprint &o) const {
    auto any = [](ArrayRef<std::optional<ByteRange>> a,
                  ArrayRef<std::optional<ByteRange>> b) {
      for (const auto &x : a)
        for (const auto &y : b)
          if (overlap(x, y))
            return true;
      return false;
    };
    return any(writes, o.writes) || any(writes, o.reads) || any(reads, o.writes);
  }

  /// Records an access to `memref`: a view of a function argument (the
  /// program's buffers) by its bytes, all of an argument used directly,
  /// nothing for shared memory (a block's own) or a read of a global (the
  /// constant tables), anywhere for the rest.
  void add(Value memref, bool write) {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        cast<MemRefType>(memref.getType()).getMemorySpace());
    if (space && space.getValue() != gpu::AddressSpace::Global)
      return;
    BufferBytes bytes = bufferBytes(memref);
    if (bytes.global && !write)
      return;
    // The bytes the access's own layout reaches: the pieces of a joined
    // operand (oflow-merge-sibling-matmuls) are written side by side.
    (write ? writes : reads).push_back(bytes.range ? layoutRange(memref) : bytes.range);
  }
};

/// Adds the memory effects of `op` (a memory effect op) to `footprint`;
/// false for an effect on no buffer or on an unknown one.
bool addEffects(Operation *op, Footprint &footprint) {
  if (isa<gpu::BarrierOp>(op))
    return true; // orders a block's threads; touches no memory of its own
  if (isa<gpu::WaitOp>(op))
    return true; // orders a memset on the one stream, as launches are
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
           isa<gpu::TerminatorOp>(op);
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list) {
    bool read = isa<MemoryEffects::Read>(e.getEffect());
    bool write = isa<MemoryEffects::Write>(e.getEffect());
    if (!read && !write)
      continue; // allocation effects of views
    Value v = e.getValue();
    if (!v || !isa<MemRefType>(v.getType()))
      return false;
    footprint.add(v, write);
  }
  return true;
}

/// The bytes an op the launches may move across touches: kernels, the
/// checking mode's host-conditional kernels, GEMM calls (their buffer
/// operands, read and written) and the checking flag's query; nullopt for
/// anything else.
std::optional<Footprint> footprintOf(Operation *op) {
  Footprint footprint;
  WalkResult walk = op->walk([&](Operation *inner) {
    if (auto call = dyn_cast<func::CallOp>(inner)) {
      StringRef callee = call.getCallee();
      if (callee == "oflow_rt_check_memory")
        return WalkResult::advance();
      if (!callee.starts_with("oflow_rt_sgemm") && !callee.starts_with("oflow_rt_gemm"))
        return WalkResult::interrupt();
      // The buffers it gets as memrefs or as pointers taken from them
      // (through address arithmetic), all as read and written.
      SmallVector<Value> work(call.getOperands());
      llvm::DenseSet<Value> seen;
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        if (isa<MemRefType>(v.getType())) {
          footprint.add(v, /*write=*/true);
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (!def)
          continue;
        if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
          Value source = pointer.getSource();
          if (auto meta = source.getDefiningOp<memref::ExtractStridedMetadataOp>())
            source = meta.getSource();
          footprint.add(source, /*write=*/true);
          continue;
        }
        if (!isMemoryEffectFree(def) || def->getNumRegions())
          return WalkResult::interrupt();
        llvm::append_range(work, def->getOperands());
      }
      return WalkResult::advance();
    }
    if (isa<gpu::LaunchOp>(inner))
      return WalkResult::advance(); // its body's effects are walked
    return addEffects(inner, footprint) ? WalkResult::advance() : WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return footprint;
}

/// A launch this pass may merge, with its constant sizes and footprint.
struct Member {
  gpu::LaunchOp launch;
  int64_t blocks = 0, threads = 0;
  Footprint footprint;
  /// Its threads meet (barriers, shuffles) or share memory: it must run
  /// with exactly its own block size, no thread masked off.
  bool collective = false;
};

/// `launch` as a member: synchronous, a 1-D grid and block of constant
/// sizes, one block, no private memory, its ids taken from the launch's
/// arguments, and every memory effect on a known buffer.
std::optional<Member> asMember(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
      !launch.getPrivateAttributions().empty() || !launch.getBody().hasOneBlock())
    return std::nullopt;
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  std::optional<int64_t> gx = getConstantIntValue(grid.x),
                         bx = getConstantIntValue(block.x);
  if (!gx || !bx || getConstantIntValue(grid.y) != 1 ||
      getConstantIntValue(grid.z) != 1 || getConstantIntValue(block.y) != 1 ||
      getConstantIntValue(block.z) != 1)
    return std::nullopt;
  Member m{launch, *gx, *bx, {}, !launch.getWorkgroupAttributions().empty()};
  WalkResult walk = launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::GridDimOp, gpu::BlockDimOp>(op))
      return WalkResult::interrupt();
    if (isa<gpu::BarrierOp, gpu::ShuffleOp>(op) ||
        op->getName().getStringRef().starts_with("gpu.subgroup"))
      m.collective = true;
    return addEffects(op, m.footprint) ? WalkResult::advance() : WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return m;
}

struct FuseLaunchesPass : impl::FuseLaunchesBase<FuseLaunchesPass> {
  using Base::Base;

  /// One launch at the last member's place: block b of member i (its blocks
  /// starting at s_i) runs the member's body as its block b - s_i.
  void fuse(ArrayRef<Member> group, StringRef name, Operation *before) {
    OpBuilder b(before);
    Location loc = FusedLoc::get(
        b.getContext(),
        llvm::map_to_vector(group, [](Member m) { return m.launch.getLoc(); }));
    int64_t blocks = 0, threads = 0;
    SmallVector<int64_t> starts;
    for (const Member &m : group) {
      starts.push_back(blocks);
      blocks += m.blocks;
      threads = std::max(threads, m.threads);
    }
    starts.push_back(blocks);
    // A block runs one member only, so members share the shared memory:
    // the k-th buffer of a type serves every member's k-th of that type.
    SmallVector<Type> shared;
    for (Member m : group) {
      llvm::DenseMap<Type, unsigned> seen;
      for (BlockArgument arg : m.launch.getWorkgroupAttributions()) {
        unsigned k = seen[arg.getType()]++;
        if (llvm::count(shared, arg.getType()) <= k)
          shared.push_back(arg.getType());
      }
    }
    gpu::LaunchOp fused = createKernelLaunch(
        b, loc, name, arith::ConstantIndexOp::create(b, loc, blocks),
        arith::ConstantIndexOp::create(b, loc, threads), shared);
    fused->setAttr("oflow.strategy",
                   b.getStringAttr("horizontal x" + std::to_string(group.size())));
    fused->setAttr("oflow.segments", b.getDenseI64ArrayAttr(starts));
    b.setInsertionPoint(fused.getBody().front().getTerminator());
    Value blockId = fused.getBlockIds().x, threadId = fused.getThreadIds().x;
    for (auto [i, m] : llvm::enumerate(group)) {
      auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
      Value begin = constant(starts[i]);
      Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, blockId,
                                         constant(starts[i + 1]));
      if (starts[i] > 0) {
        Value after =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, blockId, begin);
        cond = arith::AndIOp::create(b, loc, after, cond);
      }
      if (m.threads < threads)
        cond = arith::AndIOp::create(
            b, loc, cond,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, threadId,
                                  constant(m.threads)));
      auto branch = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
      OpBuilder inner = OpBuilder::atBlockBegin(branch.thenBlock());
      IRMapping mapping;
      gpu::LaunchOp from = group[i].launch;
      mapping.map(from.getBlockIds().x,
                  starts[i] ? arith::SubIOp::create(inner, loc, blockId, begin).getResult()
                            : blockId);
      mapping.map(from.getBlockIds().y, fused.getBlockIds().y);
      mapping.map(from.getBlockIds().z, fused.getBlockIds().z);
      mapping.map(from.getThreadIds().x, threadId);
      mapping.map(from.getThreadIds().y, fused.getThreadIds().y);
      mapping.map(from.getThreadIds().z, fused.getThreadIds().z);
      mapping.map(from.getGridSize().x,
                  arith::ConstantIndexOp::create(inner, loc, m.blocks).getResult());
      mapping.map(from.getGridSize().y, fused.getGridSize().y);
      mapping.map(from.getGridSize().z, fused.getGridSize().z);
      mapping.map(from.getBlockSize().x,
                  arith::ConstantIndexOp::create(inner, loc, m.threads).getResult());
      mapping.map(from.getBlockSize().y, fused.getBlockSize().y);
      mapping.map(from.getBlockSize().z, fused.getBlockSize().z);
      llvm::DenseMap<Type, unsigned> seen;
      for (BlockArgument arg : from.getWorkgroupAttributions()) {
        unsigned k = seen[arg.getType()]++;
        for (BlockArgument candidate : fused.getWorkgroupAttributions())
          if (candidate.getType() == arg.getType() && k-- == 0) {
            mapping.map(arg, candidate);
            break;
          }
      }
      for (Operation &op : from.getBody().front().without_terminator())
        inner.clone(op, mapping);
    }
    for (Member m : group)
      m.launch.erase();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Fused kernels are numbered per function (their names start with its
    // name): a count kept across functions would follow which thread of
    // the pass manager ran which, and the kernels' names would vary from
    // one compile to the next.
    fusedCount = 0;
    // Windows of ops the scheduler may reorder: pure ops without regions,
    // kernels, and ops of known footprint without results. Anything else
    // (a runtime call of unknown effect, an op whose result later ops use)
    // stays where it is, between windows.
    SmallVector<Operation *> window;
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      bool movable = !op.hasTrait<OpTrait::IsTerminator>() &&
                     ((isMemoryEffectFree(&op) && op.getNumRegions() == 0) ||
                      (op.getNumResults() == 0 && footprintOf(&op)));
      if (movable) {
        window.push_back(&op);
        continue;
      }
      schedule(window, &op);
      window.clear();
    }
  }

  /// Reorders the window's ops (ending before `end`): the pure ops first, in
  /// order (they only use values from before the window or from each
  /// other), then the rest by level, a node's level one past the highest of
  /// the earlier nodes it conflicts with; each level's kernels share
  /// launches (at most `max-members` each).
  void schedule(ArrayRef<Operation *> window, Operation *end) {
    SmallVector<Operation *> nodes;
    for (Operation *op : window)
      if (!(isMemoryEffectFree(op) && op->getNumRegions() == 0))
        nodes.push_back(op);
    if (nodes.size() < 2)
      return;
    SmallVector<Footprint> footprints;
    SmallVector<std::optional<Member>> members;
    for (Operation *op : nodes) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      members.push_back(launch ? asMember(launch) : std::nullopt);
      footprints.push_back(members.back() ? members.back()->footprint : *footprintOf(op));
    }
    // Levels as soon as possible (one past the highest earlier op it
    // conflicts with) and as late as possible (one before the lowest later
    // one): the second gathers what nothing later needs, such as the
    // optimizer's updates, at the end. The one with fewer launches wins.
    size_t n = nodes.size();
    std::vector<std::vector<bool>> conflict(n, std::vector<bool>(n, false));
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < i; ++j)
        conflict[j][i] = footprints[j].conflicts(footprints[i]);
    // Within a level the other ops come first (in program order), then the
    // kernels: an op may share the level of an other op or of a kernel
    // after it, not of a kernel it must follow.
    auto gap = [&](size_t before) -> unsigned { return members[before] ? 1 : 0; };
    SmallVector<unsigned> early(n, 0), late(n, 0);
    unsigned levels = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < i; ++j)
        if (conflict[j][i])
          early[i] = std::max(early[i], early[j] + gap(j));
      levels = std::max(levels, early[i] + 1);
    }
    for (size_t i = n; i-- > 0;) {
      late[i] = levels - 1;
      for (size_t j = i + 1; j < n; ++j)
        if (conflict[i][j])
          late[i] = std::min(late[i], late[j] - gap(i));
    }
    SmallVector<unsigned> level =
        launchCount(late, levels, members) < launchCount(early, levels, members) ? late
                                                                                : early;
    // Pure ops before every node (only nodes move after them).
    for (Operation *op : window)
      if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
        op->moveBefore(nodes.front());
    StringRef name = cast<func::FuncOp>(end->getParentOp()).getSymName();
    for (unsigned l = 0; l < levels; ++l) {
      SmallVector<Member> atLevel;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (level[i] != l)
          continue;
        if (!members[i])
          nodes[i]->moveBefore(end);
        else
          atLevel.push_back(*members[i]);
      }
      for (auto &[size, bucket] : buckets(atLevel))
        emitBucket(bucket, name, end);
    }
  }

  /// A level's kernels by the launch they may share. The fused block size is
  /// the largest member's and a collective member needs exactly its own: one
  /// bucket per collective block size, the others in the largest bucket that
  /// fits them (or one of their own).
  static std::map<int64_t, SmallVector<Member>> buckets(ArrayRef<Member> atLevel) {
    std::map<int64_t, SmallVector<Member>> out;
    for (const Member &m : atLevel)
      if (m.collective)
        out[m.threads].push_back(m);
    for (const Member &m : atLevel) {
      if (m.collective)
        continue;
      auto largest = out.empty() ? out.end() : std::prev(out.end());
      if (largest != out.end() && largest->first >= m.threads)
        largest->second.push_back(m);
      else
        out[-1].push_back(m);
    }
    return out;
  }

  /// The launches a level assignment makes (ignoring the size caps).
  static size_t launchCount(ArrayRef<unsigned> level, unsigned levels,
                            ArrayRef<std::optional<Member>> members) {
    std::vector<SmallVector<Member>> byLevel(levels);
    size_t count = 0;
    for (auto [l, m] : llvm::zip(level, members)) {
      if (m)
        byLevel[l].push_back(*m);
      else
        ++count;
    }
    for (const SmallVector<Member> &atLevel : byLevel)
      count += buckets(atLevel).size();
    return count;
  }

  /// `bucket`'s kernels in launches of at most `max-members` and 2^31 - 1
  /// blocks, before `end`.
  void emitBucket(ArrayRef<Member> bucket, StringRef name, Operation *end) {
    SmallVector<Member> group;
    int64_t blocks = 0;
    auto flush = [&] {
      if (group.size() > 1)
        fuse(group, (name + "_h" + Twine(fusedCount++)).str(), end);
      else if (group.size() == 1)
        group.front().launch->moveBefore(end);
      group.clear();
      blocks = 0;
    };
    for (const Member &m : bucket) {
      if (static_cast<int64_t>(group.size()) == maxMembers ||
          m.blocks > kMaxBlocks - blocks)
        flush();
      blocks += m.blocks;
      group.push_back(m);
    }
    flush();
  }

  static constexpr int64_t kMaxBlocks = 2147483647; // gridDim.x limit
  unsigned fusedCount = 0;
};

} // namespace
} // namespace oflow
