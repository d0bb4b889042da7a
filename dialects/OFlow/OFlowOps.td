//===- OFlowOps.td - oflow graph ops ------------------------*- tablegen -*-===//
//
// Every op infers its result types (InferTypeOpAdaptor); the inference also
// validates attributes and operand shapes, so it is the op's verifier and
// passes may create ops without computing shapes.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_OPS_TD
#define OFLOW_OPS_TD

include "OFlow/OFlowBase.td"
include "OFlow/OFlowAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "OFlow/OFlowSbpInterface.td"

defvar OFlow_Sbp = DeclareOpInterfaceMethods<OFlow_SbpSignatureOpInterface>;

class OFlow_InferOp<string mnemonic, list<Trait> traits = []>
    : OFlow_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor]>;

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

def OFlow_ConstantOp : OFlow_InferOp<"constant", [OFlow_Sbp, ConstantLike]> {
  let summary = "a constant tensor (ONNX Constant, folded shape arithmetic)";
  let description = [{
    ```mlir
    %c = oflow.constant dense<[2, 8]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def OFlow_WeightOp : OFlow_InferOp<"weight", [OFlow_Sbp]> {
  let summary = "a named model initializer (a weight or a buffer)";
  let description = [{
    An ONNX initializer. Its data lives in a dense resource blob, so printing
    the IR never dumps megabytes of numbers (they are elided unless asked for).
    Later stages decide which weights are trainable.

    ```mlir
    %w = oflow.weight "fc1.weight", dense_resource<fc1.weight> : tensor<64x32xf32>
    ```

    Instead of data, a weight may carry an initializer recipe (native IR
    for training from scratch: no weight file at all); the executable draws
    its values when it starts (see `#oflow.init`).

    ```mlir
    %w = oflow.weight "h0.attn.weight", #oflow.init<normal(0.0, 0.02), seed = 1> : tensor<768x2304xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<OFlow_InitAttr>:$init);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$name `,` custom<WeightValue>($value, $init) attr-dict";
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

class OFlow_UnaryOp<string mnemonic, Type operandType, string doc,
                    list<Trait> traits = []>
    : OFlow_InferOp<mnemonic, traits # [Elementwise, OFlow_Sbp]> {
  let summary = doc;
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def OFlow_NegOp : OFlow_UnaryOp<"neg", OFlow_NumericTensor, "-x">;
def OFlow_ExpOp : OFlow_UnaryOp<"exp", OFlow_FloatTensor, "e^x">;
def OFlow_LogOp : OFlow_UnaryOp<"log", OFlow_FloatTensor, "natural logarithm">;
def OFlow_SqrtOp : OFlow_UnaryOp<"sqrt", OFlow_FloatTensor, "square root">;
def OFlow_RsqrtOp : OFlow_UnaryOp<"rsqrt", OFlow_FloatTensor, "1 / sqrt(x)">;
def OFlow_ReciprocalOp : OFlow_UnaryOp<"reciprocal", OFlow_FloatTensor, "1 / x">;
def OFlow_TanhOp : OFlow_UnaryOp<"tanh", OFlow_FloatTensor, "hyperbolic tangent">;
def OFlow_SigmoidOp : OFlow_UnaryOp<"sigmoid", OFlow_FloatTensor, "1 / (1 + e^-x)">;
def OFlow_ReluOp : OFlow_UnaryOp<"relu", OFlow_NumericTensor, "max(x, 0)">;
def OFlow_ErfOp : OFlow_UnaryOp<"erf", OFlow_FloatTensor, "Gauss error function">;
def OFlow_AbsOp : OFlow_UnaryOp<"abs", OFlow_NumericTensor, "|x|">;
def OFlow_NotOp : OFlow_UnaryOp<"not", OFlow_BoolTensor, "logical not">;

def OFlow_GeluOp : OFlow_InferOp<"gelu", [OFlow_Sbp, Elementwise]> {
  let summary = "GELU: x * Phi(x), exact (erf) or tanh-approximated";
  let description = [{
    ```mlir
    %y = oflow.gelu none %x : tensor<8x256xf32>
    %z = oflow.gelu tanh %x : tensor<8x256xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input,
                       DefaultValuedAttr<OFlow_GeluApproximation,
                         "::mlir::oflow::GeluApproximation::none">:$approximate);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$approximate $input attr-dict `:` type($input)";
}

// Not `Elementwise`: that trait requires all operands and results to have the
// same shape, which rejects the numpy broadcasting these ops allow.
class OFlow_BinaryOp<string mnemonic, Type operandType, string doc,
                     list<Trait> traits = []>
    : OFlow_InferOp<mnemonic, traits # [OFlow_Sbp]> {
  let summary = doc # " (numpy broadcasting)";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$output);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def OFlow_AddOp : OFlow_BinaryOp<"add", OFlow_NumericTensor, "lhs + rhs", [Commutative]>;
def OFlow_SubOp : OFlow_BinaryOp<"sub", OFlow_NumericTensor, "lhs - rhs">;
def OFlow_MulOp : OFlow_BinaryOp<"mul", OFlow_NumericTensor, "lhs * rhs", [Commutative]>;
def OFlow_DivOp : OFlow_BinaryOp<"div", OFlow_NumericTensor, "lhs / rhs">;
def OFlow_PowOp : OFlow_BinaryOp<"pow", OFlow_FloatTensor, "lhs ^ rhs">;
def OFlow_MaxOp : OFlow_BinaryOp<"max", OFlow_NumericTensor, "max(lhs, rhs)", [Commutative]>;
def OFlow_MinOp : OFlow_BinaryOp<"min", OFlow_NumericTensor, "min(lhs, rhs)", [Commutative]>;

def OFlow_CompareOp : OFlow_InferOp<"compare", [OFlow_Sbp]> {
  let summary = "element-wise comparison to a boolean tensor (broadcasting)";
  let description = [{
    ```mlir
    %m = oflow.compare lt %a, %b : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
    ```
  }];
  let arguments = (ins OFlow_ComparePredicate:$predicate,
                       OFlow_Tensor:$lhs, OFlow_Tensor:$rhs);
  let results = (outs OFlow_BoolTensor:$output);
  let assemblyFormat =
      "$predicate $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  // Constant float operands (one may be a scalar): a constant mask, so that
  // a causal mask built from trilu + compare is one (oflow-fuse-attention).
  let hasFolder = 1;
}

def OFlow_WhereOp : OFlow_InferOp<"where", [OFlow_Sbp]> {
  let summary = "select lhs where cond else rhs (three-way broadcasting)";
  let description = [{
    ```mlir
    %y = oflow.where %mask, %x, %neg_inf
        : (tensor<1x1x64x64xi1>, tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_BoolTensor:$condition, OFlow_Tensor:$lhs,
                       OFlow_Tensor:$rhs);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$condition `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_CastOp : OFlow_InferOp<"cast", [OFlow_Sbp, Elementwise]> {
  let summary = "element type conversion (ONNX Cast)";
  let description = [{
    ```mlir
    %f = oflow.cast %i to f32 : tensor<8xi64>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, TypeAttr:$to);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input `to` $to attr-dict `:` type($input)";
}

// The training step and shard offsets: i64 scalars, so that the assembly
// format can omit their type.
def OFlow_I64Scalar : Type<And<[AnyRankedTensor.predicate,
                                CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">,
                                CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getElementType().isInteger(64)">]>,
                           "i64 scalar tensor">,
                      BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

def OFlow_DropoutOp
    : OFlow_InferOp<"dropout", [OFlow_Sbp, AttrSizedOperandSegments]> {
  let summary = "dropout: zero each element with probability `ratio`, scale the rest";
  let description = [{
    Ratio 0 is the identity. A positive ratio needs a `seed`, and the
    training `step` to run: element `i` (its index in the row-major
    *global* tensor) is kept iff word 0 of Philox4x32-10 with key
    (seed low, seed high) and counter (i low, i high, step low, step high)
    is at least ceil(ratio * 2^32), and kept elements are multiplied by
    1 / (1 - ratio) (rounded to the element type, as PyTorch). The mask
    depends on nothing else, so every mesh and plan draws the mask one
    device draws, and the gradient is the same op applied to the incoming
    gradient. A negative step evaluates: the op is then the identity.

    After partitioning, a split result carries its `global_shape` and one
    `offsets` scalar per axis (where this rank's piece starts).

    ```mlir
    %y = oflow.dropout %x step %s {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input,
                       Optional<OFlow_I64Scalar>:$step,
                       Variadic<OFlow_I64Scalar>:$offsets,
                       F64Attr:$ratio, OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`step` $step^)? (`offsets` `(` $offsets^ `)`)? attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def OFlow_MatmulOp : OFlow_InferOp<"matmul", [OFlow_Sbp]> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    Operands have rank >= 2; the last two dims are the matrix (transposed
    first where asked), leading dims broadcast as in numpy (ONNX MatMul).

    ```mlir
    %s = oflow.matmul %q, %k {transpose_b}
        : (tensor<8x4x64x16xf32>, tensor<8x4x64x16xf32>) -> tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_NumericTensor:$lhs, OFlow_NumericTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs OFlow_NumericTensor:$output);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def OFlow_GemmOp : OFlow_InferOp<"gemm", [OFlow_Sbp]> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm, torch Linear)";
  let description = [{
    A and B are 2-D; C, when present, broadcasts to [M, N]. torch exports a
    Linear layer as `gemm %x, %w, %b {transpose_b}` with the weight [out, in].

    ```mlir
    %y = oflow.gemm %x, %w, %b {transpose_b}
        : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$a, OFlow_FloatTensor:$b,
                       Optional<OFlow_FloatTensor>:$c,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class OFlow_ReduceOp<string mnemonic, string doc>
    : OFlow_InferOp<mnemonic, [OFlow_Sbp]> {
  let summary = doc # " over `axes` (ONNX Reduce*)";
  let description = [{
    `axes` are non-negative, unique, and never empty (the importer expands
    ONNX's "all axes"); `keepdims` keeps reduced axes as size 1.

    ```mlir
    %m = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true}
        : (tensor<8x64xf32>) -> tensor<8x1xf32>
    ```
  }];
  let arguments = (ins OFlow_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs OFlow_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def OFlow_ReduceSumOp : OFlow_ReduceOp<"reduce_sum", "sum">;
def OFlow_ReduceMeanOp : OFlow_ReduceOp<"reduce_mean", "mean">;
def OFlow_ReduceMaxOp : OFlow_ReduceOp<"reduce_max", "maximum">;

class OFlow_SoftmaxLikeOp<string mnemonic, string doc>
    : OFlow_InferOp<mnemonic, [OFlow_Sbp]> {
  let summary = doc # " along one axis (ONNX opset 13 semantics)";
  let description = [{
    ```mlir
    %p = oflow.softmax %x {axis = 3 : i64} : tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, I64Attr:$axis);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def OFlow_SoftmaxOp : OFlow_SoftmaxLikeOp<"softmax", "softmax">;
def OFlow_LogSoftmaxOp : OFlow_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def OFlow_AttentionOp : OFlow_InferOp<"attention", [OFlow_Sbp]> {
  let summary = "fused scaled-dot-product attention: softmax(q k^T * scale) v";
  let description = [{
    `query` [..., Tq, D], `key` and `value` [..., Tk, D], with the same
    leading (batch, head) dims. With `causal`, query i attends to keys
    j <= i only (Tq == Tk), as a lower-triangular mask does. `output` is
    [..., Tq, D]; `logsumexp` [..., Tq] is the natural log of each query
    row's softmax denominator of the scaled scores, which the backward op
    reuses to recompute the probabilities instead of storing them.

    Mixed precision as a GEMM under `--precision`: both products read their
    operands (q, k, v, and the probabilities) rounded to `operand_type`
    (bf16 or f16) and accumulate in f32; the softmax is f32. The scores are
    never materialized (the runtime's `oflow_rt_attention_fwd`).
    oflow-fuse-attention creates it from matmul, scale, causal mask,
    softmax, matmul.

    ```mlir
    %o, %lse = oflow.attention %q, %k, %v {causal, operand_type = bf16, scale = 1.250000e-01 : f32}
        : (tensor<8x12x1024x64xf32>, tensor<8x12x1024x64xf32>, tensor<8x12x1024x64xf32>)
        -> (tensor<8x12x1024x64xf32>, tensor<8x12x1024xf32>)
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$query, OFlow_FloatTensor:$key,
                       OFlow_FloatTensor:$value, F32Attr:$scale,
                       UnitAttr:$causal, TypeAttr:$operand_type);
  let results = (outs OFlow_FloatTensor:$output, OFlow_FloatTensor:$logsumexp);
  let assemblyFormat = "$query `,` $key `,` $value attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_LayerNormOp : OFlow_InferOp<"layer_norm", [OFlow_Sbp]> {
  let summary = "layer normalization over the axes from `axis` on";
  let description = [{
    `scale` (and `bias`) have the shape of the normalized trailing dims.

    ```mlir
    %y = oflow.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
        : (tensor<8x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_FloatTensor:$scale,
                       Optional<OFlow_FloatTensor>:$bias, I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_BatchNormInferenceOp : OFlow_InferOp<"batch_norm_inference", [OFlow_Sbp]> {
  let summary = "batch normalization with given statistics (eval mode)";
  let description = [{
    Channels are dim 1; scale, bias, mean and var are [C].

    ```mlir
    %y = oflow.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32}
        : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> tensor<32x8x16x16xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_FloatTensor:$scale,
                       OFlow_FloatTensor:$bias, OFlow_FloatTensor:$mean,
                       OFlow_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance "
                       "attr-dict `:` functional-type(operands, results)";
}

def OFlow_BatchNormTrainingOp : OFlow_InferOp<"batch_norm_training", [OFlow_Sbp]> {
  let summary = "batch normalization with batch statistics (train mode)";
  let description = [{
    Normalizes with the statistics of this batch and returns the updated
    running statistics as in ONNX (training_mode = 1):
    `running = running * momentum + batch * (1 - momentum)` (the running
    variance uses the unbiased batch variance, as PyTorch does).

    The statistics, the backward pass's two sums and the per-channel
    coefficients are computed in `getStatisticsType` (f64 for f32 input, f32
    for f16/bf16), as PyTorch's CPU kernels do (`acc_type`): a float32 sum
    over N*H*W terms would leave gradients ~1e-5 off where PyTorch's are
    ~1e-7 off. Both directions apply per-channel coefficients per element,
    PyTorch's CPU kernels' form: `y = x * alpha + beta` with
    `alpha = scale * rstd`, `beta = bias - mean * alpha`, in the statistics
    type (rounded to f32 first, RegNetX-400MF's near-dead channels' gradients
    left PyTorch's float32 noise); and `dx = (dy - mean(dy) - (x - mean) * k)
    * scale * rstd` with `k = rstd * sum(dy * xhat) / n`, its coefficients
    rounded once to `getElementwiseType` (f32 for f32 and narrower data).

    ```mlir
    %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v
        {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32}
        : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_FloatTensor:$scale,
                       OFlow_FloatTensor:$bias, OFlow_FloatTensor:$running_mean,
                       OFlow_FloatTensor:$running_var,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum);
  let results = (outs OFlow_FloatTensor:$output, OFlow_FloatTensor:$new_running_mean,
                      OFlow_FloatTensor:$new_running_var);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $running_mean `,` "
                       "$running_var attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The element type batch statistics are accumulated and applied in.
    static ::mlir::Type getStatisticsType(::mlir::Type elementType) {
      if (elementType.isF32())
        return ::mlir::Float64Type::get(elementType.getContext());
      if (elementType.isF16() || elementType.isBF16())
        return ::mlir::Float32Type::get(elementType.getContext());
      return elementType;
    }
    /// The element type the input gradient is computed in, point by point:
    /// f32 for f32 and narrower data.
    static ::mlir::Type getElementwiseType(::mlir::Type elementType) {
      if (elementType.isF32() || elementType.isF16() || elementType.isBF16())
        return ::mlir::Float32Type::get(elementType.getContext());
      return elementType;
    }
  }];
}

def OFlow_BatchNormStatisticsOp
    : OFlow_InferOp<"batch_norm_statistics", [OFlow_Sbp]> {
  let summary = "per-channel mean and biased variance of a batch";
  let description = [{
    The batch statistics `batch_norm_training` normalizes with: the mean
    and the biased variance over every dim but 1 (N, H, W), as [C] tensors
    in `BatchNormTrainingOp::getStatisticsType` (f64 for f32 input). The
    gradient of `batch_norm_training` reads them (PyTorch's save_mean and
    save_invstd) instead of recomputing them in its own passes: both lower
    to the same loops, which CSE then shares with the forward pass.

    ```mlir
    %mean, %var = oflow.batch_norm_statistics %x
        : (tensor<32x8x16x16xf32>) -> (tensor<8xf64>, tensor<8xf64>)
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input);
  let results = (outs OFlow_FloatTensor:$mean, OFlow_FloatTensor:$variance);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW)
//===----------------------------------------------------------------------===//

def OFlow_Conv2dOp : OFlow_InferOp<"conv2d", [OFlow_Sbp]> {
  let summary = "2-D convolution, NCHW input, [M, C/groups, kH, kW] weight";
  let description = [{
    `pads` = [top, left, bottom, right] (ONNX order: begins, then ends).

    ```mlir
    %y = oflow.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                                 dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<32x1x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<32x8x16x16xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_FloatTensor:$weight,
                       Optional<OFlow_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

class OFlow_Pool2dOp<string mnemonic, string doc, dag extraArgs>
    : OFlow_InferOp<mnemonic, [OFlow_Sbp]> {
  let summary = doc # " over kH x kW windows, NCHW";
  let description = [{
    ```mlir
    %y = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                             pads = array<i64: 0, 0, 0, 0>}
        : (tensor<32x8x16x16xf32>) -> tensor<32x8x8x8xf32>
    ```
  }];
  let arguments = !con((ins OFlow_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                            UnitAttr:$ceil_mode), extraArgs);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def OFlow_MaxPool2dOp : OFlow_Pool2dOp<"max_pool2d", "maximum",
    (ins OptionalAttr<DenseI64ArrayAttr>:$dilations)>;
def OFlow_AvgPool2dOp : OFlow_Pool2dOp<"avg_pool2d", "average",
    (ins UnitAttr:$count_include_pad)>;

def OFlow_GlobalAvgPoolOp : OFlow_InferOp<"global_avg_pool", [OFlow_Sbp]> {
  let summary = "mean over all spatial dims: [N, C, d...] -> [N, C, 1...]";
  let description = [{
    ```mlir
    %y = oflow.global_avg_pool %x : (tensor<32x16x4x4xf32>) -> tensor<32x16x1x1xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input);
  let results = (outs OFlow_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def OFlow_ReshapeOp : OFlow_InferOp<"reshape", [OFlow_Sbp]> {
  let summary = "reinterpret the elements in a new static shape";
  let description = [{
    ```mlir
    %y = oflow.reshape %x [8, 64, 4, 16] : (tensor<8x64x64xf32>) -> tensor<8x64x4x16xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input $shape attr-dict `:` functional-type(operands, results)";
}

def OFlow_FlattenOp : OFlow_InferOp<"flatten", [OFlow_Sbp]> {
  let summary = "[d0..dk-1, dk..dn] -> [d0*..*dk-1, dk*..*dn] (ONNX Flatten)";
  let description = [{
    ```mlir
    %y = oflow.flatten %x {axis = 1 : i64} : (tensor<32x16x2x2xf32>) -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def OFlow_TransposeOp : OFlow_InferOp<"transpose", [OFlow_Sbp]> {
  let summary = "permute dims: result dim i is input dim perm[i]";
  let description = [{
    ```mlir
    %y = oflow.transpose %x [0, 2, 1, 3] : (tensor<8x64x4x16xf32>) -> tensor<8x4x64x16xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input $perm attr-dict `:` functional-type(operands, results)";
}

def OFlow_SqueezeOp : OFlow_InferOp<"squeeze", [OFlow_Sbp]> {
  let summary = "remove size-1 dims at `axes`";
  let description = [{
    ```mlir
    %y = oflow.squeeze %x [1] : (tensor<8x1x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input $axes attr-dict `:` functional-type(operands, results)";
}

def OFlow_UnsqueezeOp : OFlow_InferOp<"unsqueeze", [OFlow_Sbp]> {
  let summary = "insert size-1 dims at `axes` (positions in the result)";
  let description = [{
    ```mlir
    %y = oflow.unsqueeze %x [0, 1] : (tensor<64x64xi1>) -> tensor<1x1x64x64xi1>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input $axes attr-dict `:` functional-type(operands, results)";
}

def OFlow_ExpandOp : OFlow_InferOp<"expand", [OFlow_Sbp]> {
  let summary = "broadcast to `shape` (numpy rules, ONNX Expand)";
  let description = [{
    The result shape is the broadcast of the input shape and `shape`.

    ```mlir
    %y = oflow.expand %x [8, 64] : (tensor<1x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input $shape attr-dict `:` functional-type(operands, results)";
}

def OFlow_ConcatOp : OFlow_InferOp<"concat", [OFlow_Sbp]> {
  let summary = "join tensors along `axis`";
  let description = [{
    ```mlir
    %y = oflow.concat %a, %b {axis = 1 : i64}
        : (tensor<8x16xf32>, tensor<8x48xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Variadic<OFlow_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def OFlow_SliceOp : OFlow_InferOp<"slice", [OFlow_Sbp]> {
  let summary = "strided slice with per-dim offsets, sizes and strides";
  let description = [{
    Result element i of dim d is input element offsets[d] + i * strides[d]
    (strides may be negative: a reversed slice). The importer resolves ONNX
    Slice's clamping and negative indices into this explicit form.

    ```mlir
    %y = oflow.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 64, 64>,
                         strides = array<i64: 1, 1>}
        : (tensor<128x128xf32>) -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def OFlow_SplitOp : OFlow_InferOp<"split", [OFlow_Sbp]> {
  let summary = "cut a tensor into pieces of `sizes` along `axis`";
  let description = [{
    ```mlir
    %q, %k, %v = oflow.split %qkv {axis = 2 : i64, sizes = array<i64: 64, 64, 64>}
        : (tensor<8x64x192xf32>) -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>)
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<OFlow_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def OFlow_GatherOp : OFlow_InferOp<"gather", [OFlow_Sbp]> {
  let summary = "take slices of `data` along `axis` at `indices` (embedding lookup)";
  let description = [{
    Result shape: data[:axis] + indices + data[axis+1:]. Negative indices
    count from the end, as in ONNX.

    ```mlir
    %e = oflow.gather %wte, %tokens {axis = 0 : i64}
        : (tensor<104x64xf32>, tensor<8x64xi64>) -> tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$data, OFlow_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
}

def OFlow_TriluOp : OFlow_InferOp<"trilu", [OFlow_Sbp]> {
  let summary = "keep the upper or lower triangle of the last two dims";
  let description = [{
    ```mlir
    %m = oflow.trilu %ones {upper = false, k = 0 : i64} : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, DefaultValuedAttr<BoolAttr, "true">:$upper,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  // A constant input folds to the constant triangle.
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def OFlow_SoftmaxCrossEntropyOp : OFlow_InferOp<"softmax_cross_entropy", [OFlow_Sbp]> {
  let summary = "cross entropy of softmax(logits) against integer labels";
  let description = [{
    Logits [N, C, d...], labels [N, d...]. Labels equal to `ignore_index`
    contribute nothing and are not counted by the mean (ONNX
    SoftmaxCrossEntropyLoss, torch.nn.functional.cross_entropy).

    ```mlir
    %loss = oflow.softmax_cross_entropy mean %logits, %labels
        : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$logits, OFlow_IndexTensor:$labels,
                       OFlow_LossReduction:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs OFlow_FloatTensor:$loss);
  let assemblyFormat = "$reduction $logits `,` $labels attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_NllLossOp : OFlow_InferOp<"nll_loss", [OFlow_Sbp]> {
  let summary = "negative log-likelihood of log-probabilities at integer labels";
  let description = [{
    Input [N, C, d...] (log-probabilities), labels [N, d...] (ONNX
    NegativeLogLikelihoodLoss).

    ```mlir
    %loss = oflow.nll_loss mean %logp, %labels
        : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_IndexTensor:$labels,
                       OFlow_LossReduction:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs OFlow_FloatTensor:$loss);
  let assemblyFormat = "$reduction $input `,` $labels attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_MseLossOp : OFlow_InferOp<"mse_loss", [OFlow_Sbp]> {
  let summary = "mean (or sum) squared error between two same-shaped tensors";
  let description = [{
    ```mlir
    %loss = oflow.mse_loss mean %pred, %target
        : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_FloatTensor:$target,
                       OFlow_LossReduction:$reduction);
  let results = (outs OFlow_FloatTensor:$loss);
  let assemblyFormat = "$reduction $input `,` $target attr-dict `:` "
                       "functional-type(operands, results)";
}

include "OFlow/OFlowTrainingOps.td"
include "OFlow/OFlowBoxingOps.td"

#endif // OFLOW_OPS_TD
