//===- LoweringUtils.h - shared pieces of the oflow -> linalg lowering -----===//
//
// The builders every op family uses: empty and filled tensors, broadcasting
// indexing maps, linalg.generic construction, reshapes. Internal to the
// OFlowToLinalg library.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_CONVERSION_OFLOWTOLINALG_LOWERINGUTILS_H
#define OFLOW_LIB_CONVERSION_OFLOWTOLINALG_LOWERINGUTILS_H

#include "OFlow/OFlowOps.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace oflow::lowering {
using namespace mlir;

// One populate function per op family (one file each).
void populateElementwisePatterns(RewritePatternSet &patterns);
void populateDropoutPatterns(RewritePatternSet &patterns);
void populateReductionPatterns(RewritePatternSet &patterns);
void populateLinearAlgebraPatterns(RewritePatternSet &patterns);
/// `conv`: which convolutions are library calls (ConvLibrary.cpp).
void populateConvPoolPatterns(RewritePatternSet &patterns,
                              const ConvLibraryOptions &conv);
void populateShapePatterns(RewritePatternSet &patterns);
void populateGatherScatterPatterns(RewritePatternSet &patterns);
void populateLossPatterns(RewritePatternSet &patterns);
void populateCollectivePatterns(RewritePatternSet &patterns);
void populateAttentionPatterns(RewritePatternSet &patterns);

inline RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
inline ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }
inline Type elementTypeOf(Value v) { return tensorType(v).getElementType(); }

/// Emits "cannot lower: <why>" at `op` and returns failure, so that an
/// unsupported case names the op, its location and the reason.
InFlightDiagnostic cannotLower(Operation *op, const Twine &why);

/// Checks that `type` is one arith can compute on (float or signless
/// integer); unsigned and signed-integer types are rejected with an error.
LogicalResult checkArithType(Operation *op, Type type);

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);
/// A tensor of `shape` with every element `value` (a linalg.fill).
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value value);
/// `value` as a constant of the float or integer `type`.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);
Value indexConstant(OpBuilder &b, Location loc, int64_t value);
/// The identity of max: -inf for floats, the smallest signed integer.
Value lowestValue(OpBuilder &b, Location loc, Type type);

/// The map that reads an operand of `operandShape` inside a loop nest over
/// `resultShape` under numpy broadcasting: dims are aligned from the right,
/// a size-1 operand dim against a larger result dim reads index 0.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape);
/// (d0, ..., d{rank-1}) -> (the dims not in `dropped`, in order).
AffineMap dropDimsMap(MLIRContext *ctx, int64_t rank,
                      ArrayRef<int64_t> dropped);

using GenericBody =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// Builds a linalg.generic; `body` gets the block arguments (inputs, then
/// outputs) and returns the values to yield.
SmallVector<Value> makeGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                               ValueRange inits, ArrayRef<AffineMap> maps,
                               ArrayRef<utils::IteratorType> iterators,
                               GenericBody body);

/// An all-parallel generic producing a tensor of `shape` x `elementType`
/// from `inputs` read with broadcasting maps; `body` returns the element.
Value broadcastGeneric(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType,
    ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Reduces `inputs` (each broadcastable to `shape`) over `dims` into a
/// tensor of `shape` without those dims, starting from `init`; `combine`
/// gets (input elements..., accumulator) and returns the new accumulator.
Value reduceGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> dims, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> combine);

/// Like broadcastGeneric, with explicit indexing maps for the inputs.
Value parallelGeneric(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType,
    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Like reduceGeneric, with explicit indexing maps for the inputs.
Value reduceGeneric(
    OpBuilder &b, Location loc, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> dims, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> combine);

/// `shape` without the dims in `dims`.
SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims);

/// Reinterprets `value` (same number of elements) as `shape`, through one
/// tensor.collapse_shape or tensor.expand_shape where the dims regroup, and
/// otherwise a collapse to 1-D followed by an expand.
Value reshapeTo(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> shape);

/// Element-wise ops on scalars of either float or integer type.
Value addValues(OpBuilder &b, Location loc, Value x, Value y);
Value subValues(OpBuilder &b, Location loc, Value x, Value y);
Value mulValues(OpBuilder &b, Location loc, Value x, Value y);
Value maxValues(OpBuilder &b, Location loc, Value x, Value y);
/// Converts an integer index element (i32/i64) to `index`.
Value toIndex(OpBuilder &b, Location loc, Value x);

/// A tensor constant of `shape` with the given f64 values converted to
/// `elementType` (a float type).
Value floatTensorConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Type elementType, ArrayRef<double> values);

/// Calls the runtime through placeholder `name` (`__oflow_rt_<kind>_<dtype>`,
/// which oflow-lower-runtime-calls turns into `oflow_rt_<kind>` taking
/// addresses) with `scalars` (i64 / f32 values, first), the buffers of
/// `inputs` (their own when dense, read only) and fresh buffers of
/// `resultTypes`, which the memory plan places; returns the results as
/// tensors. `anchor` is the op being lowered (its function numbers the call).
SmallVector<Value> callRuntimeLibrary(OpBuilder &b, Location loc,
                                      Operation *anchor, StringRef name,
                                      ValueRange scalars, ValueRange inputs,
                                      ArrayRef<RankedTensorType> resultTypes);

} // namespace oflow::lowering

#endif
