#!/usr/bin/python3
"""Import-time benchmark for oflow-compile on large ONNX models.

Generates (seeded numpy + onnx.helper, into a temporary directory that is
deleted afterwards unless --keep is given):

  gpt2   a GPT-2-small-shaped decoder: 12 pre-LN blocks, d_model 768, 12 heads,
         vocab 50257 padded to 50304, context 1024, learned position
         embedding, LayerNormalization (opset 17), causal mask as a bool
         initializer + Where, erf GELU, tied LM head (Transpose + MatMul of
         the token embedding), SoftmaxCrossEntropyLoss. ~124M parameters.
  mlp    a 200-layer MLP (Gemm + Relu, width 1024 by default) ending in
         SoftmaxCrossEntropyLoss. ~210M parameters.

Each model is written twice: with its weights as ONNX external data (one
file next to the model) and as a single self-contained protobuf (both are
under protobuf's 2 GB limit). Then it times

    oflow-compile MODEL --emit=mlir -o /dev/null

(wall time, best of --repeat runs; peak RSS from /usr/bin/time -v when
available, else getrusage(RUSAGE_CHILDREN)), runs it once more with
--mlir-timing and prints that report's top lines, and prints a table.

The benchmark never fails on speed: the "< 5 s" target is only reported.
It is deliberately not registered with ctest: it takes minutes and needs
several GB of disk and memory. Run it with /usr/bin/python3 (numpy + onnx).
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TARGET_S = 5.0
TIME_BIN = "/usr/bin/time"


# --------------------------------------------------------------------------
# Model builders
# --------------------------------------------------------------------------

class GraphBuilder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.counter = 0

    def name(self, prefix):
        self.counter += 1
        return "%s_%d" % (prefix, self.counter)

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, name, shape, std=0.02):
        a = self.rng.standard_normal(size=shape, dtype=np.float32)
        a *= np.float32(std)
        return self.init(name, a)

    def const(self, name, value, dtype):
        return self.init(name, np.asarray(value, dtype=dtype))

    def op(self, op_type, inputs, prefix=None, n_out=1, **attrs):
        prefix = prefix or op_type.lower()
        outs = [self.name(prefix) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs,
                                           name=self.name("n_" + prefix), **attrs))
        return outs[0] if n_out == 1 else outs


def build_gpt2(batch, seed=0, layers=12, d_model=768, heads=12,
               vocab=50257, vocab_padded=50304, ctx=1024):
    del vocab  # the padded table is what is stored, as in nanoGPT
    g = GraphBuilder(seed)
    B, T, D, H = batch, ctx, d_model, heads
    hd = D // H
    f32, i64 = np.float32, np.int64

    wte = g.weight("wte", (vocab_padded, D))
    wpe = g.weight("wpe", (T, D), std=0.01)
    mask = np.tril(np.ones((T, T), dtype=bool)).reshape(1, 1, T, T)
    g.init("causal_mask", mask)
    neg = g.const("mask_fill", -1e4, f32)
    scale = g.const("attn_scale", 1.0 / np.sqrt(hd), f32)
    half = g.const("half", 0.5, f32)
    one = g.const("one", 1.0, f32)
    inv_sqrt2 = g.const("inv_sqrt2", 1.0 / np.sqrt(2.0), f32)
    pos = g.const("positions", np.arange(T, dtype=i64).reshape(1, T), i64)
    shape_bthd = g.const("shape_bthd", [B, T, H, hd], i64)
    shape_btd = g.const("shape_btd", [B, T, D], i64)
    shape_logits = g.const("shape_logits", [B * T, vocab_padded], i64)
    shape_labels = g.const("shape_labels", [B * T], i64)

    def layer_norm(x, prefix):
        gamma = g.init(prefix + ".weight", np.ones(D, f32))
        beta = g.init(prefix + ".bias", np.zeros(D, f32))
        return g.op("LayerNormalization", [x, gamma, beta], "ln",
                    axis=-1, epsilon=1e-5)

    def linear(x, prefix, d_in, d_out, std=0.02):
        w = g.weight(prefix + ".weight", (d_in, d_out), std)
        b = g.init(prefix + ".bias", np.zeros(d_out, f32))
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    tok = g.op("Gather", [wte, "input_ids"], "tok_emb", axis=0)
    posemb = g.op("Gather", [wpe, pos], "pos_emb", axis=0)
    x = g.op("Add", [tok, posemb], "emb")

    proj_std = 0.02 / np.sqrt(2 * layers)
    for l in range(layers):
        p = "h.%d." % l
        h = layer_norm(x, p + "ln_1")
        qkv = linear(h, p + "attn.c_attn", D, 3 * D)
        q, k, v = g.op("Split", [qkv], "qkv", n_out=3, axis=2)
        q = g.op("Transpose", [g.op("Reshape", [q, shape_bthd])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k, shape_bthd])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, shape_bthd])], perm=[0, 2, 1, 3])
        att = g.op("Mul", [g.op("MatMul", [q, k]), scale], "att")
        att = g.op("Where", ["causal_mask", att, neg], "att_masked")
        att = g.op("Softmax", [att], "att_prob", axis=-1)
        y = g.op("MatMul", [att, v], "att_out")
        y = g.op("Reshape", [g.op("Transpose", [y], perm=[0, 2, 1, 3]), shape_btd])
        y = linear(y, p + "attn.c_proj", D, D, proj_std)
        x = g.op("Add", [x, y], "resid")
        h = layer_norm(x, p + "ln_2")
        h = linear(h, p + "mlp.c_fc", D, 4 * D)
        erf = g.op("Erf", [g.op("Mul", [h, inv_sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [erf, one])], "gelu")
        h = linear(h, p + "mlp.c_proj", 4 * D, D, proj_std)
        x = g.op("Add", [x, h], "resid")

    x = layer_norm(x, "ln_f")
    wte_t = g.op("Transpose", [wte], "wte_t", perm=[1, 0])
    logits = g.op("MatMul", [x, wte_t], "logits")
    flat = g.op("Reshape", [logits, shape_logits])
    labels = g.op("Reshape", ["labels", shape_labels])
    g.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [flat, labels],
                                    ["loss"], name="n_loss", reduction="mean"))
    graph = helper.make_graph(
        g.nodes, "gpt2_small",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [B, T]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [B, T])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="oflow-import-bench")


def build_mlp(batch, seed=0, layers=200, width=1024):
    g = GraphBuilder(seed)
    x = "x"
    for l in range(layers):
        w = g.weight("fc%d.weight" % l, (width, width), std=np.sqrt(2.0 / width))
        b = g.init("fc%d.bias" % l, np.zeros(width, np.float32))
        x = g.op("Gemm", [x, w, b], "fc", transB=1)  # PyTorch Linear layout
        if l + 1 < layers:
            x = g.op("Relu", [x])
    g.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [x, "labels"],
                                    ["loss"], name="n_loss", reduction="mean"))
    graph = helper.make_graph(
        g.nodes, "mlp%d" % layers,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [batch])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="oflow-import-bench")


def count_parameters(model):
    """Elements of floating-point initializers (the mask etc. excluded)."""
    floats = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16,
              TensorProto.DOUBLE}
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer
               if t.data_type in floats)


def write_model(model, directory, stem, external):
    """Writes MODEL as DIRECTORY/STEM.onnx, with one external data file
    (STEM.onnx.data) if EXTERNAL; returns (path, total bytes, seconds)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, stem + ".onnx")
    start = time.perf_counter()
    if external:
        data = stem + ".onnx.data"
        if os.path.exists(os.path.join(directory, data)):
            os.remove(os.path.join(directory, data))
        m = onnx.ModelProto()
        m.CopyFrom(model)
        onnx.save_model(m, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data,
                        size_threshold=1024)
        size = os.path.getsize(path) + os.path.getsize(os.path.join(directory, data))
    else:
        onnx.save_model(model, path)
        size = os.path.getsize(path)
    return path, size, time.perf_counter() - start


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------

def run_compiler(compiler, model, extra=(), use_time=True, timeout=1800):
    """Runs oflow-compile once; returns (rc, wall s, peak RSS KiB or None, stderr)."""
    cmd = [compiler, model, "--emit=mlir", "-o", os.devnull] + list(extra)
    rss = None
    if use_time:
        with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            full = [TIME_BIN, "-v", "-o", tf.name] + cmd
            start = time.perf_counter()
            proc = subprocess.run(full, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout)
            wall = time.perf_counter() - start
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", tf.read())
            rss = int(m.group(1)) if m else None
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # ru_maxrss is the max over all children so far: only exact when
        # this child is the largest yet.
        rss = after if after > before else None
    return proc.returncode, wall, rss, proc.stderr.decode("utf-8", "replace")


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return "%.0f %s" % (n, unit) if unit == "B" else "%.1f %s" % (n, unit)
        n /= 1024.0


def timing_top_lines(report, n):
    """The header and the N largest rows of an --mlir-timing report."""
    lines = report.rstrip("\n").split("\n")
    rows = [l for l in lines if re.match(r"\s+\d+\.\d+ \(", l)]
    header = [l for l in lines if "Total Execution Time" in l]
    rows.sort(key=lambda l: -float(l.split()[0]))
    return header + rows[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oflow-compile", required=True, metavar="PATH")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the models to DIR and keep them (default: a "
                         "temporary directory, deleted afterwards)")
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    ap.add_argument("--models", default="gpt2,mlp",
                    help="comma-separated subset of gpt2,mlp (default: both)")
    ap.add_argument("--storage", default="external,embedded",
                    help="comma-separated subset of external,embedded "
                         "(default: both)")
    ap.add_argument("--mlp-layers", type=int, default=200)
    ap.add_argument("--mlp-width", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed runs per model; the best is reported (default 3)")
    ap.add_argument("--timing-lines", type=int, default=8,
                    help="--mlir-timing rows to print per model (default 8)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    compiler = os.path.abspath(args.oflow_compile)
    if not os.access(compiler, os.X_OK):
        sys.exit("error: %s is not an executable" % compiler)
    use_time = os.access(TIME_BIN, os.X_OK)
    models = [m for m in args.models.split(",") if m]
    storages = [s for s in args.storage.split(",") if s]
    for m in models:
        if m not in ("gpt2", "mlp"):
            sys.exit("error: unknown model %r" % m)
    for s in storages:
        if s not in ("external", "embedded"):
            sys.exit("error: unknown storage %r" % s)

    workdir = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="oflow-bench-")
    rows = []
    try:
        for name in models:
            t0 = time.perf_counter()
            if name == "gpt2":
                model = build_gpt2(args.batch, seed=args.seed)
                label = "gpt2-small (12L, d768, B=%d, T=1024)" % args.batch
            else:
                model = build_mlp(args.batch, seed=args.seed,
                                  layers=args.mlp_layers, width=args.mlp_width)
                label = "mlp (%dL Gemm+Relu, w%d, B=%d)" % (
                    args.mlp_layers, args.mlp_width, args.batch)
            nodes = len(model.graph.node)
            params = count_parameters(model)
            print("[%s] built in %.1f s: %d nodes, %.1fM parameters" % (
                name, time.perf_counter() - t0, nodes, params / 1e6), flush=True)
            for storage in storages:
                stem = "%s_%s" % (name, storage)
                path, size, wsec = write_model(model, workdir, stem,
                                               storage == "external")
                print("[%s] wrote %s (%s) in %.1f s" % (
                    stem, path, human_bytes(size), wsec), flush=True)
                walls, rsses, status = [], [], "ok"
                for i in range(args.repeat):
                    rc, wall, rss, err = run_compiler(compiler, path, use_time=use_time)
                    if rc != 0:
                        status = "exit %d: %s" % (rc, err.strip().split("\n")[0][:200])
                        print("[%s] run %d: %s" % (stem, i + 1, status), flush=True)
                        break
                    walls.append(wall)
                    if rss:
                        rsses.append(rss)
                    print("[%s] run %d: %.2f s, peak RSS %s" % (
                        stem, i + 1, wall,
                        human_bytes(rss * 1024) if rss else "?"), flush=True)
                if status == "ok":
                    rc, _, _, report = run_compiler(compiler, path, ["--mlir-timing"],
                                                    use_time=False)
                    print("[%s] --mlir-timing (top rows):" % stem)
                    for line in timing_top_lines(report, args.timing_lines):
                        print("    " + line)
                    sys.stdout.flush()
                rows.append({
                    "model": label, "storage": storage, "nodes": nodes,
                    "params": params, "size": size, "status": status,
                    "best": min(walls) if walls else None,
                    "rss": max(rsses) if rsses else None,
                })
                if not args.keep:
                    for f in os.listdir(workdir):
                        if f.startswith(stem + "."):
                            os.remove(os.path.join(workdir, f))
            del model
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    head = ("model", "storage", "nodes", "params", "file size",
            "import (best of %d)" % args.repeat, "peak RSS", "target < %.0f s" % TARGET_S)
    table = []
    for r in rows:
        if r["best"] is None:
            imp, verdict = "—", r["status"]
        else:
            imp = "%.2f s" % r["best"]
            verdict = "met" if r["best"] < TARGET_S else "MISSED"
        table.append((r["model"], r["storage"], str(r["nodes"]),
                      "%.1fM" % (r["params"] / 1e6), human_bytes(r["size"]), imp,
                      human_bytes(r["rss"] * 1024) if r["rss"] else "?", verdict))
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h)
              for i, h in enumerate(head)]
    fmt = "| " + " | ".join("%%-%ds" % w for w in widths) + " |"
    print(fmt % head)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for t in table:
        print(fmt % t)
    if args.keep:
        print("\nmodels kept in %s" % workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
