//===- ParallelNests.h - the CPU target's parallel loop nests ---*- C++ -*-===//
//
// What oflow-parallelize-nests records on a nest function and
// oflow-lower-parallel-calls reads back after the lowering to LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CODEGEN_PARALLELNESTS_H
#define OFLOW_CODEGEN_PARALLELNESTS_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/StringRef.h"

namespace oflow {

/// On a nest function whose first two parameters are a range of its outer
/// iterations: the full range's size, and the fewest iterations worth a
/// thread.
constexpr llvm::StringLiteral kParallelIterationsAttr = "oflow.parallel_iterations";
constexpr llvm::StringLiteral kParallelGrainAttr = "oflow.parallel_grain";

/// The runtime's entry point (runtime/include/oflow_rt/abi.h).
constexpr llvm::StringLiteral kParallelForFn = "oflow_rt_parallel_for";

/// The work of running `block` once: the elements (vector lanes or scalars)
/// its ops produce, times the trip counts of the loops around them.
int64_t estimateWork(mlir::Block &block);

} // namespace oflow

#endif // OFLOW_CODEGEN_PARALLELNESTS_H
