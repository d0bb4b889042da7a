//===- RuntimeDtype.h - element types as the runtime ABI codes them -*- C++ -*-===//
//
// The OFLOW_DT_* codes of oflow_rt/abi.h, for the passes that emit runtime
// calls (collectives, BLAS).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CODEGEN_RUNTIMEDTYPE_H
#define OFLOW_CODEGEN_RUNTIMEDTYPE_H

#include "oflow_rt/abi.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace oflow {

/// The ABI's dtype code of an element type (bool travels as OFLOW_DT_I8), or
/// nullopt when the runtime has none.
inline std::optional<int64_t> runtimeDtype(mlir::Type type) {
  if (type.isF32())
    return OFLOW_DT_F32;
  if (type.isF64())
    return OFLOW_DT_F64;
  if (type.isInteger(32))
    return OFLOW_DT_I32;
  if (type.isInteger(64))
    return OFLOW_DT_I64;
  if (type.isInteger(8) || type.isInteger(1))
    return OFLOW_DT_I8;
  if (type.isBF16())
    return OFLOW_DT_BF16;
  if (type.isF16())
    return OFLOW_DT_F16;
  return std::nullopt;
}

} // namespace oflow

#endif
