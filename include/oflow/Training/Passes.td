//===- Passes.td - training-graph passes --------------------*- tablegen -*-===//
//
// The passes around autodiff: pick or append the loss before it, turn its
// result into the program's entry functions after it (variables, optimizer,
// schedule, clipping), and the inference entry.
//
//   import -> oflow-append-loss -> oflow-autodiff -> oflow-build-train-step
//   import -> oflow-build-infer-entry
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_TRAINING_PASSES_TD
#define OFLOW_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AppendLoss : Pass<"oflow-append-loss", "::mlir::ModuleOp"> {
  let summary = "make the entry's first result the scalar loss";
  let description = [{
    When the entry function returns a 0-d floating-point result, that result
    is the loss: it becomes the first result (the others keep their order
    after it), and `--loss` must be `none`. Otherwise `--loss` appends one on
    result 0 and returns it first, followed by the original results:

    - `cross-entropy`: `oflow.softmax_cross_entropy mean` of result 0 (logits
      [N, C, d...]) against a new last argument, the labels
      (`tensor<N x d... x i64>`, arg attr `oflow.name` = `--label`);
    - `mse`: `oflow.mse_loss mean` of result 0 against a new last argument
      of the same type (named `--label`).

    The loss result is named `loss` (result attr `oflow.name`) unless it
    already has a name. Errors: no scalar result and `--loss none` (the
    message lists the outputs), a `--label` that names an existing input, a
    result 0 that the loss does not accept.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "the function that computes the model">,
    Option<"loss", "loss", "std::string", /*default=*/"\"none\"",
           "loss to append when no scalar output exists: none|cross-entropy|mse">,
    Option<"label", "label", "std::string", /*default=*/"\"label\"",
           "name of the new labels (targets) input">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def BuildTrainStep : Pass<"oflow-build-train-step", "::mlir::ModuleOp"> {
  let summary = "turn autodiff's result into the train and grads entry functions";
  let description = [{
    Input: the form `oflow-autodiff` leaves: the entry (`--entry`, default
    @main) returns the scalar loss first; weights are `oflow.weight` ops (ops
    sharing a name are one weight; it is trained when any of them carries
    `oflow.trainable`); one `oflow.gradient "name", %g` per trained weight.

    Output:
    - every weight becomes a module-level `oflow.variable` (symbol = the
      weight name, uniqued on a clash; `model_name` = the weight name;
      `initial_value` = its value; role `param` when trained, else `buffer`)
      and its uses `oflow.read_variable`;
    - `@oflow_train_step` (`oflow.entry = "train"`) and `@oflow_grad_step`
      (`oflow.entry = "grads"`) replace the entry. Both take its arguments
      (with their attributes) followed by `%lr: tensor<f32> {oflow.scalar =
      "lr"}` (the base learning rate) and `%step: tensor<i64> {oflow.scalar =
      "step"}` (optimizer steps taken before this one). The entry's results
      other than the loss are dropped.
    - train returns `(loss {oflow.name = "loss"}, lr_used {oflow.scalar =
      "lr_used"})`: the loss before the update and the scheduled rate. It
      writes every parameter, its optimizer state (`@<param>.<slot>`, role
      `optimizer`, `of = @<param>`, zero initial value) and the batch-norm
      running statistics held in buffer variables (results 1 and 2 of
      `oflow.batch_norm_training`). All writes come last, after every read.
      Optimizer state variables carry `model_name = "<param>.<slot>"`.
      The function carries `oflow.optimizer`, a dictionary of the
      hyper-parameters (`kind`, `lr` = the default base rate,
      `weight_decay`, `clip_grad_norm`, `schedule`; `momentum`, `dampening`,
      `nesterov` for sgd; `beta1`, `beta2`, `eps` for adam/adamw;
      `warmup_steps`, `total_steps`, `min_lr` for non-constant schedules).
    - grads returns `(loss {oflow.name = "loss"}, one gradient per parameter
      {oflow.grad_of = "<name>"} in variable order)` and writes nothing.

    Numerics are PyTorch's (torch 1.13, `foreach=False`). `g` is the
    gradient, `p` the parameter, `t = step + 1`; scalars that torch computes
    in Python floats (the schedule, bias corrections, `lr / bc1`,
    `1 - lr * wd`) are computed in f64 and rounded to the parameter type
    where torch passes them to a tensor op:

    - clipping (`clip-grad-norm` > 0), `torch.nn.utils.clip_grad_norm_`:
      `total = sqrt(sum over all parameters of sum(g * g))`,
      `coef = min(max_norm / (total + 1e-6), 1)`, every `g *= coef`; before
      weight decay.
    - `sgd`, `torch.optim.SGD(lr, momentum, dampening, weight_decay,
      nesterov)`: `d = g + wd * p` (when wd != 0); with momentum, `buf = d`
      at step 0 and `buf = momentum * buf + (1 - dampening) * d` after
      (state `momentum_buffer`), `d = nesterov ? d + momentum * buf : buf`;
      `p -= lr * d`.
    - `adam`, `torch.optim.Adam(lr, betas, eps, weight_decay)`: `g += wd *
      p` (L2); `m = beta1 * m + (1 - beta1) * g` (`exp_avg`); `v = beta2 * v
      + (1 - beta2) * g * g` (`exp_avg_sq`); `bc1 = 1 - beta1^t`, `bc2 = 1 -
      beta2^t`; `p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)`.
    - `adamw`, `torch.optim.AdamW`: `p *= 1 - lr * wd` first, then Adam
      without the L2 term.

    Schedules, the rate used at step s (counted from 0, base rate `lr`),
    each equal (up to f64 rounding) to a torch scheduler stepped once after
    every optimizer step:
    - `constant`: `lr`.
    - `linear-warmup` (W = warmup-steps > 0): `lr * min((s + 1) / W, 1)`
      = `LambdaLR(opt, lambda s: min(1.0, (s + 1) / W))`.
    - `cosine` (T = total-steps > 0, min-lr = eta_min): `eta_min + (lr -
      eta_min) * (1 + cos(pi * s / T)) / 2` = `CosineAnnealingLR(opt,
      T_max=T, eta_min)` (its closed form; like torch, it keeps following
      the cosine after T, back up over the next T steps).
    - `warmup-cosine` (0 <= W < T): the linear warm-up `lr * (s + 1) / W`
      for s < W, then the cosine above over T - W steps of s - W =
      `SequentialLR(opt, [LambdaLR(lambda s: (s + 1) / W),
      CosineAnnealingLR(T_max=T - W, eta_min)], milestones=[W])`.
    The schedule is computed in the program (f64) from `step`, so a run-time
    `lr` and resumed runs need no recompilation. oflow has no cos op: s is
    folded exactly into [0, T] with integer ops (period 2T, symmetric about
    T) and cos evaluated as a degree-32 Taylor polynomial on [0, pi]
    (truncation < 1e-21).

    The emitted math uses 0-d (scalar) oflow ops in f64 (cast, add, sub,
    mul, div, min, pow, sqrt, where) and i64 (div, mul, sub, max, compare,
    where), broadcast against the parameters in their own type.

    `loss-scaling` (fp16 mixed precision), `torch.cuda.amp.GradScaler()`
    with its defaults: the train entry's backward starts from the loss scale
    `S` (variable `@loss_scale`, initially `loss-scale`, 65536 by default) instead of 1; the
    gradients are multiplied by `1 / S` before clipping and the optimizer;
    when any of them holds an inf or NaN the step is skipped (parameters and
    optimizer state keep their values, the optimizer's step count used for
    Adam's bias correction, `@loss_scale.applied_steps`, does not advance)
    and `S` halves; after 2000 good steps in a row (`@loss_scale.good_steps`)
    `S` doubles. The three variables are optimizer state (0-d, checkpointed,
    never exported). The schedule still follows `step`. The grads entry is
    not scaled.

    Negative `lr` / `weight-decay` select torch's defaults (lr 1e-3 for
    adam/adamw, 0.01 for sgd; weight decay 0.01 for adamw, else 0).
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "the function autodiff processed">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd|adam|adamw">,
    Option<"lr", "lr", "double", /*default=*/"-1.0",
           "default base learning rate (negative: torch.optim's default, 1e-3)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum (needs momentum > 0 and dampening 0)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "weight decay (L2 for sgd/adam, decoupled for adamw; negative: "
           "torch's default)">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "clip the global gradient norm to this (0 = off)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"constant\"",
           "constant|linear-warmup|cosine|warmup-cosine">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "linear warm-up length in steps">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "cosine schedule length in steps (T_max, counting the warm-up)">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "cosine schedule floor (eta_min)">,
    Option<"lossScaling", "loss-scaling", "bool", /*default=*/"false",
           "dynamic loss scaling (for --precision fp16), as "
           "torch.cuda.amp.GradScaler with its defaults">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"65536.0",
           "the initial loss scale (GradScaler's init_scale)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def BuildInferEntry : Pass<"oflow-build-infer-entry", "::mlir::ModuleOp"> {
  let summary = "turn the imported model into the inference entry function";
  let description = [{
    The entry (`--entry`, default @main) becomes `@oflow_infer` (attr
    `oflow.entry = "infer"`), every `oflow.weight` a module-level
    `oflow.variable` of role `constant` (symbol and `model_name` = the
    weight name) read with `oflow.read_variable`. Each result keeps its
    `oflow.name`; an unnamed result #i is named `output_<i>`. A graph with
    `oflow.gradient` ops (a training graph) is an error.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "the function that computes the model">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def Recompute : Pass<"oflow-recompute", "::mlir::ModuleOp"> {
  let summary = "recompute forward activations in the backward pass instead of keeping them";
  let description = [{
    Activation recomputation (rematerialisation) on the training graph, on
    one device or after `oflow-partition`: in each entry (`oflow.entry`
    train or grads), a forward value that the backward pass reads is
    computed again right before its first backward use, from values that
    are live there anyway, and every backward use reads the copy. The
    forward value then dies at its last forward use. The forward part ends
    at the op that reduces an activation to the loss (the returned `loss`
    traced back through scalar ops and collectives); what comes after it is
    backward.

    An op is recomputed when it is free of side effects and of a recomputable
    kind: in `mode=selective`, elementwise ops, casts, views and copies
    (reshape, transpose, slice, concat, ...), gathers, softmax and layer
    norm (Megatron's selective recomputation: cheap in FLOPs, large in
    bytes); in `mode=all`, also matmul, gemm and conv2d. Dropout (random),
    batch norm in training mode, reductions, variables and collectives are
    never recomputed. `names`, when set, is a regular expression over the
    ops' ONNX node names (their `NameLoc`) and selects the roots instead of
    `mode` (chains below them are still of `mode`'s kinds).

    Each operand of a recomputed op must be live at that point anyway (a
    function argument, a constant or variable, a value with a use there or
    later), small (at most an eighth of the root's bytes: a layer norm's
    statistics), or itself recomputable from such values (a chain, cloned in
    order). The copies read their operands through
    `bufferization.alloc_tensor copy(..) {oflow_recompute_barrier}`, which
    CSE does not merge, so that no later CSE folds a copy back into its
    original; `oflow-drop-recompute-barriers` removes them after the last
    CSE, before bufferization. Losses are bit-identical to the run without
    recomputation.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"selective\"",
           "what may be recomputed: selective (no GEMMs) or all">,
    Option<"names", "names", "std::string", /*default=*/"\"\"",
           "a regular expression over ONNX node names: recompute only "
           "those (empty: every op of mode's kinds)">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // OFLOW_TRAINING_PASSES_TD
