//===- GpuKernels.h - helpers of oflow-form-gpu-kernels ---------*- C++ -*-===//
//
// Internal to lib/Codegen: the host/device classification of top-level ops
// and the rematerialization of device reads inside kernels.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_CODEGEN_GPUKERNELS_H
#define OFLOW_LIB_CODEGEN_GPUKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <optional>

namespace oflow {

/// Ops the host may run on the CUDA target: no memory effects (index and
/// address arithmetic, views), runtime calls, kernel launches, memsets on
/// the stream (`gpu.memset` between `gpu.wait`s), and `scf.if`s (on a host
/// condition) of such ops.
bool isHostOp(mlir::Operation *op);

/// Top-level ops of `body` whose value only exists in device memory: host
/// `memref.load`s and the pure ops computing from them.
llvm::DenseSet<mlir::Operation *> findDeviceValues(mlir::Block &body);

/// A byte range [begin, end) of one function argument (a program buffer).
/// With a `pitch`, only the first `width` bytes of each pitch from `begin`
/// on: a slab of rows, such as one piece of a concatenation along the last
/// axis, whose bytes interleave with the other pieces'.
struct ByteRange {
  unsigned arg;
  int64_t begin, end;
  int64_t pitch = 0, width = 0;
  bool overlaps(const ByteRange &o) const {
    if (arg != o.arg || begin >= o.end || o.begin >= end)
      return false;
    if (pitch > 0 && pitch == o.pitch) {
      // Every byte of each lies at its own offsets within a pitch.
      int64_t a = begin % pitch, b = o.begin % pitch;
      if (a + width <= pitch && b + o.width <= pitch &&
          (a + width <= b || b + o.width <= a))
        return false;
    }
    return true;
  }
};

/// The bytes a memref covers: the range of the memref.view of a function
/// argument at the root of its chain of views (all of the argument when the
/// view's offset or size is not static, or when the chain ends at the
/// argument itself); nullopt when it has no such root.
std::optional<ByteRange> rootRange(mlir::Value memref);

/// rootRange narrowed to the bytes `memref`'s own strided layout addresses
/// (a subview's, relative to the root view's start), with the pitch and
/// width of its rows where its outer dims are rows of equal pitch: two
/// pieces of a concatenation along the last axis do not overlap. The root's
/// range where the layout is not static.
std::optional<ByteRange> layoutRange(mlir::Value memref);

/// What is known of the bytes a memref addresses, to tell buffers apart: a
/// range of a program buffer, a global (an allocation of its own, never a
/// program buffer's bytes), or nothing (anything).
struct BufferBytes {
  std::optional<ByteRange> range;
  bool global = false;
  /// Whether the two may share bytes.
  bool mayOverlap(const BufferBytes &o) const {
    if (range && o.range)
      return range->overlaps(*o.range);
    return !((range && o.global) || (global && o.range));
  }
};
BufferBytes bufferBytes(mlir::Value memref);

/// The buffers `op`'s body reads other than through its operands (a
/// gather's `memref.load` of its table at a computed index): each may be
/// read anywhere, at any point of the op. Null when the body has another
/// memory effect (nothing may then be assumed).
std::optional<llvm::SmallVector<mlir::Value>> bodyReads(mlir::linalg::GenericOp op);

/// Whether `a` and `b` address the same elements: the same value, or
/// memref.views of the same bytes with the same type (the memory plan's
/// reuse makes several).
bool sameBuffer(mlir::Value a, mlir::Value b);

/// Bytes an op reads or writes.
struct Touch {
  ByteRange range;
  bool write = false;
};

/// What `root` and the ops nested in it read and write, from their memory
/// effects, as program-buffer byte ranges (only the writes with
/// `writesOnly`); nullopt where an op's effects are unknown or one is not on
/// a program buffer.
std::optional<llvm::SmallVector<Touch>> memoryTouches(mlir::Operation *root,
                                                      bool writesOnly = false);

/// Whether some op nested in `root` may write bytes of `range`.
bool mayWrite(mlir::Operation *root, const ByteRange &range);

/// Rematerializes inside each top-level launch of `func` the device values
/// (and `memref.get_global`s) it uses, then erases the host copies. Fails
/// with an error naming the op when a value is needed by host code, or when
/// a read cannot move because the memory may change before the kernel.
mlir::LogicalResult sinkDeviceValues(mlir::func::FuncOp func,
                                     const llvm::DenseSet<mlir::Operation *> &values);

/// The shape the warp-row and block-column strategies share: warps of 32
/// lanes, 8 warps per block, and 4 independent loads in flight per lane
/// (a lane reads 4 elements before it computes with any).
constexpr int64_t kWarp = 32;
constexpr int64_t kWarpsPerBlock = 8;
constexpr int64_t kUnroll = 4;

/// A 1-D `gpu.launch` of `grid` blocks of `block` threads before the
/// builder's insertion point, with its terminator and the `workgroup`
/// (shared) memory buffers, that gpu-kernel-outlining turns into
/// `@oflow_kernels::@<name>`.
mlir::gpu::LaunchOp createKernelLaunch(mlir::OpBuilder &b, mlir::Location loc,
                                       llvm::StringRef name, mlir::Value grid,
                                       mlir::Value block,
                                       mlir::TypeRange workgroup = {});

/// `linear` split into indices over `extents` (the last varying fastest).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value linear,
                                           llvm::ArrayRef<int64_t> extents);

/// The indices `map` gives at loop point `ivs`.
llvm::SmallVector<mlir::Value> applyMap(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::AffineMap map,
                                        llvm::ArrayRef<mlir::Value> ivs);

/// One index's step of `stridedLoops`: `load(i)` issues index i's loads
/// and returns the step that computes with them from the carried values.
using StridedStep = std::function<llvm::SmallVector<mlir::Value>(mlir::ValueRange carried)>;

/// Indices first, first + stride, ... below `count`, in order, carrying
/// `inits`: a main loop takes kUnroll indices per iteration and issues all
/// their loads before it computes with any (kUnroll independent loads in
/// flight; the order of the computation, hence of a sum, is unchanged),
/// then a loop of one index takes those past the last full kUnroll x
/// stride. The carried values at the end.
llvm::SmallVector<mlir::Value>
stridedLoops(mlir::OpBuilder &b, mlir::Location loc, mlir::Value first, int64_t count,
             int64_t stride, mlir::ValueRange inits,
             llvm::function_ref<StridedStep(mlir::Value index)> load);

/// The op of a one-output reduction `op` that folds the accumulator, if it
/// is the accumulator's only use and a float add/mul/max/min with a neutral
/// element (what a kernel may re-associate); else null.
mlir::Operation *floatCombiner(mlir::linalg::GenericOp op);

/// `combiner` (an op folding an accumulator, at operand `accPosition`)
/// applied to (acc, value).
mlir::Value combine(mlir::OpBuilder &b, mlir::Operation *combiner,
                    unsigned accPosition, mlir::Value acc, mlir::Value value);

/// The loop extents of a reduction the warp-row strategy runs
/// (oflow-gpu-row-reductions): the row's parallel loops, then its reduced
/// columns; and the op that folds the accumulator.
struct WarpRowReduction {
  llvm::SmallVector<int64_t> rows, cols;
  mlir::Operation *combiner = nullptr;
  int64_t rowCount() const;
  int64_t colCount() const;
};

/// Whether `op` (on tensors or buffers) is a reduction the warp-row strategy
/// runs: parallel loops then reduction loops, static extents, between 32 and
/// 32 x `maxChain` reduced elements, one f32 output indexed by the parallel
/// loops only, one add/mul/max/min combiner with a neutral element.
/// oflow-split-reductions{warp-rows} and oflow-gpu-row-reductions share it.
std::optional<WarpRowReduction> matchWarpRowReduction(mlir::linalg::GenericOp op,
                                                      int64_t maxChain);

/// The loop structure of a reduction the column strategy runs
/// (oflow-gpu-column-reductions): its innermost loop is parallel (the
/// columns, one lane each), the other parallel loops pick a block's slice,
/// and the reduction loops are shared by the block's warps.
struct ColumnReduction {
  llvm::SmallVector<unsigned> outer, reduced; ///< loop positions
  unsigned column = 0;
  llvm::SmallVector<int64_t> ranges;
  mlir::Operation *combiner = nullptr;
  int64_t extent(llvm::ArrayRef<unsigned> loops) const;
};

/// Whether `op` (on buffers) is a reduction the column strategy runs: static
/// loops, at least `minReduced` reduced elements, the innermost loop
/// parallel, one float output written once per parallel point, and a float
/// combiner (floatCombiner).
std::optional<ColumnReduction> matchColumnReduction(mlir::linalg::GenericOp op,
                                                    int64_t minReduced);

} // namespace oflow

#endif
