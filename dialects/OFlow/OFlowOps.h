//===- OFlowOps.h - oflow ops -----------------------------------*- C++ -*-===//
#ifndef OFLOW_DIALECT_OFLOWOPS_H
#define OFLOW_DIALECT_OFLOWOPS_H

#include "OFlow/OFlowAttrs.h"
#include "OFlow/OFlowDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "OFlow/OFlowOps.h.inc"

#endif
