//===- Passes.h - oflow lowering passes -------------------------*- C++ -*-===//
#ifndef OFLOW_CONVERSION_PASSES_H
#define OFLOW_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace oflow {

#define GEN_PASS_DECL
#include "oflow/Conversion/Passes.h.inc"

/// Which convolutions oflow-lower-to-linalg makes calls of the runtime's
/// convolution library (oflow_rt_conv2d_*, ConvLibrary.cpp).
struct ConvLibraryOptions {
  /// "" (none: im2col + GEMM or loops), "dnnl" (the CPU runtime's oneDNN)
  /// or "cudnn" (the CUDA runtime's cuDNN, which takes symmetric pads only:
  /// other convolutions keep the im2col kernels).
  std::string library;
  /// The workspace each call gets, placed by the memory plan for the
  /// call's duration (cuDNN's algorithms and oneDNN's scratchpad use it).
  int64_t workspaceBytes = 0;
};

/// Adds the patterns that rewrite oflow compute ops into linalg, tensor,
/// arith and math ops (the content of `oflow-lower-to-linalg`).
void populateOFlowToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                   const ConvLibraryOptions &conv = {});

#define GEN_PASS_REGISTRATION
#include "oflow/Conversion/Passes.h.inc"

} // namespace oflow

#endif // OFLOW_CONVERSION_PASSES_H
