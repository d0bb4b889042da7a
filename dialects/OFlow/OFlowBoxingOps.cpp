//===- OFlowBoxingOps.cpp - verifiers of the boxing ops -------------------===//
//
// A boxing op changes one mesh axis's entry of its operand's nd-SBP. Before
// partitioning the types are global and must agree; after it they are local
// pieces, so the converted tensor axis grows or shrinks by the axis size.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowOps.h"

using namespace mlir;
using namespace mlir::oflow;

/// The size of `meshAxis` of `op`'s mesh, or failure (with an error).
static FailureOr<int64_t> meshAxisSize(Operation *op, int64_t meshAxis) {
  MeshAttr mesh = getGoverningMesh(op);
  if (meshAxis < 0 || meshAxis >= mesh.getNumAxes())
    return op->emitOpError("mesh_axis ")
           << meshAxis << " is not an axis of the mesh "
           << mesh.getNumDevices() << " (" << mesh.getNumAxes() << " axes)";
  return mesh.getShape()[meshAxis];
}

/// Checks `result`'s shape against `input`'s: equal before partitioning;
/// afterwards dims `grow` (if >= 0) times n and `shrink` (if >= 0) divided
/// by n, where n is the size of `meshAxis`.
static LogicalResult verifyBoxingShape(Operation *op, Value input, Value result,
                                       int64_t meshAxis, int64_t grow,
                                       int64_t shrink) {
  FailureOr<int64_t> n = meshAxisSize(op, meshAxis);
  if (failed(n))
    return failure();
  auto in = cast<RankedTensorType>(input.getType());
  auto out = cast<RankedTensorType>(result.getType());
  for (int64_t axis : {grow, shrink})
    if (axis != -1 && (axis < 0 || axis >= in.getRank()))
      return op->emitOpError("tensor axis ")
             << axis << " is out of range for " << in;
  SmallVector<int64_t> expected(in.getShape());
  if (isPartitioned(op)) {
    if (grow >= 0)
      expected[grow] *= *n;
    if (shrink >= 0) {
      if (expected[shrink] % *n != 0)
        return op->emitOpError("tensor axis ")
               << shrink << " of " << in << " does not divide by mesh axis "
               << meshAxis << " of size " << *n;
      expected[shrink] /= *n;
    }
  }
  if (out.getElementType() != in.getElementType() ||
      out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result type ")
           << out << " does not match the operand " << in
           << (isPartitioned(op) ? " converted on its mesh axis"
                                 : " (before partitioning they agree)");
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().size() != getOutputs().size())
    return emitOpError("has ") << getInputs().size() << " operands but "
                               << getOutputs().size() << " results";
  if (failed(meshAxisSize(*this, getMeshAxis())))
    return failure();
  for (auto [in, out] : llvm::zip(getInputs(), getOutputs()))
    if (in.getType() != out.getType())
      return emitOpError("result type ")
             << out.getType() << " differs from its operand's " << in.getType();
  return success();
}

/// A bucket's operands and results pair up, each converted on its own.
static LogicalResult verifyBucket(Operation *op, ValueRange inputs, ValueRange outputs,
                                  int64_t meshAxis, int64_t grow, int64_t shrink) {
  if (inputs.empty() || inputs.size() != outputs.size())
    return op->emitOpError("has ") << inputs.size() << " operands but "
                                   << outputs.size() << " results";
  for (auto [in, out] : llvm::zip(inputs, outputs))
    if (failed(verifyBoxingShape(op, in, out, meshAxis, grow, shrink)))
      return failure();
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifyBucket(*this, getInputs(), getOutputs(), getMeshAxis(), -1, getAxis());
}

LogicalResult AllGatherOp::verify() {
  return verifyBucket(*this, getInputs(), getOutputs(), getMeshAxis(), getAxis(), -1);
}

LogicalResult AllToAllOp::verify() {
  if (getAxis() == getSourceAxis())
    return emitOpError("source_axis and axis must differ");
  return verifyBoxingShape(*this, getInput(), getOutput(), getMeshAxis(),
                           getSourceAxis(), getAxis());
}

LogicalResult LocalSliceOp::verify() {
  return verifyBoxingShape(*this, getInput(), getOutput(), getMeshAxis(), -1,
                           getAxis());
}

LogicalResult BroadcastToPartialOp::verify() {
  return verifyBoxingShape(*this, getInput(), getOutput(), getMeshAxis(), -1,
                           -1);
}

LogicalResult SplitToPartialOp::verify() {
  return verifyBoxingShape(*this, getInput(), getOutput(), getMeshAxis(),
                           getAxis(), -1);
}

std::optional<SbpAttr> mlir::oflow::getBoxingTarget(Operation *op,
                                                    SbpAttr source) {
  MLIRContext *ctx = op->getContext();
  auto kind = source.getKind();
  if (isa<AllReduceOp>(op))
    return source.isPartial() ? std::optional(sbpB(ctx)) : std::nullopt;
  if (auto rs = dyn_cast<ReduceScatterOp>(op))
    return source.isPartial() ? std::optional(sbpS(ctx, rs.getAxis()))
                              : std::nullopt;
  if (auto ag = dyn_cast<AllGatherOp>(op))
    return source == sbpS(ctx, ag.getAxis()) ? std::optional(sbpB(ctx))
                                             : std::nullopt;
  if (auto a2a = dyn_cast<AllToAllOp>(op))
    return source == sbpS(ctx, a2a.getSourceAxis())
               ? std::optional(sbpS(ctx, a2a.getAxis()))
               : std::nullopt;
  if (auto slice = dyn_cast<LocalSliceOp>(op))
    return source.isBroadcast() ? std::optional(sbpS(ctx, slice.getAxis()))
                                : std::nullopt;
  if (auto b2p = dyn_cast<BroadcastToPartialOp>(op))
    return source.isBroadcast()
               ? std::optional(b2p.getMax() ? sbpPMax(ctx) : sbpP(ctx))
               : std::nullopt;
  if (auto s2p = dyn_cast<SplitToPartialOp>(op))
    return source == sbpS(ctx, s2p.getAxis()) ? std::optional(sbpP(ctx))
                                              : std::nullopt;
  (void)kind;
  return std::nullopt;
}

std::optional<int64_t> mlir::oflow::getBoxingMeshAxis(Operation *op) {
  if (!op->getName().getStringRef().starts_with("oflow."))
    return std::nullopt;
  if (!isa<AllReduceOp, ReduceScatterOp, AllGatherOp, AllToAllOp, LocalSliceOp,
           BroadcastToPartialOp, SplitToPartialOp>(op))
    return std::nullopt;
  return cast<IntegerAttr>(op->getAttr("mesh_axis")).getInt();
}

SmallVector<int64_t> mlir::oflow::getGlobalShape(MeshAttr mesh,
                                                 NdSbpAttr layout,
                                                 ArrayRef<int64_t> local) {
  SmallVector<int64_t> shape(local);
  for (auto [axis, entry] : llvm::enumerate(layout.getEntries()))
    if (entry.isSplit())
      shape[entry.getAxis()] *= mesh.getShape()[axis];
  return shape;
}

std::optional<llvm::StringRef> mlir::oflow::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::optional<llvm::StringRef> name = getNodeName(part))
        return name;
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return getNodeName(call.getCallee());
  return std::nullopt;
}

std::string mlir::oflow::getManifestSbp(NdSbpAttr layout) {
  std::string text;
  for (auto [i, entry] : llvm::enumerate(layout.getEntries())) {
    if (i)
      text += ",";
    // Partial entries keep their reduction (the runtime refuses them: state
    // and inputs are never partial, and a manifest that said so would be
    // a compiler bug worth seeing whole).
    text += entry.isSplit() ? "S" + std::to_string(entry.getAxis())
            : entry.isBroadcast() ? "B" : entry.str();
  }
  return text;
}
