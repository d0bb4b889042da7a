//===- OFlowDialect.h - the oflow dialect -----------------------*- C++ -*-===//
#ifndef OFLOW_DIALECT_OFLOWDIALECT_H
#define OFLOW_DIALECT_OFLOWDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "OFlow/OFlowDialect.h.inc"

#endif
