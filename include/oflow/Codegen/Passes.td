//===- Passes.td - oflow code generation passes ------------*- tablegen -*-===//
#ifndef OFLOW_CODEGEN_PASSES_TD
#define OFLOW_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def BindProgramInterface : Pass<"oflow-bind-program-interface", "mlir::ModuleOp"> {
  let summary = "place variables, inputs and outputs in the state and io buffers";
  let description = [{
    Gives the program its binary interface (runtime/include/oflow_rt/abi.h):
    every `oflow.variable` gets a byte offset in the state buffer
    (`oflow.state_offset`), every entry argument and result a byte offset in
    the io buffer (recorded in the module attribute `oflow.io`), and each entry
    function (`oflow.entry`) becomes
    `(%state: memref<?xi8>, %io: memref<?xi8>, %arena: memref<?xi8>) -> ()`
    with a C interface: arguments and variable reads become read-only tensors
    of `memref.view`s, results and variable writes are materialized into their
    views. Integer inputs get the range their consumers accept
    (`oflow.int_range`: embedding rows, class count) for synthetic data.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::arith::ArithDialect"];
}

def PlanMemory : Pass<"oflow-plan-memory", "mlir::ModuleOp"> {
  let summary = "place every buffer of the entry functions in one static arena";
  let description = [{
    After bufferization: each top-level `memref.alloc` of an entry function is
    live from its allocation to the last use of any view of it; buffers whose
    lifetimes do not overlap share bytes of the arena (the third entry
    argument). Offsets are chosen greedily, largest buffer first, at the
    lowest address that fits. Records `oflow.arena_bytes` and, per entry,
    `oflow.memory_plan` = {peak, naive, lower_bound} in bytes (naive: every
    buffer its own bytes; lower bound: the most bytes live at one time).
    In checking mode (the io scalar `poison` is 1 at run time) every region is
    filled with 0xFF bytes (NaN for floats) right after its value dies, so a
    planning error shows up as NaN instead of plausible numbers.
    With `reuse=false` every buffer gets bytes of its own (a debugging aid:
    a result that changes with it points at buffer sharing).
    With `host-flag` (the GPU targets, whose io buffer is device memory) the
    flag comes from the runtime call `oflow_rt_check_memory()` instead, so
    the `scf.if`s around the fills are host conditions and no poisoning
    kernel launches in a normal run.

    With `by-level` (the GPU targets) a buffer's lifetime is counted in
    dependence levels instead of program steps: each top-level op's level
    is one before the lowest later op that accesses a buffer it accesses,
    one of the two writing it (as late as possible, one of the two
    schedules oflow-fuse-launches tries), and buffers share bytes only when
    every access of one is at a lower level than every access of the other.
    Sharing then adds no ordering the data did not already impose, so
    independent kernels still share a launch: in program steps, two buffers
    of independent kernels reusing each other's bytes chain those kernels
    one after the other. As late as possible, what the backward pass makes
    from the forward pass's values (casts, transposes) lives from just
    before its use, as in program order; as soon as possible it would live
    from the forward pass on (GPT-2 small: an arena of 23.4 instead of
    14.9 GB).
  }];
  let options = [Option<"reuse", "reuse", "bool", "true",
                        "let buffers whose lifetimes do not overlap share bytes">,
                 Option<"hostFlag", "host-flag", "bool", "false",
                        "ask the runtime (oflow_rt_check_memory) whether to poison">,
                 Option<"byLevel", "by-level", "bool", "false",
                        "lifetimes in dependence levels, not program steps "
                        "(the GPU targets: see the description)">];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
                           "mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect"];
}

def LinalgToBlas : Pass<"oflow-linalg-to-blas", "mlir::ModuleOp"> {
  let summary = "f32 linalg.matmul / batch_matmul on memrefs -> runtime BLAS calls";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` with their default
    or transposed indexing maps (A [m, k] or [k, m], B [k, n] or [n, k]),
    f32 operands (or bf16/f16 A and B) and unit inner strides by calls to
    `oflow_rt_sgemm` / `oflow_rt_sgemm_batched` (`oflow_rt_gemm_lowp*`)
    with the matching transpose flags: C += op(A) * op(B), beta = 1, or
    beta = 0 when C was just zero-filled (the fill is dropped). The runtime
    implements them with OpenBLAS or cuBLASLt. Others stay loops.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def LowerRuntimeCalls : Pass<"oflow-lower-runtime-calls", "mlir::ModuleOp"> {
  let summary = "collective placeholders on memrefs -> runtime calls with addresses";
  let description = [{
    The boxing lowering calls placeholders `__oflow_rt_<kind>_<dtype>` that
    take the collective's two buffers as memrefs, so that bufferization and
    the memory planner place them like any other buffer. Once they are
    placed, each call becomes a call of `oflow_rt_<kind>` (oflow_rt/abi.h)
    with the buffers' addresses (index) in their place.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def Autocast : Pass<"oflow-autocast", "mlir::func::FuncOp"> {
  let summary = "f32 GEMMs read bf16/f16-rounded operands (mixed precision)";
  let description = [{
    `--precision bf16|fp16`: each f32 `linalg.matmul` and
    `linalg.batch_matmul` on static tensors (forward and backward alike) gets
    its two operands rounded to the precision by an elementwise
    `linalg.generic` (`arith.truncf`) and accumulates into its unchanged f32
    output, as PyTorch's autocast runs matmuls; every other op, the weights
    (f32 master copies) and the optimizer stay f32.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "fp32 (no change), bf16 or fp16">,
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect"];
}

def DuplicateInitFills : Pass<"oflow-duplicate-init-fills", "mlir::func::FuncOp"> {
  let summary = "one linalg.fill per destination it initialises";
  let description = [{
    CSE merges the identical zero fills that start every matmul and
    reduction into one, and one-shot bufferization then fills a buffer once
    and copies it into each destination. Run right before bufferization,
    this gives each use of a `linalg.fill` on tensors as a DPS init (a
    destination written in place) its own fill on its own `tensor.empty`,
    so that each destination is filled where it lives: a memset instead of
    a fill plus copies, and a zero-filled GEMM output that
    oflow-linalg-to-blas can turn into the call's beta = 0. A `tensor.empty`
    that CSE made the destination of many ops is likewise given one copy
    per destination: shared, one-shot bufferization's analysis compares
    every pair of writes into it (quadratic in its uses).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect"];
}

def DropRecomputeBarriers : Pass<"oflow-drop-recompute-barriers", "mlir::func::FuncOp"> {
  let summary = "remove oflow-recompute's barriers after the last CSE";
  let description = [{
    `oflow-recompute` routes the operands of each recomputed op through a
    `bufferization.alloc_tensor copy(%x) {oflow_recompute_barrier}`, which
    CSE never merges, so the copy of the computation stays apart from its
    original through lowering and the CSE runs that follow. Run after the
    last CSE, right before bufferization, this replaces each barrier by %x
    (no copy is made). `oflow-unroll-micro-batches` puts the same barrier,
    marked `oflow_accumulate_barrier`, on each gradient accumulator before
    the next micro-batch adds to it, so that elementwise fusion (which runs
    before this pass) cannot merge the chain of additions into the
    optimizer update and keep every micro-batch's gradient alive until then.
  }];
}

def FoldGemmTransposes : Pass<"oflow-fold-gemm-transposes", "mlir::func::FuncOp"> {
  let summary = "transposed 2-D GEMM operands read through the matmul's indexing map";
  let description = [{
    A `linalg.matmul` on tensors with the default indexing maps whose A or B
    is a `linalg.transpose` (permutation [1, 0]), or an elementwise cast
    (one input, identity maps, the cast's only use) of one, reads the
    transpose's input instead, through a transposed indexing map that
    oflow-linalg-to-blas turns into the BLAS call's trans flag; a cast is
    rebuilt over the untransposed input. A linear layer's weight then needs
    no transposed copy per step (on the GPU a kernel per weight, and an
    arena scratch whose reuse ordered one GEMM's preparation after the
    previous GEMM). Transposes and casts left without users are erased.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def StoreResultsInPlace : Pass<"oflow-store-results-in-place", "mlir::func::FuncOp"> {
  let summary = "results stored into the program's buffers are computed there";
  let description = [{
    Run right before one-shot bufferization, after oflow-bind-program-interface.
    For each `bufferization.materialize_in_destination %r in writable %view`
    of a `memref.view` of a function argument (state, io) that no other view
    overlaps, where %r is the result of a linalg op that overwrites its init
    without reading it: the init becomes the view's value (its one
    `to_tensor ... restrict`, made `writable`, or a new one when the view is
    only written). Bufferization then computes the optimizer's new
    parameters and moments, and the gradients and outputs, where they are
    stored instead of in the arena followed by a copy, whenever nothing reads
    the old contents afterwards (otherwise it still allocates, as before).
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def MergeSiblingReductions : Pass<"oflow-merge-sibling-reductions", "mlir::func::FuncOp"> {
  let summary = "reductions over the same loops that read the same data -> one generic";
  let description = [{
    Two `linalg.generic` reductions on tensors with the same static loop
    extents and iterator types, the same data read (one input, the same
    value through the same indexing map, a permutation of all the loops: a
    shared broadcast operand such as a norm's weight does not count) and
    neither depending on the other become
    one generic with the outputs of both: the shared data is read once, each
    point updating every accumulator. A batch norm's statistics (the shifted
    sum and sum of squares) and the two sums of its backward pass (`sum(g)`,
    `sum(g * xhat)`) are such siblings: each becomes one pass over its
    input (issue #17). A layer norm's two row sums likewise. Each output
    keeps its combiner and its order of terms, so every result has the same
    bits as before.

    The merged op stands where the earlier sibling stood, so the later one
    must read nothing defined after that; placing it at the later one would
    keep what only the earlier one reads (an activation) alive longer. On
    the GPU (`gpu-strategies`), reductions a dedicated kernel strategy takes
    one output at a time are left alone: rows, every parallel loop before
    every reduction loop (oflow-gpu-row-reductions, directly or on the
    partials oflow-split-reductions makes of them), and an innermost
    parallel loop (oflow-gpu-column-reductions).
  }];
  let options = [
    Option<"gpuStrategies", "gpu-strategies", "bool", "false",
           "leave alone the reductions the GPU's row and column strategies take">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def SplitReductions : Pass<"oflow-split-reductions", "mlir::func::FuncOp"> {
  let summary = "long reductions -> partial reductions plus a fold";
  let description = [{
    A `linalg.generic` on tensors with static loops, one output and one
    combiner with a neutral element (add, mul, max, min, ...) gets one
    reduction loop of extent N split into k x N/k (k divides N): a first
    generic computes k partial results (tensor `k x out`, started from the
    neutral element) with k as a new outermost parallel loop, and a second
    folds them into the original output. Two reasons to split:

    * occupancy (GPU): when the parallel loops have fewer than
      `target-threads` points (0: never), k is the largest divisor that keeps
      to `target-threads` with N/k >= `min-chunk`, else the smallest that
      exceeds it by at most 8x;
    * accuracy (every target): a float add whose sequential chain (the
      reduction extent) exceeds `max-chain` (0: never) is split at its
      outermost splittable loop, and the partials and folds again, until no
      chain is longer where the loop extents allow (cascade summation: the
      error of n sequential f32 adds grows like n ulps).

    Runs before bufferization, so the memory plan places the partials.
  }];
  let options = [
    Option<"targetThreads", "target-threads", "int64_t", "65536",
           "split until the partial stage has about this many output points (0: no occupancy split)">,
    Option<"minChunk", "min-chunk", "int64_t", "32",
           "the least number of reduced elements per partial result">,
    Option<"maxChain", "max-chain", "int64_t", "0",
           "longest sequential chain of float additions (0: no limit)">,
    Option<"warpRows", "warp-rows", "bool", "false",
           "leave whole the reductions oflow-gpu-row-reductions runs one warp per row">,
    Option<"columnWarps", "column-warps", "int64_t", "1",
           "warps sharing the reduced elements of a reduction whose innermost loop is parallel (oflow-gpu-column-reductions: 8): its chain is the extent over this">,
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect"];
}

def LowerReductions : Pass<"oflow-lower-reductions", "mlir::func::FuncOp"> {
  let summary = "linalg reductions on buffers -> loops with register accumulators";
  let description = [{
    A `linalg.generic` on memrefs with static loops whose innermost loop is
    a reduction (softmax, layer norm, losses, batch norm's channel sums over
    N, H, W) becomes parallel `scf.for` loops around reduction `scf.for`
    loops carrying the accumulators as `iter_args`: each output element is
    loaded once and stored once, so LLVM can keep it in a register and
    vectorize the reduction (its float ops get `reassoc`). The parallel loops
    are hoisted outside; the reduction loops keep their order, so each output
    adds its terms in the op's order. Other linalg ops (an innermost parallel
    loop: the loop order is the cache's) are left to convert-linalg-to-loops.

    With `parallel-loops`, the parallel loops become one `scf.parallel`
    (the GPU's threads, or the CPU's with oflow-parallelize-nests). With
    `any-order` (the GPU target) any loop order is accepted, `linalg.index`
    included: the reduction loops always run inside the thread.
  }];
  let options = [
    Option<"parallelLoops", "parallel-loops", "bool", "false",
           "the parallel loops as one scf.parallel">,
    Option<"anyOrder", "any-order", "bool", "false",
           "also lower reductions whose innermost loop is parallel, and linalg.index (GPU)">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
}

def VectorizeElementwise : Pass<"oflow-vectorize-elementwise", "mlir::ModuleOp"> {
  let summary = "f32 linalg generics on buffers -> loops over vector tiles";
  let description = [{
    Tiles each f32 `linalg.generic` on memrefs with static loops whose
    innermost extent divides by 16 (else 8: the width W) and vectorizes each
    tile (`vector.transfer_read`, vector arithmetic,
    `vector.multi_reduction`, `vector.transfer_write`), which needs no alias
    analysis from LLVM: generics whose innermost loop is parallel as
    1 x ... x W tiles (outer reduction loops then add a vector of outputs per
    tile), generics with one innermost reduction loop (row reductions)
    whose row divides by 16 as 1 x ... x C tiles, C the largest multiple of
    16 up to 256 that divides the row. Bodies that read memory (gathers)
    and reductions that fold a value not varying along the row (a count)
    stay scalar. `i1` inputs are read
    through `i8` twins of their buffers (a module pass: a constant mask gets
    an `i8` global).

    With `parallel-loops`, the loops over the tiles of the op's outer
    parallel dimensions are one `scf.parallel` (oflow-parallelize-nests).
  }];
  let options = [
    Option<"parallelLoops", "parallel-loops", "bool", "false",
           "the outer parallel tile loops as one scf.parallel">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def ExpandStridedCopies : Pass<"oflow-expand-strided-copies", "mlir::func::FuncOp"> {
  let summary = "memref.copy between non-contiguous memrefs -> linalg.copy";
  let description = [{
    The LLVM lowering turns a copy between strided memrefs into a call to
    `memrefCopy` from MLIR's C runner library, which the executable does not
    link. As a `linalg.copy` it becomes loops instead (contiguous copies stay
    `memref.copy` and become memcpy). With `all-copies` (the CUDA target,
    where no host code may touch device memory) every copy becomes a
    `linalg.copy`, so that it runs as a kernel.
  }];
  let options = [Option<"allCopies", "all-copies", "bool", "false",
                        "expand contiguous copies too">];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def DropUnitLoops : Pass<"oflow-drop-unit-loops", "mlir::func::FuncOp"> {
  let summary = "loops of extent 1 removed from top-level elementwise and reduction generics";
  let description = [{
    Upstream's unit-extent-dimension folding (`linalg-fold-unit-extent-dims`,
    with reshapes around the operands), applied to the `linalg.generic`s on
    tensors at the top level of a function. Statistics kept with keepdims
    (a layer norm's mean and 1/std as [rows, 1], and the reductions over
    [rows, 1, columns] that autodiff builds from them) then run over the
    same loops as the row reductions they come from, which
    oflow-gpu-row-reductions needs to put a normalization's backward in one
    warp-per-row kernel instead of one kernel per statistic. Generics whose
    maps are not plain loop indices (im2col's windows) are left alone, and
    so are generics nested in loops (an embedding gradient's per-token
    scatter), whose slices of one row bufferize in place only as they are.
    The CUDA targets run it before bufferization.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

def HoistRowConsumers : Pass<"oflow-hoist-row-consumers", "mlir::func::FuncOp"> {
  let summary = "row-wise generics on tensors moved up next to their row reduction";
  let description = [{
    On tensors, before bufferization (the CUDA targets): after each
    top-level row reduction the warp-row strategy runs (parallel loops, then
    reduction loops; see oflow-gpu-row-reductions), the generics over the
    same rows and columns, or over the same rows alone, or reducing the same
    rows, that follow it within 24 ops move up next to it (with the
    `tensor.empty`, fills, reshapes and constants they need), provided every
    other operand is defined before. A layer norm's backward then reads: the
    row statistics, the input gradient and its rounding for the next GEMM,
    then the weight and bias gradients' column sums, and
    oflow-gpu-row-reductions makes the first three one kernel. Without the
    move, the memory plan could give the column sums' partials the bytes of
    the input gradient, and the kernel formation could not look past them.
  }];
  let options = [
    Option<"maxChain", "max-chain", "int64_t", "64",
           "as oflow-gpu-row-reductions' max-chain: the reductions it runs">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def GpuRowReductions : Pass<"oflow-gpu-row-reductions", "mlir::func::FuncOp"> {
  let summary = "row reductions and their row-wise consumers -> one warp per row";
  let description = [{
    The kernel strategy for row reductions on the CUDA target (softmax,
    log-softmax, layer norm forward and backward, cross-entropy, row sums).
    A `linalg.generic` on buffers whose loops are parallel loops (the row)
    followed by reduction loops (its columns, 32 to 32 x `max-chain`
    elements), with static extents, one f32 output indexed by the row and
    one combiner with a neutral element (add, mul, max, min) starts a group;
    the following top-level generics over the same loop extents join it
    (reductions over the same columns, elementwise ops over row x columns),
    as long as every two accesses of overlapping memory by the group, one of
    them a write, use the same buffer with the same indexing map (so the
    same lane of the same warp touches the element, in program order). Up
    to 8 other ops in between (a norm's weight-gradient column sums) are
    looked past and move after the kernel, where none of them writes bytes
    a later member touches or reads bytes a later member writes (from their
    memory effects; the group ends before the first member that would
    conflict). The `linalg.fill` that initializes a member reduction's
    output becomes its initial value.

    The group becomes one `gpu.launch` (8 warps of 32 lanes per block,
    `oflow.strategy = "warp-row"`): each warp runs one row; lane l visits
    columns l, l + 32, ...; a reduction's lane partials are combined with a
    butterfly of `gpu.shuffle xor` (offsets 16, 8, 4, 2, 1) that leaves the
    result in every lane, lane 0 stores it, and later members read it from
    the register instead of memory. A row is read from HBM once; the
    rereads of later members hit the cache.

    oflow-split-reductions{warp-rows} leaves exactly these reductions whole,
    so every one of them must become a kernel here: one that cannot (not at
    the top level of a function) is an error.
  }];
  let options = [
    Option<"maxChain", "max-chain", "int64_t", "64",
           "the longest sequential chain per lane: rows up to 32 x this many columns">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect"];
}

def GpuColumnReductions : Pass<"oflow-gpu-column-reductions", "mlir::func::FuncOp"> {
  let summary = "column reductions -> a block of 8 warps per 32-column tile";
  let description = [{
    The kernel strategy for column reductions on the CUDA target (bias and
    norm-weight gradients, sums over the batch, and the partial and fold
    stages split-reductions makes of them). A top-level `linalg.generic` on
    buffers whose innermost loop is parallel (the columns), with at least
    `min-reduced` reduced elements, static extents, one float output whose
    indices are the parallel loops (each once), no input sharing bytes with
    the output, and one float add/mul/max/min combiner with a neutral
    element becomes one `gpu.launch` (`oflow.strategy = "block-column"`):

    * a block of 8 warps per tile of 32 columns and per point of the other
      parallel loops; lane l of warp w folds the reduced points w, w + 8,
      ... of column l into a register, reading 4 of them before computing
      any (4 independent loads in flight, the order unchanged), so a warp
      reads 32 consecutive columns of one row at a time (coalesced);
    * the 8 partials of a column meet in shared memory (`8 x 32` elements,
      a workgroup attribution) after a `gpu.barrier`; warp 0 folds them, in
      warp order, into the initial value and stores the column's result.

    The `linalg.fill` that initializes the output (only pure ops and fills
    of other bytes in between) becomes the initial value. Floating-point
    sums are re-associated (8 interleaved partials), as split-reductions'
    already are.
  }];
  let options = [
    Option<"minReduced", "min-reduced", "int64_t", "16",
           "the fewest reduced elements per output worth a block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect"];
}

def MergePointwise : Pass<"oflow-merge-pointwise", "mlir::func::FuncOp"> {
  let summary = "consecutive elementwise generics over the same loops -> one generic";
  let description = [{
    The elementwise-chain strategy of the CUDA target (one kernel, one
    thread per point, for what were several launches): top-level
    `linalg.generic`s on buffers whose loops are all parallel, with the same
    static extents and outputs indexed by a permutation of the loops, merge
    with the generics after them (pure ops may lie in between) while every
    two accesses of overlapping bytes, one of them a write, are the same
    element at the same point (the same buffer, or a view of the same bytes
    and type, through the same indexing map) and no buffer is written twice.
    Each point then runs the members in program order; a member's input that
    an earlier member wrote at that point is the value it yielded, not a
    reload. An optimizer's per-parameter updates (moments, then the
    parameter) become one kernel each.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def FuseLaunches : Pass<"oflow-fuse-launches", "mlir::func::FuncOp"> {
  let summary = "independent kernels -> shared launches, scheduled by dependence level";
  let description = [{
    Horizontal fusion, as XLA's. The top-level ops of a function fall into
    windows: runs of pure host ops (index arithmetic, views), kernels, and
    other ops whose bytes are known and that have no results (the checking
    mode's host-conditional kernels, GEMM runtime calls, whose buffers are
    traced through the pointers they get). Anything else (a runtime call of
    unknown effect, a query whose result later ops use) stays put between
    windows. In a window, every non-pure op gets a level one past the
    highest level of the earlier ops it conflicts with (overlapping bytes of
    the memory plan, one of the two writing); the pure ops move to the
    window's start, then the ops are emitted level by level, and each
    level's kernels share launches: block b of a fused launch runs member
    i's body as its block b - s_i when s_i <= b < s_(i+1) (the members'
    grids end to end, `oflow.segments = [s_0, ..., s_n]`), with the block
    size of its largest member and the threads past a member's own block
    size idle. A member whose threads meet (barriers, shuffles, shared
    memory) only joins a launch of its own block size, so its blocks stay
    whole and the condition on the block id is uniform; members share the
    launch's shared memory (a block runs one member). Members are
    synchronous 1-D launches with constant sizes that take their ids from
    the launch's arguments; at most `max-members` per launch
    (`oflow.strategy = "horizontal xN"`, named `<function>_h<N>`). Each
    launch saved is ~4 us of launch overhead: a step's weight transposes,
    fills, bias-gradient reductions and per-parameter optimizer updates
    share launches.
  }];
  let options = [
    Option<"maxMembers", "max-members", "int64_t", "64",
           "the most kernels one launch holds">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def OutlineGpuKernels : Pass<"oflow-outline-gpu-kernels", "mlir::ModuleOp"> {
  let summary = "gpu-kernel-outlining that keeps each launch's kernel strategy";
  let description = [{
    Runs upstream `gpu-kernel-outlining`, then puts each `gpu.launch`'s
    `oflow.strategy` on the `gpu.func` it became (upstream drops it), for
    the cost report (`--emit=kernels`) and the PTX tests.

    With `dedup` (the CUDA pipeline's default), kernels that differ only in
    where their buffers lie become one: each `memref.view` of a kernel
    whose byte offset is a constant takes it as a new kernel parameter
    (up to 256 per kernel), passed by its launch, and kernels whose text is
    then equal (but for the name) share the first one's `gpu.func`. The
    ONNX nodes a launch came from stay on it as `oflow.origins`.
  }];
  let options = [
    Option<"dedup", "dedup", "bool", "true",
           "share one gpu.func among kernels equal up to their views' offsets">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FormGpuKernels : Pass<"oflow-form-gpu-kernels", "mlir::ModuleOp"> {
  let summary = "host code on device buffers -> gpu.launch regions";
  let description = [{
    On the CUDA target the entry's buffers hold device pointers: the host
    may only compute indices and addresses, launch kernels and call the
    runtime. For each function with a body, after linalg became parallel
    loops:
    - a top-level `scf.if` (no results) is distributed into its contents:
      pure ops move out unconditionally, an `scf.parallel` carries the
      condition into its body, anything else is wrapped in its own `scf.if`;
    - a top-level `scf.for` nest around one `scf.parallel` (reductions over
      leading dimensions, scatter-adds) is interchanged to put the parallel
      loop outside;
    - every top-level `scf.parallel` becomes a `gpu.launch` in which one
      thread computes one point of the flattened iteration space
      (`block-size` threads per block, bounds-checked); when the space has
      a static size that is a multiple of `points-per-thread` x
      `block-size` and at least `points-per-thread` x `min-threads` points,
      each thread computes `points-per-thread` points instead, T apart (T
      the number of threads, so every copy's accesses stay coalesced), and
      issues the loads that start every copy before the rest of any
      (`oflow.strategy = "pointwise-xN"`): N independent loads in flight
      per thread, N times fewer waves of threads (parallel iterations are
      independent, so the order across copies is free);
    - runs of other memory-touching ops (scalar code, stores of 0-d
      results, sequential `scf.for` nests) become single-thread launches;
    - scalars read from device memory on the host (`memref.load`), the pure
      ops computing from them and `memref.get_global`s are rematerialized
      inside every kernel that uses them, when the memory they read cannot
      change in between; so are the views of the entry's buffers and their
      index arithmetic, so that a kernel's parameters are the three buffers
      and a few host scalars (ptxas allows 4 KiB of parameters).
    Anything that would still touch memory on the host is an error naming
    the op. Kernels are named `<function>_k<N>` and all go to the
    `gpu.module @oflow_kernels` through `gpu-kernel-outlining`.
  }];
  let options = [Option<"blockSize", "block-size", "int64_t", "256",
                        "threads per block of the parallel kernels">,
                 Option<"pointsPerThread", "points-per-thread", "int64_t", "4",
                        "points each thread of a large parallel kernel computes (1: one)">,
                 Option<"minThreads", "min-threads", "int64_t", "65536",
                        "the fewest threads a kernel keeps when it gives each several points">];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def EmbedFatbin : Pass<"oflow-embed-fatbin", "mlir::ModuleOp"> {
  let summary = "PTX objects of gpu.binary -> one fatbin (cubins + PTX)";
  let description = [{
    After `gpu-module-to-binary{format=isa}`: each NVVM object's PTX is
    assembled by `ptxas` for every architecture in `archs` and packed with
    `fatbinary` together with the PTX itself (JIT-compiled by the driver on
    newer GPUs) into one fatbin, which replaces the object (format `bin`, so
    the host code loads it with `mgpuModuleLoad`). `toolkit` is the CUDA
    toolkit folder (bin/ptxas, bin/fatbinary).
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", "\"/usr/local/cuda\"",
           "the CUDA toolkit folder">,
    ListOption<"archs", "archs", "std::string",
               "GPU architectures to assemble cubins for (sm_80,sm_90)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def EmulateGpuLaunches : Pass<"oflow-emulate-gpu-launches", "mlir::func::FuncOp"> {
  let summary = "gpu.launch -> scf.parallel on the host (tests the GPU kernels on a CPU)";
  let description = [{
    Replaces each `gpu.launch` by an `scf.parallel` over its grid and block
    (block z, y, x, then thread z, y, x), with the launch's block and thread
    ids, grid and block sizes as the loop's induction variables and bounds.
    The kernels the CUDA pipeline forms then run as ordinary host loops, so
    a machine without a GPU checks their numerics end to end
    (`oflow-compile --target cuda-emulated`).

    A launch with `gpu.shuffle` or `gpu.barrier` at the top level of its
    body (the warp-row strategy) runs MCUDA-style: one parallel loop over
    the blocks; inside, the body is split at each of them into intervals,
    each a sequential loop over the block's threads; values that live
    across an interval are kept in a per-thread array of the block, and a
    `gpu.shuffle xor` reads its partner lane's value from its operand's
    array, so an emulated butterfly combines in exactly the GPU's order.
    Workgroup (shared) memory is a buffer per block, filled with NaN (all
    ones for integers) before the block's threads run, so a read of what no
    thread wrote shows. A fused launch (`oflow.segments`, oflow-fuse-launches)
    whose members meet at barriers or shuffles runs as one launch per block
    range, each member's body at the top level again (its members touch
    disjoint bytes). Launches that need a GPU to mean anything (shuffles or
    barriers nested in other control flow, private memory, async tokens,
    clusters) are refused with an error.

    With `reverse-threads`, each interval runs its threads in descending
    order: a kernel whose threads race (one reads what another writes in the
    same interval) then computes something else, so comparing the two
    orders' results, bit for bit, finds the race
    (`oflow-compile --emulate-threads-reversed`).
  }];
  let options = [
    Option<"reverseThreads", "reverse-threads", "bool", /*default=*/"false",
           "run each interval's threads in descending order">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def OutlineLoopNests : Pass<"oflow-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "each top-level loop nest of an entry -> its own function";
  let description = [{
    An entry (the training step) is one function of thousands of loop nests.
    Lowering and LLVM work per function, and several of their steps cost
    time proportional to the function's size per nest: `convert-scf-to-cf`
    splits the entry's block at every loop (moving every op after it), and
    LLVM's dominator-tree updates grow likewise. A step of a few hundred
    nodes spent a third of its compile time in `convert-scf-to-cf` alone;
    a deep CNN did not compile in 15 minutes.

    The ops of a function with at least `min-nests` top-level units of work
    (loop nests: `scf.for`, `scf.parallel`, `scf.if`, `scf.while`,
    `scf.execute_region`; and, in the CUDA target's host code, kernel
    launches and runtime calls) move, in runs holding `nests-per-function`,
    into private functions `<entry>_nest<N>` called in their place. Pure
    region-free ops (constants, views of the arena, their strides and
    offsets) stay and are recomputed in each function using them; other
    values from before a run become arguments, its values used after it
    results. The calls are marked `no_inline`, so LLVM optimizes the runs
    one at a time instead of inlining them back.

    With `dedup` (the default), the constant byte offsets of each outlined
    function's views into the arena become parameters its call passes, and
    functions whose text is then equal are one: a deep model's layers, and
    the train and gradient entries, repeat the same nests with their
    buffers elsewhere.
  }];
  let options = [
    Option<"minNests", "min-nests", "unsigned", /*default=*/"2",
           "leave functions with fewer top-level loop nests alone">,
    Option<"nestsPerFunction", "nests-per-function", "unsigned", /*default=*/"16",
           "loop nests per outlined function">,
    Option<"dedup", "dedup", "bool", /*default=*/"true",
           "make view offsets parameters and share functions with equal text">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def ParallelizeNests : Pass<"oflow-parallelize-nests", "mlir::ModuleOp"> {
  let summary = "outlined CPU loop nests -> ranges of iterations for the threads";
  let description = [{
    After oflow-outline-loop-nests on the CPU target: a private function
    called only by `func.call`, whose body is one `scf.parallel` (with pure
    leaves: constants, views) and which returns nothing, runs its outer
    parallel iterations in ranges. The leading dimensions of the loop are
    collapsed until they hold at least `min-iterations` iterations (or all
    of them); the function gains two leading `index` parameters, the range
    `[begin, end)` of that collapsed dimension, and every call passes the
    whole range. The function gets `oflow.parallel_iterations` (the range's
    size) and `oflow.parallel_grain` (the fewest iterations worth a thread:
    `chunk-work` over the work of one iteration, counted as the vector
    elements and scalars its ops produce, times inner trip counts), which
    oflow-lower-parallel-calls turns into a call of the runtime's thread
    pool. Nests doing less than `min-work` in all stay serial and unchanged.

    Every iteration computes what it did before, in the same order, so the
    results do not depend on how the range is split (reductions split into
    fixed chains by oflow-split-reductions, never by thread).
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "nests doing less work (elements produced) stay serial">,
    Option<"chunkWork", "chunk-work", "int64_t", /*default=*/"16384",
           "the least work one thread is given">,
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"64",
           "collapse leading dimensions until the range has this many">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def LowerParallelCalls : Pass<"oflow-lower-parallel-calls", "mlir::ModuleOp"> {
  let summary = "calls of parallelized nests -> oflow_rt_parallel_for";
  let description = [{
    After convert-to-llvm: each `llvm.func` marked by oflow-parallelize-nests
    (its first two parameters the range of iterations) gets a task function
    `<name>_task(ptr ctx, i64 begin, i64 end)` that loads the other
    arguments from the struct `ctx` points to and calls it. Each call of the
    marked function becomes: the other arguments stored into a struct on the
    caller's stack, and `oflow_rt_parallel_for(@<name>_task, ctx,
    iterations, grain)` (runtime/include/oflow_rt/abi.h).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def VectorMathToLibmvec : Pass<"oflow-vector-math-to-libmvec", "mlir::ModuleOp"> {
  let summary = "f32 vector exp/erf/tanh/log -> calls of glibc's libmvec";
  let description = [{
    `math.exp`, `math.erf`, `math.tanh` and `math.log` on f32 vectors of 16,
    8 or 4 elements (leading unit dimensions allowed) become calls of glibc's
    vector math library (`_ZGVeN16v_expf`, `_ZGVdN8v_erff`, ...; `-lm` links
    libmvec as needed), where the CPU has the ISA the variant needs (AVX-512F,
    AVX2, SSE4.1). Otherwise LLVM would scalarize them into one libm call per
    element: the vector tiles of GELU and softmax spent most of their time
    there.
  }];
  let options = [
    Option<"isa", "isa", "std::string", /*default=*/"\"host\"",
           "host (this CPU's features), avx512, avx2, sse4 or none">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::vector::VectorDialect"];
}

#endif // OFLOW_CODEGEN_PASSES_TD
