#!/usr/bin/env python3
"""Differential tester of oflow's gradients against torch.autograd (float64).

Random ONNX graphs (gen.py, every op the importer supports) are packed 8 (up
to 32, --pack) to a model (their losses summed), compiled with oflow-compile
(`--optimizer sgd --lr LR`) and run for one step with --dump-grads, --export
and --check-memory. For every float initializer:

  (a) the dumped gradient against torch's float64 gradient (ref.py), and
  (b) the exported weight against w - lr * g (float64 g),

per tensor and per output channel (axis 0): a case fails when
||oflow - g64|| / ||g64|| exceeds max(1e-5, 10 x PyTorch float32's own error
||g32 - g64|| / ||g64||) (for a channel, the larger of its own and its
tensor's float32 error spread evenly over its channels). Tensors (channels)
whose float64 gradient is below 1e-3 of their subgraph's whole gradient norm
are measured against 1% of that norm instead, and fail above 1e-3 of it. (b) allows one float32 rounding of the new weight on top.
Batch-norm running statistics are checked against PyTorch's update (unbiased
batch variance) by the same rule.

A failing pack is shrunk (one subgraph, then cuts and node bypasses that keep
the failure) and written to OUT/findings/<id>/ with its data and a one-line
description. -O 2 is used for one graph in ten (packed separately).

  difftest.py --oflow-compile build/bin/oflow-compile --seed 1 --graphs 64
  difftest.py --oflow-compile build/bin/oflow-compile --seed 7 --graphs 5000 \\
      --out /tmp/dt --resume /tmp/dt/state.json            # long, resumable
  difftest.py --check-op-coverage                          # OPS vs the importer
  difftest.py --oflow-compile build/bin/oflow-compile --replay findings/*   # kept cases
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import ref  # noqa: E402

torch.set_num_threads(1)

CONFIGS = {
    "cpu": ["--target", "cpu"],
    "cuda-emulated": ["--target", "cuda-emulated"],
    "no-fusion": ["--target", "cpu", "--no-elementwise-fusion"],
    "no-reuse": ["--target", "cpu", "--no-buffer-reuse"],
}
PACK = 8  # subgraphs per model: oflow-compile time grows superlinearly (8: ~30 s, 29: > 8 min)
LR = 0.1
EPS32 = 2.0 ** -24
NOISY_RUNS = 4  # extra float32 reference runs, each op rounded once more (see reference())
ZERO = 1e-3  # a gradient below this fraction of its subgraph's norm counts as ~0


# ----------------------------------------------------------------------------
# Reference
# ----------------------------------------------------------------------------

def reference(parts):
    """Gradients of `loss` w.r.t. every float initializer, float64 and float32
    (the worst of PyTorch's and NOISY_RUNS noisy evaluations per element), the
    float64 values, and the batch-norm running statistics' float32 worst."""
    nodes = [n for p in parts for n in p.nodes] + [
        helper.make_node("Sum" if len(parts) > 1 else "Identity", [p.loss for p in parts], ["loss"])]
    inits = {k: v for p in parts for k, v in p.inits.items()}
    inputs = {k: v for p in parts for k, v in p.inputs.items()}

    def run(dt, noise=None):
        feeds = {n: ref.tensor_of(a, dt) for n, a in {**inits, **inputs}.items()}
        names = [n for n, a in inits.items() if a.dtype == np.float32]
        for n in names:
            feeds[n].requires_grad_(True)
        env = ref.run_graph(nodes, feeds, dt, noise=noise)
        grads = torch.autograd.grad(env["loss"], [feeds[n] for n in names], allow_unused=True)
        return ({n: (g.detach().double().numpy() if g is not None else np.zeros(inits[n].shape))
                 for n, g in zip(names, grads)},
                {k: v.detach() for k, v in env.items()})

    g64, env64 = run(torch.float64)
    g32, env32 = run(torch.float32)
    # PyTorch's float32 error is one sample of the rounding noise: where the
    # graph is ill-conditioned (a batch norm over a few nearly equal values,
    # then a cancelling sum) another, equally valid summation order is 10x
    # off (s7-O0-124-cpu). Sample it a few more times, each op's result
    # rounded once more (ref.rounding_noise), and keep the worst per element.
    # The batch-norm running statistics likewise (s7-O0-408-cpu: a layer norm
    # of a constant, exactly 0 in float64, is float32 noise of its mean).
    stats64 = running_stats(parts, env64)
    stats32 = running_stats(parts, env32)
    rng = np.random.default_rng(0)
    for _ in range(NOISY_RUNS):
        noisy, noisy_env = run(torch.float32, rng)
        for n, g in noisy.items():
            g32[n] = np.where(np.abs(g - g64[n]) > np.abs(g32[n] - g64[n]), g, g32[n])
        for n, v in running_stats(parts, noisy_env).items():
            s64 = stats64[n]
            stats32[n] = np.where(np.abs(v - s64) > np.abs(stats32[n] - s64), v, stats32[n])
    return g64, g32, env64, stats32


def margins_ok(nodes, env):
    """No kink of any node's derivative within float32 noise; all finite."""
    for n in nodes:
        ins = [env[i] if i else None for i in n.input]
        if ref.kink_margin(n, ins) < 2e-4:
            return False
        for o in n.output:
            if o in env and env[o].is_floating_point() and not torch.isfinite(env[o]).all():
                return False
    return True


def running_stats(parts, env):
    """Expected batch-norm running statistics after one step (PyTorch's update)."""
    exp = {}
    for p in parts:
        for n in p.nodes:
            a = ref.attrs(n)
            if n.op_type != "BatchNormalization" or not a.get("training_mode", 0):
                continue
            x = env[n.input[0]]
            dims = [0] + list(range(2, x.dim()))
            mom = a.get("momentum", 0.9)
            bm = x.mean(dim=dims)
            bv = x.var(dim=dims, unbiased=True)
            exp[n.input[3]] = (mom * env[n.input[3]] + (1 - mom) * bm).numpy()
            exp[n.input[4]] = (mom * env[n.input[4]] + (1 - mom) * bv).numpy()
    return exp


# ----------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------

def group_of(name):
    m = re.match(r"(g\d+_)", name)
    return m.group(1) if m else ""


def _rel(d, g, whole):
    ng = float(np.linalg.norm(g))
    denom = ng if ng >= ZERO * whole else 1e-2 * whole
    nd = float(np.linalg.norm(d))
    if denom == 0:
        return 0.0 if nd == 0 else math.inf
    return nd / denom


# A ~0 gradient (below ZERO of its subgraph's norm) fails above this fraction of
# 1% of that norm (so above 1e-5 of the whole gradient's norm), whatever
# PyTorch's float32 error: that can be exactly 0 where its formula cancels
# (a convolution bias before a batch norm), while the float32 sum of terms
# larger than the whole gradient leaves ~1e-6 of it.
ZERO_TOL = 1e-3


def _zero_floor(g, whole):
    return ZERO_TOL if float(np.linalg.norm(g)) < ZERO * whole else 0.0


def _channels(a):
    return [a] if a.ndim == 0 or a.shape[0] <= 1 else [a[i] for i in range(a.shape[0])]


# The --floor in force (a list, so that the module-level functions see it).
FLOOR = [1e-5]
# --show-thresholds: print each tensor's error and threshold.
SHOW_THRESHOLDS = [False]


def compare(g64, g32, got, lr=None, w0=None, extra_allow=None, floor=1e-5):
    """Failures [(tensor, channel or None, error, threshold)] of got against g64.

    With lr and w0, got are new weights and are turned into implied gradients."""
    whole = Counter()
    for k, g in g64.items():
        whole[group_of(k)] += float(np.sum(g.astype(np.float64) ** 2))
    whole = {k: math.sqrt(v) for k, v in whole.items()}
    fails = []
    for k, g in g64.items():
        if k not in got:
            fails.append((k, None, math.inf, 0.0, "missing"))
            continue
        o = np.asarray(got[k], np.float64)
        if o.shape != g.shape:
            if o.size == g.size:
                o = o.reshape(g.shape)
            else:
                fails.append((k, None, math.inf, 0.0, f"shape {o.shape} != {g.shape}"))
                continue
        allow = 0.0
        if lr is not None:
            new64 = w0[k].astype(np.float64) - lr * g
            o = (w0[k].astype(np.float64) - o) / lr
            allow_abs = 2 * EPS32 * np.abs(new64) / lr  # one rounding of the new weight
        W = whole[group_of(k)]
        e32 = _rel(g32[k] - g, g, W)
        e = _rel(o - g, g, W)
        if lr is not None:
            allow = _rel(allow_abs, g, W)
        thr = max(floor, 10 * e32, _zero_floor(g, W)) + allow
        if SHOW_THRESHOLDS[0]:
            print(f"  {k}: error {e:.2e}, threshold {thr:.2e}")
        if not e <= thr:
            fails.append((k, None, e, thr, ""))
            continue
        if g.ndim >= 1 and g.shape[0] > 1:
            for c, (gc, oc, g32c) in enumerate(zip(_channels(g), _channels(o), _channels(g32[k]))):
                ec32 = _rel(g32c - gc, gc, W)
                ec = _rel(oc - gc, gc, W)
                allow_c = _rel(allow_abs[c], gc, W) if lr is not None else 0.0
                # 10x PyTorch's float32 error of this channel, or of the tensor
                # spread evenly over its channels
                spread = e32 * float(np.linalg.norm(g)) / max(
                    float(np.linalg.norm(gc)) * math.sqrt(g.shape[0]), 1e-300)
                thr_c = max(floor, 10 * ec32, 10 * spread, _zero_floor(gc, W)) + allow_c
                if not ec <= thr_c:
                    fails.append((k, c, ec, thr_c, ""))
                    break
    return fails


# ----------------------------------------------------------------------------
# oflow side
# ----------------------------------------------------------------------------

def sh(cmd, timeout, cwd=None):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", f"timeout after {timeout}s")


def first_error(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    errs = [ln for ln in lines if "error" in ln.lower()]
    return (errs or lines or [""])[0][:300]


class Outcome:
    def __init__(self):
        self.kind = "ok"          # ok | compile | run | mismatch | reference
        self.msg = ""
        self.fails = []           # (what, tensor, channel, error, threshold, note)
        self.t_compile = self.t_run = 0.0

    def failed(self):
        return self.kind != "ok"

    def signature(self):
        return self.kind

    def describe(self):
        if self.kind != "mismatch":
            return f"{self.kind} error: {self.msg}"
        parts = []
        for what, k, c, e, t, note in self.fails[:6]:
            ch = "" if c is None else f"[{c}]"
            parts.append(f"{what} {k}{ch} {e:.2e}>{t:.1e}{(' ' + note) if note else ''}")
        more = f" (+{len(self.fails) - 6} more)" if len(self.fails) > 6 else ""
        return "; ".join(parts) + more


def write_case(parts, d):
    """model.onnx and <input>.npy into d; returns the model path."""
    os.makedirs(d, exist_ok=True)
    model = gen.make_model(parts)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    for p in parts:
        for n, a in p.inputs.items():
            np.save(os.path.join(d, f"{n}.npy"), a)
    return path


def check(parts, args, config, opt, workdir, refs=None):
    """Compile and run one model; compare with the reference."""
    out = Outcome()
    if refs is None:
        try:
            refs = reference(parts)
        except Exception as e:  # a generator / evaluator bug, not oflow's
            out.kind, out.msg = "reference", f"{type(e).__name__}: {e}"
            return out
    g64, g32, env, stats32 = refs
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    path = write_case(parts, workdir)
    exe = os.path.join(workdir, "train")
    t = time.time()
    comp = sh([args.oflow_compile, path, *CONFIGS[config], "-O", str(opt), "--optimizer", "sgd",
               "--lr", str(args.lr), "-o", exe], args.timeout)
    out.t_compile = time.time() - t
    if comp.returncode:
        out.kind, out.msg = "compile", first_error(comp.stderr + comp.stdout)
        return out
    dump = os.path.join(workdir, "grads")
    trained = os.path.join(workdir, "trained.onnx")
    cmd = [exe, "--steps", "1", "--dump-grads", dump, "--export", trained, "--check-memory"]
    for p in parts:
        for n in p.inputs:
            cmd += ["--data", f"{n}={os.path.join(workdir, n + '.npy')}"]
    t = time.time()
    run = sh(cmd, args.timeout)
    out.t_run = time.time() - t
    if run.returncode:
        out.kind, out.msg = "run", first_error(run.stderr + run.stdout)
        return out
    got = {}
    for f in os.listdir(dump) if os.path.isdir(dump) else []:
        if f.endswith(".npy"):
            got[f[:-4]] = np.load(os.path.join(dump, f))
    inits = {k: v for p in parts for k, v in p.inits.items()}
    fails = []
    # Tensors with no gradient at all in exact arithmetic that oflow does not
    # train (it drops what no differentiable path reaches) are fine.
    g64c = {k: v for k, v in g64.items() if k in got or np.any(v != 0) or np.any(g32[k] != 0)}
    stats = running_stats(parts, env)
    for k in stats:
        g64c.pop(k, None)
    for k, c, e, thr, note in compare(g64c, {k: g32[k] for k in g64c}, got, floor=FLOOR[0]):
        fails.append(("grad", k, c, e, thr, note))
    try:
        tm = onnx.load(trained)
        new = {i.name: numpy_helper.to_array(i) for i in tm.graph.initializer}
    except Exception as e:
        out.kind, out.msg = "run", f"cannot read the exported model: {e}"
        return out
    for k, c, e, thr, note in compare(g64c, {k: g32[k] for k in g64c}, new, lr=args.lr, w0=inits,
                                        floor=FLOOR[0]):
        fails.append(("weight", k, c, e, thr, note))
    for k, v in stats.items():
        if k not in new:
            fails.append(("runstat", k, None, math.inf, 0, "missing"))
            continue
        # The gradients' rule: max(floor, 10 x PyTorch float32's own error).
        # The update momentum * running + (1 - momentum) * batch can cancel.
        norm = max(np.linalg.norm(v), 1e-12)
        e = float(np.linalg.norm(new[k].astype(np.float64) - v) / norm)
        e32 = float(np.linalg.norm(stats32[k].astype(np.float64) - v) / norm)
        thr = max(FLOOR[0], 10 * e32)
        if not e <= thr:
            fails.append(("runstat", k, None, e, thr, ""))
    if fails:
        out.kind, out.fails = "mismatch", fails
    return out


# ----------------------------------------------------------------------------
# Shrinking
# ----------------------------------------------------------------------------

def _clean(part):
    """Drops nodes whose outputs nothing needs, and unused initializers/inputs."""
    need = {part.loss}
    keep = []
    for n in reversed(part.nodes):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
    keep.reverse()
    used = {i for n in keep for i in n.input}
    return gen.Part(keep, {k: v for k, v in part.inits.items() if k in used},
                    {k: v for k, v in part.inputs.items() if k in used}, part.loss, part.tag)


def _eval(part):
    feeds = {n: ref.tensor_of(a, torch.float64) for n, a in {**part.inits, **part.inputs}.items()}
    env = ref.run_graph(part.nodes, feeds, torch.float64)
    return {k: v.detach() for k, v in env.items()}


def _cut(part, value, env, rng):
    """The graph up to `value`, whose loss is ReduceSum(value * R)."""
    s = tuple(env[value].shape)
    R = np.asarray(rng.standard_normal(s), np.float32)
    rn = part.loss.replace("loss", "Rcut")
    m = helper.make_node("Mul", [value, rn], [rn + "_m"])
    tail = [m, helper.make_node("ReduceSum", [rn + "_m"], [part.loss], keepdims=0)] if s else \
        [helper.make_node("Mul", [value, rn], [part.loss])]
    nodes = [n for n in part.nodes if part.loss not in n.output] + tail
    return _clean(gen.Part(nodes, {**part.inits, rn: R}, part.inputs, part.loss, part.tag))


def _bypass(part, idx, inp):
    """Removes node idx, its output replaced by its input `inp`."""
    n = part.nodes[idx]
    out = n.output[0]
    nodes = []
    for j, m in enumerate(part.nodes):
        if j == idx:
            continue
        if any(i == out for i in m.input):
            m2 = onnx.NodeProto()
            m2.CopyFrom(m)
            del m2.input[:]
            m2.input.extend([inp if i == out else i for i in m.input])
            m = m2
        nodes.append(m)
    if out == part.loss:
        return None
    return _clean(gen.Part(nodes, part.inits, part.inputs, part.loss, part.tag))


def _valid(part):
    if not gen.validate(part):
        return None
    try:
        env = _eval(part)
    except Exception:
        return None
    if not margins_ok(part.nodes, env):
        return None
    return env


def shrink(parts, first, args, config, opt, workdir, log):
    """A minimal failing model; keeps the kind of failure (and for mismatches, a mismatch)."""
    budget = [args.shrink_budget]
    kind = first.kind

    def still(ps):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        o = check(ps, args, config, opt, workdir)
        return o if o.kind == kind else None

    best, best_out = parts, first
    # 1. one subgraph (those named by the failures first), else halves.
    named = {group_of(f[1]) for f in first.fails}
    order = [p for p in parts if group_of(p.loss) in named] + \
        [p for p in parts if group_of(p.loss) not in named]
    if len(parts) > 1:
        for p in order[:8] if kind == "mismatch" else order:
            o = still([p])
            if o:
                best, best_out = [p], o
                break
            if budget[0] <= 0:
                break
        else:
            cur = parts
            while len(cur) > 1 and budget[0] > 0:
                half = len(cur) // 2
                for sub in (cur[:half], cur[half:]):
                    o = still(sub)
                    if o:
                        cur, best, best_out = sub, sub, o
                        break
                else:
                    break
    if len(best) != 1:
        return best, best_out
    part = best[0]
    rng = np.random.default_rng(0)
    # 2. cuts: the smallest prefix graphs downstream of a failing tensor.
    progress = True
    while progress and budget[0] > 0:
        progress = False
        env = _eval(part)
        failing = {f[1] for f in best_out.fails}
        down = set(failing)
        for n in part.nodes:
            if any(i in down for i in n.input):
                down.update(n.output)
        anc = {}
        have = set(part.inits) | set(part.inputs)
        for n in part.nodes:
            s = set().union(*[anc.get(i, set()) for i in n.input if i]) | {id(n)}
            for o in n.output:
                anc[o] = s
        cands = [o for n in part.nodes for o in n.output
                 if o in env and env[o].is_floating_point() and o != part.loss and o not in have
                 and (o in down or kind != "mismatch")]
        cands.sort(key=lambda o: len(anc[o]))
        for v in cands:
            if len(anc[v]) + 2 >= len(part.nodes):
                break
            c = _cut(part, v, env, rng)
            if _valid(c) is None:
                continue
            o = still([c])
            if o:
                part, best_out, progress = c, o, True
                log(f"    cut at {v}: {len(part.nodes)} nodes")
                break
            if budget[0] <= 0:
                break
    # 3. bypasses: a node replaced by one of its same-shaped inputs.
    progress = True
    while progress and budget[0] > 0:
        progress = False
        env = _eval(part)
        for idx in reversed(range(len(part.nodes))):
            n = part.nodes[idx]
            if n.op_type == "Constant" or len(n.output) != 1 or n.output[0] not in env:
                continue
            y = env[n.output[0]]
            # its inputs, then earlier values (nearest first), of the same shape
            earlier = [o for m in reversed(part.nodes[:idx]) for o in m.output
                       if o not in n.input][:12]
            tried = 0
            for i in list(n.input) + earlier:
                if i and i in env and i not in part.inits and env[i].shape == y.shape \
                        and env[i].dtype == y.dtype:
                    c = _bypass(part, idx, i)
                    if c is None or len(c.nodes) >= len(part.nodes) or _valid(c) is None:
                        continue
                    o = still([c])
                    tried += 1
                    if o:
                        part, best_out, progress = c, o, True
                        log(f"    bypassed {n.op_type}: {len(part.nodes)} nodes")
                    if o or tried >= 2:
                        break
            if progress or budget[0] <= 0:
                break
    return [part], best_out


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

def packs_for(seed, graphs, opt2_every):
    """[(pack id, opt level, [graph indices])]: -O 2 for one graph in opt2_every."""
    o0 = [i for i in range(graphs) if not (opt2_every and i % opt2_every == opt2_every - 1)]
    o2 = [i for i in range(graphs) if opt2_every and i % opt2_every == opt2_every - 1]
    out = []
    for lvl, idx in ((0, o0), (2, o2)):
        for k in range(0, len(idx), PACK):
            chunk = idx[k:k + PACK]
            out.append((f"s{seed}-O{lvl}-{chunk[0]}", lvl, chunk))
    return out


def batch_of(seed, pack_id):
    return int(np.random.default_rng([seed, sum(map(ord, pack_id))]).integers(3, 6))


def check_op_coverage(path):
    ops = gen.importer_ops(path)
    missing = [o for o in ops if o not in gen.OPS]
    extra = [o for o in gen.OPS if o not in ops]
    ok = not missing
    print(f"importer ops: {len(ops)}; generator entries: {len(gen.OPS)}; "
          f"without a gradient check (still generated): "
          + ", ".join(f"{k} ({v})" for k, v in gen.NO_GRADIENT.items()))
    if missing:
        print("FAIL: importer ops with no generator entry: " + ", ".join(missing))
    if extra:
        print("FAIL: generator entries the importer does not convert: " + ", ".join(extra))
    return ok and not extra


def load_case(d):
    """A kept case (model.onnx, <input>.npy) as one Part, and its configuration and -O level
    from the folder's name (<pack>-<config>, the pack naming its level: s3-O0-17-cpu)."""
    model = onnx.load(os.path.join(d, "model.onnx"))
    g = model.graph
    last = g.node[-1]
    if last.output[0] != "loss":
        raise ValueError(f"{d}: the last node does not produce `loss`")
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    inputs = {i.name: np.load(os.path.join(d, i.name + ".npy")) for i in g.input if i.name not in inits}
    nodes = list(g.node[:-1])
    if last.op_type == "Identity":
        parts = [gen.Part(nodes, inits, inputs, last.input[0])]
    else:  # an unshrunk pack: one part per loss, all nodes in the first
        parts = [gen.Part(nodes, inits, inputs, last.input[0])] + \
            [gen.Part([], {}, {}, l) for l in last.input[1:]]
    name = os.path.basename(os.path.normpath(d))
    config = next((c for c in sorted(CONFIGS, key=len, reverse=True) if name.endswith("-" + c)), None)
    if config is None:
        raise ValueError(f"{d}: the folder name ends in no configuration ({', '.join(CONFIGS)})")
    m = re.search(r"-O(\d)-", name)
    return parts, config, int(m.group(1)) if m else 0


def replay(dirs, args):
    """Re-checks kept cases (findings, regression cases); 1 if any fails."""
    status = 0
    for d in dirs:
        parts, config, opt = load_case(d)
        work = tempfile.mkdtemp(prefix="difftest-replay.")
        o = check(parts, args, config, opt, work)
        print(f"{d} [{config} -O {opt}]: " + ("ok" if not o.failed() else o.describe()), flush=True)
        if o.failed():
            status = 1
        else:
            shutil.rmtree(work, ignore_errors=True)
    return status


def help_flags(oc):
    r = sh([oc, "--help"], 60)
    return r.stdout + r.stderr


def main():
    global PACK
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oflow-compile", metavar="PATH")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graphs", type=int, default=64)
    ap.add_argument("--configs", default="cpu", help="comma-separated: " + ",".join(CONFIGS))
    ap.add_argument("--opt2-every", type=int, default=10, help="-O 2 for one graph in N (0: never)")
    ap.add_argument("--out", help="work and findings folder (default: a temporary one)")
    ap.add_argument("--resume", metavar="STATE.json", help="skip packs recorded there; record new ones")
    ap.add_argument("--check-op-coverage", action="store_true",
                    help="fail if an op of the importer has no generator entry (and run nothing else "
                    "unless --oflow-compile is given)")
    ap.add_argument("--importer", default=os.path.join(ROOT, "lib/Import/OnnxOpConverters.cpp"))
    ap.add_argument("--lr", type=float, default=LR)
    ap.add_argument("--floor", type=float, default=1e-5,
                    help="least relative error that fails a tensor (default 1e-5, issue #13's)")
    ap.add_argument("--show-thresholds", action="store_true",
                    help="print each tensor's error and threshold (with --replay: what a case allows)")
    ap.add_argument("--timeout", type=int, default=900, help="per compile / run, seconds")
    ap.add_argument("--shrink-budget", type=int, default=40, help="compiles per shrink")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--replay", nargs="+", metavar="DIR",
                    help="re-check kept cases (a finding's folder: model.onnx, inputs, the "
                    "configuration in its name) instead of generating graphs")
    ap.add_argument("--pack", type=int, default=PACK, help="subgraphs per model (<= 32; default %(default)s)")
    args = ap.parse_args()
    FLOOR[0] = args.floor
    SHOW_THRESHOLDS[0] = args.show_thresholds
    PACK = max(1, min(32, args.pack))

    status = 0
    # The coverage check runs on every run that can see the importer's source.
    if args.check_op_coverage or os.path.exists(args.importer):
        if not check_op_coverage(args.importer):
            status = 1
        if not args.oflow_compile:
            return status
    if not args.oflow_compile:
        ap.error("--oflow-compile is required")
    if args.replay:
        return replay(args.replay, args) or status

    out = args.out or tempfile.mkdtemp(prefix="difftest.")
    os.makedirs(out, exist_ok=True)
    state = {"done": {}, "findings": [], "ops": {}, "timings": []}
    if args.resume and os.path.exists(args.resume):
        with open(args.resume) as f:
            state = json.load(f)

    def save_state():
        if args.resume:
            tmp = args.resume + ".tmp"
            with open(tmp, "w") as f:
                json.dump(state, f, indent=1)
            os.replace(tmp, args.resume)

    helptext = help_flags(args.oflow_compile)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    skipped = {}
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown configuration {c}")
        for flag in CONFIGS[c]:
            if flag.startswith("--no-") and flag not in helptext:
                skipped[c] = f"oflow-compile has no {flag}"
    for c, why in skipped.items():
        print(f"SKIP configuration {c}: {why}")
    configs = [c for c in configs if c not in skipped]

    def log(msg):
        print(msg, flush=True)

    ops = Counter(state.get("ops", {}))
    per_config = Counter()
    t0 = time.time()
    for pack_id, opt, idx in packs_for(args.seed, args.graphs, args.opt2_every):
        B = batch_of(args.seed, pack_id)
        parts = None
        for config in configs:
            key = f"{pack_id}/{config}"
            if key in state["done"]:
                per_config[config] += len(idx)
                continue
            if parts is None:
                t = time.time()
                parts = [gen.generate_subgraph(args.seed, i, f"g{i}_", B) for i in idx]
                refs = reference(parts)
                t_gen = time.time() - t
                pack_ops = Counter(n.op_type for p in parts for n in p.nodes)
            work = os.path.join(out, "work", key.replace("/", "-"))
            o = check(parts, args, config, opt, work, refs)
            per_config[config] += len(idx)
            ops.update(pack_ops)
            rec = {"pack": pack_id, "config": config, "opt": opt, "graphs": len(idx),
                   "nodes": sum(len(p.nodes) for p in parts), "gen_ref_s": round(t_gen, 2),
                   "compile_s": round(o.t_compile, 2), "run_s": round(o.t_run, 2),
                   "result": o.kind}
            state["timings"].append(rec)
            log(f"{key}: {len(idx)} graphs, {rec['nodes']} nodes, -O {opt}: gen+ref {t_gen:.1f}s, "
                f"compile {o.t_compile:.1f}s, run {o.t_run:.1f}s: "
                + ("ok" if not o.failed() else o.describe()))
            if o.failed():
                if o.kind == "reference":
                    state["findings"].append({"pack": key, "repro": "", "what": "generator/reference: " + o.msg})
                else:
                    fdir = os.path.join(out, "findings", key.replace("/", "-"))
                    small, so = (parts, o) if args.no_shrink else \
                        shrink(parts, o, args, config, opt, os.path.join(work + "-shrink"), log)
                    if os.path.exists(fdir):
                        shutil.rmtree(fdir)
                    path = write_case(small, fdir)
                    nodes = [n for p in small for n in p.nodes]
                    opsig = " ".join(n.op_type for n in nodes if n.op_type != "Constant")
                    line = (f"[{config} -O {opt}] {so.describe()} | {len(nodes)} nodes: {opsig[:400]}")
                    with open(os.path.join(fdir, "description.txt"), "w") as f:
                        f.write(line + "\n")
                    cmd = (f"oflow-compile model.onnx {' '.join(CONFIGS[config])} -O {opt} --optimizer sgd "
                           f"--lr {args.lr} -o train && ./train --steps 1 --dump-grads grads "
                           f"--export trained.onnx --check-memory "
                           + " ".join(f"--data {n}={n}.npy" for p in small for n in p.inputs))
                    with open(os.path.join(fdir, "repro.sh"), "w") as f:
                        f.write(cmd + "\n")
                    state["findings"].append({"pack": key, "repro": path, "what": line})
                    log(f"  FINDING {path}: {line}")
            state["done"][key] = o.kind
            state["ops"] = dict(ops)
            save_state()

    # Summary
    print()
    print(f"{'configuration':<16}{'graphs':>8}")
    for c in configs:
        print(f"{c:<16}{per_config[c]:>8}")
    covered = sorted(o for o in gen.OPS if ops.get(o))
    notcov = sorted(o for o in gen.OPS if not ops.get(o))
    print(f"ops covered: {len(covered)}/{len(gen.OPS)}" + (f" (not: {', '.join(notcov)})" if notcov else ""))
    if state["timings"]:
        ts = state["timings"]
        print("compile+run per pack: " + ", ".join(f"{t['compile_s'] + t['run_s']:.0f}s" for t in ts[-8:]))
    print(f"elapsed {time.time() - t0:.0f}s; out {out}")
    fails = state["findings"]
    print(f"failures: {len(fails)}")
    for f in fails:
        print(f"  {f['pack']}: {f['repro']}\n    {f['what']}")
    return 1 if (fails or status) else 0


if __name__ == "__main__":
    sys.exit(main())
