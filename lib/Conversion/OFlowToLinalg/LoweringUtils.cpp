//===- LoweringUtils.cpp - shared pieces of the oflow -> linalg lowering ---===//
#include "LoweringUtils.h"

#include "oflow/Codegen/DeclareFunction.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>

namespace oflow::lowering {

InFlightDiagnostic cannotLower(Operation *op, const Twine &why) {
  return op->emitOpError("cannot lower: ") << why;
}

LogicalResult checkArithType(Operation *op, Type type) {
  if (isa<FloatType>(type) || type.isSignlessInteger())
    return success();
  return cannotLower(op, "element type ") << type
         << " is not supported (only floats and signless integers)";
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value value) {
  Value empty = emptyTensor(b, loc, shape, value.getType());
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, FloatAttr::get(ft, value));
  return arith::ConstantOp::create(
      b, loc, IntegerAttr::get(type, static_cast<int64_t>(value)));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value lowestValue(OpBuilder &b, Location loc, Type type) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        FloatAttr::get(ft, APFloat::getInf(ft.getFloatSemantics(),
                                           /*Negative=*/true)));
  unsigned width = type.getIntOrFloatBitWidth();
  // i1 is a boolean: false is its smallest value.
  APInt lowest = width == 1 ? APInt(1, 0) : APInt::getSignedMinValue(width);
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(type, lowest));
}

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size(), offset = rank - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(operandShape)) {
    int64_t resultDim = offset + i;
    if (d == 1 && resultShape[resultDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(resultDim, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

AffineMap dropDimsMap(MLIRContext *ctx, int64_t rank,
                      ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<Value> makeGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                               ValueRange inits, ArrayRef<AffineMap> maps,
                               ArrayRef<utils::IteratorType> iterators,
                               GenericBody body) {
  SmallVector<Type> resultTypes(inits.getTypes());
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return SmallVector<Value>(generic.getResults());
}

Value parallelGeneric(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType,
    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(shape.size(), ctx));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  Value init = emptyTensor(b, loc, shape, elementType);
  size_t numInputs = inputs.size();
  return makeGeneric(b, loc, inputs, init, maps, iterators,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return SmallVector<Value>{
                           body(nb, nloc, args.take_front(numInputs))};
                     })
      .front();
}

Value broadcastGeneric(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType,
    ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(b.getContext(), shapeOf(in), shape));
  return parallelGeneric(b, loc, shape, elementType, inputs, maps, body);
}

SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      out.push_back(d);
  return out;
}

Value reduceGeneric(
    OpBuilder &b, Location loc, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> dims, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> combine) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = shape.size();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(dropDimsMap(ctx, rank, dims));
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(llvm::is_contained(dims, d)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  Value acc = filledTensor(b, loc, dropDims(shape, dims), init);
  return makeGeneric(b, loc, inputs, acc, maps, iterators,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return SmallVector<Value>{combine(nb, nloc, args)};
                     })
      .front();
}

Value reduceGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> dims, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> combine) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(b.getContext(), shapeOf(in), shape));
  return reduceGeneric(b, loc, inputs, maps, shape, dims, init, combine);
}

Value reshapeTo(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> shape) {
  auto srcType = tensorType(value);
  if (srcType.getShape() == shape)
    return value;
  auto dstType = RankedTensorType::get(shape, srcType.getElementType());
  if (srcType.getRank() > dstType.getRank()) {
    if (auto reassoc = getReassociationIndicesForReshape(srcType, dstType))
      return tensor::CollapseShapeOp::create(b, loc, dstType, value, *reassoc);
  } else if (srcType.getRank() < dstType.getRank()) {
    if (auto reassoc = getReassociationIndicesForReshape(srcType, dstType))
      return tensor::ExpandShapeOp::create(b, loc, dstType, value, *reassoc);
  }
  // No regrouping: go through the flat vector (free on a contiguous buffer).
  int64_t count = srcType.getNumElements();
  Value flat = value;
  if (srcType.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < srcType.getRank(); ++d)
      all.front().push_back(d);
    if (srcType.getRank() == 0)
      all.clear();
    auto flatType = RankedTensorType::get({count}, srcType.getElementType());
    if (srcType.getRank() == 0)
      flat = tensor::ExpandShapeOp::create(b, loc, flatType, value, all);
    else
      flat = tensor::CollapseShapeOp::create(b, loc, flatType, value, all);
  }
  if (dstType.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < dstType.getRank(); ++d)
    all.front().push_back(d);
  if (dstType.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, dstType, flat,
                                           ArrayRef<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(b, loc, dstType, flat, all);
}

Value addValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value subValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}

Value mulValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

Value maxValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  if (x.getType().isInteger(1))
    return arith::OrIOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value toIndex(OpBuilder &b, Location loc, Value x) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
}

Value floatTensorConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Type elementType, ArrayRef<double> values) {
  auto ft = cast<FloatType>(elementType);
  SmallVector<APFloat> converted;
  for (double v : values) {
    APFloat f(v);
    bool losesInfo;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    converted.push_back(f);
  }
  auto type = RankedTensorType::get(shape, elementType);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, converted));
}

SmallVector<Value> callRuntimeLibrary(OpBuilder &b, Location loc,
                                      Operation *anchor, StringRef name,
                                      ValueRange scalars, ValueRange inputs,
                                      ArrayRef<RankedTensorType> resultTypes) {
  SmallVector<Value> args(scalars);
  SmallVector<Type> types(scalars.getTypes());
  // Same-rank dynamic types: one declaration serves every shape.
  auto pass = [&](Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
    auto dynType = MemRefType::get(dynamic, type.getElementType());
    args.push_back(memref::CastOp::create(b, loc, dynType, buffer));
    types.push_back(dynType);
  };
  // The buffer a to_buffer returns is valid where it stands: bufferization
  // may reuse it for later values. CSE would merge a backward call's
  // to_buffer of a forward activation with the forward call's, handing the
  // backward call a buffer overwritten since; a number unique to the call
  // in its function (counted on the function, the count dropped by
  // oflow-lower-runtime-calls) keeps them apart.
  func::FuncOp callee = declareFunction(anchor->getParentOfType<ModuleOp>(),
                                        name, b.getFunctionType({}, {}));
  Operation *function = anchor->getParentOfType<FunctionOpInterface>();
  auto counted = function->getAttrOfType<IntegerAttr>(kLibraryCallsAttr);
  int64_t site = counted ? counted.getInt() : 0;
  function->setAttr(kLibraryCallsAttr, b.getI64IntegerAttr(site + 1));
  for (Value input : inputs) {
    auto type = tensorType(input);
    auto toBuffer = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), input,
        /*read_only=*/true);
    toBuffer->setAttr(kLibraryCallSiteAttr, b.getI64IntegerAttr(site));
    pass(toBuffer);
  }
  SmallVector<Value> buffers;
  for (RankedTensorType type : resultTypes) {
    buffers.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType())));
    pass(buffers.back());
  }
  callee.setFunctionType(b.getFunctionType(types, {}));
  func::CallOp::create(b, loc, name, TypeRange{}, args);
  SmallVector<Value> results;
  for (auto [type, buffer] : llvm::zip(resultTypes, buffers))
    results.push_back(bufferization::ToTensorOp::create(b, loc, type, buffer,
                                                        /*restrict=*/true,
                                                        /*writable=*/true));
  return results;
}

} // namespace oflow::lowering
