//===- Passes.td - oflow lowering passes --------------------*- tablegen -*-===//
//
// Stage 6 of the pipeline: from the oflow graph to upstream dialects.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CONVERSION_PASSES_TD
#define OFLOW_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def OFlowLowerToLinalg : Pass<"oflow-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "lower oflow compute ops to linalg/tensor/arith/math on tensors";
  let description = [{
    Rewrites every compute op of the oflow dialect (forward ops and the
    backward ops of the training graph) into linalg, tensor, arith and math
    ops on tensors:

    * element-wise and broadcasting ops become `linalg.generic`s with
      broadcasting indexing maps, so `linalg-fuse-elementwise-ops` can fuse
      chains of them;
    * matmul and gemm become `linalg.matmul` / `linalg.batch_matmul` with
      their default indexing maps (transposed operands are materialised with
      `linalg.transpose`, batch dims broadcast and collapsed), because the
      library-call lowering matches exactly those ops;
    * conv2d becomes `linalg.conv_2d_nchw_fchw` (`conv_2d_ngchw_gfchw` with
      groups), pools the `linalg.pooling_nchw_*` ops; their backward ops and
      the other ops are `linalg.generic`s.

    Program state (`oflow.variable`, `read_variable`, `write_variable`) and
    `oflow.gradient` stay: a later pass lowers them. An op that cannot be
    lowered is an error at the op that names the unsupported feature.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // OFLOW_CONVERSION_PASSES_TD
