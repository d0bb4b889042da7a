//===- Passes.td - SBP passes ------------------------------*- tablegen -*-===//
#ifndef OFLOW_SBP_PASSES_TD
#define OFLOW_SBP_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestSbpSignatures : Pass<"oflow-test-sbp-signatures"> {
  let summary = "print each op's SBP signatures as remarks (for tests)";
  let description = [{
    For every op implementing `SbpSignatureOpInterface` and every axis of
    `mesh`, emits one remark listing the op's signatures on that axis (after
    the divisibility check against that axis's size):

    ```
    remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | ...
    ```

    An op that computes on tensors but lists no signatures is an error, so a
    test over a whole training graph fails when an op is added without them.
  }];
  let options = [
    ListOption<"mesh", "mesh", "int64_t",
               "mesh axis sizes (one remark per axis); default: one axis of 2">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def VerifySbp : Pass<"oflow-verify-sbp", "::mlir::ModuleOp"> {
  let summary = "check that every op runs one of its SBP signatures";
  let description = [{
    After SBP choice every value has an nd-SBP (`oflow.sbp` on the op
    that defines it, or on the function argument) for the module's
    `oflow.mesh` (one device by default). For every op with SBP signatures,
    the entries of its operands and results on each mesh axis must form one
    of the op's signatures for that axis's size; otherwise boxing is missing.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def DecomposeForSbp : Pass<"oflow-decompose-for-sbp", "::mlir::ModuleOp"> {
  let summary = "rewrite means, mean losses and batch norm into sums (meshes only)";
  let description = [{
    On a mesh of more than one device, rewrites the ops whose split forms
    would need a collective inside into sums and elementwise ops whose split
    forms need none: `reduce_mean` becomes `reduce_sum` times 1/count; a mean
    loss becomes the summed loss divided by the (global) label count, also in
    its backward op; `batch_norm_training` becomes its statistics (sums over
    the batch and spatial axes) and the normalization. The planner then sees
    the sums over a split batch as P, and boxing all-reduces them.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def FlattenState : Pass<"oflow-flatten-state", "::mlir::ModuleOp"> {
  let summary = "store sharded state flat where its shape does not divide the mesh (FSDP)";
  let description = [{
    `shard-state` (as in `oflow-infer-sbp`) splits each variable along a
    tensor axis that a mesh axis divides; a 1600x1600 weight on 128x8
    devices finds none for the 128 and stays whole across nodes. PyTorch's
    FSDP stores such state flat. Here a variable that `shard-state` would
    split into more pieces flat than in its own shape is stored as the 2-D
    row-major view [devices, n/devices] of its n elements, which every mesh
    axis then splits along its first dimension; where the devices do not
    divide n, the last row is padded with zeros if a row holds at least 4096
    elements, else the rows are gcd(n, devices). The elements keep their
    order, so checkpoints, weight files and dumps read it in its own shape
    (the variable's `oflow.view`).

    Its reads are reshaped to its own shape for their other users, and the
    optimizer's update (the elementwise ops between the group's reads and
    its writes: parameter, gradient and slots) runs on the flat view, so
    that the planner splits it like the state. A grads entry returns the
    parameter's gradient flat too (result attribute `oflow.view`). A
    variable with a hint (`sbp=`) keeps its shape unless `flat` names it
    (a plan file written from a flat plan: its `stored_flat`). Groups whose
    update is not elementwise are left as they are.
  }];
  let options = [
    ListOption<"hints", "sbp", "std::string",
               "NAME=LAYOUT layouts for variables and inputs (as oflow-infer-sbp)">,
    Option<"shardState", "shard-state", "std::string", /*default=*/"\"none\"",
           "as oflow-infer-sbp's: none, optimizer, all or node">,
    ListOption<"flat", "flat", "std::string",
               "variables to store flat whatever their hints say (a plan file's "
               "`stored_flat`)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def InferSbp : Pass<"oflow-infer-sbp", "::mlir::ModuleOp"> {
  let summary = "choose an nd-SBP for every value from hints and a cost model";
  let description = [{
    For the module's `oflow.mesh`: variables get their hint or B (an
    optimizer slot follows its parameter); batched entry arguments get their
    hint or S(0) over every mesh axis that divides the batch (data
    parallelism), scalars B. Then, in program order, each op takes the
    nd-signature (one of its signatures per mesh axis, jointly valid for the
    shapes) with the least estimated time: its local compute plus the
    alpha-beta time of the boxing its operands need, plus that of converting
    its results to what hints, variable writes and returns require. Signatures
    that need a collective inside are not used (`oflow-decompose-for-sbp`
    removes the common ones). Results get `oflow.sbp`, the layouts the op
    expects its operands in `oflow.operand_sbp`.

    Hints: `sbp=NAME=LAYOUT,...` with NAME a variable or input name (a glob
    like `*.weight` is allowed) and LAYOUT one entry per mesh axis joined by
    `;` or `/` in pass options (`S(0);B`), e.g.
    `oflow-infer-sbp{sbp=fc1.weight=S(0)}`; `oflow.sbp_hint` ops in the IR.

    Compute is priced on `device` (a built-in profile, `cpu`, `h200`, `h100`,
    `a100`, or a JSON profile file: the `--device` of the kernel report) at
    the GEMM rate of `precision`; collectives on each mesh axis's link
    (`#oflow.mesh<..., links = [...]>`).

    `shard-state` splits variables that have no hint over the mesh, each
    mesh axis along the first tensor axis it divides (else B), so that
    memory per device falls: the optimizer slots (their updates then run on
    pieces: the gradient is reduce-scattered and the new parameter
    all-gathered, what ZeRO-2 sends), or the parameters too (ZeRO-3), or
    both over the last mesh axis alone (`node`: ZeRO-3 among a node's
    devices, data parallelism between nodes, as PyTorch's HSDP).

    `tensor-parallel=none` keeps every op but the optimizer update from
    using a parameter split (nor one only transposed, reshaped or cast): a
    split-stored parameter is all-gathered where it is used, and the data
    stays split along the batch, which is data parallelism or ZeRO exactly.
    By default (`cost`) an op may use a slice of a whole parameter with
    gathered activations where the cost model finds that cheaper.

    `planner=ilp` then re-chooses the layouts of the whole function at once
    (Alpa's integer program: per op one of its nd-signatures, priced by
    compute and by the boxing to fixed layouts; per pair of ops joined by
    values, the boxing between their choices), coarsened exactly (ops with
    one or two neighbours folded away) and, with `tie-layers`, with the
    same op of repeated layers solved once; the rest goes to COIN-OR CBC,
    started from the greedy plan. The function gets `oflow.planner`: the
    program's seconds for its plan and for the greedy one, whether it is
    proven optimal, and the sizes the solver saw.
  }];
  let options = [
    ListOption<"hints", "sbp", "std::string",
               "NAME=LAYOUT layouts for variables and inputs">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "device profile compute is priced on: cpu, h200, h100, a100 or a "
           "JSON file">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "the GEMMs' precision (fp32, tf32, bf16, fp16)">,
    Option<"shardState", "shard-state", "std::string", /*default=*/"\"none\"",
           "variables without a hint: none (B; slots follow their "
           "parameter), optimizer (optimizer slots split over the mesh: "
           "ZeRO-1/2), all (parameters too, slots following: ZeRO-3), node "
           "(parameters and slots split over the last mesh axis only: ZeRO-3 "
           "inside a node, whole across nodes, as PyTorch's HSDP)">,
    Option<"planner_", "planner", "std::string", /*default=*/"\"greedy\"",
           "greedy (in program order) or ilp (the whole function as an "
           "integer program, solved by CBC from the greedy plan)">,
    Option<"tensorParallel", "tensor-parallel", "std::string",
           /*default=*/"\"cost\"",
           "cost (an op may use a slice of a parameter where the cost model "
           "finds that cheaper: tensor parallelism by cost) or none (every "
           "op but the optimizer update uses parameters whole, all-gathering "
           "a split one first: data parallelism and ZeRO as written)">,
    Option<"tieLayers", "tie-layers", "bool", /*default=*/"true",
           "ilp: ops of repeated layers (node names equal up to the layer "
           "index) take the same layouts">,
    Option<"ilpSeconds", "ilp-seconds", "double", /*default=*/"30",
           "ilp: the solver's time limit per entry (past it, its best plan "
           "so far)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def InsertBoxing : Pass<"oflow-insert-boxing", "::mlir::ModuleOp"> {
  let summary = "insert the collectives that convert between chosen nd-SBPs";
  let description = [{
    For every operand whose value's nd-SBP differs from the op's
    `oflow.operand_sbp`, inserts the cheapest chain of one-mesh-axis boxing
    ops (all-reduce, reduce-scatter, all-gather, all-to-all, local slice,
    B->P, S->P) from the boxing planner; a value converted twice to the same
    layout is converted once. Removes `oflow.operand_sbp` and the
    `oflow.sbp_hint` ops, so that `oflow-verify-sbp` holds.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def BucketCollectives : Pass<"oflow-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "fuse all-reduces, and small reduce-scatters and all-gathers, into buckets";
  let description = [{
    Groups the single-operand `oflow.all_reduce`s of each function (same
    mesh axis, same reduction, same element type) in program order into
    buckets of at most `bucket-mb` MiB; each bucket becomes one multi-operand
    all-reduce placed right after the last of its operands is computed (so
    it is issued as soon as its last gradient is ready).

    Small pieces bucket the same way, so that their latency is paid once
    (ZeRO-3's biases and norm weights, stored flat and split over every
    device): `oflow.reduce_scatter`s as all-reduces, along any tensor axis
    (the lowering makes each rank's part of a member one run), pieces of
    at most 1 MiB or what the mesh axis's link moves in two latencies (4.2
    MB on InfiniBand), a quarter of the bucket at most; `oflow.all_gather`s
    of a weight along its first axis (or one after unit dims only), at most
    1 MiB, of a
    variable's read (through views and earlier gathers) at the first
    member, each later member's read and views moved up to it. A read does
    not move past a write of its variable. The gathers of ZeRO-1/2's
    updated parameters (whose results are only stored, or gathered on the
    next mesh axis only to be stored) bucket like the reductions, at the
    last member. Under `--micro-batches` (a
    sequential mesh axis) scatters and gathers keep one operand each.
    Runs after `oflow-regather-for-backward`, so that the backward pass's
    gathers bucket among themselves.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "largest bucket in MiB (0: no fusion)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def RegatherForBackward : Pass<"oflow-regather-for-backward", "::mlir::ModuleOp"> {
  let summary = "gather split weights again for the backward pass (ZeRO-3's reshard after forward)";
  let description = [{
    After boxing, in each training entry: a variable split over the mesh
    (ZeRO-3, `shard-state=all|node`) is all-gathered where the forward pass
    uses it, and the backward pass reads the same gathered value, so every
    gathered weight stays whole from its forward use to its backward use:
    all of them at once at the forward/backward boundary. This pass gives
    the backward uses their own copy of the gather chain (the all-gathers
    and views between `oflow.read_variable` and the value), placed right
    before the first backward use, as PyTorch FSDP's
    `reshard_after_forward` and DeepSpeed's ZeRO-3 do: the forward copy dies
    at its last forward use, and each weight costs one more all-gather per
    step. The forward part ends at the op that reduces an activation to
    the loss.

    Copies carry `oflow.regather`, so that CSE does not merge them back
    into the forward chain. Chains are at most 4 ops of one operand each,
    free of side effects, with at least one all-gather.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def Partition : Pass<"oflow-partition", "::mlir::ModuleOp"> {
  let summary = "global shapes to each rank's local shapes (SPMD)";
  let description = [{
    Rewrites every tensor type to the local piece of its nd-SBP, updates the
    shape attributes that must follow (reshape and expand targets), keeps the
    nd-SBP of entry arguments, results and variables for the program
    interface, drops the per-op `oflow.sbp`, and marks the module
    `oflow.partitioned`. Boxing ops then convert local pieces on their mesh
    axis's process group.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def UnrollMicroBatches : Pass<"oflow-unroll-micro-batches", "::mlir::ModuleOp"> {
  let summary = "gradient accumulation: the micro-batch mesh axis becomes time";
  let description = [{
    `--micro-batches K` plans the step on one more mesh axis, the last, of
    K devices linked `sequential`: data parallelism over micro-batches. After
    oflow-partition, this pass runs that axis's K pieces one after the other
    on each device: values B on the axis are computed once, values S on it
    once per micro-batch (a lane), and values P on it are summed as the lanes
    produce them (gradient accumulation: one accumulator, and the other
    axes' collectives run once per step on it). Boxing on the axis becomes
    local sums, concatenations and slices; the ops are then ordered lane by
    lane so that one micro-batch's activations are live at a time. The axis
    leaves the mesh and every nd-SBP. A no-op on meshes without such an
    axis.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // OFLOW_SBP_PASSES_TD
