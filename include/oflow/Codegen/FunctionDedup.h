//===- FunctionDedup.h - functions that differ only in buffer offsets -----===//
//
// Outlined code (GPU kernels, the CPU entries' loop nests) repeats for every
// layer of a deep model, the copies differing only in where their buffers
// lie in the arena. Making those byte offsets parameters lets the copies be
// recognized as one function by their text.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CODEGEN_FUNCTIONDEDUP_H
#define OFLOW_CODEGEN_FUNCTIONDEDUP_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>
#include <string>

namespace oflow {

/// Makes the constant byte shifts of `fn`'s `memref.view`s new trailing
/// index parameters; returns the shifts in order, which its one caller must
/// append to its operands. std::nullopt (nothing changed) when there are
/// none or more than `maxParams`.
std::optional<llvm::SmallVector<int64_t>>
parameterizeViewOffsets(mlir::FunctionOpInterface fn, unsigned maxParams);

/// `fn` printed without its name: equal for functions that compute the same
/// from the same arguments.
std::string functionBodyKey(mlir::FunctionOpInterface fn);

} // namespace oflow

#endif // OFLOW_CODEGEN_FUNCTIONDEDUP_H
