//===- OFlowDialect.cpp - the oflow dialect -------------------------------===//
//
// Dialect registration and the checks of oflow's discardable attributes:
// `oflow.mesh` on the module, `oflow.sbp` on values (checked against the
// module's mesh and the value's shape), `oflow.name` on graph inputs/outputs,
// and the training markers: `oflow.trainable` on weights, `oflow.entry` and
// `oflow.optimizer` on entry functions, `oflow.scalar` / `oflow.grad_of` on
// their arguments and results.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowDialect.h"
#include "OFlow/OFlowOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::oflow;

#include "OFlow/OFlowDialect.cpp.inc"

void OFlowDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "OFlow/OFlowOps.cpp.inc"
      >();
}

Operation *OFlowDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

/// The mesh that governs `op`: the nearest enclosing module's `oflow.mesh`,
/// or the default single device.
MeshAttr mlir::oflow::getGoverningMesh(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto mesh = p->getAttrOfType<MeshAttr>(OFlowDialect::kMeshAttrName))
      return mesh;
  return MeshAttr::get(op->getContext(), {1});
}

bool mlir::oflow::isPartitioned(Operation *op) {
  ModuleOp module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                      : op->getParentOfType<ModuleOp>();
  return module && module->hasAttr(OFlowDialect::kPartitionedAttrName);
}

static LogicalResult verifySbpOnType(Operation *op, Attribute attr, Type type,
                                     const Twine &what) {
  auto ndSbp = dyn_cast<NdSbpAttr>(attr);
  if (!ndSbp)
    return op->emitError() << "'" << OFlowDialect::kSbpAttrName << "' on "
                           << what << " must be an #oflow.nd_sbp";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return op->emitError() << "'" << OFlowDialect::kSbpAttrName << "' on "
                           << what << " needs a ranked tensor, not " << type;
  // After partitioning, types are local pieces: only the entry count matters.
  if (isPartitioned(op)) {
    if (ndSbp.getNumMeshAxes() != getGoverningMesh(op).getNumAxes())
      return op->emitError() << what << ": nd-SBP " << ndSbp.str()
                             << " does not have one entry per mesh axis";
    return success();
  }
  return ndSbp.verifyFor(getGoverningMesh(op), tensor.getShape(), [&] {
    return op->emitError() << what << ": ";
  });
}

/// `oflow.view`: the shape of a tensor stored flat, at most as many elements
/// as its type (the rest is padding; its global type: after oflow-partition
/// types are pieces).
static LogicalResult verifyView(Operation *op, Attribute view, Type type,
                                const Twine &what) {
  auto shape = dyn_cast<DenseI64ArrayAttr>(view);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!shape || !tensor || llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
    return op->emitError() << "'" << OFlowDialect::kViewAttrName << "' on " << what
                           << " must be an array of dimensions of a ranked tensor";
  int64_t elements = 1;
  for (int64_t d : shape.asArrayRef())
    elements *= d;
  if (!isPartitioned(op) && elements > tensor.getNumElements())
    return op->emitError() << "'" << OFlowDialect::kViewAttrName << "' on " << what
                           << " has " << elements << " elements, more than the tensor's "
                           << tensor.getNumElements();
  return success();
}

LogicalResult OFlowDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kMeshAttrName) {
    if (!isa<MeshAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be an #oflow.mesh";
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name << "' belongs on the module";
    return success();
  }
  if (name == kSbpAttrName) {
    // One nd-SBP per result.
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || list.size() != op->getNumResults())
      return op->emitError() << "'" << name << "' on an op must list one "
                             << "#oflow.nd_sbp per result ("
                             << op->getNumResults() << ")";
    for (auto [i, sbp] : llvm::enumerate(list.getValue()))
      if (failed(verifySbpOnType(op, sbp, op->getResult(i).getType(),
                                 "result #" + Twine(i))))
        return failure();
    return success();
  }
  if (name == kOperandSbpAttrName) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || list.size() != op->getNumOperands() ||
        !llvm::all_of(list, [](Attribute a) { return isa<NdSbpAttr>(a); }))
      return op->emitError() << "'" << name << "' must list one "
                             << "#oflow.nd_sbp per operand ("
                             << op->getNumOperands() << ")";
    return success();
  }
  if (name == kPartitionedAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << name
                             << "' is a unit attribute of the module";
    return success();
  }
  // Under --micro-batches: gradients sharded over the mesh are accumulated
  // as shards, each micro-batch's reduce-scattered as it is made
  // (oflow-unroll-micro-batches).
  if (name == "oflow.scatter_each_micro_batch") {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << name
                             << "' is a unit attribute of the module";
    return success();
  }
  if (name == kNameAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == kTrainableAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<WeightOp>(op))
      return op->emitError() << "'" << name
                             << "' is a unit attribute of oflow.weight";
    return success();
  }
  if (name == kEntryAttrName) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || !isa<FunctionOpInterface>(op) ||
        !llvm::is_contained({"train", "grads", "infer"}, kind.getValue()))
      return op->emitError() << "'" << name << "' must be \"train\", "
                             << "\"grads\" or \"infer\" on a function";
    return success();
  }
  if (name == kOptimizerAttrName) {
    if (!isa<DictionaryAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' must be a dictionary on a function";
    return success();
  }
  if (name == "oflow.planner") {
    // What `oflow-infer-sbp{planner=ilp}` found (its seconds, the greedy
    // plan's, whether proven optimal, the program's size).
    if (!isa<DictionaryAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' must be a dictionary on a function";
    return success();
  }
  if (name == kViewAttrName) {
    auto var = dyn_cast<VariableOp>(op);
    if (!var)
      return op->emitError() << "'" << name << "' is an attribute of oflow.variable";
    return verifyView(op, attr.getValue(), var.getType(), "the variable");
  }
  // A gather chain copied for the backward pass (oflow-regather-for-backward):
  // the mark keeps CSE from merging it back into the forward pass's chain.
  if (name == "oflow.regather") {
    if (!isa<UnitAttr>(attr.getValue()) ||
        (!getBoxingMeshAxis(op) && op->getNumOperands() != 1))
      return op->emitError() << "'" << name
                             << "' is a unit attribute of a gather chain's op";
    return success();
  }
  // A CPU loop nest's range of iterations for the threads, and the fewest
  // worth one (oflow-parallelize-nests).
  if (name == "oflow.parallel_iterations" || name == "oflow.parallel_grain") {
    auto count = dyn_cast<IntegerAttr>(attr.getValue());
    if (!count || count.getInt() < 1 || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' must be a positive integer on a function";
    return success();
  }
  // Buffer layouts, the memory plan, kernel strategies and what
  // oflow-recompute copied, attached by the passes (which check their
  // contents).
  static constexpr llvm::StringLiteral kCodegenAttrs[] = {
      "oflow.state_offset", "oflow.io",          "oflow.io_bytes",
      "oflow.state_bytes",  "oflow.arena_bytes", "oflow.memory_plan",
      "oflow.strategy",     "oflow.segments",    "oflow.origins",
      "oflow.recompute",    "oflow.gathered_weight"};
  if (llvm::is_contained(kCodegenAttrs, name))
    return success();
  return op->emitError() << "unknown oflow attribute '" << name << "'";
}

static LogicalResult verifyValueAttr(Operation *op, NamedAttribute attr,
                                     Type type, const Twine &what) {
  StringRef name = attr.getName().getValue();
  if (name == OFlowDialect::kSbpAttrName)
    return verifySbpOnType(op, attr.getValue(), type, what);
  if (name == OFlowDialect::kNameAttrName ||
      name == OFlowDialect::kScalarAttrName ||
      name == OFlowDialect::kGradOfAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' on " << what
                             << " must be a string";
    return success();
  }
  if (name == OFlowDialect::kViewAttrName)
    return verifyView(op, attr.getValue(), type, what);
  return op->emitError() << "unknown oflow attribute '" << name << "' on "
                         << what;
}

LogicalResult OFlowDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  // A function's argument types come from its type: its body may not have
  // been checked against it yet (a body with fewer arguments than the type,
  // found by fuzzing, reached past the block's arguments).
  Region &region = op->getRegion(regionIndex);
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    type = fn.getArgumentTypes()[argIndex];
  else if (!region.empty() && argIndex < region.front().getNumArguments())
    type = region.front().getArgument(argIndex).getType();
  return verifyValueAttr(op, attr, type, "argument #" + Twine(argIndex));
}

LogicalResult OFlowDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitError() << "oflow result attributes belong on functions";
  return verifyValueAttr(op, attr, fn.getResultTypes()[resultIndex],
                         "result #" + Twine(resultIndex));
}
