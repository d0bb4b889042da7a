//===- OFlowAttrs.h - mesh and SBP attributes -------------------*- C++ -*-===//
#ifndef OFLOW_DIALECT_OFLOWATTRS_H
#define OFLOW_DIALECT_OFLOWATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::oflow {

/// What an SBP entry says about a tensor on one mesh axis.
enum class SbpKind : uint32_t { Split, Broadcast, PartialSum, PartialMax };

/// Parses a command-line mesh such as "8x4" into its axis sizes. Returns an
/// error message for anything else ("0", "8x", "axb", "-2", "8x4x", "").
llvm::FailureOr<llvm::SmallVector<int64_t>>
parseMeshSpec(llvm::StringRef spec, std::string &error);

} // namespace mlir::oflow

#include "OFlow/OFlowEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "OFlow/OFlowAttrs.h.inc"

#endif
