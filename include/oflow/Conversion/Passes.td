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
    * f32 conv2d and its backward ops become im2col (a gather generic into a
      column matrix) + `linalg.batch_matmul` (+ col2im for the input
      gradient), so they run as BLAS GEMMs; depthwise and non-f32
      convolutions become `linalg.conv_2d_nchw_fchw` / `conv_2d_ngchw_gfchw`;
      with `conv-library=dnnl` (the CPU target) every f32 convolution and
      both its backward ops are instead one call each of the runtime's
      oneDNN primitives (`__oflow_rt_conv2d_{fwd,fwd_bias,bwd_data,
      bwd_filter}_f32` on the tensors' buffers and a fresh result buffer);
      pools the `linalg.pooling_nchw_*` ops; the other ops are
      `linalg.generic`s (the embedding gradient an `scf.for` over indices).

    Program state (`oflow.variable`, `read_variable`, `write_variable`) and
    `oflow.gradient` stay: a later pass lowers them, as it does the ops named
    in `keep` (`--oflow-lower-to-linalg=keep=oflow.x,oflow.y`). Any other
    oflow op that cannot be lowered is an error at the op that names the
    unsupported feature.
  }];
  let options = [
    ListOption<"keepOps", "keep", "std::string",
               "oflow ops that a later pass lowers (e.g. collectives), left "
               "as they are like the program-state ops">,
    Option<"convLibrary", "conv-library", "std::string", "\"\"",
           "'dnnl': f32 convolutions and their gradients as calls of the "
           "runtime's oneDNN primitives (CPU target); empty: im2col + GEMM "
           "or direct loops">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def OFlowFuseAttention : Pass<"oflow-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "fuse matmul, scale, causal mask, softmax, matmul into oflow.attention";
  let description = [{
    Finds scaled-dot-product attention in the oflow graph,

      %s = oflow.matmul %q, %kT        q [..., Tq, D], kT [..., D, Tk]
      %s2 = oflow.mul %s, c            (or c * s, or s / c; optional)
      %s3 = oflow.where %m, -inf, %s2  (optional; %m a constant, or its
                                        oflow.not, true exactly where j > i)
      %p = oflow.softmax %s3 {axis = last}
      %o = oflow.matmul %p, %v         v [..., Tk, D]

    each intermediate used once, and replaces it with one `oflow.attention`
    (key = kT transposed back), whose runtime call never materializes the
    [Tq, Tk] scores and whose gradient is one `oflow.attention_backward`.
    Run before autodiff. Only for mixed precision (`precision` bf16 or
    fp16: the runtime's kernels use tensor cores), head dims up to
    `max-head-dim`, and masks it can prove causal; anything else stays as
    the unfused ops, which compute the same function.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "the products' operand type: bf16 or fp16">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", "128",
           "the largest head dim the runtime's kernels take">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def OFlowFuseElementwise : Pass<"oflow-fuse-elementwise"> {
  let summary = "fuse elementwise linalg ops, keeping contractions and convolutions";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (producer-consumer fusion of
    elementwise generics and reshape propagation by expansion), restricted
    so that ops implementing the contraction or convolution interface
    (`linalg.matmul`, `batch_matmul`, `conv_2d_*`, `pooling_*`) are neither
    fused nor reshaped: upstream would generalize them into
    `linalg.generic`s, which the library-call lowering cannot map to BLAS.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // OFLOW_CONVERSION_PASSES_TD
