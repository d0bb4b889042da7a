//===- OFlowTrainingOps.td - program state and gradient ops -*- tablegen -*-===//
//
// Ops that the training passes create: program variables (weights, buffers,
// optimizer state), the autodiff result marker, and the backward ops whose
// gradients are not a composition of forward ops. Included by OFlowOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_TRAINING_OPS_TD
#define OFLOW_TRAINING_OPS_TD

include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Program state
//===----------------------------------------------------------------------===//

def OFlow_VariableRole : I32EnumAttr<"VariableRole",
    "what a program variable holds", [
      I32EnumAttrCase<"param", 0>,        // trained by the optimizer
      I32EnumAttrCase<"buffer", 1>,       // model state not trained (BN running stats, masks)
      I32EnumAttrCase<"optimizer", 2>,    // optimizer state (momentum, Adam moments)
      I32EnumAttrCase<"constant", 3>]> {  // never written (inference weights)
  let cppNamespace = "::mlir::oflow";
}

def OFlow_VariableOp : OFlow_Op<"variable", [Symbol]> {
  let summary = "a program variable: state that lives across steps";
  let description = [{
    A module-level tensor that persists between calls of the program's entry
    functions: weights, buffers and optimizer state. `initial_value` is the
    value before the first step (zeros when absent, or drawn at start from
    `initializer`, a weight's `#oflow.init` recipe); `model_name` is the
    ONNX initializer it came from (for export and checkpoints), and `of`
    names the parameter an optimizer slot belongs to.

    ```mlir
    oflow.variable @fc1.weight param : tensor<64x32xf32> = dense_resource<fc1.weight> {model_name = "fc1.weight"}
    oflow.variable @fc1.weight.exp_avg optimizer : tensor<64x32xf32> {of = @fc1.weight}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OFlow_VariableRole:$role,
                       TypeAttr:$type, OptionalAttr<ElementsAttr>:$initial_value,
                       OptionalAttr<OFlow_InitAttr>:$initializer,
                       OptionalAttr<StrAttr>:$model_name,
                       OptionalAttr<FlatSymbolRefAttr>:$of,
                       OptionalAttr<OFlow_NdSbpAttr>:$sbp);
  let assemblyFormat = "$sym_name $role `:` $type (`=` $initial_value^)? attr-dict";
  let hasVerifier = 1;
}

def OFlow_ReadVariableOp : OFlow_Op<"read_variable",
    [OFlow_Sbp, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead]>]> {
  let summary = "the current value of a program variable";
  let description = [{
    ```mlir
    %w = oflow.read_variable @fc1.weight : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable);
  let results = (outs OFlow_Tensor:$value);
  let assemblyFormat = "$variable attr-dict `:` type($value)";
}

def OFlow_WriteVariableOp : OFlow_Op<"write_variable",
    [OFlow_Sbp, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "set a program variable (visible from the next step on)";
  let description = [{
    Reads of the variable in the same function see the value from before the
    function started: passes place writes after the last read.

    ```mlir
    oflow.write_variable @fc1.weight, %w_new : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable, OFlow_Tensor:$value);
  let assemblyFormat = "$variable `,` $value attr-dict `:` type($value)";
}

def OFlow_GradientOp : OFlow_Op<"gradient", [OFlow_Sbp, MemoryEffects<[MemWrite]>]> {
  let summary = "autodiff's result: d(loss)/d(weight `name`)";
  let description = [{
    Emitted once per trained weight by `oflow-autodiff` (gradients of a weight
    used several times are already summed). The optimizer pass turns it into
    an update of the weight's variable; a gradient-only entry returns it.

    ```mlir
    oflow.gradient "fc1.weight", %g : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OFlow_FloatTensor:$grad);
  let assemblyFormat = "$name `,` $grad attr-dict `:` type($grad)";
}

//===----------------------------------------------------------------------===//
// Backward ops (result shapes come from attributes: a backward op never keeps
// a forward activation alive just for its shape)
//===----------------------------------------------------------------------===//

def OFlow_Conv2dBackwardInputOp : OFlow_InferOp<"conv2d_backward_input", [OFlow_Sbp]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    `grad_output` [N, M, OH, OW], `weight` [M, C/groups, kH, kW]; the result
    has `input_shape` [N, C, H, W]. Attributes as on `oflow.conv2d`.
  }];
  let arguments = (ins OFlow_FloatTensor:$grad_output, OFlow_FloatTensor:$weight,
                       DenseI64ArrayAttr:$input_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs OFlow_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $weight attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_Conv2dBackwardFilterOp : OFlow_InferOp<"conv2d_backward_filter", [OFlow_Sbp]> {
  let summary = "gradient of conv2d with respect to its weight";
  let description = [{
    `grad_output` [N, M, OH, OW], `input` [N, C, H, W]; the result has
    `filter_shape` [M, C/groups, kH, kW]. Attributes as on `oflow.conv2d`.
  }];
  let arguments = (ins OFlow_FloatTensor:$grad_output, OFlow_FloatTensor:$input,
                       DenseI64ArrayAttr:$filter_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs OFlow_FloatTensor:$grad_filter);
  let assemblyFormat = "$grad_output `,` $input attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_MaxPool2dBackwardOp : OFlow_InferOp<"max_pool2d_backward", [OFlow_Sbp]> {
  let summary = "gradient of max_pool2d: each window's gradient goes to its first maximum";
  let description = [{
    `input` is the forward input (to find each window's arg-max; the first
    maximum in row-major window order wins, as in PyTorch); the result has
    the input's shape. Attributes as on `oflow.max_pool2d`.
  }];
  let arguments = (ins OFlow_FloatTensor:$grad_output, OFlow_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations);
  let results = (outs OFlow_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $input attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_AvgPool2dBackwardOp : OFlow_InferOp<"avg_pool2d_backward", [OFlow_Sbp]> {
  let summary = "gradient of avg_pool2d";
  let description = [{
    Spreads each window's gradient evenly over the window's elements (with
    the divisor the forward op used); the result has `input_shape`.
  }];
  let arguments = (ins OFlow_FloatTensor:$grad_output,
                       DenseI64ArrayAttr:$input_shape,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
  let results = (outs OFlow_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output attr-dict `:` functional-type(operands, results)";
}

def OFlow_GatherBackwardOp : OFlow_InferOp<"gather_backward", [OFlow_Sbp]> {
  let summary = "gradient of gather: scatter-add slices back to their rows";
  let description = [{
    The result has `data_shape`; slice j of `grad_output` is added to row
    `indices[j]` (negative indices count from the end) along `axis`.

    ```mlir
    %g = oflow.gather_backward %dy, %tokens {axis = 0 : i64, data_shape = array<i64: 80, 64>}
        : (tensor<8x64x64xf32>, tensor<8x64xi64>) -> tensor<80x64xf32>
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$grad_output, OFlow_IndexTensor:$indices,
                       DenseI64ArrayAttr:$data_shape,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs OFlow_FloatTensor:$grad_data);
  let assemblyFormat = "$grad_output `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def OFlow_SliceBackwardOp : OFlow_InferOp<"slice_backward", [OFlow_Sbp]> {
  let summary = "gradient of slice: zeros of `input_shape` with the slice filled in";
  let arguments = (ins OFlow_Tensor:$grad_output, DenseI64ArrayAttr:$input_shape,
                       DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$sizes,
                       DenseI64ArrayAttr:$strides);
  let results = (outs OFlow_Tensor:$grad_input);
  let assemblyFormat = "$grad_output attr-dict `:` functional-type(operands, results)";
}

def OFlow_AttentionBackwardOp : OFlow_InferOp<"attention_backward", [OFlow_Sbp]> {
  let summary = "gradients of oflow.attention with respect to query, key and value";
  let description = [{
    The forward op's operands, its `output` and `logsumexp`, and the
    output's gradient; attributes as on `oflow.attention`. The
    probabilities are recomputed from `logsumexp` (FlashAttention-2's
    backward pass), with the same operand rounding as the forward op.

    ```mlir
    %dq, %dk, %dv = oflow.attention_backward %q, %k, %v, %o, %lse, %do
        {causal, operand_type = bf16, scale = 1.250000e-01 : f32}
        : (tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>,
           tensor<2x4x64x16xf32>, tensor<2x4x64xf32>, tensor<2x4x64x16xf32>)
        -> (tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>)
    ```
  }];
  let arguments = (ins OFlow_FloatTensor:$query, OFlow_FloatTensor:$key,
                       OFlow_FloatTensor:$value, OFlow_FloatTensor:$output,
                       OFlow_FloatTensor:$logsumexp,
                       OFlow_FloatTensor:$grad_output, F32Attr:$scale,
                       UnitAttr:$causal, TypeAttr:$operand_type);
  let results = (outs OFlow_FloatTensor:$grad_query, OFlow_FloatTensor:$grad_key,
                      OFlow_FloatTensor:$grad_value);
  let assemblyFormat = "$query `,` $key `,` $value `,` $output `,` $logsumexp `,` "
                       "$grad_output attr-dict `:` functional-type(operands, results)";
}

class OFlow_LossBackwardOp<string mnemonic, string doc>
    : OFlow_InferOp<mnemonic, [OFlow_Sbp]> {
  let summary = "gradient of " # doc # " with respect to its first operand";
  let description = [{
    `grad_loss` is the loss's incoming gradient: a scalar for `mean` / `sum`,
    per-sample ([N, d...]) for `none`. The result has the first operand's
    shape; ignored labels get zero gradient, and `mean` divides by the
    number of labels not ignored (as the forward op does).
  }];
  let arguments = (ins OFlow_FloatTensor:$input, OFlow_IndexTensor:$labels,
                       OFlow_FloatTensor:$grad_loss,
                       OFlow_LossReduction:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs OFlow_FloatTensor:$grad_input);
  let assemblyFormat = "$reduction $input `,` $labels `,` $grad_loss attr-dict `:` "
                       "functional-type(operands, results)";
}

// softmax(logits) - onehot(labels), scaled by grad_loss (/ count for mean).
def OFlow_SoftmaxCrossEntropyBackwardOp
    : OFlow_LossBackwardOp<"softmax_cross_entropy_backward", "softmax_cross_entropy">;
// -onehot(labels), scaled by grad_loss (/ count for mean).
def OFlow_NllLossBackwardOp : OFlow_LossBackwardOp<"nll_loss_backward", "nll_loss">;

#endif // OFLOW_TRAINING_OPS_TD
