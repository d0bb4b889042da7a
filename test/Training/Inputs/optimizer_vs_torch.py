#!/usr/bin/env python3
"""Runs oflow-build-train-step's update math against torch.optim.

Builds a module whose @main hands two weights their gradients straight from
its inputs, runs `oflow-opt -oflow-build-train-step=<options>`, and evaluates
the resulting @oflow_train_step with a small numpy interpreter of the oflow
ops the optimizer, clipping and schedule code emits. The same gradients go to
torch.optim (+ clip_grad_norm_ and the matching torch LR scheduler); every
step's parameters, optimizer state and lr_used must agree.

Usage: optimizer_vs_torch.py OFLOW_OPT "<pass options>" [--steps N]
"""
import argparse
import re
import subprocess
import sys
import warnings

import numpy as np
import torch

SHAPES = {"w1": (3, 4), "w2": (5,)}
DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i1": np.bool_}


def literal(a):
    return "dense<" + np.array2string(
        a, separator=", ", floatmode="unique", threshold=1 << 30).replace("\n", "") + ">"


def build_input(init):
    args = ", ".join(f"%{n}_g: tensor<{'x'.join(map(str, s))}xf32> {{oflow.name = \"{n}_g\"}}"
                     for n, s in SHAPES.items())
    lines = [f"func.func @main({args}) -> (tensor<f32> {{oflow.name = \"loss\"}}) {{"]
    for n, s in SHAPES.items():
        t = f"tensor<{'x'.join(map(str, s))}xf32>"
        lines.append(f"  %{n} = oflow.weight \"{n}\", {literal(init[n])} : {t} {{oflow.trainable}}")
    lines.append("  %loss = oflow.reduce_sum %w2_g {axes = array<i64: 0>, keepdims = false} "
                 ": (tensor<5xf32>) -> tensor<f32>")
    for n, s in SHAPES.items():
        t = f"tensor<{'x'.join(map(str, s))}xf32>"
        lines.append(f"  oflow.gradient \"{n}\", %{n}_g : {t}")
    lines.append("  return %loss : tensor<f32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def parse_type(text):
    m = re.fullmatch(r"tensor<(?:([0-9x]+)x)?(\w+)>", text.strip())
    shape = tuple(int(d) for d in m.group(1).split("x")) if m.group(1) else ()
    return shape, DTYPES[m.group(2)]


class Interpreter:
    """Evaluates @oflow_train_step line by line (single block, oflow ops)."""

    def __init__(self, ir):
        lines = ir.split("\n")
        start = next(i for i, l in enumerate(lines)
                     if l.lstrip().startswith("func.func @oflow_train_step("))
        end = next(i for i in range(start, len(lines)) if lines[i].strip() == "}")
        self.args = re.findall(r"%(arg\d+): (tensor<[^>]*>)", lines[start])
        self.lines = lines[start + 1:end]

    def run(self, variables, inputs):
        env = {}
        for (name, _), value in zip(self.args, inputs):
            env[name] = value
        writes = {}
        results = None

        def v(tok):
            return env[tok.strip().lstrip("%")]

        for line in self.lines:
            line = line.strip()
            m = re.match(r"%(\w+) = oflow\.(\w+) (.*) : (.*)$", line)
            if line.startswith("oflow.write_variable"):
                m2 = re.match(r"oflow\.write_variable @([\w.]+), (%\w+)", line)
                writes[m2.group(1)] = v(m2.group(2))
                continue
            if line.startswith("return"):
                results = [v(t) for t in line[len("return "):].split(" : ")[0].split(",")]
                continue
            assert m, f"cannot parse: {line}"
            res, op, rest, types = m.groups()
            out_type = types.split("->")[-1]
            shape, dtype = parse_type(out_type)
            if op == "constant":
                lit = re.match(r"dense<(.*)>", rest).group(1)
                val = {"true": 1, "false": 0}.get(lit, None)
                val = float(lit) if val is None else val
                env[res] = np.array(val, dtype=dtype)
            elif op == "read_variable":
                env[res] = variables[re.match(r"@([\w.]+)", rest).group(1)].copy()
            elif op == "cast":
                src, to = re.match(r"(%\w+) to (\w+)", rest).groups()
                env[res] = v(src).astype(DTYPES[to])
            elif op in ("add", "sub", "mul", "div", "min", "max", "pow"):
                a, b = (v(t) for t in rest.split(","))
                if op == "div" and np.issubdtype(a.dtype, np.integer):
                    r = np.floor_divide(a, b)
                else:
                    r = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                         "div": np.divide, "min": np.minimum, "max": np.maximum,
                         "pow": np.power}[op](a, b)
                env[res] = np.asarray(r, dtype=a.dtype)
            elif op == "sqrt":
                env[res] = np.sqrt(v(rest))
            elif op == "compare":
                pred, a, b = re.match(r"(\w+) (%\w+), (%\w+)", rest).groups()
                f = {"eq": np.equal, "lt": np.less, "gt": np.greater, "le": np.less_equal,
                     "ge": np.greater_equal, "ne": np.not_equal}[pred]
                env[res] = np.asarray(f(v(a), v(b)))
            elif op == "where":
                c, a, b = (v(t) for t in rest.split(","))
                env[res] = np.asarray(np.where(c, a, b), dtype=a.dtype)
            elif op == "reduce_sum":
                src = re.match(r"(%\w+)", rest).group(1)
                axes = tuple(int(x) for x in re.search(r"array<i64: ([0-9, ]+)>", rest)
                             .group(1).split(","))
                x = v(src)
                # Pairwise/vectorized order is the lowering's business; sum in
                # f64 and round, the most accurate reference.
                env[res] = np.asarray(x.astype(np.float64).sum(axis=axes), dtype=x.dtype)
            else:
                raise SystemExit(f"interpreter: unsupported op {op}: {line}")
            assert env[res].shape == shape, (line, env[res].shape, shape)
        return results, writes


def torch_reference(options, init, lr):
    params = [torch.nn.Parameter(torch.tensor(init[n])) for n in SHAPES]
    kind = options.get("optimizer", "sgd")
    wd = float(options["weight-decay"]) if "weight-decay" in options else None
    if kind == "sgd":
        opt = torch.optim.SGD(params, lr=lr, momentum=float(options.get("momentum", 0)),
                              dampening=float(options.get("dampening", 0)),
                              weight_decay=wd or 0.0,
                              nesterov=options.get("nesterov", "false") == "true")
    else:
        cls = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
        kw = {} if wd is None else {"weight_decay": wd}
        opt = cls(params, lr=lr, betas=(float(options.get("beta1", 0.9)),
                                        float(options.get("beta2", 0.999))),
                  eps=float(options.get("eps", 1e-8)), **kw)
    schedule = options.get("schedule", "constant")
    W = int(options.get("warmup-steps", 0))
    T = int(options.get("total-steps", 0))
    eta = float(options.get("min-lr", 0))
    sched = None
    if schedule == "linear-warmup":
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / W))
    elif schedule == "cosine" or (schedule == "warmup-cosine" and W == 0):
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T, eta_min=eta)
    elif schedule == "warmup-cosine":
        warm = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / W)
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T - W, eta_min=eta)
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[W])
    return params, opt, sched


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oflow_opt")
    ap.add_argument("options")
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--grad-scale", type=float, default=1.0)
    a = ap.parse_args()
    # SequentialLR steps its second scheduler with an explicit epoch.
    warnings.simplefilter("ignore", UserWarning)
    options = dict(kv.split("=", 1) for kv in a.options.split())

    rng = np.random.default_rng(0)
    init = {n: rng.standard_normal(s).astype(np.float32) for n, s in SHAPES.items()}
    ir = subprocess.run([a.oflow_opt, f"-oflow-build-train-step={a.options}"],
                        input=build_input(init), capture_output=True, text=True)
    if ir.returncode:
        sys.exit(ir.stderr)
    interp = Interpreter(ir.stdout)

    lr = float(np.float32(a.lr))  # the program receives the rate as f32
    params, opt, sched = torch_reference(options, init, lr)
    clip = float(options.get("clip-grad-norm", 0))
    variables = {n: init[n].copy() for n in SHAPES}
    for decl in re.findall(r"oflow\.variable @([\w.]+) optimizer : (tensor<[^>]*>)", ir.stdout):
        shape, dtype = parse_type(decl[1])
        variables[decl[0]] = np.zeros(shape, dtype)

    worst = 0.0
    for step in range(a.steps):
        grads = {n: (a.grad_scale * rng.standard_normal(s)).astype(np.float32)
                 for n, s in SHAPES.items()}
        expected_lr = opt.param_groups[0]["lr"]
        for p, n in zip(params, SHAPES):
            p.grad = torch.tensor(grads[n])
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        if sched:
            sched.step()

        inputs = [grads[n] for n in SHAPES] + [np.array(a.lr, np.float32),
                                               np.array(step, np.int64)]
        (loss, lr_used), writes = interp.run(variables, inputs)
        variables.update(writes)
        if not np.isclose(lr_used, np.float32(expected_lr), rtol=1e-6, atol=0):
            sys.exit(f"step {step}: lr_used {lr_used!r}, torch {expected_lr!r}")
        for p, n in zip(params, SHAPES):
            ref = p.detach().numpy()
            err = np.abs(variables[n] - ref).max() / max(np.abs(ref).max(), 1e-12)
            worst = max(worst, err)
            state = opt.state[p]
            for slot in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
                if state.get(slot) is not None:
                    sref = state[slot].numpy()
                    serr = np.abs(variables[f"{n}.{slot}"] - sref).max() / max(np.abs(sref).max(), 1e-12)
                    worst = max(worst, serr)
        if worst > 1e-6:
            sys.exit(f"step {step}: relative difference {worst:.3g} from torch ({a.options})")
    print(f"OK {a.steps} steps, max relative difference {worst:.3g}: {a.options}")


if __name__ == "__main__":
    main()
