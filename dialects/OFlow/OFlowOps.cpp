//===- OFlowOps.cpp - oflow ops: generated code, folders ------------------===//
#include "OFlow/OFlowOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::oflow;

/// `oflow.weight`'s value: data (an elements attribute, whose type is the
/// weight's) or an initializer recipe (`#oflow.init<...> : tensor<...>`).
static ParseResult parseWeightValue(OpAsmParser &parser, ElementsAttr &value,
                                    InitAttr &init) {
  Attribute attr;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseAttribute(attr))
    return failure();
  if ((init = dyn_cast<InitAttr>(attr)))
    return success();
  if ((value = dyn_cast<ElementsAttr>(attr)))
    return success();
  return parser.emitError(at, "expected the weight's data (an elements attribute) "
                              "or an initializer recipe (#oflow.init<...> : type)");
}

static void printWeightValue(OpAsmPrinter &printer, Operation *, ElementsAttr value,
                             InitAttr init) {
  if (init)
    printer.printAttribute(init);
  else
    printer.printAttribute(value);
}

#define GET_OP_CLASSES
#include "OFlow/OFlowOps.cpp.inc"

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
