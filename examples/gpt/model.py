"""Char-level GPT example: model definition and data (importable by tests).

    tokens [8, 64] int64
      h = wte[tokens] + wpe.weight                      [8, 64, 64]   (wte: [80, 64], wpe: [64, 64])
      2 x pre-LN block:
        h = h + proj(causal_self_attention(ln_1(h)))    4 heads x 16, mask = registered tril buffer
        h = h + fc2(gelu(fc1(ln_2(h))))                 64 -> 256 -> 64, exact (erf) GELU
      h = ln_f(h)                                       [8, 64, 64]
      logits = h.view(512, 64) @ wte.weight.T           [512, 80]     (LM head tied to wte)
    loss = F.cross_entropy(logits, targets.view(512))   (mean, scalar)

There is no dropout.  Weights are initialised GPT-2 style (see _init_weights).  All shapes are static: the code reshapes with Python-int
constants (never x.size()) so the ONNX export contains no Shape/Gather/Concat
chains, and the position embedding is added as the whole `wpe.weight` (T is
fixed at 64), which equals wpe(arange(64)) without a Range/Gather.

`make_model()` seeds torch and returns the module with the exact initial
weights that `export.py` writes into `gpt.onnx`.  `make_data()` rebuilds the
data from /usr/share/common-licenses/GPL-3; `load_data()` reads the committed
`tokens.npy` / `targets.npy`; `load_vocab()` reads `vocab.json`.
"""
import hashlib
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

TEXT_PATH = "/usr/share/common-licenses/GPL-3"
BLOCK = 64          # T
D_MODEL = 64
N_HEAD = 4
N_LAYER = 2
D_FF = 256
BATCH = 8
VOCAB_MULTIPLE = 8
VOCAB_SIZE = 80     # 76 distinct characters in GPL-3, padded up to a multiple of 8
TORCH_SEED = 0


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model=D_MODEL, n_head=N_HEAD, block=BLOCK):
        super().__init__()
        assert d_model % n_head == 0
        self.n_head = n_head
        self.head_dim = d_model // n_head
        self.d_model = d_model
        self.block = block
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        # Lower-triangular (query i may attend to key j <= i), bool, [T, T].
        self.register_buffer("causal_mask", torch.tril(torch.ones(block, block, dtype=torch.bool)))

    def _heads(self, t):
        # [B, T, C] -> [B, H, T, hd]; batch stays -1, everything else is a constant.
        return t.view(-1, self.block, self.n_head, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))   # [B, H, T, T]
        att = att.masked_fill(~self.causal_mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v                                                           # [B, H, T, hd]
        y = y.transpose(1, 2).reshape(-1, self.block, self.d_model)           # [B, T, C]
        return self.proj(y)


class MLPBlock(nn.Module):
    def __init__(self, d_model=D_MODEL, d_ff=D_FF):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU()          # exact erf form
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D_MODEL)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(D_MODEL)
        self.mlp = MLPBlock()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size=VOCAB_SIZE):
        super().__init__()
        self.vocab_size = vocab_size
        self.wte = nn.Embedding(vocab_size, D_MODEL)
        self.wpe = nn.Embedding(BLOCK, D_MODEL)
        self.blocks = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.apply(_init_weights)

    def logits(self, tokens):
        h = self.wte(tokens) + self.wpe.weight           # [B, T, C] + [T, C]
        for block in self.blocks:
            h = block(h)
        h = self.ln_f(h)
        # Tied LM head: the same Parameter as the token embedding.
        return h.reshape(-1, D_MODEL) @ self.wte.weight.t()   # [B*T, V]

    def forward(self, tokens, targets):
        logits = self.logits(tokens)
        return F.cross_entropy(logits.view(-1, self.vocab_size), targets.view(-1))


def _init_weights(module):
    """GPT-2 style init: Linear/Embedding weights ~ N(0, 0.02), biases 0, LayerNorm (1, 0).

    (PyTorch's default N(0, 1) embedding init makes the tied LM head's initial
    logits ~8x too large: initial loss ~35 instead of ~ln(80) = 4.38.)
    """
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def make_model(seed=TORCH_SEED):
    """Seed torch and build the module with its exact initial weights."""
    torch.manual_seed(seed)
    return GPT()


def read_text(path=TEXT_PATH):
    with open(path, "rb") as f:
        raw = f.read()
    return raw.decode("utf-8"), hashlib.sha256(raw).hexdigest()


def make_vocab(text):
    chars = sorted(set(text))
    size = -(-len(chars) // VOCAB_MULTIPLE) * VOCAB_MULTIPLE
    return {
        "source": TEXT_PATH,
        "num_chars": len(chars),
        "vocab_size": size,            # ids >= num_chars are padding, never used
        "itos": chars,                 # id -> char for ids < num_chars
        "stoi": {c: i for i, c in enumerate(chars)},
    }


def make_data(path=TEXT_PATH):
    """Encode the text; cut into non-overlapping windows of T=64 (stride 64).

    Window i is ids[64 i : 64 i + 64]; its targets are ids[64 i + 1 : 64 i + 65].
    N = (len(text) - 1) // 64 full windows.  Returns (tokens, targets, vocab)
    with tokens/targets int64 [N, 64].
    """
    text, digest = read_text(path)
    vocab = make_vocab(text)
    vocab["source_sha256"] = digest
    assert vocab["vocab_size"] == VOCAB_SIZE, vocab["vocab_size"]
    ids = np.array([vocab["stoi"][c] for c in text], dtype=np.int64)
    n = (len(ids) - 1) // BLOCK
    tokens = ids[: n * BLOCK].reshape(n, BLOCK).copy()
    targets = ids[1: n * BLOCK + 1].reshape(n, BLOCK).copy()
    return tokens, targets, vocab


def load_data(directory=HERE):
    """The committed data: tokens int64 [549, 64], targets int64 [549, 64]."""
    return (np.load(os.path.join(directory, "tokens.npy")),
            np.load(os.path.join(directory, "targets.npy")))


def load_vocab(directory=HERE):
    with open(os.path.join(directory, "vocab.json"), encoding="utf-8") as f:
        return json.load(f)
