"""GPT-2-small-shaped decoder for the GPU benchmark (bench/gpu_check.py).

The architecture is the char-level GPT example's (examples/gpt/model.py: its
CausalSelfAttention and MLPBlock classes are reused as they are), sized by a
configuration from weights.py instead of that module's constants:

    tokens [B, T] int64
      h = wte[tokens] + wpe.weight                       wte [V, C], wpe [T, C]
      n_layer x pre-LN block:
        h = h + proj(causal_self_attention(ln_1(h)))     n_head heads, explicit softmax(q k^T) v
        h = h + fc2(gelu(fc1(ln_2(h))))                  C -> 4C -> C, exact (erf) GELU
      h = ln_f(h)
      logits = h.reshape(B*T, C) @ wte.weight.T          LM head tied to wte
    loss = F.cross_entropy(logits, targets.view(-1))     mean, scalar

"small" is GPT-2 small (12 layers, 12 heads, C 768, V 50257, T 1024, 124.4M
parameters), batch 8; "tiny" is the same family at toy size for CPU dry runs.
No dropout. `make_model(name)` builds the module and loads weights.py's seeded
initial weights, so torch and the compiled executable start from the same values.
"""
import importlib.util
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import weights as W  # noqa: E402


def _load_gpt_example():
    spec = importlib.util.spec_from_file_location(
        "oflow_example_gpt_model", os.path.join(os.path.dirname(HERE), "gpt", "model.py"))
    module = importlib.util.module_from_spec(spec)
    # Registered, so that torch.compile (dynamo) can import the module its
    # classes name when it traces them.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


G = _load_gpt_example()


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.ln_1 = nn.LayerNorm(d)
        self.attn = G.CausalSelfAttention(d, cfg["n_head"], cfg["block"])
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = G.MLPBlock(d, 4 * d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT2S(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = dict(cfg)
        self.d_model, self.vocab_size = cfg["d_model"], cfg["vocab"]
        self.wte = nn.Embedding(cfg["vocab"], cfg["d_model"])
        self.wpe = nn.Embedding(cfg["block"], cfg["d_model"])
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])])
        self.ln_f = nn.LayerNorm(cfg["d_model"])

    def forward(self, tokens, targets):
        h = self.wte(tokens) + self.wpe.weight
        for block in self.blocks:
            h = block(h)
        h = self.ln_f(h)
        logits = h.reshape(-1, self.d_model) @ self.wte.weight.t()
        return F.cross_entropy(logits, targets.reshape(-1))


def load_weights(model, named_arrays):
    """Copy (name, ndarray) pairs into the module; every state entry must be given."""
    state = model.state_dict()
    seen = set()
    with torch.no_grad():
        for name, a in named_arrays:
            t = state[name]
            assert tuple(t.shape) == a.shape, (name, tuple(t.shape), a.shape)
            t.copy_(torch.from_numpy(np.array(a)))
            seen.add(name)
    missing = set(state) - seen
    assert not missing, "no initial value for %s" % sorted(missing)
    return model


def make_model(name="small", seed=W.WEIGHT_SEED):
    cfg = W.CONFIGS[name]
    model = GPT2S(cfg)
    got = [(k, tuple(v.shape)) for k, v in model.state_dict().items()]
    want = [(k, tuple(s)) for k, s, _, _ in W.spec(cfg)]
    assert sorted(got) == sorted(want), "weights.spec() does not match the module"
    return load_weights(model, W.initial_weights(cfg, seed))
