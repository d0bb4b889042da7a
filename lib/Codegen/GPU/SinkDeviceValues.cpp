//===- SinkDeviceValues.cpp - host reads of device memory -> kernels ------===//
//
// Views of the program buffers and the index arithmetic behind them are
// cloned into the kernels too, so that kernels take few parameters.
//
// A scalar the host reads from a program buffer (the poison flag, a 0-d
// intermediate) lives in device memory on the CUDA target. Each kernel that
// uses it reads it again itself: the load and the pure ops computing from it
// are cloned into the kernel. That is only the same value when the memory
// cannot change in between: either nothing that may write runs between the
// host load and the kernel, or no op of the function ever writes bytes that
// overlap what the load reads.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include <limits>

using namespace mlir;

namespace oflow {

/// The end of a range of unknown size.
static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

bool sameBuffer(Value a, Value b) {
  if (a == b)
    return true;
  // Views through subviews or casts of the same bytes may differ in offset
  // or strides; only the memory plan's own views are compared.
  if (a.getType() != b.getType() || !a.getDefiningOp<memref::ViewOp>() ||
      !b.getDefiningOp<memref::ViewOp>())
    return false;
  std::optional<ByteRange> ra = rootRange(a), rb = rootRange(b);
  return ra && rb && ra->arg == rb->arg && ra->begin == rb->begin && ra->end == rb->end &&
         ra->end != kUnbounded;
}

bool isHostOp(Operation *op) {
  if (auto ifOp = dyn_cast<scf::IfOp>(op); ifOp && !ifOp.getNumResults())
    return llvm::all_of(ifOp->getRegions(), [](Region &region) {
      return llvm::all_of(region.getOps(), [](Operation &inner) {
        return isa<scf::YieldOp>(inner) || isHostOp(&inner);
      });
    });
  return isa<func::CallOp, func::ReturnOp, gpu::LaunchOp, gpu::MemsetOp, gpu::WaitOp>(op) ||
         isMemoryEffectFree(op);
}

llvm::DenseSet<Operation *> findDeviceValues(Block &body) {
  llvm::DenseSet<Operation *> values;
  for (Operation &op : body) {
    if (isa<memref::LoadOp>(op)) {
      values.insert(&op);
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumResults() == 0)
      continue;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && values.contains(def)) {
        values.insert(&op);
        break;
      }
  }
  return values;
}

namespace {

/// The bytes of a function argument a memref.view covers (all of them when
/// its offset or size is not static).
std::optional<ByteRange> viewRange(memref::ViewOp view) {
  auto arg = dyn_cast<BlockArgument>(view.getSource());
  if (!arg)
    return std::nullopt;
  ByteRange range{arg.getArgNumber(), 0, kUnbounded};
  auto offset = getConstantIntValue(view.getByteShift());
  MemRefType type = view.getType();
  if (offset && type.hasStaticShape() && type.getElementType().isIntOrFloat()) {
    range.begin = *offset;
    range.end = *offset + type.getNumElements() *
                              std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  }
  return range;
}

/// Whether any use of `memref` (or of a view of it) may write it: anything
/// but loads, copies from it, pure ops and views counts as a write.
bool mayBeWritten(Value memref) {
  SmallVector<Value> worklist = {memref};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp>(user))
        continue;
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && copy.getSource() == v)
        continue;
      if (isa<ViewLikeOpInterface, memref::ExtractStridedMetadataOp>(user) &&
          !isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            worklist.push_back(r);
        continue;
      }
      if (isMemoryEffectFree(user) &&
          !isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      return true;
    }
  }
  return false;
}

/// The byte ranges of the function's arguments some op may write.
SmallVector<ByteRange> writtenRanges(func::FuncOp func) {
  SmallVector<ByteRange> ranges;
  for (BlockArgument arg : func.getArguments()) {
    for (OpOperand &use : arg.getUses()) {
      auto view = dyn_cast<memref::ViewOp>(use.getOwner());
      std::optional<ByteRange> range = view ? viewRange(view) : std::nullopt;
      if (!range) {
        // Used other than through a view: assume all of it may be written.
        if (!isMemoryEffectFree(use.getOwner()) || !view)
          ranges.push_back({arg.getArgNumber(), 0, kUnbounded});
        continue;
      }
      if (mayBeWritten(view.getResult()))
        ranges.push_back(*range);
    }
  }
  return ranges;
}

} // namespace

std::optional<ByteRange> rootRange(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return viewRange(view);
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      return std::nullopt;
    v = viewLike.getViewSource();
  }
  auto arg = cast<BlockArgument>(v);
  if (!isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return std::nullopt; // a launch's shared memory, a loop's iteration value
  return ByteRange{arg.getArgNumber(), 0, kUnbounded};
}

std::optional<ByteRange> layoutRange(Value memref) {
  std::optional<ByteRange> root = rootRange(memref);
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!root || root->end == kUnbounded || !type || !type.hasStaticShape() ||
      type.getNumElements() == 0 || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return root;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset < 0 ||
      llvm::any_of(strides, [](int64_t s) { return ShapedType::isDynamic(s) || s < 0; }))
    return root;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t bytes = type.getElementTypeBitWidth() / 8, last = offset;
  for (auto [size, stride] : llvm::zip(shape, strides))
    last += (size - 1) * stride;
  ByteRange range = *root;
  range.begin = root->begin + offset * bytes;
  range.end = root->begin + (last + 1) * bytes;
  if (range.end > root->end)
    return root; // not within its root view: keep what is known
  // Rows: the last dim contiguous, every outer dim a whole number of rows.
  int64_t rank = type.getRank();
  if (rank < 2 || strides[rank - 1] != 1 || shape[rank - 1] >= strides[rank - 2])
    return range;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (strides[d] != shape[d + 1] * strides[d + 1])
      return range;
  range.pitch = strides[rank - 2] * bytes;
  range.width = shape[rank - 1] * bytes;
  return range;
}

/// Whether `memref` is (a view of) a `memref.get_global`.
static bool isGlobal(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (isa<memref::GetGlobalOp>(def))
      return true;
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      return false;
    memref = viewLike.getViewSource();
  }
  return false;
}

BufferBytes bufferBytes(Value memref) {
  BufferBytes bytes;
  bytes.range = rootRange(memref);
  bytes.global = !bytes.range && isGlobal(memref);
  return bytes;
}

std::optional<SmallVector<Touch>> memoryTouches(Operation *root, bool writesOnly) {
  SmallVector<Touch> touches;
  WalkResult result = root->walk([&](Operation *op) {
    if (isMemoryEffectFree(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) // an scf.if's effects are those of the ops in it
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances) {
      bool write = isa<MemoryEffects::Write>(e.getEffect());
      if (writesOnly && !write)
        continue;
      if (!write && !isa<MemoryEffects::Read>(e.getEffect()))
        return WalkResult::interrupt(); // allocations, frees
      std::optional<ByteRange> range =
          e.getValue() ? rootRange(e.getValue()) : std::nullopt;
      if (!range)
        return WalkResult::interrupt();
      touches.push_back({*range, write});
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return touches;
}

bool mayWrite(Operation *root, const ByteRange &read) {
  std::optional<SmallVector<Touch>> writes = memoryTouches(root, /*writesOnly=*/true);
  return !writes || llvm::any_of(*writes, [&](const Touch &w) { return w.range.overlaps(read); });
}

namespace {

struct Sinker {
  func::FuncOp func;
  const llvm::DenseSet<Operation *> &values;
  Block &body;
  DenseMap<Operation *, unsigned> position;
  /// writersBefore[i]: how many ops that may write memory precede op i.
  SmallVector<unsigned> writersBefore;
  SmallVector<ByteRange> written;

  Sinker(func::FuncOp func, const llvm::DenseSet<Operation *> &values)
      : func(func), values(values), body(func.getBody().front()),
        written(writtenRanges(func)) {
    unsigned count = 0;
    for (Operation &op : body) {
      position[&op] = writersBefore.size();
      writersBefore.push_back(count);
      if (!isMemoryEffectFree(&op) && !values.contains(&op))
        ++count;
    }
  }

  /// Device values, globals (a host address means nothing in a kernel), and
  /// the host's pure address arithmetic: a kernel that derives its views
  /// from the entry's three buffers itself takes three memref arguments
  /// instead of one descriptor per view, which would exceed the 4 KiB of
  /// kernel parameters on big models.
  bool needsSinking(Operation *def) const {
    return def && def->getBlock() == &body &&
           (values.contains(def) || isa<memref::GetGlobalOp>(def) ||
            (isMemoryEffectFree(def) && def->getNumRegions() == 0 &&
             def->getNumResults() > 0));
  }

  static bool isSingleThread(gpu::LaunchOp launch) {
    return llvm::all_of(launch.getOperands(), [](Value size) {
      return getConstantIntValue(size) == 1;
    });
  }

  /// Whether `load` reads the same value when it runs at `launch` instead:
  /// nothing may write its bytes in between (inside a kernel of many threads,
  /// the kernel itself neither) or anywhere in the function.
  bool sameValueAt(memref::LoadOp load, gpu::LaunchOp launch) const {
    std::optional<ByteRange> read = rootRange(load.getMemRef());
    unsigned from = position.lookup(load) + 1, to = position.lookup(launch);
    if (from <= to && writersBefore[to] == writersBefore[from] &&
        (isSingleThread(launch) || (read && !mayWrite(launch, *read))))
      return true;
    if (!read)
      return false;
    return llvm::none_of(written,
                         [&](const ByteRange &w) { return w.overlaps(*read); });
  }

  /// Clones the device value `v` (and what it is computed from) at the
  /// builder's insertion point.
  FailureOr<Value> materialize(Value v, gpu::LaunchOp launch, IRMapping &map,
                               OpBuilder &b) {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    if (!needsSinking(def))
      return v;
    if (auto load = dyn_cast<memref::LoadOp>(def);
        load && !sameValueAt(load, launch)) {
      InFlightDiagnostic diag = load.emitError(
          "on the CUDA target this read of device memory must move into the "
          "kernel that uses it, but the memory may change before that kernel");
      diag.attachNote(launch.getLoc()) << "the kernel";
      return diag;
    }
    for (Value operand : def->getOperands())
      if (failed(materialize(operand, launch, map, b)))
        return failure();
    Operation *clone = b.clone(*def, map);
    return clone->getResult(cast<OpResult>(v).getResultNumber());
  }

  LogicalResult sinkInto(gpu::LaunchOp launch) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping map;
    for (Value v : captured) {
      if (!needsSinking(v.getDefiningOp()))
        continue;
      FailureOr<Value> inside = materialize(v, launch, map, b);
      if (failed(inside))
        return failure();
      v.replaceUsesWithIf(*inside, [&](OpOperand &use) {
        return launch->isProperAncestor(use.getOwner());
      });
    }
    return success();
  }

  LogicalResult run() {
    for (Operation &op : body)
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        if (failed(sinkInto(launch)))
          return failure();
    // The host copies are dead now, unless host code needs them.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      if (!needsSinking(&op))
        continue;
      if (op.use_empty()) {
        op.erase();
        continue;
      }
      if (!values.contains(&op))
        continue;
      Operation *user = *op.getUsers().begin();
      InFlightDiagnostic diag = user->emitError(
          "on the CUDA target the host cannot use a value that lives in "
          "device memory");
      diag.attachNote(op.getLoc()) << "read here";
      return diag;
    }
    return success();
  }
};

} // namespace

LogicalResult sinkDeviceValues(func::FuncOp func,
                               const llvm::DenseSet<Operation *> &values) {
  return Sinker(func, values).run();
}

} // namespace oflow
