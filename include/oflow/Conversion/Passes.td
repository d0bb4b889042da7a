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
      bwd_filter}_f32` on the tensors' buffers, a fresh result buffer and
      a workspace of `conv-workspace-bytes`, which the call may overwrite);
      `conv-library=cudnn` (the CUDA targets) does the same for the f32
      convolutions with symmetric pads, which cuDNN takes;
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
           "runtime's oneDNN primitives (CPU target); 'cudnn': as calls of "
           "its cuDNN convolutions (CUDA targets; symmetric pads only, the "
           "others keep im2col); empty: im2col + GEMM or direct loops">,
    Option<"convWorkspaceBytes", "conv-workspace-bytes", "int64_t", "0",
           "with conv-library: the workspace each call gets from the memory "
           "plan (cuDNN's algorithms, oneDNN's scratchpad)">,
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

def OFlowPadGemmExtents : Pass<"oflow-pad-gemm-extents", "::mlir::ModuleOp"> {
  let summary = "pad a large GEMM's odd output extent with zero weight rows";
  let description = [{
    For `oflow.matmul %x, %b` with a 2-D right operand, f32 result, an
    output extent N that is not a multiple of `multiple`, and M * N * K of
    at least `min-macs`: the weight gets zero rows (through its transpose,
    or with `transpose_b`, as it is stored) up to a multiple of `pad-to`,
    the product is computed [..., M, N'] and `oflow.slice`d back to N
    columns. The slice is a strided view (no copy), its gradient writes
    into the padded buffer, and the backward GEMMs inherit the even
    extent. Run before autodiff. For cuBLASLt's tensor-core GEMMs, which
    are several times slower on extents that are not 16 bytes' multiples
    (GPT-2's 50257-word vocabulary).

    ```mlir
    %wt = oflow.transpose %w [1, 0] : (tensor<50257x768xf32>) -> tensor<768x50257xf32>
    %y = oflow.matmul %x, %wt : (tensor<8192x768xf32>, tensor<768x50257xf32>) -> tensor<8192x50257xf32>
    // becomes
    %z = oflow.constant dense<0.0> : tensor<47x768xf32>
    %wp = oflow.concat %w, %z {axis = 0 : i64} : (...) -> tensor<50304x768xf32>
    %wpt = oflow.transpose %wp [1, 0] : (tensor<50304x768xf32>) -> tensor<768x50304xf32>
    %yp = oflow.matmul %x, %wpt : (...) -> tensor<8192x50304xf32>
    %y = oflow.slice %yp {offsets = array<i64: 0, 0>, sizes = array<i64: 8192, 50257>, strides = array<i64: 1, 1>}
    ```
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", "8",
           "extents that are multiples of this stay as they are (8: 16 bytes of bf16)">,
    Option<"padTo", "pad-to", "int64_t", "64",
           "pad to a multiple of this">,
    Option<"minMacs", "min-macs", "int64_t", "1073741824",
           "only GEMMs with at least this many multiply-adds (M * N * K)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def OFlowMergeSiblingMatmuls
    : Pass<"oflow-merge-sibling-matmuls", "::mlir::ModuleOp"> {
  let summary = "one GEMM for matmuls that share their left operand";
  let description = [{
    Matmuls of one activation by several 2-D weights (a transformer's q, k
    and v projections; a gated MLP's gate and up projections) become one
    matmul by the weights joined along their output extent, whose result is
    `oflow.split` back into the pieces (views, no copies). Run before
    autodiff, the backward inherits the merge: the pieces' gradients are
    joined (their producers write into the joined buffer), the input
    gradient is one GEMM whose reduction runs over every piece (no sum of
    partial products), and the weights' gradients are one GEMM sliced back
    (contiguous views: weights stored [N, K], as torch stores them, are
    joined along N). GPT-2 small: 6 fewer cuBLASLt calls a layer.

    Siblings must be `oflow.matmul`s in one block with the same left
    operand (not transposed), 2-D weights of the same element type and
    reduction extent, stored the same way (read through `oflow.transpose
    [1, 0]` or `transpose_b`, or as [K, N]) and defined before the first
    sibling. The pass changes single-device modules only: on a mesh, a
    split of the joined weight along N would mix the siblings' columns,
    and the planner chooses each weight's split on its own.

    ```mlir
    %qt = oflow.transpose %wq [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %q = oflow.matmul %x, %qt : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
    %kt = oflow.transpose %wk [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %k = oflow.matmul %x, %kt : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    // becomes
    %w = oflow.concat %wq, %wk {axis = 0 : i64} : (...) -> tensor<80x32xf32>
    %y = oflow.matmul %x, %w {transpose_b} : (...) -> tensor<8x80xf32>
    %q, %k = oflow.split %y {axis = 1 : i64, sizes = array<i64: 64, 16>} : ...
    ```
  }];
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

    With `transposes`, a `linalg.transpose` first becomes a `linalg.generic`
    when an elementwise generic produces its input for it alone (through
    single-use reshapes) or every user of its result is a generic (through
    reshapes; elementwise or reducing), so that the permutation fuses into
    its neighbours: the producer writes its result permuted (an attention
    head split after a bias add is then one kernel, not two), or the users
    read through it (a head gradient's bias sum and its rounding). A
    transpose that reaches a contraction, directly or through one unary
    generic (a cast), is left for `oflow-fold-gemm-transposes`, which turns
    it into the GEMM's own transposed read. The CUDA targets set it; the CPU
    keeps its transpose loops, which are tiled for the cache.

    With `cast-results`, a cast (`arith.truncf`/`extf`: autocast's rounding
    before a GEMM operand) of an elementwise generic's result that has other
    users becomes one more result of that generic, both identity-mapped
    over the same loops: the fusion above would compute the producer again
    in each user (or, for erf and exp, not fuse), while this way one kernel
    writes the f32 value and its rounding (a GELU's backward, a layer
    norm's input gradient). The CUDA targets set it; on the CPU the
    vectorizer takes f32 generics only.
  }];
  let options = [
    Option<"transposes", "transposes", "bool", "false",
           "generalize transposes next to elementwise generics so they fuse">,
    Option<"castResults", "cast-results", "bool", "false",
           "a cast of a multi-use elementwise result becomes one more result of its producer">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // OFLOW_CONVERSION_PASSES_TD
