//===- OFlowOps.h - oflow ops -----------------------------------*- C++ -*-===//
#ifndef OFLOW_DIALECT_OFLOWOPS_H
#define OFLOW_DIALECT_OFLOWOPS_H

#include "OFlow/OFlowAttrs.h"
#include "OFlow/OFlowDialect.h"
#include "OFlow/OFlowSbpInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "OFlow/OFlowOps.h.inc"

namespace mlir::oflow {

/// Creates an `OpT` whose result types are inferred, like
/// `OpT::create(builder, loc, operands, attributes)`, but returns null
/// (with the inference's diagnostic emitted at `loc`) instead of aborting
/// when the operands or attribute values are invalid. Front-ends build from
/// untrusted input through this. Every required attribute must be given
/// (a missing one is a programming error, as with `OpT::create`).
template <typename OpT>
OpT tryCreate(OpBuilder &builder, Location loc, ValueRange operands,
              ArrayRef<NamedAttribute> attributes = {}) {
  OperationState state(loc, OpT::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attributes);
  if (!attributes.empty()) {
    OpaqueProperties properties =
        &state.getOrAddProperties<typename OpT::Properties>();
    std::optional<RegisteredOperationName> info = state.name.getRegisteredInfo();
    if (failed(info->setOpPropertiesFromAttribute(
            state.name, properties,
            state.attributes.getDictionary(state.getContext()),
            [&] { return emitError(loc); })))
      return {};
  }
  SmallVector<Type, 2> types;
  if (failed(OpT::inferReturnTypes(builder.getContext(), loc,
                                   state.operands,
                                   state.attributes.getDictionary(
                                       state.getContext()),
                                   state.getRawProperties(), state.regions,
                                   types)))
    return {};
  state.addTypes(types);
  return cast<OpT>(builder.create(state));
}

} // namespace mlir::oflow

namespace mlir::oflow {
/// The mesh that governs `op`: the nearest enclosing `oflow.mesh`, or one
/// device.
MeshAttr getGoverningMesh(Operation *op);
/// Whether `op`'s module has been partitioned (types are local pieces).
bool isPartitioned(Operation *op);
/// The global shape of a tensor whose local piece under `layout` on `mesh` is
/// `local` (each split dim times the sizes of the mesh axes splitting it).
SmallVector<int64_t> getGlobalShape(MeshAttr mesh, NdSbpAttr layout,
                                    ArrayRef<int64_t> local);
/// `S0,B`-style text of a layout for the runtime's manifest (partial
/// entries as `P(sum)`/`P(max)`, which the runtime refuses).
std::string getManifestSbp(NdSbpAttr layout);
/// The ONNX node (or native IR op) name an op came from, when its location
/// carries one: a name location, the first named part of a fused one, or
/// the callee of a call site.
std::optional<llvm::StringRef> getNodeName(Location loc);
/// The mesh axis a boxing op converts on; nullopt for other ops.
std::optional<int64_t> getBoxingMeshAxis(Operation *op);
/// The SBP a boxing op turns `source` (its operand's entry on its mesh axis)
/// into; nullopt when the op does not accept that source.
std::optional<SbpAttr> getBoxingTarget(Operation *op, SbpAttr source);
/// In a training entry (one block: forward, loss, backward, optimizer), the
/// last op that reduces an activation to the returned `loss` (followed back
/// through scalar ops and collectives): what comes after it is backward.
/// Null when the entry returns no loss.
Operation *getLossBoundary(FunctionOpInterface fn);
/// When `op`'s value is a variable passed through at most `maxOps`
/// side-effect-free one-operand ops (views, boxing), at least one of them an
/// all-gather: those ops, from just after the `oflow.read_variable`, in
/// program order (a split weight gathered whole). Empty otherwise.
SmallVector<Operation *> getWeightGatherChain(Operation *op, unsigned maxOps = 4);
} // namespace mlir::oflow

#endif
