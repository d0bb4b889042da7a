"""GPT-2-small-shaped example: configurations and the seeded initial weights.

This module needs numpy only (no torch, no onnx), so the GPU check can rebuild
the exact initial weights on a machine where they were never stored: the
weights of the 124M-parameter model are not carried to the GPU machine (about
500 MB); this generator is.

Initial values: Linear/Embedding weights with standard deviation 0.02 (as
GPT-2, but uniform: U(-0.02*sqrt(3), +0.02*sqrt(3)), which draws twice as fast
as normal values), biases 0, LayerNorm weight 1 / bias 0, and each attention
block's `causal_mask` buffer a lower-triangular bool [T, T]. The random values
come from ONE `numpy.random.RandomState(seed)`, drawn with `random_sample`
tensor after tensor in `spec()` order (the legacy RandomState stream is frozen
by numpy's compatibility policy, so every numpy version gives the same bytes),
scaled in float64 and rounded to float32.

Token data (`make_tokens`): a second RandomState(seed + 1) draws one stream of
N*T + 1 ids uniform in [0, vocab); row i is stream[i*T : i*T + T] and its
targets are the same window shifted by one.
"""
import numpy as np

CONFIGS = {
    # GPT-2 small: 12 layers, 12 heads, d_model 768, vocabulary 50257, context 1024.
    "small": dict(n_layer=12, n_head=12, d_model=768, vocab=50257, block=1024, batch=8, rows=128),
    # The same shape family, small enough for a CPU dry run of the GPU check.
    "one": dict(n_layer=1, n_head=12, d_model=768, vocab=50257, block=1024, batch=8, rows=16),
    "tiny": dict(n_layer=2, n_head=2, d_model=64, vocab=503, block=64, batch=4, rows=32),
}
# GPT-2 small's shape at other depths, for the compile-time benchmark (bench/compile_bench.py).
for _layers in (1, 2, 4):
    CONFIGS[f"small-{_layers}l"] = dict(CONFIGS["small"], n_layer=_layers)
WEIGHT_SEED = 1234
STD = 0.02
HALF_WIDTH = STD * 3.0 ** 0.5   # a uniform [-h, h] has std h / sqrt(3)


def spec(cfg):
    """[(name, shape, dtype, init)] of every initializer, in generation order.

    Names are the torch state_dict names of examples/gpt2s/model.py (which are
    also the ONNX initializer names); init is normal (std 0.02, see above) | zeros | ones | tril.
    """
    d, t, v = cfg["d_model"], cfg["block"], cfg["vocab"]
    out = [("wte.weight", (v, d), "float32", "normal"),
           ("wpe.weight", (t, d), "float32", "normal")]
    for i in range(cfg["n_layer"]):
        p = "blocks.%d." % i
        out += [(p + "ln_1.weight", (d,), "float32", "ones"),
                (p + "ln_1.bias", (d,), "float32", "zeros")]
        for lin in ("q", "k", "v", "proj"):
            out += [(p + "attn.%s.weight" % lin, (d, d), "float32", "normal"),
                    (p + "attn.%s.bias" % lin, (d,), "float32", "zeros")]
        out += [(p + "attn.causal_mask", (t, t), "bool", "tril"),
                (p + "ln_2.weight", (d,), "float32", "ones"),
                (p + "ln_2.bias", (d,), "float32", "zeros"),
                (p + "mlp.fc1.weight", (4 * d, d), "float32", "normal"),
                (p + "mlp.fc1.bias", (4 * d,), "float32", "zeros"),
                (p + "mlp.fc2.weight", (d, 4 * d), "float32", "normal"),
                (p + "mlp.fc2.bias", (d,), "float32", "zeros")]
    out += [("ln_f.weight", (d,), "float32", "ones"),
            ("ln_f.bias", (d,), "float32", "zeros")]
    return out


def num_params(cfg):
    """Trainable parameters (the tied wte counted once; masks are buffers)."""
    return sum(int(np.prod(s)) for _, s, _, init in spec(cfg) if init != "tril")


def initial_weights(cfg, seed=WEIGHT_SEED):
    """Yield (name, ndarray) for every initializer, in spec() order."""
    rs = np.random.RandomState(seed)
    for name, shape, dtype, init in spec(cfg):
        if init == "normal":
            a = ((rs.random_sample(shape) * 2.0 - 1.0) * HALF_WIDTH).astype(np.float32)
        elif init == "zeros":
            a = np.zeros(shape, np.float32)
        elif init == "ones":
            a = np.ones(shape, np.float32)
        elif init == "tril":
            a = np.tril(np.ones(shape, dtype=np.bool_))
        else:
            raise ValueError(init)
        yield name, a


def make_tokens(cfg, seed=WEIGHT_SEED + 1):
    """(tokens, targets): int64 [rows, T], seeded, ids uniform in [0, vocab)."""
    n, t = cfg["rows"], cfg["block"]
    stream = np.random.RandomState(seed).randint(0, cfg["vocab"], size=n * t + 1).astype(np.int64)
    return stream[:n * t].reshape(n, t).copy(), stream[1:n * t + 1].reshape(n, t).copy()


def attention_flops_per_token(cfg):
    """Attention score and value matmuls, forward + backward, per token.

    2 matmuls (q k^T, att v) of 2*T*d flops each in the forward, x3 with the
    backward: 12 * n_layer * d_model * T (PaLM appendix B; the causal mask is not
    discounted)."""
    return 12 * cfg["n_layer"] * cfg["d_model"] * cfg["block"]


def flops_per_token(cfg):
    """Training flops per token: 6 N (matmuls with the weights, forward and
    backward) + attention. N counts the position embedding too (it is small)."""
    return 6 * num_params(cfg) + attention_flops_per_token(cfg)
