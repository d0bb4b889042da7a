//===- OFlowBoxingOps.td - collectives that convert SBP layouts -*- tablegen -*-===//
//
// Boxing: the ops `oflow-insert-boxing` places where a producer's nd-SBP
// differs from what a consumer runs with. Each changes the layout on ONE mesh
// axis (`mesh_axis`); the other axes' entries pass through. Before
// `oflow-partition` operands and results carry global shapes (the types
// agree); after it they carry each rank's local shapes. Included by
// OFlowOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_BOXING_OPS_TD
#define OFLOW_BOXING_OPS_TD

class OFlow_BoxingOp<string mnemonic, list<Trait> traits = []>
    : OFlow_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def OFlow_AllReduceOp : OFlow_BoxingOp<"all_reduce"> {
  let summary = "P -> B on one mesh axis: sum (or max) over the axis's group";
  let description = [{
    Several operands form one bucket: one collective over their concatenated
    bytes (communication fusion); each result is its operand reduced.

    ```mlir
    %b = oflow.all_reduce %p {mesh_axis = 0 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Variadic<OFlow_Tensor>:$inputs, I64Attr:$mesh_axis,
                       UnitAttr:$max);
  let results = (outs Variadic<OFlow_Tensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $outputs)";
}

def OFlow_ReduceScatterOp : OFlow_BoxingOp<"reduce_scatter"> {
  let summary = "P -> S(axis) on one mesh axis";
  let description = [{
    Several operands form one bucket (`oflow-bucket-collectives`, for small
    tensors split along `axis` 0): one collective over their packed bytes;
    each result is its operand reduced and scattered.
  }];
  let arguments = (ins Variadic<OFlow_Tensor>:$inputs, I64Attr:$mesh_axis,
                       I64Attr:$axis, UnitAttr:$max);
  let results = (outs Variadic<OFlow_Tensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $outputs)";
  let extraClassDeclaration = [{
    ::mlir::Value getInput() { return getInputs().front(); }
    ::mlir::Value getOutput() { return getOutputs().front(); }
  }];
}

def OFlow_AllGatherOp : OFlow_BoxingOp<"all_gather"> {
  let summary = "S(axis) -> B on one mesh axis";
  let description = [{
    Several operands form one bucket, as for `oflow.reduce_scatter`.
  }];
  let arguments = (ins Variadic<OFlow_Tensor>:$inputs, I64Attr:$mesh_axis,
                       I64Attr:$axis);
  let results = (outs Variadic<OFlow_Tensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $outputs)";
  let extraClassDeclaration = [{
    ::mlir::Value getInput() { return getInputs().front(); }
    ::mlir::Value getOutput() { return getOutputs().front(); }
  }];
}

def OFlow_AllToAllOp : OFlow_BoxingOp<"all_to_all"> {
  let summary = "S(source_axis) -> S(axis) on one mesh axis";
  let arguments = (ins OFlow_Tensor:$input, I64Attr:$mesh_axis,
                       I64Attr:$source_axis, I64Attr:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $output)";
}

def OFlow_LocalSliceOp : OFlow_BoxingOp<"local_slice"> {
  let summary = "B -> S(axis) on one mesh axis: each rank keeps its piece";
  let arguments = (ins OFlow_Tensor:$input, I64Attr:$mesh_axis, I64Attr:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $output)";
}

def OFlow_BroadcastToPartialOp : OFlow_BoxingOp<"broadcast_to_partial"> {
  let summary = "B -> P on one mesh axis";
  let description = [{
    P(sum): coordinate 0 keeps the value, the others hold zeros. P(max)
    (`max`): every rank keeps the value.
  }];
  let arguments = (ins OFlow_Tensor:$input, I64Attr:$mesh_axis, UnitAttr:$max);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $output)";
}

def OFlow_SplitToPartialOp : OFlow_BoxingOp<"split_to_partial"> {
  let summary = "S(axis) -> P(sum) on one mesh axis: zero-pad to the full shape";
  let arguments = (ins OFlow_Tensor:$input, I64Attr:$mesh_axis, I64Attr:$axis);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $output)";
}

def OFlow_SbpHintOp : OFlow_Op<"sbp_hint", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "the user's layout for a value";
  let description = [{
    Pins the nd-SBP of its result; `oflow-infer-sbp` honours it and
    `oflow-insert-boxing` replaces the hint by its (converted) operand.

    ```mlir
    %h = oflow.sbp_hint %x {sbp = #oflow.nd_sbp<[S(0), B]>} : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins OFlow_Tensor:$input, OFlow_NdSbpAttr:$sbp);
  let results = (outs OFlow_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def OFlow_ShardOffsetOp : OFlow_Op<"shard_offset", [Pure]> {
  let summary = "where this rank's piece starts along a split tensor axis";
  let description = [{
    After partitioning: the global index of this rank's first element along
    a tensor axis split by `mesh_axes` (in mesh-axis order, the earlier the
    more significant), each piece `piece` long. Used where a local op needs
    global positions (a row-split embedding table masks the indices it does
    not hold).

    ```mlir
    %off = oflow.shard_offset {mesh_axes = array<i64: 0>, piece = 20 : i64} : tensor<i64>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$mesh_axes, I64Attr:$piece);
  let results = (outs 0DTensorOf<[I64]>:$offset);
  let assemblyFormat = "attr-dict `:` type($offset)";
}

def OFlow_MeshCoordOp : OFlow_Op<"mesh_coord", [Pure]> {
  let summary = "this rank's coordinate on a mesh axis (lowering only)";
  let arguments = (ins I64Attr:$mesh_axis);
  let results = (outs Index:$coord);
  let assemblyFormat = "attr-dict";
}

#endif // OFLOW_BOXING_OPS_TD
