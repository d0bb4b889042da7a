#!/usr/bin/env python3
"""HBM bytes of one GPT-2 training step under an llm.c-style schedule.

The yardstick of `oflow-compile --emit=kernels` (issue #14): the report's HBM
bytes per step over this figure is the *bytes ratio*. Computed from the model
configuration alone, for a pre-LN GPT-2 (learned positions, tied embedding,
GELU MLP of width 4C, causal attention, cross-entropy, AdamW):

  * every GEMM reads its operands once and writes its result once (biases
    and bias gradients in cuBLASLt epilogues: no extra pass);
  * every GEMM result is read once by one fused consumer;
  * one kernel each for layer norm (fused with the residual add before it),
    softmax, GELU and cross-entropy (fused with its backward, in place);
  * the causal mask is computed from indices, never read;
  * the activations autograd saves are written once (forward) and read once
    (backward); each backward op reads its upstream gradient and saved inputs
    once and writes its input gradients once (the residual stream's gradient
    is read and written once more per layer norm, where it accumulates);
  * AdamW reads parameters, gradients and both moments and writes three.

Per-row statistics (layer-norm mean and rstd, softmax/cross-entropy row
maxima and sums) are counted too; they are small.

    /usr/bin/python3 bench/min_bytes.py                      # GPT-2 small, fp32 and bf16
    /usr/bin/python3 bench/min_bytes.py --layers 2 --width 64 --heads 2 --seq 64 \\
        --batch 8 --vocab 65 --precision fp32                # the GPT example
    /usr/bin/python3 bench/min_bytes.py --items              # one line per item

Precision fp32: activations, gradients and GEMM operands 4 bytes. bf16 (llm.c):
activations, gradients and the GEMMs' weight copies 2 bytes; master weights
and both moments stay 4 bytes (AdamW also writes the 2-byte weight copy).
"""
import argparse
import sys


def step_bytes(L, C, H, T, B, V, precision):
    """[(item, bytes)] for one training step."""
    a = 4 if precision == "fp32" else 2   # activations and activation gradients
    w = 4 if precision == "fp32" else 2   # weights as GEMMs read them, weight gradients
    f = 4                                 # master weights, Adam moments, row statistics
    N = B * T                             # tokens
    NC, S = N * C, B * H * T * T          # a [N, C] activation; one attention matrix
    items = []

    def add(name, n):
        items.append((name, n))

    # -- forward ---------------------------------------------------------------
    add("embedding: read wte rows, wpe, write x", (NC + T * C) * w + NC * a)
    for _ in range(L):
        # layer norm 1 (the residual add of the previous block fused in: it
        # reads both summands and writes the sum, which the backward saves)
        add("ln1 (+residual): read 2, write 2 [N,C], mean/rstd", 4 * NC * a + 2 * N * f)
        add("qkv GEMM: read ln1, W[3C,C]; write [N,3C]", NC * a + 3 * C * C * w + 3 * NC * a)
        add("scores GEMM: read q, k; write [B,H,T,T]", 2 * NC * a + S * a)
        add("softmax: read scores, write probs", 2 * S * a)
        add("PV GEMM: read probs, v; write [N,C]", S * a + NC * a + NC * a)
        add("proj GEMM: read att, W[C,C]; write [N,C]", NC * a + C * C * w + NC * a)
        add("ln2 (+residual): read 2, write 2 [N,C], mean/rstd", 4 * NC * a + 2 * N * f)
        add("fc GEMM: read ln2, W[4C,C]; write [N,4C]", NC * a + 4 * C * C * w + 4 * NC * a)
        add("gelu: read, write [N,4C]", 8 * NC * a)
        add("fc2 GEMM: read gelu, W[C,4C]; write [N,C]", 4 * NC * a + 4 * C * C * w + NC * a)
    add("ln_f (+residual): read 2, write 2 [N,C], mean/rstd", 4 * NC * a + 2 * N * f)
    add("lm head GEMM: read ln_f, wte[V,C]; write logits [N,V]", NC * a + V * C * w + N * V * a)
    add("cross-entropy + backward in place: read logits, targets; write dlogits",
        2 * N * V * a + N * 8 + 2 * N * f)

    # -- backward --------------------------------------------------------------
    add("lm head dX GEMM: read dlogits, wte; write [N,C]", N * V * a + V * C * w + NC * a)
    add("lm head dW GEMM: read dlogits, ln_f; write dwte", N * V * a + NC * a + V * C * w)
    add("ln_f backward: read dout, x, stats; write dx (residual grad)", 3 * NC * a + 2 * N * f)
    for _ in range(L):
        add("fc2 dX GEMM: read dres, W; write [N,4C]", NC * a + 4 * C * C * w + 4 * NC * a)
        add("fc2 dW GEMM: read dres, gelu; write dW", NC * a + 4 * NC * a + 4 * C * C * w)
        add("gelu backward: read dgelu, fc out; write dfc", 12 * NC * a)
        add("fc dX GEMM: read dfc, W; write [N,C]", 4 * NC * a + 4 * C * C * w + NC * a)
        add("fc dW GEMM: read dfc, ln2; write dW", 4 * NC * a + NC * a + 4 * C * C * w)
        add("ln2 backward: read dout, x, stats, dres; write dres", 4 * NC * a + 2 * N * f)
        add("proj dX GEMM: read dres, W; write datt", NC * a + C * C * w + NC * a)
        add("proj dW GEMM: read dres, att; write dW", 2 * NC * a + C * C * w)
        add("PV backward: dP (read datt, v; write [B,H,T,T]), dV (read P, datt; write)",
            2 * NC * a + S * a + S * a + 2 * NC * a)
        add("softmax backward: read dP, P; write dscores", 3 * S * a)
        add("scores backward: dQ, dK (read dS, k / q; write)", 2 * (S * a + 2 * NC * a))
        add("qkv dX GEMM: read dqkv, W; write [N,C]", 3 * NC * a + 3 * C * C * w + NC * a)
        add("qkv dW GEMM: read dqkv, ln1; write dW", 4 * NC * a + 3 * C * C * w)
        add("ln1 backward: read dout, x, stats, dres; write dres", 4 * NC * a + 2 * N * f)
    add("embedding backward: read dx; write dwte rows, dwpe", NC * a + NC * w + T * C * w)

    # -- optimizer -------------------------------------------------------------
    P = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C  # GPT-2's parameters
    copy = 0 if precision == "fp32" else P * w           # the bf16 weight copy
    add(f"AdamW over {P} parameters: read w, g, m, v; write w, m, v",
        P * (3 * f + w) + 3 * P * f + copy)
    return items, P


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--precision", choices=["fp32", "bf16", "both"], default="both")
    p.add_argument("--items", action="store_true", help="one line per item")
    args = p.parse_args()
    precisions = ["fp32", "bf16"] if args.precision == "both" else [args.precision]
    print(f"GPT-2 L={args.layers} C={args.width} H={args.heads} T={args.seq} B={args.batch} "
          f"V={args.vocab}: llm.c-style minimum HBM bytes per training step")
    print(f"{'precision':<10}{'bytes':>16}{'GB':>10}")
    for prec in precisions:
        items, params = step_bytes(args.layers, args.width, args.heads, args.seq, args.batch,
                                   args.vocab, prec)
        total = sum(n for _, n in items)
        print(f"{prec:<10}{total:>16}{total / 1e9:>10.2f}")
        if args.items:
            merged = {}
            for name, n in items:
                merged[name] = merged.get(name, 0) + n
            for name, n in sorted(merged.items(), key=lambda kv: -kv[1]):
                print(f"    {n / 1e9:9.3f} GB  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
