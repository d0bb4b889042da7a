#!/usr/bin/env python3
"""Writes a GPT of any size in oflow's native IR, with no weight file.

The graph is the ONNX GPT examples' (examples/gpt, examples/gpt2s): token
and position embeddings, pre-LN blocks of causal self-attention (separate
q, k, v projections) and a GELU (erf) MLP with residual additions, a final
layer norm, the LM head tied to the token embedding, and the mean
cross-entropy over every position. Weights are `#oflow.init` recipes (GPT-2's:
linear and embedding weights N(0, 0.02), biases 0, layer norms 1 and 0),
drawn by the executable when it starts, so a 7B model's IR is a few hundred
kilobytes:

  examples/gpt-config/gen.py --layers 48 --d-model 1600 --heads 25 \\
      --vocab 50304 --seq 1024 --batch 8 -o gpt1.5b.mlir
  oflow-compile gpt1.5b.mlir --mesh 16x8 --emit=simulate ...

Inputs: `tokens` and `targets`, int64 [batch, seq].
"""
import argparse
import math
import sys


class Writer:
    """Ops one per line, each located like the ONNX exporter names nodes
    (`loc("/blocks.0/attn/q/matmul")`), so that --recompute REGEX, error
    messages and --emit=plan-html see the same layers as for the ONNX GPT."""

    def __init__(self):
        self.lines, self.n, self.scope = [], 0, ""

    def op(self, text, loc=None):
        name = f"%{self.n}"
        self.n += 1
        loc = loc or f"{self.scope}/{text.split()[0].removeprefix('oflow.')}"
        self.lines.append(f'    {name} = {text} loc("{loc}")')
        return name


def t(*dims, dtype="f32"):
    return f"tensor<{'x'.join(map(str, dims))}x{dtype}>" if dims else f"tensor<{dtype}>"


def generate(layers, d, heads, vocab, seq, batch, d_ff=None, seed=0, std=0.02):
    if d % heads:
        raise SystemExit(f"--d-model {d} is not a multiple of --heads {heads}")
    d_ff = d_ff or 4 * d
    hd = d // heads
    w = Writer()
    normal = f"#oflow.init<normal(0.0, {std!r})" + (f", seed = {seed}" if seed else "") + ">"
    zeros, ones = "#oflow.init<zeros>", "#oflow.init<ones>"

    def weight(name, recipe, *dims):
        return w.op(f'oflow.weight "{name}", {recipe} : {t(*dims)}', loc=name)

    def scoped(name):  # "blocks.0.attn.q" -> "/blocks.0/attn/q", as torch's exporter
        parts = name.split(".")
        out = []
        for part in parts:
            if part.isdigit() and out:
                out[-1] += "." + part
            else:
                out.append(part)
        return "/" + "/".join(out)

    def linear(x, name, din, dout, rows):  # x [*rows, din] -> [*rows, dout]
        outer, w.scope = w.scope, scoped(name)
        wt = weight(f"{name}.weight", normal, dout, din)
        b = weight(f"{name}.bias", zeros, dout)
        wtt = w.op(f"oflow.transpose {wt} [1, 0] : ({t(dout, din)}) -> {t(din, dout)}")
        y = w.op(f"oflow.matmul {x}, {wtt} : ({t(*rows, din)}, {t(din, dout)}) -> {t(*rows, dout)}")
        out = w.op(f"oflow.add {b}, {y} : ({t(dout)}, {t(*rows, dout)}) -> {t(*rows, dout)}")
        w.scope = outer
        return out

    def layer_norm(x, name):
        outer, w.scope = w.scope, scoped(name)
        g = weight(f"{name}.weight", ones, d)
        b = weight(f"{name}.bias", zeros, d)
        out = w.op(f"oflow.layer_norm {x}, {g}, {b} {{axis = 2 : i64}} : "
                   f"({t(batch, seq, d)}, {t(d)}, {t(d)}) -> {t(batch, seq, d)}")
        w.scope = outer
        return out

    def scalar(v):
        return w.op(f"oflow.constant dense<{v!r}> : tensor<f32>")

    x3 = (batch, seq, d)
    w.scope = "/embedding"
    wte = weight("wte.weight", normal, vocab, d)
    wpe = weight("wpe.weight", normal, seq, d)
    emb = w.op(f"oflow.gather {wte}, %arg0 : ({t(vocab, d)}, {t(batch, seq, dtype='i64')}) -> {t(*x3)}")
    h = w.op(f"oflow.add {emb}, {wpe} : ({t(*x3)}, {t(seq, d)}) -> {t(*x3)}")
    # The causal mask: true above the diagonal (the future), shared by every layer.
    w.scope = "/mask"
    ones_tt = w.op(f"oflow.constant dense<1.0> : {t(seq, seq)}")
    upper = w.op(f"oflow.trilu {ones_tt} {{upper = true, k = 1 : i64}} : {t(seq, seq)}")
    zero = scalar(0.0)
    mask = w.op(f"oflow.compare gt {upper}, {zero} : ({t(seq, seq)}, tensor<f32>) -> {t(seq, seq, dtype='i1')}")
    neg_inf = w.op("oflow.constant dense<0xFF800000> : tensor<f32>")
    scale = scalar(1.0 / math.sqrt(hd))
    sqrt2, one, half = scalar(math.sqrt(2.0)), scalar(1.0), scalar(0.5)
    h4 = (batch, seq, heads, hd)
    for i in range(layers):
        p = f"blocks.{i}"
        w.scope = f"/{p}/attn"
        a = layer_norm(h, f"{p}.ln_1")
        q = linear(a, f"{p}.attn.q", d, d, (batch, seq))
        q = w.op(f"oflow.reshape {q} [{batch}, {seq}, {heads}, {hd}] : ({t(*x3)}) -> {t(*h4)}")
        q = w.op(f"oflow.transpose {q} [0, 2, 1, 3] : ({t(*h4)}) -> {t(batch, heads, seq, hd)}")
        k = linear(a, f"{p}.attn.k", d, d, (batch, seq))
        k = w.op(f"oflow.reshape {k} [{batch}, {seq}, {heads}, {hd}] : ({t(*x3)}) -> {t(*h4)}")
        v = linear(a, f"{p}.attn.v", d, d, (batch, seq))
        v = w.op(f"oflow.reshape {v} [{batch}, {seq}, {heads}, {hd}] : ({t(*x3)}) -> {t(*h4)}")
        v = w.op(f"oflow.transpose {v} [0, 2, 1, 3] : ({t(*h4)}) -> {t(batch, heads, seq, hd)}")
        kt = w.op(f"oflow.transpose {k} [0, 2, 3, 1] : ({t(*h4)}) -> {t(batch, heads, hd, seq)}")
        s = w.op(f"oflow.matmul {q}, {kt} : ({t(batch, heads, seq, hd)}, {t(batch, heads, hd, seq)}) "
                 f"-> {t(batch, heads, seq, seq)}")
        s = w.op(f"oflow.mul {s}, {scale} : ({t(batch, heads, seq, seq)}, tensor<f32>) -> {t(batch, heads, seq, seq)}")
        s = w.op(f"oflow.where {mask}, {neg_inf}, {s} : ({t(seq, seq, dtype='i1')}, tensor<f32>, "
                 f"{t(batch, heads, seq, seq)}) -> {t(batch, heads, seq, seq)}")
        s = w.op(f"oflow.softmax {s} {{axis = 3 : i64}} : {t(batch, heads, seq, seq)}")
        o = w.op(f"oflow.matmul {s}, {v} : ({t(batch, heads, seq, seq)}, {t(batch, heads, seq, hd)}) "
                 f"-> {t(batch, heads, seq, hd)}")
        o = w.op(f"oflow.transpose {o} [0, 2, 1, 3] : ({t(batch, heads, seq, hd)}) -> {t(*h4)}")
        o = w.op(f"oflow.reshape {o} [{batch}, {seq}, {d}] : ({t(*h4)}) -> {t(*x3)}")
        o = linear(o, f"{p}.attn.proj", d, d, (batch, seq))
        h = w.op(f"oflow.add {h}, {o} : ({t(*x3)}, {t(*x3)}) -> {t(*x3)}", loc=f"/{p}/add")
        w.scope = f"/{p}/mlp"
        m = layer_norm(h, f"{p}.ln_2")
        f = linear(m, f"{p}.mlp.fc1", d, d_ff, (batch, seq))
        f4 = t(batch, seq, d_ff)
        g = w.op(f"oflow.div {f}, {sqrt2} : ({f4}, tensor<f32>) -> {f4}")
        g = w.op(f"oflow.erf {g} : {f4}")
        g = w.op(f"oflow.add {g}, {one} : ({f4}, tensor<f32>) -> {f4}")
        g = w.op(f"oflow.mul {f}, {g} : ({f4}, {f4}) -> {f4}")
        g = w.op(f"oflow.mul {g}, {half} : ({f4}, tensor<f32>) -> {f4}")
        f = linear(g, f"{p}.mlp.fc2", d_ff, d, (batch, seq))
        h = w.op(f"oflow.add {h}, {f} : ({t(*x3)}, {t(*x3)}) -> {t(*x3)}", loc=f"/{p}/add_1")
    w.scope = ""
    h = layer_norm(h, "ln_f")
    rows = batch * seq
    w.scope = "/lm_head"
    h = w.op(f"oflow.reshape {h} [{rows}, {d}] : ({t(*x3)}) -> {t(rows, d)}")
    head = w.op(f"oflow.transpose {wte} [1, 0] : ({t(vocab, d)}) -> {t(d, vocab)}")
    logits = w.op(f"oflow.matmul {h}, {head} : ({t(rows, d)}, {t(d, vocab)}) -> {t(rows, vocab)}")
    labels = w.op(f"oflow.reshape %arg1 [{rows}] : ({t(batch, seq, dtype='i64')}) -> {t(rows, dtype='i64')}")
    w.scope = "/loss"
    loss = w.op(f"oflow.softmax_cross_entropy mean {logits}, {labels} {{ignore_index = -100 : i64}} : "
                f"({t(rows, vocab)}, {t(rows, dtype='i64')}) -> tensor<f32>")
    ids = t(batch, seq, dtype="i64")
    body = "\n".join(w.lines)
    return (f"// GPT: {layers} layers, d_model {d}, {heads} heads, vocabulary {vocab}, "
            f"sequence {seq}, batch {batch} (examples/gpt-config/gen.py)\n"
            f"module attributes {{oflow.mesh = #oflow.mesh<1>}} {{\n"
            f"  func.func @main(%arg0: {ids} {{oflow.name = \"tokens\"}}, %arg1: {ids} "
            f"{{oflow.name = \"targets\"}}) -> (tensor<f32> {{oflow.name = \"loss\"}}) {{\n"
            f"{body}\n    return {loss} : tensor<f32>\n  }}\n}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--d-model", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--d-ff", type=int, help="the MLP's width (default 4 x d-model)")
    ap.add_argument("--seed", type=int, default=0, help="the recipes' seed")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    text = generate(a.layers, a.d_model, a.heads, a.vocab, a.seq, a.batch, a.d_ff, a.seed)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
