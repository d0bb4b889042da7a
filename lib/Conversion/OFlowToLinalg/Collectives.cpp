//===- Collectives.cpp - boxing ops on local pieces -> tensor + runtime ---===//
//
// After partitioning, a boxing op converts this rank's piece on one mesh
// axis. The local conversions are tensor code indexed by the rank's mesh
// coordinate (a slice, a zero-pad, a select); the communicating ones copy
// their operands into one fresh contiguous buffer (several all-reduce operands
// share one: a bucket) and call the runtime's collective on it
// (oflow_rt/abi.h). The call is emitted against a placeholder taking memrefs,
// `__oflow_rt_<kind>_<dtype>`; after bufferization and memory planning,
// oflow-lower-runtime-calls passes the planned addresses instead.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/DeclareFunction.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/RuntimeDtype.h"
#include "LoweringUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace oflow::lowering {
namespace {
namespace of = mlir::oflow;

/// The ABI's dtype code of what collectives carry (f32, f64, i32, i64, i8
/// and bool; the runtime's MPI and NCCL paths have no 16-bit floats), or -1.
int64_t dtypeCode(Type type) {
  std::optional<int64_t> code = runtimeDtype(type);
  return code && *code <= OFLOW_DT_I8 ? *code : -1;
}

std::string dtypeSuffix(Type type) {
  return type.isF32()          ? "f32"
         : type.isF64()        ? "f64"
         : type.isInteger(32)  ? "i32"
         : type.isInteger(64)  ? "i64"
         : type.isInteger(8)   ? "i8"
                               : "i1";
}

/// This rank's coordinate on `meshAxis`, as an index: asked once per
/// function and axis, at the function's start. (Asked where each
/// collective's slice needed it, the calls, which the GPU scheduler cannot
/// move, split the kernels between them into launches of their own: ZeRO's
/// per-parameter updates ran one or two kernels per launch.)
Value meshCoord(OpBuilder &b, Location loc, Operation *anchor, int64_t meshAxis) {
  auto module = anchor->getParentOfType<ModuleOp>();
  StringRef name = "oflow_rt_mesh_coord";
  auto fnType = b.getFunctionType({b.getI64Type()}, {b.getI64Type()});
  declareFunction(module, name, fnType);
  auto fn = anchor->getParentOfType<FunctionOpInterface>();
  Block *entry = fn && !fn.getFunctionBody().empty() ? &fn.getFunctionBody().front() : nullptr;
  // Only the block's head, where these calls are made, is searched: not
  // the whole function once per slice.
  if (entry)
    for (Operation &op : *entry) {
      if (!isa<arith::ConstantOp, arith::IndexCastOp, func::CallOp>(op))
        break;
      auto call = dyn_cast<func::CallOp>(op);
      if (!call || call.getCallee() != name || call.getNumOperands() != 1 ||
          getConstantIntValue(call.getOperand(0)) != meshAxis)
        continue;
      for (Operation *user : call->getUsers())
        if (auto cast = dyn_cast<arith::IndexCastOp>(user))
          return cast;
    }
  OpBuilder::InsertionGuard guard(b);
  if (entry)
    b.setInsertionPointToStart(entry);
  Value axis = arith::ConstantIntOp::create(b, loc, meshAxis, 64);
  auto call = func::CallOp::create(b, loc, name, TypeRange{b.getI64Type()}, {axis});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), call.getResult(0));
}

/// Calls the placeholder of runtime collective `kind` on `input` (any shape)
/// with `args` around the two buffers; returns a new tensor of `resultShape`.
/// `before`: the i64 arguments before the two pointers, `after`: after them.
/// `resultMark`: a unit attribute for the result's buffer (what it holds,
/// for the memory plan's account).
Value callCollective(OpBuilder &b, Location loc, Operation *anchor,
                     StringRef kind, Value input, ArrayRef<int64_t> resultShape,
                     ArrayRef<int64_t> before, ArrayRef<int64_t> after,
                     StringRef resultMark = {}) {
  Type element = elementTypeOf(input);
  int64_t inCount = tensorType(input).getNumElements();
  int64_t outCount = 1;
  for (int64_t d : resultShape)
    outCount *= d;
  // A fresh contiguous copy: the runtime reads plain element runs. Its
  // destination is a bufferization.alloc_tensor, not a tensor.empty: CSE
  // merges equal tensor.empty ops and then equal copies (two collectives on
  // the same data, say a forward and a backward all-gather of one
  // activation), and bufferization would then stage both in one buffer that
  // other collectives reuse in between.
  // A bucket's tensor.concat is such a copy already (it bufferizes to a new
  // buffer, which only the collective reads).
  Value copy = reshapeTo(b, loc, input, {inCount});
  if (!input.getDefiningOp<tensor::ConcatOp>()) {
    Value staging = bufferization::AllocTensorOp::create(
        b, loc, RankedTensorType::get({inCount}, element), ValueRange{});
    copy = linalg::CopyOp::create(b, loc, copy, staging)->getResult(0);
  }
  auto inType = MemRefType::get({inCount}, element);
  auto outType = MemRefType::get({outCount}, element);
  Value inBuf = bufferization::ToBufferOp::create(b, loc, inType, copy,
                                                  /*read_only=*/true);
  auto outAlloc = memref::AllocOp::create(b, loc, outType);
  if (!resultMark.empty())
    outAlloc->setAttr(resultMark, b.getUnitAttr());
  Value outBuf = outAlloc;

  auto dynType = MemRefType::get({ShapedType::kDynamic}, element);
  SmallVector<Value> args;
  SmallVector<Type> types;
  auto addInt = [&](int64_t v) {
    args.push_back(arith::ConstantIntOp::create(b, loc, v, 64));
    types.push_back(b.getI64Type());
  };
  for (int64_t v : before)
    addInt(v);
  for (Value buf : {inBuf, outBuf}) {
    args.push_back(memref::CastOp::create(b, loc, dynType, buf));
    types.push_back(dynType);
  }
  for (int64_t v : after)
    addInt(v);
  std::string name = ("__oflow_rt_" + kind + "_" + dtypeSuffix(element)).str();
  auto module = anchor->getParentOfType<ModuleOp>();
  declareFunction(module, name, b.getFunctionType(types, {}));
  func::CallOp::create(b, loc, name, TypeRange{}, args);
  Value out = bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get({outCount}, element), outBuf,
      /*restrict=*/true, /*writable=*/true);
  return reshapeTo(b, loc, out, resultShape);
}

/// Whether `v` is a variable's piece, read from the state buffer (the entry's
/// first argument) through at most a few one-operand ops (a transpose).
bool readsState(Value v) {
  for (int depth = 0; depth < 6; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto read = dyn_cast<bufferization::ToTensorOp>(def)) {
      auto view = read.getBuffer().getDefiningOp<memref::ViewOp>();
      auto arg = view ? dyn_cast<BlockArgument>(view.getSource()) : BlockArgument();
      return arg && arg.getArgNumber() == 0 &&
             isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
    }
    if (def->getNumOperands() != 1 || def->getNumResults() != 1)
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// Product of `shape[from, to)`.
int64_t product(ArrayRef<int64_t> shape, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t i = from; i < to; ++i)
    p *= shape[i];
  return p;
}

/// Boxing ops convert local pieces: before oflow-partition their types are
/// global and the piece offsets below would be wrong.
LogicalResult checkPartitioned(Operation *op) {
  if (!of::isPartitioned(op))
    return cannotLower(op, "boxing ops are lowered after oflow-partition");
  return success();
}

/// (elements before `axis`, elements from `axis` on) of `shape`: the
/// [outer][chunk] view the runtime's gather and scatter take.
std::pair<int64_t, int64_t> aroundAxis(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape, 0, axis), product(shape, axis, shape.size())};
}

LogicalResult checkCollectiveType(Operation *op, Type element) {
  if (dtypeCode(element) < 0)
    return cannotLower(op, "collectives move f32, f64, i32, i64, i8 or bool tensors, not ")
           << element;
  return checkPartitioned(op);
}

/// The elements of `v` from `offset` on, `n` of them, as `shape`.
Value pieceOf(OpBuilder &b, Location loc, Value v, int64_t offset, int64_t n,
              ArrayRef<int64_t> shape) {
  Value piece = tensor::ExtractSliceOp::create(
      b, loc, v, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(n)}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return reshapeTo(b, loc, piece, shape);
}

struct AllReduceLowering : OpConversionPattern<of::AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = elementTypeOf(op.getInputs()[0]);
    if (failed(checkCollectiveType(op, element)))
      return failure();
    for (Value v : op.getInputs())
      if (elementTypeOf(v) != element)
        return cannotLower(op, "a bucket mixes element types");
    // One buffer for the whole bucket, packed by one tensor.concat: a chain
    // of tensor.insert_slice ops into one destination costs one-shot
    // bufferization's in-place analysis time cubic in the bucket's length
    // (a 7B GPT's buckets of hundreds of gradients took minutes).
    int64_t total = 0;
    SmallVector<Value> flat;
    for (Value v : adaptor.getInputs()) {
      int64_t n = tensorType(v).getNumElements();
      flat.push_back(reshapeTo(rewriter, loc, v, {n}));
      total += n;
    }
    Value packed = flat.size() == 1
                       ? flat.front()
                       : tensor::ConcatOp::create(rewriter, loc, 0, flat).getResult();
    Value reduced = callCollective(
        rewriter, loc, op, "all_reduce", packed, {total},
        {dtypeCode(element), op.getMax() ? 1 : 0}, {total, op.getMeshAxis()});
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Value v : op.getOutputs()) {
      auto type = tensorType(v);
      int64_t n = type.getNumElements();
      results.push_back(pieceOf(rewriter, loc, reduced, offset, n, type.getShape()));
      offset += n;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A bucket of gathers or scatters packs its members side by side in each
/// rank's chunk, each member's part one run of elements.
LogicalResult checkBucket(Operation *op, ValueRange pieces) {
  Type element = elementTypeOf(pieces.front());
  for (Value v : pieces)
    if (elementTypeOf(v) != element)
      return cannotLower(op, "a bucket mixes element types");
  return success();
}

/// `v` ([a][b][c] in row-major order, a*b*c elements) as [b][a][c]: a
/// member converted along an axis with `a` elements before it has its
/// ranks' pieces as `b` = ranks runs of c elements each within every one of
/// the `a` rows; a bucket needs each rank's piece as one run.
Value swapOuter(OpBuilder &b, Location loc, Value v, int64_t a, int64_t bDim, int64_t c) {
  Value grid = reshapeTo(b, loc, v, {a, bDim, c});
  auto type = cast<RankedTensorType>(grid.getType());
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{bDim, a, c},
                                       type.getElementType());
  Value swapped =
      linalg::TransposeOp::create(b, loc, grid, init, ArrayRef<int64_t>{1, 0, 2})->getResult(0);
  return reshapeTo(b, loc, swapped, {bDim, a * c});
}

struct AllGatherLowering : OpConversionPattern<of::AllGatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = elementTypeOf(op.getInput());
    if (failed(checkCollectiveType(op, element)))
      return failure();
    StringRef mark = llvm::all_of(op.getInputs(), readsState) ? kGatheredWeightAttr : "";
    if (op.getInputs().size() == 1) {
      // The local piece as [outer][chunk] around the gathered axis.
      auto [outer, chunk] = aroundAxis(shapeOf(op.getInput()), op.getAxis());
      rewriter.replaceOp(
          op, callCollective(rewriter, loc, op, "all_gather", adaptor.getInputs()[0],
                             shapeOf(op.getOutput()), {dtypeCode(element)},
                             {outer, chunk, op.getMeshAxis()}, mark));
      return success();
    }
    if (failed(checkBucket(op, op.getInputs())))
      return failure();
    // Each rank's chunk is its pieces one after another; the gathered
    // [ranks][chunk] holds member i at columns [offset_i, offset_i + n_i),
    // [ranks][outer][piece] for a member gathered along an axis with
    // `outer` elements before it, to be swapped into [outer][ranks][piece].
    SmallVector<Value> flat;
    SmallVector<int64_t> counts;
    int64_t chunk = 0;
    for (Value v : adaptor.getInputs()) {
      counts.push_back(tensorType(v).getNumElements());
      flat.push_back(reshapeTo(rewriter, loc, v, {counts.back()}));
      chunk += counts.back();
    }
    int64_t ranks = tensorType(op.getOutput()).getNumElements() / counts.front();
    Value packed = tensor::ConcatOp::create(rewriter, loc, 0, flat);
    Value gathered = callCollective(rewriter, loc, op, "all_gather", packed, {ranks, chunk},
                                    {dtypeCode(element)}, {1, chunk, op.getMeshAxis()}, mark);
    SmallVector<Value> results;
    int64_t offset = 0;
    for (auto [n, in, out] : llvm::zip(counts, op.getInputs(), op.getOutputs())) {
      Value columns = tensor::ExtractSliceOp::create(
          rewriter, loc, gathered,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), rewriter.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(ranks), rewriter.getIndexAttr(n)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1), rewriter.getIndexAttr(1)});
      int64_t outer = aroundAxis(shapeOf(in), op.getAxis()).first;
      if (outer > 1)
        columns = swapOuter(rewriter, loc, columns, ranks, outer, n / outer);
      results.push_back(reshapeTo(rewriter, loc, columns, shapeOf(out)));
      offset += n;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ReduceScatterLowering : OpConversionPattern<of::ReduceScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::ReduceScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = elementTypeOf(op.getInput());
    if (failed(checkCollectiveType(op, element)))
      return failure();
    SmallVector<int64_t> before = {dtypeCode(element), op.getMax() ? 1 : 0};
    if (op.getInputs().size() == 1) {
      // The resulting piece as [outer][chunk] around the scattered axis.
      ArrayRef<int64_t> out = shapeOf(op.getOutput());
      auto [outer, chunk] = aroundAxis(out, op.getAxis());
      rewriter.replaceOp(op, callCollective(rewriter, loc, op, "reduce_scatter",
                                            adaptor.getInputs()[0], out, before,
                                            {outer, chunk, op.getMeshAxis()}));
      return success();
    }
    if (failed(checkBucket(op, op.getOutputs())))
      return failure();
    // Rank r's chunk: the r-th part of every member, one after another (a
    // member scattered along an axis with `outer` elements before it has
    // its r-th part in `outer` runs: swapped into one).
    SmallVector<Value> columns;
    SmallVector<int64_t> counts;
    int64_t chunk = 0;
    for (auto [in, out] : llvm::zip(adaptor.getInputs(), op.getOutputs())) {
      counts.push_back(tensorType(out).getNumElements());
      int64_t ranks = tensorType(in).getNumElements() / counts.back();
      int64_t outer = aroundAxis(shapeOf(out), op.getAxis()).first;
      columns.push_back(outer == 1
                            ? reshapeTo(rewriter, loc, in, {ranks, counts.back()})
                            : swapOuter(rewriter, loc, in, outer, ranks, counts.back() / outer));
      chunk += counts.back();
    }
    Value packed = tensor::ConcatOp::create(rewriter, loc, 1, columns);
    Value mine = callCollective(rewriter, loc, op, "reduce_scatter", packed, {chunk}, before,
                                {1, chunk, op.getMeshAxis()});
    SmallVector<Value> results;
    int64_t offset = 0;
    for (auto [n, out] : llvm::zip(counts, op.getOutputs())) {
      results.push_back(pieceOf(rewriter, loc, mine, offset, n, shapeOf(out)));
      offset += n;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AllToAllLowering : OpConversionPattern<of::AllToAllOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::AllToAllOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = elementTypeOf(op.getInput());
    if (failed(checkCollectiveType(op, element)))
      return failure();
    ArrayRef<int64_t> in = shapeOf(op.getInput());
    int64_t rank = in.size();
    // The input as [d0, d1, d2, d3, d4] with the two converted axes at 1, 3:
    // the target's split axis (full here) scatters, the source's gathers.
    int64_t scatter = op.getAxis(), gather = op.getSourceAxis();
    int64_t lo = std::min(scatter, gather), hi = std::max(scatter, gather);
    int64_t scatterDim = scatter == lo ? 1 : 3;
    rewriter.replaceOp(
        op, callCollective(rewriter, op.getLoc(), op, "all_to_all",
                           adaptor.getInput(), shapeOf(op.getOutput()),
                           {dtypeCode(element)},
                           {product(in, 0, lo), in[lo], product(in, lo + 1, hi),
                            in[hi], product(in, hi + 1, rank), scatterDim,
                            op.getMeshAxis()}));
    return success();
  }
};

/// Offsets selecting this rank's piece along `axis` (size `size`).
SmallVector<OpFoldResult> pieceOffsets(OpBuilder &b, Location loc,
                                       Operation *anchor, int64_t rank,
                                       int64_t axis, int64_t meshAxis,
                                       int64_t size) {
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  Value coord = meshCoord(b, loc, anchor, meshAxis);
  offsets[axis] = arith::MulIOp::create(b, loc, coord,
                                        indexConstant(b, loc, size))
                      .getResult();
  return offsets;
}

SmallVector<OpFoldResult> asFoldResults(OpBuilder &b, ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> r;
  for (int64_t v : values)
    r.push_back(b.getIndexAttr(v));
  return r;
}

struct LocalSliceLowering : OpConversionPattern<of::LocalSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::LocalSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkPartitioned(op)))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> out = shapeOf(op.getOutput());
    auto offsets = pieceOffsets(rewriter, loc, op, out.size(), op.getAxis(),
                                op.getMeshAxis(), out[op.getAxis()]);
    rewriter.replaceOp(
        op, tensor::ExtractSliceOp::create(
                rewriter, loc, tensorType(op.getOutput()), adaptor.getInput(),
                offsets, asFoldResults(rewriter, out),
                asFoldResults(rewriter, SmallVector<int64_t>(out.size(), 1))));
    return success();
  }
};

struct SplitToPartialLowering : OpConversionPattern<of::SplitToPartialOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::SplitToPartialOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkPartitioned(op)))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> in = shapeOf(op.getInput());
    Type element = elementTypeOf(op.getInput());
    Value zeros = filledTensor(rewriter, loc, shapeOf(op.getOutput()),
                               scalarConstant(rewriter, loc, element, 0));
    auto offsets = pieceOffsets(rewriter, loc, op, in.size(), op.getAxis(),
                                op.getMeshAxis(), in[op.getAxis()]);
    rewriter.replaceOp(
        op, tensor::InsertSliceOp::create(
                rewriter, loc, adaptor.getInput(), zeros, offsets,
                asFoldResults(rewriter, in),
                asFoldResults(rewriter, SmallVector<int64_t>(in.size(), 1))));
    return success();
  }
};

struct BroadcastToPartialLowering
    : OpConversionPattern<of::BroadcastToPartialOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::BroadcastToPartialOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkPartitioned(op)))
      return failure();
    if (op.getMax()) { // every rank keeps the value
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Location loc = op.getLoc();
    Value coord = meshCoord(rewriter, loc, op, op.getMeshAxis());
    Value keep = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                       coord, indexConstant(rewriter, loc, 0));
    Type element = elementTypeOf(op.getInput());
    Value zero = scalarConstant(rewriter, loc, element, 0);
    rewriter.replaceOp(
        op, broadcastGeneric(rewriter, loc, shapeOf(op.getOutput()), element,
                             adaptor.getInput(),
                             [&](OpBuilder &b, Location l, ValueRange args) {
                               return arith::SelectOp::create(b, l, keep,
                                                              args[0], zero)
                                   .getResult();
                             }));
    return success();
  }
};

struct ShardOffsetLowering : OpConversionPattern<of::ShardOffsetOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(of::ShardOffsetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    of::MeshAttr mesh = of::getGoverningMesh(op);
    // The piece index is mixed-radix over the splitting mesh axes.
    Value block = indexConstant(rewriter, loc, 0);
    for (int64_t axis : op.getMeshAxes()) {
      if (axis < 0 || axis >= mesh.getNumAxes())
        return cannotLower(op, "mesh axis out of range");
      block = arith::MulIOp::create(
          rewriter, loc, block,
          indexConstant(rewriter, loc, mesh.getShape()[axis]));
      block = arith::AddIOp::create(rewriter, loc, block,
                                    meshCoord(rewriter, loc, op, axis));
    }
    Value offset = arith::MulIOp::create(
        rewriter, loc, block, indexConstant(rewriter, loc, op.getPiece()));
    Value i64 = arith::IndexCastOp::create(rewriter, loc,
                                           rewriter.getI64Type(), offset);
    rewriter.replaceOp(op, tensor::FromElementsOp::create(
                               rewriter, loc, op.getOffset().getType(),
                               ValueRange{i64}));
    return success();
  }
};

} // namespace

void populateCollectivePatterns(RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering, AllGatherLowering, ReduceScatterLowering,
               AllToAllLowering, LocalSliceLowering, SplitToPartialLowering,
               BroadcastToPartialLowering, ShardOffsetLowering>(
      patterns.getContext());
}

} // namespace oflow::lowering
