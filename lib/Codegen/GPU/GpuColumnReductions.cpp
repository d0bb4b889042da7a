//===- GpuColumnReductions.cpp - column reductions, a block per column tile ===//
//
// The fallback runs a reduction one thread per output: a bias gradient
// (8192 rows into 768 columns) is 768 threads each walking its column, one
// dependent load at a time, and even after split-reductions its partial and
// fold kernels are chains of 64 loads (~40 us each, latency-bound). Here the
// 8 warps of a block share the rows of a 32-column tile: lane l of warp w
// sums rows w, w + 8, ... of column l, with 4 loads in flight, and the 8
// partials of a column meet in shared memory after a barrier. Loads stay
// coalesced (a warp reads 32 consecutive columns of one row). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallBitVector.h"

namespace oflow {
#define GEN_PASS_DEF_GPUCOLUMNREDUCTIONS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {

int64_t ColumnReduction::extent(ArrayRef<unsigned> loops) const {
  int64_t n = 1;
  for (unsigned l : loops)
    n *= ranges[l];
  return n;
}

std::optional<ColumnReduction> matchColumnReduction(linalg::GenericOp op,
                                                    int64_t minReduced) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  ColumnReduction r;
  r.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(r.ranges, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned n = iterators.size();
  if (iterators.back() != utils::IteratorType::parallel)
    return std::nullopt;
  r.column = n - 1;
  for (unsigned l = 0; l + 1 < n; ++l)
    (iterators[l] == utils::IteratorType::reduction ? r.reduced : r.outer).push_back(l);
  if (r.extent(r.reduced) < minReduced)
    return std::nullopt;
  // One output element per parallel point: its indices are the parallel
  // loops, each once.
  OpOperand &init = op.getDpsInitsMutable()[0];
  if (!isa<FloatType>(getElementTypeOrSelf(init.get().getType())))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&init);
  if (map.getNumResults() != r.outer.size() + 1)
    return std::nullopt;
  llvm::SmallBitVector seen(n);
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || iterators[d.getPosition()] != utils::IteratorType::parallel ||
        seen.test(d.getPosition()))
      return std::nullopt;
    seen.set(d.getPosition());
  }
  // Warp 0 stores after every warp has read: an input sharing bytes with
  // the output could be read after it was written. The output must be a
  // view of a program buffer; an input, a view of other bytes or a global.
  BufferBytes out = bufferBytes(init.get());
  if (!out.range)
    return std::nullopt;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType()) && bufferBytes(in->get()).mayOverlap(out))
      return std::nullopt;
  std::optional<SmallVector<Value>> reads = bodyReads(op);
  if (!reads || llvm::any_of(*reads, [&](Value v) { return bufferBytes(v).mayOverlap(out); }))
    return std::nullopt;
  r.combiner = floatCombiner(op);
  if (!r.combiner)
    return std::nullopt;
  return r;
}

namespace {

/// Builds the kernel of one column reduction inside `launch`.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, linalg::GenericOp op, const ColumnReduction &shape,
                Value initValue)
      : b(b), loc(op.getLoc()), op(op), shape(shape), initValue(initValue) {}

  void build(gpu::LaunchOp launch) {
    b.setInsertionPoint(launch.getBody().front().getTerminator());
    int64_t columns = shape.ranges[shape.column];
    int64_t tiles = llvm::divideCeil(columns, kWarp);
    Value t = launch.getThreadIds().x;
    Value warpSize = constant(kWarp);
    Value lane = arith::RemUIOp::create(b, loc, t, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, t, warpSize);
    Value blockId = launch.getBlockIds().x;
    Value column = lane, slice = blockId;
    if (tiles > 1) {
      Value tileCount = constant(tiles);
      Value tile = arith::RemUIOp::create(b, loc, blockId, tileCount);
      slice = arith::DivUIOp::create(b, loc, blockId, tileCount);
      column = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tile, warpSize), lane);
    }
    // The lanes past the last column read the last one (every lane reaches
    // the barrier) and store nothing.
    if (columns % kWarp) {
      Value last = constant(columns - 1);
      inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, column, last);
      column = arith::MinUIOp::create(b, loc, column, last);
    }
    ivs.assign(shape.ranges.size(), Value());
    ivs[shape.column] = column;
    SmallVector<int64_t> outerExtents = llvm::map_to_vector(
        shape.outer, [&](unsigned l) { return shape.ranges[l]; });
    for (auto [l, v] : llvm::zip(shape.outer, delinearize(b, loc, slice, outerExtents)))
      ivs[l] = v;

    BlockArgument accArg = op.getRegionOutputArgs()[0];
    accPosition = shape.combiner->getOperand(0) == accArg ? 0 : 1;
    Value neutral =
        arith::ConstantOp::create(b, loc, *arith::getNeutralElement(shape.combiner));
    Value partial = rowLoops(warp, neutral);

    // The warps' partials of a column meet in shared memory.
    Value shared = launch.getWorkgroupAttributions()[0];
    memref::StoreOp::create(b, loc, partial, shared, ValueRange{warp, lane});
    gpu::BarrierOp::create(b, loc);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp,
                                        constant(0));
    Value cond = inRange ? arith::AndIOp::create(b, loc, first, inRange) : first;
    auto store = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    OpOperand &out = op.getDpsInitsMutable()[0];
    AffineMap outMap = op.getMatchingIndexingMap(&out);
    for (unsigned l : shape.reduced)
      ivs[l] = constant(0); // the output map does not use them
    SmallVector<Value> outIndices = applyMap(b, loc, outMap, ivs);
    Value acc = initValue ? initValue
                          : memref::LoadOp::create(b, loc, out.get(), outIndices);
    for (int64_t w = 0; w < kWarpsPerBlock; ++w) {
      Value p = memref::LoadOp::create(b, loc, shared, ValueRange{constant(w), lane});
      acc = combine(b, shape.combiner, accPosition, acc, p);
    }
    memref::StoreOp::create(b, loc, acc, out.get(), outIndices);
  }

private:
  Value constant(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// This warp's rows warp, warp + 8, ... folded into `init`, kUnroll rows
  /// read before any is computed with (the order of the fold is unchanged).
  Value rowLoops(Value warp, Value init) {
    SmallVector<int64_t> reducedExtents = llvm::map_to_vector(
        shape.reduced, [&](unsigned l) { return shape.ranges[l]; });
    auto load = [&](Value row) -> StridedStep {
      SmallVector<Value> point(ivs);
      for (auto [l, v] : llvm::zip(shape.reduced, delinearize(b, loc, row, reducedExtents)))
        point[l] = v;
      SmallVector<Value> args;
      for (OpOperand *in : op.getDpsInputOperands())
        args.push_back(isa<MemRefType>(in->get().getType())
                           ? memref::LoadOp::create(
                                 b, loc, in->get(),
                                 applyMap(b, loc, op.getMatchingIndexingMap(in), point))
                           : in->get());
      return [this, point, args](ValueRange carried) mutable {
        args.push_back(carried[0]);
        return SmallVector<Value>{cloneBody(point, args)};
      };
    };
    return stridedLoops(b, loc, warp, shape.extent(shape.reduced), kWarpsPerBlock,
                        ValueRange{init}, load)[0];
  }

  /// The body of the reduction at `point` with block arguments `args`; the
  /// new accumulator.
  Value cloneBody(ArrayRef<Value> point, ArrayRef<Value> args) {
    IRMapping mapping;
    Block *body = op.getBody();
    mapping.map(body->getArguments(), args);
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), point[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
  }

  OpBuilder &b;
  Location loc;
  linalg::GenericOp op;
  const ColumnReduction &shape;
  Value initValue;
  unsigned accPosition = 0;
  Value inRange;
  SmallVector<Value> ivs; ///< the loop point; reduced loops unset
};

struct GpuColumnReductionsPass
    : impl::GpuColumnReductionsBase<GpuColumnReductionsPass> {
  using Base::Base;

  /// The fill of `op`'s output before it, with only pure ops and fills of
  /// other bytes in between, or null.
  static linalg::FillOp initFill(linalg::GenericOp op) {
    Value out = op.getDpsInits()[0];
    std::optional<ByteRange> range = rootRange(out);
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (isMemoryEffectFree(prev))
        continue;
      auto fill = dyn_cast<linalg::FillOp>(prev);
      if (!fill || !fill.hasPureBufferSemantics())
        return nullptr;
      if (fill.getOutputs()[0] == out)
        return fill;
      std::optional<ByteRange> other = rootRange(fill.getOutputs()[0]);
      if (!other || !range || other->overlaps(*range))
        return nullptr;
    }
    return nullptr;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<std::pair<linalg::GenericOp, ColumnReduction>> work;
    for (Operation &op : func.getBody().front())
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (std::optional<ColumnReduction> shape =
                matchColumnReduction(generic, minReduced))
          work.push_back({generic, *shape});
    unsigned count = 0;
    for (auto &[op, shape] : work) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      linalg::FillOp fill = initFill(op);
      int64_t tiles = llvm::divideCeil(shape.ranges[shape.column], kWarp);
      Value grid = arith::ConstantIndexOp::create(b, loc, tiles * shape.extent(shape.outer));
      Value block = arith::ConstantIndexOp::create(b, loc, kWarp * kWarpsPerBlock);
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      auto shared = MemRefType::get(
          {kWarpsPerBlock, kWarp}, element, MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(&getContext(), gpu::AddressSpace::Workgroup));
      gpu::LaunchOp launch = createKernelLaunch(
          b, loc, (func.getSymName() + "_col" + Twine(count++)).str(), grid, block,
          TypeRange{shared});
      launch->setAttr("oflow.strategy", b.getStringAttr("block-column"));
      KernelBuilder(b, op, shape, fill ? fill->getOperand(0) : Value()).build(launch);
      if (fill)
        fill.erase();
      op.erase();
    }
  }
};

} // namespace
} // namespace oflow
