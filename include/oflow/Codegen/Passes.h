//===- Passes.h - oflow code generation passes ------------------*- C++ -*-===//
#ifndef OFLOW_CODEGEN_PASSES_H
#define OFLOW_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "oflow/Codegen/Passes.h.inc"

/// Byte alignment of every buffer and every offset in state, io and arena.
constexpr int64_t kBufferAlignment = 64;

/// Bytes one element of `type` occupies in the program's buffers (i1: 1).
int64_t elementBytes(mlir::Type type);

/// Attribute names shared by the codegen passes and the manifest writer.
constexpr llvm::StringLiteral kEntryAttr = "oflow.entry";
constexpr llvm::StringLiteral kStateOffsetAttr = "oflow.state_offset";
constexpr llvm::StringLiteral kIoLayoutAttr = "oflow.io";
constexpr llvm::StringLiteral kStateBytesAttr = "oflow.state_bytes";
constexpr llvm::StringLiteral kIoBytesAttr = "oflow.io_bytes";
constexpr llvm::StringLiteral kArenaBytesAttr = "oflow.arena_bytes";
constexpr llvm::StringLiteral kMemoryPlanAttr = "oflow.memory_plan";
/// On the buffer an all-gather of a variable's pieces writes (a ZeRO-3
/// weight gathered whole): the memory plan counts how many live at once.
constexpr llvm::StringLiteral kGatheredWeightAttr = "oflow.gathered_weight";

} // namespace oflow

#endif
