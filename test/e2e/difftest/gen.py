"""Random ONNX training graphs for difftest.py (opset 17, float32, static shapes).

A subgraph grows from one data input x (an image [B,C,H,W], a vector [B,F]
or a sequence [B,T,F]) by applying recipes picked at random from OPS: one
entry per ONNX op oflow's importer converts. Each recipe picks its operands
from the live float values (recent ones more often, old ones too: fan-out and
long live ranges), adds float32 initializers for weights (what oflow trains),
and emits one or a few nodes. Every node is evaluated in float64 as it is
added (ref.py): a node whose output is not finite or large, or whose inputs sit
near a kink of its derivative (Relu/Abs at 0, ties of Max/Min/Clip/compares,
ReduceMax/MaxPool windows), is rolled back and another recipe is tried. So
Log/Sqrt/Reciprocal/Pow/Div see inputs known to be positive.

The subgraph's loss is sum_i ReduceSum(sink_i * R_i) over the float values
nothing consumes (R_i random initializers, trained too: their gradients are
the forward values), plus any class loss; a pack sums up to 32 subgraphs'
losses into the one scalar output `loss`.

Quotas (by subgraph index): DenseNet-like Concat -> BatchNormalization,
MobileNet-like depthwise Conv -> BatchNormalization, a long fan-out chain, a
long-lived value consumed at the end, then plain random graphs.
"""
import math
from collections import Counter

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import ref

OPSET = 17
MAX_ELEMS = 4096


class Reject(Exception):
    pass


def bshape(*shapes):
    try:
        return tuple(torch.broadcast_shapes(*[tuple(s) for s in shapes]))
    except RuntimeError:
        return None


class Sub:
    """One subgraph under construction (names prefixed by `prefix`)."""

    def __init__(self, rng, prefix, batch, kind):
        self.rng, self.p, self.B = rng, prefix, batch
        self.nodes, self.inits, self.inputs = [], {}, {}
        self.env, self.pool, self.uses = {}, [], Counter()
        self.n = 0
        self.kind = kind
        self.max_elems = MAX_ELEMS  # per value; the long-sum pattern raises it for its nodes
        r = rng
        if kind == "image":
            shape = (batch, int(r.integers(1, 9)), int(r.integers(4, 11)), int(r.integers(4, 11)))
        elif kind == "seq":
            shape = (batch, int(r.integers(2, 7)), int(r.integers(2, 13)))
        else:
            shape = (batch, int(r.integers(2, 17)))
        x = self.name("x")
        data = r.standard_normal(shape).astype(np.float32)
        self.inputs[x] = data
        self.env[x] = torch.from_numpy(data.astype(np.float64))
        self.pool.append(x)

    # -- names, constants, weights -------------------------------------------------

    def name(self, base):
        self.n += 1
        return f"{self.p}{base}{self.n}"

    def shape(self, v):
        return tuple(self.env[v].shape)

    def weight(self, shape, scale=None, positive=False, base="w"):
        shape = tuple(int(d) for d in shape)
        if scale is None:
            fan = int(np.prod(shape[1:])) if len(shape) > 1 else max(1, int(np.prod(shape)))
            scale = 1.0 / math.sqrt(max(1, fan))
        a = np.asarray(self.rng.standard_normal(shape)) * scale
        if positive:
            a = np.abs(a) + 0.5
        a = np.asarray(a, dtype=np.float32)
        n = self.name(base)
        self.inits[n] = a
        self.env[n] = torch.from_numpy(a.astype(np.float64))
        return n

    def const(self, value, dtype=np.int64, init=None):
        """An int64 (or float) constant: a Constant node or (int only) an initializer."""
        arr = np.array(value, dtype=dtype)
        if init is None:
            init = dtype == np.int64 and self.rng.random() < 0.3
        if init:
            n = self.name("c")
            self.inits[n] = arr
            self.env[n] = ref.tensor_of(arr, torch.float64)
            return n
        return self.node("Constant", [], value=numpy_helper.from_array(arr))[0]

    def fconst(self, value):
        return self.const(value, np.float32, init=False)

    # -- nodes ---------------------------------------------------------------------

    def node(self, op, ins, nout=1, outs=None, **attrs):
        outs = outs or [self.name(op.lower()[:6]) for _ in range(nout)]
        nd = helper.make_node(op, ins, outs, **attrs)
        vals = [self.env[i] if i else None for i in ins]
        try:
            res = ref.evaluate_node(nd, vals, torch.float64)
        except (RuntimeError, IndexError, ValueError) as e:
            raise Reject(f"{op}: {e}")
        if ref.kink_margin(nd, vals) < 2e-4:
            raise Reject(f"{op}: near a kink")
        for o, r in zip(outs, res):
            if r.is_floating_point():
                if not torch.isfinite(r).all() or (r.numel() and float(r.abs().max()) > 1e3):
                    raise Reject(f"{op}: output not finite or large")
            if r.numel() > self.max_elems or r.numel() == 0:
                raise Reject(f"{op}: output size {r.numel()}")
            if o:
                self.env[o] = r
        for i in ins:
            if i:
                self.uses[i] += 1
        self.nodes.append(nd)
        return outs

    def add(self, v):
        self.pool.append(v)
        return v

    def snapshot(self):
        return (len(self.nodes), dict(self.inits), dict(self.inputs), list(self.pool),
                Counter(self.uses), self.n)

    def restore(self, s):
        n, self.inits, self.inputs, self.pool, self.uses, self.n = s
        del self.nodes[n:]

    # -- operand choice ------------------------------------------------------------

    def pick(self, pred=lambda s: True, old=False):
        cands = [v for v in self.pool if pred(self.shape(v))]
        if not cands:
            raise Reject("no operand")
        r = self.rng.random()
        unused = [v for v in cands if self.uses[v] == 0]
        if unused and r < 0.45:
            return unused[-1 - int(self.rng.integers(min(2, len(unused))))]
        if old or r < 0.6:
            return cands[int(self.rng.integers(len(cands)))]
        return cands[-1 - int(self.rng.integers(min(3, len(cands))))]

    def partner(self, v, exact=False):
        """A second operand that broadcasts with v (to v's shape)."""
        s = self.shape(v)
        r = self.rng.random()
        same = [u for u in self.pool if u != v and self.shape(u) == s]
        if same and r < 0.35:
            return self.pick(lambda t: t == s)
        if not exact and r < 0.5:
            cands = [u for u in self.pool if u != v and bshape(self.shape(u), s) == s]
            if cands:
                return cands[int(self.rng.integers(len(cands)))]
        if not exact and r < 0.6:
            return self.fconst(np.float32(self.rng.uniform(0.3, 1.5) * self.rng.choice([-1, 1])))
        shp = list(s)
        if not exact:
            for i in range(len(shp)):
                if self.rng.random() < 0.4:
                    shp[i] = 1
            if shp and self.rng.random() < 0.3:
                shp = shp[int(self.rng.integers(len(shp))):]
        return self.weight(shp, scale=0.8)

    def positive(self, pred=lambda s: True):
        """A value known to be positive (>= 0.05), made if needed."""
        cands = [v for v in self.pool if pred(self.shape(v)) and self.env[v].is_floating_point()
                 and self.shape(v) != () and float(self.env[v].min()) > 0.05]
        if cands and self.rng.random() < 0.5:
            return cands[int(self.rng.integers(len(cands)))]
        v = self.pick(lambda s: pred(s) and s != ())
        k = self.rng.integers(3)
        if k == 0:
            t = self.node("Tanh", [v])[0]
            return self.add(self.node("Exp", [t])[0])
        if k == 1:
            t = self.node("Sigmoid", [v])[0]
            return self.add(self.node("Add", [t, self.fconst(np.float32(0.1))])[0])
        t = self.node("Abs", [v])[0]
        return self.add(self.node("Add", [t, self.weight((), positive=True)])[0])


# ------------------------------------------------------------------------------
# Recipes: one per ONNX op (the OPS table), plus the quota patterns.
# ------------------------------------------------------------------------------

def rank_ge(k):
    return lambda s: len(s) >= k


def is4(s):
    return len(s) == 4


def unary(op):
    def f(g):
        g.add(g.node(op, [g.pick(rank_ge(1))])[0])
    return f


def positive_unary(op):
    def f(g):
        v = g.positive()
        g.add(g.node(op, [v])[0])
    return f


def binary(op):
    def f(g):
        v = g.pick(rank_ge(1))
        w = g.partner(v)
        a, b = (v, w) if g.rng.random() < 0.7 else (w, v)
        g.add(g.node(op, [a, b])[0])
    return f


def r_div(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    if g.rng.random() < 0.5:
        d = g.positive(lambda t: bshape(t, s) == s)
    else:
        shp = [d if g.rng.random() < 0.6 else 1 for d in s]
        d = g.weight(shp, scale=0.5, positive=True)
    a, b = (v, d) if g.rng.random() < 0.8 else (d, g.positive(lambda t: bshape(t, s) == s))
    g.add(g.node("Div", [a, b])[0])


def r_pow(g):
    v = g.positive()
    if g.rng.random() < 0.5:
        e = g.fconst(np.float32(g.rng.choice([2.0, 0.5, 3.0, -1.0, 1.5, -0.5])))
    else:
        s = g.shape(v)
        shp = [d if g.rng.random() < 0.3 else 1 for d in s][-int(g.rng.integers(0, len(s) + 1)):] \
            if s else []
        e = g.weight(shp, scale=0.3)
    g.add(g.node("Pow", [v, e])[0])


def variadic(op):
    def f(g):
        v = g.pick(rank_ge(1))
        k = int(g.rng.integers(1, 4))
        ins = [v] + [g.partner(v) for _ in range(k)]
        g.rng.shuffle(ins)
        g.add(g.node(op, ins)[0])
    return f


def r_clip(g):
    v = g.pick(rank_ge(1))
    vals = np.sort(g.env[v].reshape(-1).numpy())

    def cut(q0, q1):
        # the middle of the widest gap between sorted values in [q0, q1]
        i0, i1 = int(q0 * (len(vals) - 1)), max(int(q1 * (len(vals) - 1)), int(q0 * (len(vals) - 1)) + 1)
        i1 = min(i1, len(vals) - 1)
        if i1 <= i0:
            return np.float32(vals[i0] + (0.5 if q0 > 0.5 else -0.5))
        gaps = np.diff(vals[i0:i1 + 1])
        i = i0 + int(np.argmax(gaps))
        return np.float32((vals[i] + vals[i + 1]) / 2)
    lo, hi = cut(0.05, 0.4), cut(0.6, 0.95)
    k = g.rng.integers(3)
    ins = [v, g.fconst(lo) if k != 2 else "", g.fconst(hi) if k != 1 else ""]
    while ins and ins[-1] == "":
        ins.pop()
    g.add(g.node("Clip", ins)[0])


def r_hardsigmoid(g):
    # Defaults (0.2, 0.5) or a slope and offset that put both kinks inside
    # the data's usual range.
    v = g.pick(rank_ge(1))
    if g.rng.random() < 0.5:
        g.add(g.node("HardSigmoid", [v])[0])
    else:
        alpha = float(np.float32(g.rng.uniform(0.3, 1.5)))
        beta = float(np.float32(g.rng.uniform(0.2, 0.8)))
        g.add(g.node("HardSigmoid", [v], alpha=alpha, beta=beta)[0])


def r_hardswish(g):
    # Kinks at -3 and 3: half the time on a value scaled to reach them.
    v = g.pick(rank_ge(1))
    if g.rng.random() < 0.5:
        v = g.node("Mul", [v, g.fconst(np.float32(4))])[0]
    g.add(g.node("HardSwish", [v])[0])


def condition(g, cmp=None):
    v = g.pick(rank_ge(1))
    w = g.partner(v)
    cmp = cmp or g.rng.choice(["Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal", "Not"])
    if cmp == "Equal":
        c = g.node("Greater", [v, w])[0]
        ci = g.node("Cast", [c], to=TensorProto.INT64)[0]
        return g.node("Equal", [ci, g.const(1)])[0], v
    if cmp == "Not":
        c = g.node(g.rng.choice(["Greater", "Less"]), [v, w])[0]
        return g.node("Not", [c])[0], v
    return g.node(cmp, [v, w])[0], v


def where(cmp=None):
    def f(g):
        c, v = condition(g, cmp)
        s = g.shape(c)
        a = g.pick(lambda t: bshape(t, s) == s)
        b = g.partner(a) if g.shape(a) == s else g.weight(s, scale=0.8)
        g.add(g.node("Where", [c, a, b])[0])
    return f


def r_cast(g):
    k = g.rng.integers(3)
    if k == 0:
        c, v = condition(g, "Greater")
        f = g.node("Cast", [c], to=TensorProto.FLOAT)[0]
        g.add(g.node("Mul", [f, g.partner(v) if g.rng.random() < 0.5 else v])[0])
    elif k == 1:
        v = g.pick(rank_ge(1))
        g.add(g.node("Cast", [v], to=TensorProto.FLOAT)[0])
    else:
        v = g.pick(rank_ge(1))
        d = g.node("Cast", [v], to=TensorProto.DOUBLE)[0]
        t = g.node("Tanh", [d])[0]
        g.add(g.node("Cast", [t], to=TensorProto.FLOAT)[0])


def r_matmul(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    K = s[-1]
    r = g.rng.random()
    if len(s) >= 2 and r < 0.25:
        # value x value: [..., M, K] x [..., K, N] from the pool or made by a MatMul
        N = int(g.rng.integers(1, 9))
        cands = [u for u in g.pool if len(g.shape(u)) >= 2 and g.shape(u)[-2] == K
                 and bshape(s[:-2], g.shape(u)[:-2]) is not None]
        w = cands[int(g.rng.integers(len(cands)))] if cands else \
            g.weight(tuple(s[:-2][-int(g.rng.integers(0, len(s) - 1)):] if len(s) > 2 else ()) + (K, N))
        g.add(g.node("MatMul", [v, w])[0])
    elif r < 0.35:
        w = g.weight((K,))
        g.add(g.node("MatMul", [v, w])[0])
    elif len(s) >= 2 and r < 0.5:
        M = int(g.rng.integers(1, 9))
        w = g.weight((M, s[-2]))
        g.add(g.node("MatMul", [w, v])[0])
    else:
        w = g.weight((K, int(g.rng.integers(1, 13))))
        g.add(g.node("MatMul", [v, w])[0])


def r_einsum(g):
    # Contractions as models write them: a matrix product over the last axis
    # with a weight, batched attention-style products of two values, a
    # transpose-and-sum of one operand, and a diagonal of a square weight.
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    letters = "abcdefgh"[:len(s)]
    r = g.rng.random()
    if len(s) >= 3 and r < 0.35:
        # [..., M, K] x [..., N, K] -> [..., M, N] (q k^T), the other operand
        # a value of the pool when one fits, else a weight.
        cands = [u for u in g.pool if g.shape(u) == s]
        w = cands[int(g.rng.integers(len(cands)))] if cands else g.weight(tuple(s))
        lead = letters[:-2]
        eq = f"{lead}mk,{lead}nk->{lead}mn"
        g.add(g.node("Einsum", [v, w], equation=eq)[0])
    elif r < 0.65:
        n = int(g.rng.integers(1, 7))
        w = g.weight((s[-1], n))
        eq = f"{letters},{letters[-1]}z->{letters[:-1]}z"
        g.add(g.node("Einsum", [v, w], equation=eq)[0])
    elif len(s) >= 2 and r < 0.85:
        keep = letters[::-1][:-1]  # reversed, the first axis summed
        g.add(g.node("Einsum", [v], equation=f"{letters}->{keep}")[0])
    else:
        n = s[-1]
        w = g.weight((n, n))
        eq = f"{letters},zz->{letters}z" if len(s) < 4 else f"{letters},{letters[-1]}{letters[-1]}->{letters}"
        g.add(g.node("Einsum", [v, w], equation=eq)[0])


def r_gemm(g):
    v = g.pick(lambda s: len(s) == 2)
    M, K = g.shape(v)
    ta = int(g.rng.random() < 0.3)
    if ta:
        M, K = K, M
    tb = int(g.rng.random() < 0.5)
    N = int(g.rng.integers(1, 13))
    w = g.weight((N, K) if tb else (K, N))
    ins = [v, w]
    at = {"transA": ta, "transB": tb}
    if g.rng.random() < 0.5:
        at["alpha"] = float(np.float32(g.rng.uniform(0.5, 1.5)))
    if g.rng.random() < 0.8:
        cs = [(N,), (1, N), (M, N), (M, 1), ()][int(g.rng.integers(5))]
        ins.append(g.weight(cs, scale=0.5))
        if g.rng.random() < 0.5:
            at["beta"] = float(np.float32(g.rng.uniform(0.5, 1.5)))
    g.add(g.node("Gemm", ins, **at)[0])


def conv(g, v, groups=None, cout=None, kernel=None, bias=None):
    B, C, H, W = g.shape(v)
    r = g.rng
    if groups is None:
        k = r.random()
        divs = [d for d in range(2, C + 1) if C % d == 0]
        groups = C if k < 0.25 else (int(r.choice(divs)) if divs and k < 0.4 else 1)
    if cout is None:
        cout = groups * int(r.integers(1, 3)) if groups > 1 else int(r.integers(1, 9))
    kh, kw = kernel or (int(r.integers(1, 4)), int(r.integers(1, 4)))
    at = {}
    strides = [int(r.integers(1, 3)) if r.random() < 0.3 else 1 for _ in range(2)]
    dil = [2 if r.random() < 0.15 else 1 for _ in range(2)]
    if r.random() < 0.15:
        at["auto_pad"] = str(r.choice(["SAME_UPPER", "SAME_LOWER", "VALID"]))
    else:
        at["pads"] = [int(r.integers(0, min(k, 2) + 1)) for k in (kh, kw, kh, kw)]
    if strides != [1, 1] or r.random() < 0.3:
        at["strides"] = strides
    if dil != [1, 1]:
        at["dilations"] = dil
    if groups != 1:
        at["group"] = groups
    if r.random() < 0.5:
        at["kernel_shape"] = [kh, kw]
    w = g.weight((cout, C // groups, kh, kw))
    ins = [v, w]
    if bias if bias is not None else r.random() < 0.6:
        ins.append(g.weight((cout,), scale=0.3))
    return g.node("Conv", ins, **at)[0]


def r_conv(g):
    v = g.pick(is4)
    g.add(conv(g, v))


def r_convtranspose(g):
    # Small inputs only: the output grows by the stride.
    v = g.pick(lambda s: is4(s) and s[2] * s[3] <= 64)
    B, C, H, W = g.shape(v)
    r = g.rng
    divs = [d for d in range(2, C + 1) if C % d == 0]
    groups = int(r.choice(divs)) if divs and r.random() < 0.3 else 1
    cout_g = int(r.integers(1, 4))
    kh, kw = int(r.integers(1, 4)), int(r.integers(1, 4))
    strides = [int(r.integers(1, 3)) for _ in range(2)]
    dil = [2 if r.random() < 0.2 else 1 for _ in range(2)]
    pads = [int(r.integers(0, 2)) for _ in range(4)]
    at = {"strides": strides, "pads": pads}
    if dil != [1, 1]:
        at["dilations"] = dil
    if groups != 1:
        at["group"] = groups
    # output_padding: below the stride (or dilation) and within the end pads.
    outpad = [int(r.integers(0, min(max(strides[d], dil[d]) - 1, pads[d + 2]) + 1))
              for d in range(2)]
    if outpad != [0, 0]:
        at["output_padding"] = outpad
    if r.random() < 0.5:
        at["kernel_shape"] = [kh, kw]
    out = [strides[d] * ((H, W)[d] - 1) + outpad[d] + dil[d] * ((kh, kw)[d] - 1) + 1
           - pads[d] - pads[d + 2] for d in range(2)]
    if min(out) < 1:
        at["pads"] = [0, 0, outpad[0], outpad[1]]
    ins = [v, g.weight((C, cout_g, kh, kw))]
    if r.random() < 0.5:
        ins.append(g.weight((cout_g * groups,), scale=0.3))
    g.add(g.node("ConvTranspose", ins, **at)[0])


def r_resize(g):
    # The five (mode, coordinates, rounding) combinations PyTorch's
    # F.interpolate has an equivalent of, with sizes (2 .. 2x each axis).
    v = g.pick(lambda s: is4(s) and s[2] * s[3] <= 64)
    B, C, H, W = g.shape(v)
    r = g.rng
    mode, coord, nearest = [("linear", "half_pixel", None),
                            ("linear", "pytorch_half_pixel", None),
                            ("linear", "align_corners", None),
                            ("nearest", "asymmetric", "floor"),
                            ("nearest", "half_pixel", "round_prefer_ceil")][int(r.integers(5))]
    sizes = [B, C, int(r.integers(2, 2 * H + 1)), int(r.integers(2, 2 * W + 1))]
    at = {"mode": mode, "coordinate_transformation_mode": coord}
    if nearest:
        at["nearest_mode"] = nearest
    g.add(g.node("Resize", [v, "", "", g.const(sizes)], **at)[0])


def batchnorm(g, v, training=True):
    s = g.shape(v)
    C = s[1]
    at = {}
    if g.rng.random() < 0.5:
        at["epsilon"] = float(np.float32(g.rng.choice([1e-5, 1e-3, 0.1])))
    sc = g.weight((C,), scale=0.2)
    g.inits[sc] = (g.inits[sc] + 1).astype(np.float32)
    g.env[sc] = torch.from_numpy(g.inits[sc].astype(np.float64))
    bi = g.weight((C,), scale=0.2)
    if training:
        at["training_mode"] = 1
        if g.rng.random() < 0.5:
            at["momentum"] = float(np.float32(g.rng.choice([0.9, 0.1, 0.99])))
        mean = g.weight((C,), scale=0.1, base="rm")
        var = g.weight((C,), scale=0.1, positive=True, base="rv")
        return g.node("BatchNormalization", [v, sc, bi, mean, var], nout=3, **at)[0]
    mean = g.fconst(g.rng.standard_normal(C).astype(np.float32) * 0.2)
    var = g.fconst((np.abs(g.rng.standard_normal(C)) * 0.3 + 0.5).astype(np.float32))
    return g.node("BatchNormalization", [v, sc, bi, mean, var], **at)[0]


def bn_ok(s):
    return len(s) >= 2 and s[1] >= 1 and int(np.prod(s)) // s[1] >= 3


def r_bn(g):
    training = g.rng.random() < 0.8
    v = g.pick(bn_ok)
    g.add(batchnorm(g, v, training))


def pool(op):
    def f(g):
        v = g.pick(lambda s: is4(s) and s[2] >= 2 and s[3] >= 2)
        _, _, H, W = g.shape(v)
        r = g.rng
        k = [int(r.integers(2, 4)), int(r.integers(2, 4))]
        k = [min(k[0], H), min(k[1], W)]
        at = {"kernel_shape": k}
        strides = [int(r.integers(1, 3)), int(r.integers(1, 3))]
        if strides != [1, 1] or r.random() < 0.5:
            at["strides"] = strides
        ceil = r.random() < 0.2 and all(kk >= ss for kk, ss in zip(k, strides))
        if ceil:
            at["ceil_mode"] = 1
        elif r.random() < 0.5:
            at["pads"] = [int(r.integers(0, kk // 2 + 1)) for kk in k + k]
        if op == "MaxPool" and r.random() < 0.15 and not ceil:
            at["dilations"] = [2, 2]
        if op == "AveragePool" and r.random() < 0.5:
            at["count_include_pad"] = 1
        g.add(g.node(op, [v], **at)[0])
    return f


def r_gap(g):
    g.add(g.node("GlobalAveragePool", [g.pick(lambda s: len(s) >= 3)])[0])


def r_layernorm(g):
    v = g.pick(lambda s: len(s) >= 1 and s[-1] >= 2)
    s = g.shape(v)
    axis = -int(g.rng.integers(1, min(3, len(s)) + 1))
    at = {"axis": axis if g.rng.random() < 0.7 else axis % len(s)}
    if g.rng.random() < 0.3:
        at["epsilon"] = 1e-3
    sc = g.weight(s[axis:], scale=0.3)
    g.inits[sc] = (g.inits[sc] + 1).astype(np.float32)
    g.env[sc] = torch.from_numpy(g.inits[sc].astype(np.float64))
    ins = [v, sc]
    if g.rng.random() < 0.7:
        ins.append(g.weight(s[axis:], scale=0.3))
    g.add(g.node("LayerNormalization", ins, **at)[0])


def r_instancenorm(g):
    # [N, C, spatial...] with at least two values per (image, channel).
    v = g.pick(lambda s: len(s) >= 3 and int(np.prod(s[2:])) >= 2)
    s = g.shape(v)
    at = {"epsilon": 1e-3} if g.rng.random() < 0.3 else {}
    sc = g.weight([s[1]], scale=0.3)
    g.inits[sc] = (g.inits[sc] + 1).astype(np.float32)
    g.env[sc] = torch.from_numpy(g.inits[sc].astype(np.float64))
    g.add(g.node("InstanceNormalization", [v, sc, g.weight([s[1]], scale=0.3)], **at)[0])


def softmax(op):
    def f(g):
        v = g.pick(rank_ge(1))
        s = g.shape(v)
        ax = int(g.rng.integers(-len(s), len(s)))
        at = {"axis": ax} if (ax != -1 or g.rng.random() < 0.5) else {}
        g.add(g.node(op, [v], **at)[0])
    return f


def reduce(op):
    def f(g):
        v = g.pick(rank_ge(1))
        s = g.shape(v)
        k = int(g.rng.integers(1, len(s) + 1))
        axes = sorted(g.rng.choice(len(s), k, replace=False).tolist())
        axes = [a - len(s) if g.rng.random() < 0.3 else a for a in axes]
        keep = int(g.rng.random() < 0.6)
        allax = g.rng.random() < 0.1
        if op == "ReduceSum":
            ins = [v] if allax else [v, g.const(axes)]
            g.add(g.node(op, ins, keepdims=keep)[0])
        else:
            at = {} if allax else {"axes": axes}
            g.add(g.node(op, [v], keepdims=keep, **at)[0])
    return f


def factor_shape(rng, n):
    dims = []
    rest = n
    for _ in range(int(rng.integers(0, 3))):
        ds = [d for d in range(2, rest + 1) if rest % d == 0]
        if not ds:
            break
        d = int(rng.choice(ds))
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return dims


def r_reshape(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    if g.rng.random() < 0.5 and s[0] == g.B:
        tgt = [g.B] + factor_shape(g.rng, int(np.prod(s[1:])))
    else:
        tgt = factor_shape(g.rng, int(np.prod(s)))
    out = list(tgt)
    if g.rng.random() < 0.5:
        out[int(g.rng.integers(len(out)))] = -1
    for i in range(len(out)):
        if i < len(s) and out[i] == s[i] and g.rng.random() < 0.5:
            out[i] = 0
    g.add(g.node("Reshape", [v, g.const(out)])[0])


def r_shape(g):
    # Shape -> Reshape: a round trip through a flat view.
    v = g.pick(lambda s: len(s) >= 2)
    f = g.node("Flatten", [v], axis=int(g.rng.integers(0, len(g.shape(v)) + 1)))[0]
    t = g.node(str(g.rng.choice(["Tanh", "Sigmoid", "Neg"])), [f])[0]
    sh = g.node("Shape", [v])[0]
    g.add(g.node("Reshape", [t, sh])[0])


def r_size(g):
    v = g.pick(rank_ge(1))
    n = g.node("Size", [v])[0]
    nf = g.node("Cast", [n], to=TensorProto.FLOAT)[0]
    s = g.node("ReduceSum", [v], keepdims=0)[0]
    g.add(g.node("Div", [s, nf])[0])


def r_range(g):
    v = g.pick(rank_ge(1))
    n = g.shape(v)[-1]
    r = g.node("Range", [g.const(0, init=False), g.const(n, init=False), g.const(1, init=False)])[0]
    if g.rng.random() < 0.5:
        f = g.node("Cast", [r], to=TensorProto.FLOAT)[0]
        sc = g.node("Mul", [f, g.fconst(np.float32(0.25))])[0]
        g.add(g.node("Add", [v, sc])[0])
    else:
        g.add(g.node("Gather", [v, r], axis=-1)[0])


def r_constant_of_shape(g):
    v = g.pick(rank_ge(1))
    sh = g.node("Shape", [v])[0] if g.rng.random() < 0.5 else g.const(list(g.shape(v)), init=False)
    c = g.node("ConstantOfShape", [sh],
               value=numpy_helper.from_array(np.array([g.rng.uniform(-1, 1)], np.float32)))[0]
    g.add(g.node(str(g.rng.choice(["Add", "Mul"])), [v, c])[0])


def r_constant(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    c = g.fconst((g.rng.standard_normal(s[-1:]) * 0.5).astype(np.float32))
    g.add(g.node("Add", [c, v] if g.rng.random() < 0.5 else [v, c])[0])


def r_flatten(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    ax = int(g.rng.integers(-len(s), len(s) + 1))
    g.add(g.node("Flatten", [v], axis=ax)[0])


def r_transpose(g):
    v = g.pick(lambda s: len(s) >= 2)
    s = g.shape(v)
    if g.rng.random() < 0.2:
        g.add(g.node("Transpose", [v])[0])
    else:
        g.add(g.node("Transpose", [v], perm=g.rng.permutation(len(s)).tolist())[0])


def r_squeeze(g):
    cands = [v for v in g.pool if 1 in g.shape(v)]
    if cands and g.rng.random() < 0.7:
        v = cands[int(g.rng.integers(len(cands)))]
    else:
        v = g.pick(lambda s: 1 <= len(s) <= 3)
        v = g.node("Unsqueeze", [v, g.const([int(g.rng.integers(0, len(g.shape(v)) + 1))])])[0]
    s = g.shape(v)
    ones = [i for i, d in enumerate(s) if d == 1]
    if g.rng.random() < 0.2:
        g.add(g.node("Squeeze", [v])[0])
    else:
        k = int(g.rng.integers(1, len(ones) + 1))
        axes = g.rng.choice(ones, k, replace=False).tolist()
        axes = [a - len(s) if g.rng.random() < 0.3 else a for a in axes]
        g.add(g.node("Squeeze", [v, g.const(axes)])[0])


def r_unsqueeze(g):
    v = g.pick(lambda s: len(s) <= 4)
    s = g.shape(v)
    k = int(g.rng.integers(1, 3))
    rank = len(s) + k
    axes = g.rng.choice(rank, k, replace=False).tolist()
    axes = [a - rank if g.rng.random() < 0.3 else a for a in axes]
    g.add(g.node("Unsqueeze", [v, g.const(axes)])[0])


def r_expand(g):
    cands = [v for v in g.pool if 1 in g.shape(v)]
    if cands and g.rng.random() < 0.6:
        v = cands[int(g.rng.integers(len(cands)))]
    else:
        v = g.pick(lambda s: 1 <= len(s) <= 4)
        v = g.node("Unsqueeze", [v, g.const([int(g.rng.integers(0, len(g.shape(v)) + 1))])])[0]
    s = g.shape(v)
    tgt = [int(g.rng.integers(2, 5)) if d == 1 else (d if g.rng.random() < 0.7 else 1) for d in s]
    if g.rng.random() < 0.3:
        tgt = [int(g.rng.integers(1, 4))] + tgt
    g.add(g.node("Expand", [v, g.const(tgt)])[0])


def concat_partner(g, v, axis):
    """A value shaped like v except (maybe) along axis."""
    s = g.shape(v)
    cands = [u for u in g.pool if len(g.shape(u)) == len(s) and
             all(a == b for i, (a, b) in enumerate(zip(g.shape(u), s)) if i != axis)]
    r = g.rng.random()
    if cands and r < 0.4:
        return cands[int(g.rng.integers(len(cands)))]
    if r < 0.5:
        return v
    if len(s) == 4 and axis == 1 and r < 0.8:
        return conv_same(g, v)
    if s[axis] >= 2 and r < 0.9:
        n = int(g.rng.integers(1, s[axis]))
        st = int(g.rng.integers(0, s[axis] - n + 1))
        return g.node("Slice", [v, g.const([st]), g.const([st + n]), g.const([axis])])[0]
    return g.node("Mul", [v, g.weight(s[-1:], scale=1.0)])[0]


def conv_same(g, v, cout=None, groups=1, k=None):
    """A shape-preserving (spatially) convolution."""
    C = g.shape(v)[1]
    k = k or int(g.rng.choice([1, 3]))
    cout = cout or int(g.rng.integers(1, 7)) * (groups if groups > 1 else 1)
    w = g.weight((cout, C // groups, k, k))
    ins = [v, w] + ([g.weight((cout,), scale=0.3)] if g.rng.random() < 0.5 else [])
    at = {"pads": [k // 2] * 4}
    if groups > 1:
        at["group"] = groups
    return g.node("Conv", ins, **at)[0]


def r_concat(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    axis = 1 if len(s) == 4 and g.rng.random() < 0.6 else int(g.rng.integers(0, len(s)))
    parts = [v] + [concat_partner(g, v, axis) for _ in range(int(g.rng.integers(1, 4)))]
    g.rng.shuffle(parts)
    ax = axis - len(s) if g.rng.random() < 0.3 else axis
    g.add(g.node("Concat", parts, axis=ax)[0])


def r_slice(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    cand = [i for i, d in enumerate(s) if d >= 2] or list(range(len(s)))
    k = int(g.rng.integers(1, min(2, len(cand)) + 1))
    axes = g.rng.choice(cand, k, replace=False).tolist()
    starts, ends, steps = [], [], []
    for a in axes:
        d = s[a]
        step = int(g.rng.choice([1, 1, 1, 2, -1, -2])) if d >= 2 else 1
        if step > 0:
            st = int(g.rng.integers(0, max(1, d - 1)))
            en = int(g.rng.integers(st + 1, d + 1))
            if en == d and g.rng.random() < 0.3:
                en = 2 ** 62
            if g.rng.random() < 0.3:
                st -= d
        else:
            st = int(g.rng.integers(1, d))
            en = int(g.rng.integers(-1, st))
            if en == -1:
                en = -d - 5
        starts.append(st), ends.append(en), steps.append(step)
    ins = [v, g.const(starts), g.const(ends)]
    if g.rng.random() < 0.8 or any(a != i for i, a in enumerate(axes)) or any(x != 1 for x in steps):
        ins.append(g.const([a - len(s) if g.rng.random() < 0.3 else a for a in axes]))
        if any(x != 1 for x in steps) or g.rng.random() < 0.3:
            ins.append(g.const(steps))
    g.add(g.node("Slice", ins)[0])


def r_split(g):
    v = g.pick(lambda s: len(s) >= 1 and max(s) >= 2)
    s = g.shape(v)
    axis = int(g.rng.choice([i for i, d in enumerate(s) if d >= 2]))
    d = s[axis]
    n = int(g.rng.integers(2, min(3, d) + 1))
    at = {"axis": axis - len(s) if g.rng.random() < 0.3 else axis}
    if d % n == 0 and g.rng.random() < 0.5:
        outs = g.node("Split", [v], nout=n, **at)
    else:
        cuts = sorted(g.rng.choice(np.arange(1, d), n - 1, replace=False).tolist())
        sizes = np.diff([0] + cuts + [d]).tolist()
        outs = g.node("Split", [v, g.const(sizes)], nout=n, **at)
    for o in outs:
        g.add(o)


def r_gather(g):
    v = g.pick(rank_ge(1))
    s = g.shape(v)
    axis = int(g.rng.integers(0, len(s)))
    d = s[axis]
    ishape = [(), (int(g.rng.integers(1, 5)),), (2, int(g.rng.integers(1, 4)))][int(g.rng.integers(3))]
    idx = g.rng.integers(-d, d, size=ishape)
    at = {"axis": axis - len(s) if g.rng.random() < 0.3 else axis}
    g.add(g.node("Gather", [v, g.const(idx)], **at)[0])


def r_trilu(g):
    v = g.pick(lambda s: len(s) >= 2)
    at = {"upper": int(g.rng.integers(2))} if g.rng.random() < 0.7 else {}
    ins = [v] + ([g.const(int(g.rng.integers(-2, 3)))] if g.rng.random() < 0.6 else [])
    g.add(g.node("Trilu", ins, **at)[0])


def r_pad(g):
    v = g.pick(rank_ge(1))
    g.add(g.node("Pad", [v, g.const([0] * (2 * len(g.shape(v))))], mode="constant")[0])


def r_dropout(g):
    v = g.pick(rank_ge(1))
    ins = [v]
    if g.rng.random() < 0.7:
        ins.append(g.fconst(np.float32(0.0)))
        if g.rng.random() < 0.7:
            ins.append(g.const(True, np.bool_, init=False))
    outs = g.node("Dropout", ins, nout=1 if g.rng.random() < 0.7 else 2)
    g.add(outs[0])


def r_identity(g):
    g.add(g.node("Identity", [g.pick(rank_ge(1))])[0])


def class_loss(op):
    def f(g):
        v = g.pick(lambda s: len(s) in (2, 3) and s[0] == g.B and s[1] >= 2)
        s = g.shape(v)
        C = s[1]
        lshape = (s[0],) + tuple(s[2:])
        labels = g.rng.integers(0, C, size=lshape).astype(np.int64)
        at = {}
        red = str(g.rng.choice(["mean", "sum", "none"]))
        if red != "mean" or g.rng.random() < 0.5:
            at["reduction"] = red
        if g.rng.random() < 0.25 and labels.size >= 2:
            ign = int(g.rng.choice([-100, 0, C - 1]))
            at["ignore_index"] = ign
            labels.reshape(-1)[0] = ign
            flat = labels.reshape(-1)
            if (flat == ign).all():
                flat[-1] = (ign + 1) % C if ign >= 0 else 0
        y = g.name("y")
        g.inputs[y] = labels
        g.env[y] = torch.from_numpy(labels)
        x = v
        if op == "NegativeLogLikelihoodLoss":
            x = g.node("LogSoftmax", [v], axis=1)[0]
        nout = 2 if op == "SoftmaxCrossEntropyLoss" and g.rng.random() < 0.3 else 1
        outs = g.node(op, [x, y], nout=nout, **at)
        for o in outs:
            g.add(o)
    return f


# -- patterns with quotas ---------------------------------------------------------

def ensure_image(g):
    cands = [v for v in g.pool if is4(g.shape(v)) and g.shape(v)[0] == g.B]
    if cands:
        return cands[-1]
    v = g.pick(lambda s: s and s[0] == g.B)
    s = g.shape(v)
    n = int(np.prod(s[1:]))
    return g.node("Reshape", [v, g.const([g.B, n, 1, 1] if n < 4 else [g.B, 1, n, 1])])[0]


def p_densenet(g):
    """Concat -> BatchNormalization (training) -> Relu -> Conv, grown twice."""
    v = ensure_image(g)
    for _ in range(int(g.rng.integers(1, 4))):
        h = batchnorm(g, v)
        h = g.node("Relu", [h])[0] if g.rng.random() < 0.7 else h
        h = conv_same(g, h, cout=int(g.rng.integers(1, 5)), k=int(g.rng.choice([1, 3])))
        v = g.add(g.node("Concat", [v, h] if g.rng.random() < 0.7 else [h, v], axis=1)[0])
    g.add(batchnorm(g, v))


def p_mobilenet(g):
    """Conv -> BN -> Relu/Clip -> depthwise Conv -> BN -> Conv -> BN (+ residual)."""
    v = ensure_image(g)
    C = g.shape(v)[1]
    e = int(g.rng.integers(1, 4)) * C
    h = g.node("Relu", [batchnorm(g, conv_same(g, v, cout=e, k=1))])[0]
    h = conv(g, h, groups=e, cout=e * int(g.rng.choice([1, 1, 2])), bias=False)
    h = batchnorm(g, h)
    if g.rng.random() < 0.5:
        h = g.node("Clip", [h, g.fconst(np.float32(0)), g.fconst(np.float32(6))])[0]
    h = batchnorm(g, conv_same(g, h, cout=C, k=1))
    if g.shape(h) == g.shape(v) and g.rng.random() < 0.7:
        h = g.node("Add", [v, h])[0]
    g.add(h)


def p_shufflenet(g):
    """Split channels, convolve one half (depthwise + BN), concat, channel shuffle."""
    v = ensure_image(g)
    B, C, H, W = g.shape(v)
    if C % 2:
        v = conv_same(g, v, cout=2 * int(g.rng.integers(1, 4)), k=1)
        C = g.shape(v)[1]
    a, b = g.node("Split", [v], nout=2, axis=1)
    h = batchnorm(g, conv_same(g, b, cout=C // 2, groups=C // 2, k=3))
    h = g.node("Relu", [batchnorm(g, conv_same(g, h, cout=C // 2, k=1))])[0]
    c = g.node("Concat", [a, h], axis=1)[0]
    r = g.node("Reshape", [c, g.const([B, 2, C // 2, H, W])])[0]
    t = g.node("Transpose", [r], perm=[0, 2, 1, 3, 4])[0]
    g.add(g.node("Reshape", [t, g.const([B, C, H, W])])[0])


def p_fanout(g):
    """One value consumed by a long chain of ops, each also reading it."""
    v = g.pick(rank_ge(1))
    h = v
    for _ in range(int(g.rng.integers(4, 9))):
        op = str(g.rng.choice(["Add", "Mul", "Sub", "Max"]))
        h = g.node(op, [h, v] if g.rng.random() < 0.5 else [v, h])[0]
        h = g.node(str(g.rng.choice(["Tanh", "Sigmoid", "Identity"])), [h])[0]
    g.add(h)


def p_longsum(g):
    """A second, larger image: 1x1 Conv -> BN -> Relu -> GlobalAveragePool. Batch norm's
    sums run over B*H*W >= 3072 positions and, after the pool, its backward adds terms that
    are alike: the pattern behind issue #13's wrong CNN gradients (float32 sums in one
    sequential chain, off by ~n ulps)."""
    H, W = [(32, 32), (32, 64), (64, 32), (16, 128)][int(g.rng.integers(4))]
    x = g.name("x")
    data = g.rng.standard_normal((g.B, int(g.rng.integers(1, 4)), H, W)).astype(np.float32)
    g.inputs[x] = data
    g.env[x] = torch.from_numpy(data.astype(np.float64))
    g.max_elems = 3 * 5 * 64 * 128
    try:
        h = batchnorm(g, conv_same(g, x, cout=int(g.rng.integers(1, 4)), k=1))
        h = g.node("Relu", [h])[0] if g.rng.random() < 0.7 else h
        g.add(g.node("GlobalAveragePool", [h])[0])
    finally:
        g.max_elems = MAX_ELEMS


# name -> (weight, recipe). One entry per op the importer supports.
OPS = {
    "Abs": (1, unary("Abs")), "Neg": (1, unary("Neg")), "Exp": (1, positive_unary("Exp")),
    "Log": (1, positive_unary("Log")), "Sqrt": (1, positive_unary("Sqrt")),
    "Reciprocal": (1, positive_unary("Reciprocal")), "Tanh": (2, unary("Tanh")),
    "Sigmoid": (2, unary("Sigmoid")), "Relu": (3, unary("Relu")), "Erf": (1, unary("Erf")),
    "Not": (0.5, where("Not")), "Add": (3, binary("Add")), "Sub": (2, binary("Sub")),
    "Mul": (3, binary("Mul")), "Div": (2, r_div), "Pow": (1, r_pow), "Clip": (1, r_clip),
    "HardSigmoid": (0.5, r_hardsigmoid), "HardSwish": (0.5, r_hardswish),
    "Max": (1, variadic("Max")), "Min": (1, variadic("Min")), "Sum": (1, variadic("Sum")),
    "Mean": (1, variadic("Mean")), "Equal": (0.5, where("Equal")), "Less": (0.5, where("Less")),
    "LessOrEqual": (0.5, where("LessOrEqual")), "Greater": (0.5, where("Greater")),
    "GreaterOrEqual": (0.5, where("GreaterOrEqual")), "Where": (1, where()),
    "Cast": (1, r_cast), "Dropout": (0.5, r_dropout), "MatMul": (3, r_matmul), "Einsum": (0.7, r_einsum),
    "Gemm": (2, r_gemm), "ReduceSum": (1, reduce("ReduceSum")),
    "ReduceMean": (1, reduce("ReduceMean")), "ReduceMax": (1, reduce("ReduceMax")),
    "Softmax": (1, softmax("Softmax")), "LogSoftmax": (1, softmax("LogSoftmax")),
    "LayerNormalization": (2, r_layernorm),
    "InstanceNormalization": (1, r_instancenorm), "BatchNormalization": (3, r_bn),
    "Conv": (4, r_conv), "ConvTranspose": (1, r_convtranspose), "Resize": (1, r_resize), "MaxPool": (1.5, pool("MaxPool")),
    "AveragePool": (1.5, pool("AveragePool")), "GlobalAveragePool": (1, r_gap),
    "Reshape": (1.5, r_reshape), "Flatten": (1, r_flatten), "Transpose": (1.5, r_transpose),
    "Squeeze": (1, r_squeeze), "Unsqueeze": (1, r_unsqueeze), "Expand": (1, r_expand),
    "Concat": (3, r_concat), "Slice": (2, r_slice), "Split": (1.5, r_split),
    "Gather": (1, r_gather), "Trilu": (1, r_trilu),
    "SoftmaxCrossEntropyLoss": (1, class_loss("SoftmaxCrossEntropyLoss")),
    "NegativeLogLikelihoodLoss": (1, class_loss("NegativeLogLikelihoodLoss")),
    "Pad": (0.5, r_pad), "Identity": (0.5, r_identity), "Shape": (0.7, r_shape),
    "Size": (0.5, r_size), "Range": (0.5, r_range), "ConstantOfShape": (0.5, r_constant_of_shape),
    "Constant": (0.5, r_constant),
}

PATTERNS = {"densenet": p_densenet, "mobilenet": p_mobilenet, "shufflenet": p_shufflenet,
            "fanout": p_fanout, "longsum": p_longsum}

# Quotas: subgraph k of a pack is seeded with QUOTA[k % len(QUOTA)].
QUOTA = ["densenet", "mobilenet", "fanout", "longlive", "shufflenet", "longsum", None, None]

# Ops no gradient check can see directly (integer or shape-only results); they
# still appear inside graphs (Shape -> Reshape, Range -> Gather, ...).
NO_GRADIENT = {"Shape": "integer result", "Size": "integer result", "Range": "integer result",
               "Constant": "no inputs", "ConstantOfShape": "no float inputs"}


# Ops the importer converts that an opset-17 graph cannot hold (removed from
# the default domain before opset 17); what they share with an op that can
# is checked through that op.
NOT_IN_OPSET = {"Upsample": "removed in opset 10; Resize, which it imports as, is generated"}


def importer_ops(path):
    """The op names oflow's importer converts (quoted capitalised names),
    less NOT_IN_OPSET."""
    import re
    src = open(path).read()
    ops = set(re.findall(r'\.Case\("([A-Z][A-Za-z]*)"', src)) - set(NOT_IN_OPSET)
    return sorted(ops)


def _finish(g):
    """The subgraph's loss: sum over sinks of ReduceSum(v * R) (+ class losses)."""
    sinks = [v for v in g.pool if g.uses[v] == 0]
    terms = []
    for v in sinks:
        s = g.shape(v)
        R = g.weight(s, scale=1.0, base="R")
        m = g.node("Mul", [v, R])[0]
        terms.append(m if s == () else g.node("ReduceSum", [m], keepdims=0)[0])
    out = f"{g.p}loss"
    if len(terms) == 1:
        g.node("Identity", terms, outs=[out])
    else:
        g.node("Sum", terms, outs=[out])
    return out


def generate_subgraph(seed, index, prefix, batch, min_nodes=5, max_nodes=80):
    """One subgraph; deterministic in (seed, index)."""
    for attempt in range(20):
        rng = np.random.default_rng([seed, index, attempt])
        kind = ["image", "image", "vec", "seq"][int(rng.integers(4))]
        quota = QUOTA[index % len(QUOTA)]
        if quota in ("densenet", "mobilenet", "shufflenet"):
            kind = "image"
        g = Sub(rng, prefix, batch, kind)
        target = int(math.exp(rng.uniform(math.log(min_nodes), math.log(max_nodes - 8))))
        names = list(OPS)
        w = np.array([OPS[n][0] for n in names], float)
        w /= w.sum()
        longlive = None
        tries = 0
        if quota and quota != "longlive":
            for _ in range(3):
                snap = g.snapshot()
                try:
                    PATTERNS[quota](g)
                    break
                except Reject:
                    g.restore(snap)
        if quota == "longlive":
            longlive = g.add(g.node("Tanh", [g.pool[0]])[0])
        while len(g.nodes) < target and tries < 400:
            tries += 1
            op = names[int(rng.choice(len(names), p=w))]
            if rng.random() < 0.05:
                op = str(rng.choice(list(PATTERNS)))
            snap = g.snapshot()
            try:
                (PATTERNS[op] if op in PATTERNS else OPS[op][1])(g)
                if len(g.nodes) > max_nodes - 4:
                    raise Reject("too many nodes")
            except Reject:
                g.restore(snap)
        if longlive is not None:
            snap = g.snapshot()
            try:
                last = g.pool[-1]
                s = g.shape(last)
                if bshape(s, g.shape(longlive)) == s and last != longlive:
                    g.add(g.node("Add", [last, longlive])[0])
                else:
                    g.add(g.node("Mul", [g.node("ReduceSum", [longlive], keepdims=0)[0],
                                         g.node("ReduceMean", [last], keepdims=0)[0]])[0])
            except Reject:
                g.restore(snap)
        try:
            _finish(g)
        except Reject:
            continue
        if len(g.nodes) < min_nodes:
            continue
        part = Part(g.nodes, g.inits, g.inputs, f"{prefix}loss", quota or "plain")
        if validate(part):
            return part
    raise RuntimeError(f"could not generate subgraph {index} of seed {seed}")


class Part:
    """A finished subgraph: nodes, initializers, input data, its loss name."""

    def __init__(self, nodes, inits, inputs, loss, tag=""):
        self.nodes, self.inits, self.inputs, self.loss, self.tag = nodes, inits, inputs, loss, tag


def make_model(parts):
    """The pack: the subgraphs, their losses summed into the scalar `loss`."""
    nodes, inits, inputs = [], {}, {}
    for p in parts:
        nodes += p.nodes
        inits.update(p.inits)
        inputs.update(p.inputs)
    losses = [p.loss for p in parts]
    nodes = nodes + [helper.make_node("Sum" if len(losses) > 1 else "Identity", losses, ["loss"])]
    ins = [helper.make_tensor_value_info(
        n, TensorProto.FLOAT if a.dtype == np.float32 else TensorProto.INT64, a.shape)
        for n, a in inputs.items()]
    graph = helper.make_graph(
        nodes, "difftest", ins, [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="oflow-difftest")
    model.ir_version = 8
    return model


def validate(part):
    """check_model, strict shape inference, and inferred shapes == evaluated ones."""
    model = make_model([part])
    try:
        onnx.checker.check_model(model, full_check=True)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                                   data_prop=True)
    except Exception:
        return False
    feeds = {n: ref.tensor_of(a, torch.float64) for n, a in {**part.inits, **part.inputs}.items()}
    try:
        env = ref.run_graph(part.nodes, feeds, torch.float64)
    except Exception:
        return False
    for vi in inferred.graph.value_info:
        if vi.name in env and vi.type.tensor_type.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else -1
                    for d in vi.type.tensor_type.shape.dim]
            # Unknown dims (-1) only where ONNX cannot say (its Einsum
            # inference gives the rank alone).
            real = list(env[vi.name].shape)
            if len(dims) != len(real) or any(d not in (-1, r) for d, r in zip(dims, real)):
                return False
    return True
