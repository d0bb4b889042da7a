#!/usr/bin/python3
"""Writes test/Conversion/numeric-*.mlir: oflow ops on small constant inputs,
lowered and run with mlir-runner, their printed results checked against
PyTorch's (torch 1.13, computed here and pasted into the tests).

Run from the repository root: /usr/bin/python3 test/Conversion/Inputs/make_numeric_tests.py
Each result is printed flat (1-D) by printMemrefF32; a value is checked to
its first 4 significant digits (the rest is a regex), so rounding noise in
the 5th and 6th digit does not fail a test.
"""
import math
import os
import re

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(__file__), "..")
rng = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    """Random f32 values with 2 decimals (exact in the test text)."""
    return np.round(rng.standard_normal(shape) * scale, 2).astype(np.float32)


def ttype(a):
    elem = {np.float32: "f32", np.int64: "i64", np.int32: "i32", np.bool_: "i1"}[a.dtype.type]
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + elem + ">"


def float_literal(v):
    s = f"{float(v):.7g}"
    if "." not in s:  # MLIR float literals need a point: 2.0, 1.0e-05
        s = s.replace("e", ".0e") if "e" in s else s + ".0"
    return s


def literal(a):
    if a.dtype.kind == "f":
        body = ",".join(float_literal(v) for v in a.reshape(-1))
    else:
        body = ",".join(str(int(v)) for v in a.reshape(-1))
    return body


def truncated(x, digits):
    """A regex matching C++'s 6-digit printing of the values whose first
    `digits` significant digits are those of x (integer digits are always
    kept)."""
    s = f"{x:.6g}"
    mant, _, exp = s.partition("e")
    exp = f"e{exp}" if exp else ""
    if "." not in mant:
        return re.escape(mant) + "(\\.[0-9]*)?" + exp
    whole, frac = mant.split(".")
    significant = len(whole.lstrip("-").lstrip("0"))
    kept = ""
    for ch in frac:
        if significant >= digits:
            break
        kept += ch
        if significant or ch != "0":
            significant += 1
    core = kept.rstrip("0")
    zeros = kept[len(core):]
    if not core:
        return re.escape(whole) + f"(\\.{zeros}[0-9]*)?" + exp
    head = re.escape(f"{whole}.{core}")
    return head + (f"({zeros}[0-9]*)?" if zeros else "[0-9]*") + exp


def pattern(v):
    """A FileCheck pattern for printMemrefF32's printing (6 significant
    digits) of a value within 1e-5 relative + 2e-7 absolute of v."""
    v = float(v)
    if v == 0.0:
        return "{{-?}}0"
    tol = 1e-5 * abs(v) + 2e-7
    lo, hi = v - tol, v + tol
    if lo <= 0.0 <= hi:  # rounding noise around 0: any tiny value
        return "{{-?[0-9.]+(e-[0-9]+)?}}"
    # Enough digits that [lo, hi] spans at most two printed prefixes.
    lead = math.floor(math.log10(abs(v)))
    digits = 4
    while digits > 1 and 10.0 ** (lead - digits + 1) < 2 * tol:
        digits -= 1
    options = sorted({truncated(lo, digits).replace("\\-", "-"),
                      truncated(hi, digits).replace("\\-", "-")})
    return "{{" + (options[0] if len(options) == 1 else "(" + "|".join(options) + ")") + "}}"


class Test:
    def __init__(self, name, comment):
        self.name, self.comment = name, comment
        self.lines, self.checks, self.n = [], [], 0

    def const(self, a):
        self.n += 1
        v = f"%c{self.n}"
        if a.ndim == 0:
            self.lines.append(f"  {v} = arith.constant dense<{literal(a)}> : {ttype(a)}")
        else:
            flat = f"tensor<{a.size}x{ttype(a)[7:-1].split('x')[-1]}>"
            self.lines.append(f"  {v}f = arith.constant dense<[{literal(a)}]> : {flat}")
            if a.ndim == 1:
                return v + "f"
            groups = ",".join(str(d) for d in range(a.ndim))
            self.lines.append(f"  {v} = tensor.expand_shape {v}f [[{groups}]] output_shape "
                              f"[{','.join(map(str, a.shape))}] : {flat} into {ttype(a)}")
        return v

    def op(self, text):
        self.lines.append("  " + text)

    def expect(self, value, type_, expected, label):
        """Print `value` (of `type_`, f32) flat and check it equals `expected`."""
        expected = np.asarray(expected, dtype=np.float32)
        self.n += 1
        v = f"%p{self.n}"
        rank = expected.ndim
        if rank == 0:
            self.op(f"{v} = tensor.cast {value} : {type_} to tensor<*xf32>")
        else:
            if rank > 1:
                groups = ",".join(str(d) for d in range(rank))
                self.op(f"{v}c = tensor.collapse_shape {value} [[{groups}]] : {type_} "
                        f"into tensor<{expected.size}xf32>")
                value = f"{v}c"
            self.op(f"{v} = tensor.cast {value} : tensor<{expected.size}xf32> to tensor<*xf32>")
        self.op(f"call @printMemrefF32({v}) : (tensor<*xf32>) -> ()")
        pats = [pattern(x) for x in expected.reshape(-1)]
        self.checks.append(f"// {label}")
        self.checks.append("// CHECK: data =")
        for i in range(0, max(len(pats), 1), 8):
            chunk = ", ".join(pats[i:i + 8])
            first = i == 0
            last = i + 8 >= len(pats)
            text = ("[" if first else "") + chunk + ("]" if last else ",")
            self.checks.append(("// CHECK-NEXT: " if first else "// CHECK-SAME: ") + text)

    def write(self):
        path = os.path.join(OUT, f"numeric-{self.name}.mlir")
        with open(path, "w") as f:
            f.write("// RUN: %run-lowered | FileCheck %s\n")
            f.write("// Generated by Inputs/make_numeric_tests.py; expected values from "
                    "PyTorch 1.13.\n")
            for c in self.comment.strip().splitlines():
                f.write(f"// {c}\n")
            f.write("\nfunc.func @main() {\n")
            f.write("\n".join(self.lines) + "\n  return\n}\n")
            f.write("func.func private @printMemrefF32(tensor<*xf32>)\n\n")
            f.write("\n".join(self.checks) + "\n")


def arr(a):
    return ", ".join(str(int(v)) for v in a)


def t(a):
    return torch.from_numpy(np.asarray(a))


# ---------------------------------------------------------------- softmax
def softmax_tests():
    x = rand(3, 5, scale=3.0)
    x[1] += 100.0  # large logits: only the max-subtracted form stays finite
    T = Test("softmax", "softmax and log_softmax over both axes; row 1 has logits near 100.")
    c = T.const(x)
    ty = ttype(x)
    for axis in (1, 0):
        T.op(f"%s{axis} = oflow.softmax {c} {{axis = {axis} : i64}} : {ty}")
        T.expect(f"%s{axis}", ty, F.softmax(t(x), dim=axis).numpy(), f"softmax axis {axis}")
        T.op(f"%l{axis} = oflow.log_softmax {c} {{axis = {axis} : i64}} : {ty}")
        T.expect(f"%l{axis}", ty, F.log_softmax(t(x), dim=axis).numpy(), f"log_softmax axis {axis}")
    T.write()


# ---------------------------------------------------------------- norms
def norm_tests():
    T = Test("norms", "layer_norm over the last two dims; batch_norm_training (output and\n"
             "running statistics: unbiased running variance) and batch_norm_inference.")
    x = rand(2, 3, 4)
    g, b = rand(3, 4), rand(3, 4)
    cx, cg, cb = T.const(x), T.const(g), T.const(b)
    T.op(f"%ln = oflow.layer_norm {cx}, {cg}, {cb} {{axis = 1 : i64, epsilon = 1.0e-5 : f32}} "
         f": ({ttype(x)}, {ttype(g)}, {ttype(b)}) -> {ttype(x)}")
    T.expect("%ln", ttype(x), F.layer_norm(t(x), (3, 4), t(g), t(b), 1e-5).numpy(), "layer_norm")
    xb = rand(3, 2, 2, 2, scale=2.0)
    s, bb, rm, rv = rand(2), rand(2), rand(2), np.abs(rand(2)) + 0.5
    c = [T.const(a) for a in (xb, s, bb, rm, rv)]
    cty = ttype(s)
    T.op(f"%y, %rm, %rv = oflow.batch_norm_training {', '.join(c)} "
         f"{{epsilon = 1.0e-5 : f32, momentum = 0.9 : f32}} : ({ttype(xb)}, {cty}, {cty}, {cty}, {cty})"
         f" -> ({ttype(xb)}, {cty}, {cty})")
    trm, trv = t(rm.copy()), t(rv.copy())
    y = F.batch_norm(t(xb), trm, trv, t(s), t(bb), training=True, momentum=0.1, eps=1e-5)
    T.expect("%y", ttype(xb), y.numpy(), "batch_norm_training output")
    T.expect("%rm", cty, trm.numpy(), "running mean")
    T.expect("%rv", cty, trv.numpy(), "running variance")
    T.op(f"%yi = oflow.batch_norm_inference {', '.join(c)} {{epsilon = 1.0e-5 : f32}} "
         f": ({ttype(xb)}, {cty}, {cty}, {cty}, {cty}) -> {ttype(xb)}")
    yi = F.batch_norm(t(xb), t(rm), t(rv), t(s), t(bb), training=False, eps=1e-5)
    T.expect("%yi", ttype(xb), yi.numpy(), "batch_norm_inference")
    T.write()


# ---------------------------------------------------------------- conv
def conv_attrs(strides, pads, dil, groups):
    return (f"strides = array<i64: {arr(strides)}>, pads = array<i64: {arr(pads)}>, "
            f"dilations = array<i64: {arr(dil)}>, groups = {groups} : i64")


def torch_conv(x, w, b, strides, pads, dil, groups):
    xp = F.pad(x, (pads[1], pads[3], pads[0], pads[2]))
    return F.conv2d(xp, w, b, stride=strides, dilation=dil, groups=groups)


def conv_tests():
    T = Test("conv2d", "conv2d and its gradients: stride 2 with asymmetric pads and groups 2;\n"
             "dilation 2 with stride 1; forward against torch.conv2d (pads via F.pad),\n"
             "gradients against autograd with a random incoming gradient.")
    cases = [((1, 4, 5, 6), (4, 2, 3, 3), (2, 2), (1, 0, 1, 2), (1, 1), 2),
             ((2, 2, 6, 5), (3, 2, 2, 2), (1, 1), (0, 1, 1, 0), (2, 2), 1)]
    for i, (xs, ws, st, pads, dil, groups) in enumerate(cases):
        x, w, b = rand(*xs), rand(*ws), rand(ws[0])
        tx, tw = t(x).requires_grad_(), t(w).requires_grad_()
        y = torch_conv(tx, tw, t(b), st, pads, dil, groups)
        dy = rand(*y.shape)
        y.backward(t(dy))
        cx, cw, cb, cdy = T.const(x), T.const(w), T.const(b), T.const(dy)
        attrs = conv_attrs(st, pads, dil, groups)
        yt = ttype(dy)
        T.op(f"%y{i} = oflow.conv2d {cx}, {cw}, {cb} {{{attrs}}} : ({ttype(x)}, {ttype(w)}, {ttype(b)}) -> {yt}")
        T.expect(f"%y{i}", yt, y.detach().numpy(), f"case {i}: conv2d")
        T.op(f"%dx{i} = oflow.conv2d_backward_input {cdy}, {cw} {{input_shape = array<i64: {arr(xs)}>, {attrs}}}"
             f" : ({yt}, {ttype(w)}) -> {ttype(x)}")
        T.expect(f"%dx{i}", ttype(x), tx.grad.numpy(), f"case {i}: conv2d_backward_input")
        T.op(f"%dw{i} = oflow.conv2d_backward_filter {cdy}, {cx} {{filter_shape = array<i64: {arr(ws)}>, {attrs}}}"
             f" : ({yt}, {ttype(x)}) -> {ttype(w)}")
        T.expect(f"%dw{i}", ttype(w), tw.grad.numpy(), f"case {i}: conv2d_backward_filter")
    T.write()


# ---------------------------------------------------------------- pools
def pool_tests():
    T = Test("pool", "max_pool2d / avg_pool2d with ceil_mode and pads, and their gradients.\n"
             "The max-pool input has ties (the first maximum in row-major window order\n"
             "gets the gradient, as in PyTorch); avg with and without count_include_pad.")
    x = np.round(rng.integers(0, 4, size=(1, 2, 5, 5)).astype(np.float32) * 0.5, 2)
    cx = T.const(x)
    # max: kernel 3, stride 2, pads 1, ceil_mode; dilation 1; then kernel 2 dilation 2.
    for i, (k, s, p, dil, ceil) in enumerate([(3, 2, 1, 1, True), (2, 1, 0, 2, False)]):
        tx = t(x).requires_grad_()
        y = F.max_pool2d(tx, k, s, p, dilation=dil, ceil_mode=ceil)
        dy = rand(*y.shape)
        y.backward(t(dy))
        cdy = T.const(dy)
        attrs = (f"kernel = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, "
                 f"pads = array<i64: {p}, {p}, {p}, {p}>, dilations = array<i64: {dil}, {dil}>"
                 + (", ceil_mode" if ceil else ""))
        T.op(f"%m{i} = oflow.max_pool2d {cx} {{{attrs}}} : ({ttype(x)}) -> {ttype(dy)}")
        T.expect(f"%m{i}", ttype(dy), y.detach().numpy(), f"max_pool2d case {i}")
        T.op(f"%dm{i} = oflow.max_pool2d_backward {cdy}, {cx} {{{attrs}}} : ({ttype(dy)}, {ttype(x)}) -> {ttype(x)}")
        T.expect(f"%dm{i}", ttype(x), tx.grad.numpy(), f"max_pool2d_backward case {i}")
    xa = rand(1, 2, 5, 5)
    ca = T.const(xa)
    for i, (k, s, p, ceil, cip) in enumerate([(3, 2, 1, True, True), (3, 2, 1, True, False),
                                              (2, 2, 0, True, False)]):
        tx = t(xa).requires_grad_()
        y = F.avg_pool2d(tx, k, s, p, ceil_mode=ceil, count_include_pad=cip)
        dy = rand(*y.shape)
        y.backward(t(dy))
        cdy = T.const(dy)
        attrs = (f"kernel = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, "
                 f"pads = array<i64: {p}, {p}, {p}, {p}>" + (", ceil_mode" if ceil else "")
                 + (", count_include_pad" if cip else ""))
        T.op(f"%a{i} = oflow.avg_pool2d {ca} {{{attrs}}} : ({ttype(xa)}) -> {ttype(dy)}")
        T.expect(f"%a{i}", ttype(dy), y.detach().numpy(), f"avg_pool2d case {i}")
        T.op(f"%da{i} = oflow.avg_pool2d_backward {cdy} {{input_shape = array<i64: {arr(xa.shape)}>, {attrs}}}"
             f" : ({ttype(dy)}) -> {ttype(xa)}")
        T.expect(f"%da{i}", ttype(xa), tx.grad.numpy(), f"avg_pool2d_backward case {i}")
    T.write()


# ---------------------------------------------------------------- gather / slice
def gather_slice_tests():
    T = Test("gather-slice", "gather with negative indices (axis 0 and 1) and gather_backward\n"
             "(repeated indices accumulate); slice with a negative stride and slice_backward.")
    data = rand(5, 3)
    idx = np.array([[0, -1], [2, -5], [4, 4]], dtype=np.int64)
    cd, ci = T.const(data), T.const(idx)
    wrapped = np.where(idx < 0, idx + 5, idx)
    td = t(data).requires_grad_()
    y = td[t(wrapped)]
    dy = rand(*y.shape)
    y.backward(t(dy))
    T.op(f"%g0 = oflow.gather {cd}, {ci} {{axis = 0 : i64}} : ({ttype(data)}, {ttype(idx)}) -> {ttype(dy)}")
    T.expect("%g0", ttype(dy), y.detach().numpy(), "gather axis 0")
    cdy = T.const(dy)
    T.op(f"%gb0 = oflow.gather_backward {cdy}, {ci} {{axis = 0 : i64, data_shape = array<i64: 5, 3>}}"
         f" : ({ttype(dy)}, {ttype(idx)}) -> {ttype(data)}")
    T.expect("%gb0", ttype(data), td.grad.numpy(), "gather_backward axis 0")
    idx1 = np.array([-1, 0, -3, 1], dtype=np.int32)
    ci1 = T.const(idx1)
    td = t(data).requires_grad_()
    y1 = td[:, t(np.where(idx1 < 0, idx1 + 3, idx1).astype(np.int64))]
    dy1 = rand(*y1.shape)
    y1.backward(t(dy1))
    T.op(f"%g1 = oflow.gather {cd}, {ci1} {{axis = 1 : i64}} : ({ttype(data)}, {ttype(idx1)}) -> {ttype(dy1)}")
    T.expect("%g1", ttype(dy1), y1.detach().numpy(), "gather axis 1, i32 indices")
    cdy1 = T.const(dy1)
    T.op(f"%gb1 = oflow.gather_backward {cdy1}, {ci1} {{axis = 1 : i64, data_shape = array<i64: 5, 3>}}"
         f" : ({ttype(dy1)}, {ttype(idx1)}) -> {ttype(data)}")
    T.expect("%gb1", ttype(data), td.grad.numpy(), "gather_backward axis 1")

    x = rand(4, 6)
    cx = T.const(x)
    # rows 3, 1 (stride -2); columns 0, 2, 4
    ref = x[3::-2, 0:5:2]
    T.op(f"%sl = oflow.slice {cx} {{offsets = array<i64: 3, 0>, sizes = array<i64: 2, 3>, "
         f"strides = array<i64: -2, 2>}} : ({ttype(x)}) -> tensor<2x3xf32>")
    T.expect("%sl", "tensor<2x3xf32>", ref, "slice with strides [-2, 2]")
    g = rand(2, 3)
    cg = T.const(g)
    back = np.zeros_like(x)
    back[3::-2, 0:5:2] = g
    T.op(f"%sb = oflow.slice_backward {cg} {{input_shape = array<i64: 4, 6>, offsets = array<i64: 3, 0>, "
         f"sizes = array<i64: 2, 3>, strides = array<i64: -2, 2>}} : (tensor<2x3xf32>) -> {ttype(x)}")
    T.expect("%sb", ttype(x), back, "slice_backward (numpy reference)")
    T.write()


# ---------------------------------------------------------------- losses
def loss_tests():
    T = Test("losses", "softmax_cross_entropy and nll_loss (mean with ignore_index: divides by\n"
             "the labels not ignored; sum; none over [N, C, d]) and their backward ops\n"
             "against F.cross_entropy / F.nll_loss autograd; mse_loss.")
    logits = rand(4, 3, scale=2.0)
    labels = np.array([2, 1, 0, 1], dtype=np.int64)
    g = np.float32(0.7)
    cl, cy, cg = T.const(logits), T.const(labels), T.const(np.array(g))
    lt, yt = ttype(logits), ttype(labels)
    for red in ("mean", "sum"):
        for fn, name, fwd in ((F.cross_entropy, "softmax_cross_entropy", None),
                              (F.nll_loss, "nll_loss", None)):
            tl = t(logits).requires_grad_()
            loss = fn(tl, t(labels), ignore_index=1, reduction=red)
            (loss * float(g)).backward()
            T.op(f"%{name}_{red} = oflow.{name} {red} {cl}, {cy} {{ignore_index = 1 : i64}} : ({lt}, {yt}) -> tensor<f32>")
            T.expect(f"%{name}_{red}", "tensor<f32>", loss.detach().numpy(), f"{name} {red}, ignore_index 1")
            T.op(f"%{name}_b_{red} = oflow.{name}_backward {red} {cl}, {cy}, {cg} {{ignore_index = 1 : i64}} "
                 f": ({lt}, {yt}, tensor<f32>) -> {lt}")
            T.expect(f"%{name}_b_{red}", lt, tl.grad.numpy(), f"{name}_backward {red}")
    # none over [N, C, d] without ignore_index
    x3 = rand(2, 3, 2, scale=2.0)
    y3 = np.array([[0, 2], [1, 1]], dtype=np.int64)
    g3 = rand(2, 2)
    c3, cy3, cg3 = T.const(x3), T.const(y3), T.const(g3)
    tx = t(x3).requires_grad_()
    loss = F.cross_entropy(tx, t(y3), reduction="none")
    loss.backward(t(g3))
    T.op(f"%ce_none = oflow.softmax_cross_entropy none {c3}, {cy3} : ({ttype(x3)}, {ttype(y3)}) -> {ttype(g3)}")
    T.expect("%ce_none", ttype(g3), loss.detach().numpy(), "softmax_cross_entropy none, [N, C, d]")
    T.op(f"%ce_none_b = oflow.softmax_cross_entropy_backward none {c3}, {cy3}, {cg3} "
         f": ({ttype(x3)}, {ttype(y3)}, {ttype(g3)}) -> {ttype(x3)}")
    T.expect("%ce_none_b", ttype(x3), tx.grad.numpy(), "softmax_cross_entropy_backward none")
    tx = t(x3).requires_grad_()
    loss = F.nll_loss(tx, t(y3), reduction="none")
    loss.backward(t(g3))
    T.op(f"%nll_none_b = oflow.nll_loss_backward none {c3}, {cy3}, {cg3} "
         f": ({ttype(x3)}, {ttype(y3)}, {ttype(g3)}) -> {ttype(x3)}")
    T.expect("%nll_none_b", ttype(x3), tx.grad.numpy(), "nll_loss_backward none")
    p, q = rand(3, 2), rand(3, 2)
    cp, cq = T.const(p), T.const(q)
    T.op(f"%mse = oflow.mse_loss mean {cp}, {cq} : ({ttype(p)}, {ttype(q)}) -> tensor<f32>")
    T.expect("%mse", "tensor<f32>", F.mse_loss(t(p), t(q)).numpy(), "mse_loss mean")
    T.write()


# ---------------------------------------------------------------- matmul
def matmul_tests():
    T = Test("matmul", "matmul with broadcast batch dims and transposes; gemm with alpha, beta\n"
             "and a broadcast C.")
    a, b = rand(2, 1, 2, 3), rand(3, 4, 3)
    ca, cb = T.const(a), T.const(b)
    ref = torch.matmul(t(a), t(b).transpose(-1, -2)).numpy()
    T.op(f"%mm = oflow.matmul {ca}, {cb} {{transpose_b}} : ({ttype(a)}, {ttype(b)}) -> {ttype(ref)}")
    T.expect("%mm", ttype(ref), ref, "matmul [2,1,2,3] x [3,4,3]^T")
    c, b2 = rand(3, 2), rand(3, 3, 4)
    cc, cb2 = T.const(c), T.const(b2)
    ref2 = torch.matmul(t(c).T, t(b2)).numpy()
    T.op(f"%mm2 = oflow.matmul {cc}, {cb2} {{transpose_a}} : ({ttype(c)}, {ttype(b2)}) -> {ttype(ref2)}")
    T.expect("%mm2", ttype(ref2), ref2, "matmul [3,2]^T x [3,3,4] (lhs broadcast)")
    x, w, bias = rand(3, 4), rand(5, 4), rand(5)
    cx, cw, cbias = T.const(x), T.const(w), T.const(bias)
    ref3 = (0.5 * t(x) @ t(w).T + 2.0 * t(bias)).numpy()
    T.op(f"%gm = oflow.gemm {cx}, {cw}, {cbias} {{transpose_b, alpha = 0.5 : f32, beta = 2.0 : f32}}"
         f" : ({ttype(x)}, {ttype(w)}, {ttype(bias)}) -> {ttype(ref3)}")
    T.expect("%gm", ttype(ref3), ref3, "gemm alpha 0.5 beta 2")
    T.write()


# ---------------------------------------------------------------- elementwise
def elementwise_tests():
    T = Test("elementwise", "broadcasting arithmetic, gelu (both forms), erf, sigmoid, where,\n"
             "compare, cast f32 -> i32 -> f32 (truncation toward zero), signed integer\n"
             "division (truncation), trilu, reductions with keepdims, expand, concat.")
    x = rand(2, 3, scale=2.0)
    r = rand(3)
    cx, cr = T.const(x), T.const(r)
    xt, rt = ttype(x), ttype(r)
    T.op(f"%add = oflow.add {cx}, {cr} : ({xt}, {rt}) -> {xt}")
    T.expect("%add", xt, x + r, "add [2,3] + [3]")
    T.op(f"%gelu = oflow.gelu none {cx} : {xt}")
    T.expect("%gelu", xt, F.gelu(t(x)).numpy(), "gelu exact")
    T.op(f"%gelut = oflow.gelu tanh {cx} : {xt}")
    T.expect("%gelut", xt, F.gelu(t(x), approximate="tanh").numpy(), "gelu tanh")
    T.op(f"%erf = oflow.erf {cx} : {xt}")
    T.expect("%erf", xt, torch.erf(t(x)).numpy(), "erf")
    T.op(f"%sig = oflow.sigmoid {cx} : {xt}")
    T.expect("%sig", xt, torch.sigmoid(t(x)).numpy(), "sigmoid")
    T.op(f"%cmp = oflow.compare gt {cx}, {cr} : ({xt}, {rt}) -> tensor<2x3xi1>")
    T.op(f"%wh = oflow.where %cmp, {cx}, {cr} : (tensor<2x3xi1>, {xt}, {rt}) -> {xt}")
    T.expect("%wh", xt, np.where(x > r, x, np.broadcast_to(r, x.shape)), "where(x > r, x, r)")
    T.op(f"%ci = oflow.cast {cx} to i32 : {xt}")
    T.op(f"%cf = oflow.cast %ci to f32 : tensor<2x3xi32>")
    T.expect("%cf", xt, torch.trunc(t(x)).numpy(), "cast to i32 and back")
    n = np.array([7, -7, 7, -7], dtype=np.int32)
    d = np.array([2, 2, -2, -2], dtype=np.int32)
    cn, cd = T.const(n), T.const(d)
    T.op(f"%q = oflow.div {cn}, {cd} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>")
    T.op(f"%qf = oflow.cast %q to f32 : tensor<4xi32>")
    T.expect("%qf", "tensor<4xf32>", np.trunc(n / d), "i32 division truncates")
    m = rand(3, 4)
    cm = T.const(m)
    T.op(f"%tl = oflow.trilu {cm} {{upper = false, k = 1 : i64}} : {ttype(m)}")
    T.expect("%tl", ttype(m), np.tril(m, 1), "trilu lower k=1")
    T.op(f"%tu = oflow.trilu {cm} {{upper = true, k = -1 : i64}} : {ttype(m)}")
    T.expect("%tu", ttype(m), np.triu(m, -1), "trilu upper k=-1")
    T.op(f"%rm = oflow.reduce_mean {cm} {{axes = array<i64: 1>, keepdims = true}} : ({ttype(m)}) -> tensor<3x1xf32>")
    T.expect("%rm", "tensor<3x1xf32>", m.mean(axis=1, keepdims=True), "reduce_mean axis 1 keepdims")
    T.op(f"%rx = oflow.reduce_max {cm} {{axes = array<i64: 0>, keepdims = false}} : ({ttype(m)}) -> tensor<4xf32>")
    T.expect("%rx", "tensor<4xf32>", m.max(axis=0), "reduce_max axis 0")
    T.op(f"%ex = oflow.expand {cr} [2, 3] : ({rt}) -> {xt}")
    T.op(f"%cat = oflow.concat %ex, {cx} {{axis = 0 : i64}} : ({xt}, {xt}) -> tensor<4x3xf32>")
    T.expect("%cat", "tensor<4x3xf32>", np.concatenate([np.broadcast_to(r, x.shape), x]), "expand + concat")
    T.write()


for fn in (softmax_tests, norm_tests, conv_tests, pool_tests, gather_slice_tests,
           loss_tests, matmul_tests, elementwise_tests):
    fn()
