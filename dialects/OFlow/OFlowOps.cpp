//===- OFlowOps.cpp - oflow ops: generated code, folders ------------------===//
#include "OFlow/OFlowOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::oflow;

#define GET_OP_CLASSES
#include "OFlow/OFlowOps.cpp.inc"

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
