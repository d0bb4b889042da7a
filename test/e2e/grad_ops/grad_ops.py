#!/usr/bin/env python3
"""Gradient tests of oflow-autodiff, one op at a time, against torch.autograd.

Every case is a one-op model whose float operands are initializers (so they
are trained) and whose loss is ReduceSum(op(...) * R), R a fixed random
initializer that is frozen. The reference gradients come from the same op in
torch (float64). Modes:

  --emit-only DIR        write DIR/<case>/model.{onnx,mlir} and ref/<w>.npy, and
                         check that `oflow-compile --emit=mlir | oflow-opt
                         --oflow-autodiff` verifies and trains exactly the
                         expected weights
  --interpret            also evaluate the differentiated IR with the reference
                         interpreter (oflow_interp.py) and compare the gradients
  --oflow-compile PATH   full check: compile each model for the CPU, run one
                         step with --dump-grads and compare the dumped gradients

A gradient passes when ||oflow - torch|| <= 1e-4 * ||torch||.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oflow_interp  # noqa: E402

TOL = 1e-4
ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
              np.dtype(np.int64): TensorProto.INT64, np.dtype(np.bool_): TensorProto.BOOL}
MLIR_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}


class Case:
    """One model: initializers, the op (ONNX node or oflow IR), the torch op."""

    double = False  # R (and so the loss) in float64, for casts to f64

    def __init__(self, name, inits, torch_fn, onnx_op=None, attrs=None, mlir=None,
                 opset=17, outputs=1, no_grad=(), extra_nodes=()):
        self.name, self.inits, self.torch_fn = name, inits, torch_fn
        self.onnx_op, self.attrs, self.mlir, self.opset = onnx_op, attrs or {}, mlir, opset
        self.outputs, self.no_grad, self.extra_nodes = outputs, set(no_grad), extra_nodes

    def reference(self, seed):
        """Torch forward (float64) and gradients of every float initializer."""
        tensors = {}
        for k, v in self.inits.items():
            t = torch.from_numpy(v.astype(np.float64) if v.dtype.kind == "f" else v)
            if v.dtype.kind == "f" and k not in self.no_grad:
                t.requires_grad_(True)
            tensors[k] = t
        outs = self.torch_fn(tensors)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        rng = np.random.default_rng(seed + 1)
        self.R = [rng.standard_normal(o.shape).astype(np.float64 if o.dtype == torch.float64
                                                         and self.double else np.float32)
                  for o in outs]
        loss = sum((o * torch.from_numpy(r.astype(np.float64))).sum() for o, r in zip(outs, self.R))
        names = [k for k, t in tensors.items() if t.requires_grad]
        grads = torch.autograd.grad(loss, [tensors[k] for k in names], allow_unused=True)
        self.out_shapes = [tuple(o.shape) for o in outs]
        return {k: (g.numpy() if g is not None else np.zeros_like(self.inits[k]))
                for k, g in zip(names, grads)}

    def r_names(self):
        return ["R"] if len(self.R) == 1 else [f"R{i}" for i in range(len(self.R))]

    def onnx_model(self):
        inits = [numpy_helper.from_array(v, k) for k, v in self.inits.items()]
        inits += [numpy_helper.from_array(r, n) for r, n in zip(self.R, self.r_names())]
        # Outputs beyond the torch op's (BN's running statistics) are unused.
        ys = [f"y{i}" for i in range(max(self.outputs, len(self.R)))]
        attrs = dict(self.attrs)
        inputs = attrs.pop("_inputs", None) or list(self.inits)
        nodes = list(self.extra_nodes)
        nodes.append(helper.make_node(self.onnx_op, inputs, ys, name="op", **attrs))
        terms = []
        for i, (y, r) in enumerate(zip(ys, self.r_names())):
            nodes.append(helper.make_node("Mul", [y, r], [f"m{i}"], name=f"mul{i}"))
            nodes.append(helper.make_node("ReduceSum", [f"m{i}"], [f"s{i}"], keepdims=0,
                                          name=f"sum{i}"))
            terms.append(f"s{i}")
        loss = terms[0]
        for i, t in enumerate(terms[1:]):
            nodes.append(helper.make_node("Add", [loss, t], [f"acc{i}"], name=f"acc{i}"))
            loss = f"acc{i}"
        nodes.append(helper.make_node("Identity", [loss], ["loss"], name="loss"))
        ltype = ONNX_TYPES[self.R[0].dtype]
        graph = helper.make_graph(nodes, self.name, [],
                                  [helper.make_tensor_value_info("loss", ltype, [])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        onnx.checker.check_model(model)
        return model

    def mlir_model(self):
        def ty(shape, dtype):
            return "tensor<" + "".join(f"{d}x" for d in shape) + MLIR_TYPES[np.dtype(dtype)] + ">"

        def lit(v):
            body = np.array2string(v.astype(np.float64) if v.dtype.kind == "f" else v,
                                   separator=", ", threshold=1 << 30, floatmode="unique",
                                   max_line_width=1 << 30)
            return "dense<" + body.replace("True", "true").replace("False", "false") + ">"

        lines = ["func.func @main() -> " + ty((), self.R[0].dtype) + " {"]
        env = {}
        for k, v in list(self.inits.items()) + list(zip(self.r_names(), self.R)):
            lines.append(f'  %{k} = oflow.weight "{k}", {lit(v)} : {ty(v.shape, v.dtype)}')
            env[k] = ty(v.shape, v.dtype)
        out_ty = ty(self.out_shapes[0], self.R[0].dtype)
        lines.append("  %y = " + self.mlir.format(out=out_ty, **env))
        rank = len(self.out_shapes[0])
        axes = ", ".join(str(i) for i in range(rank))
        lines.append(f"  %m = oflow.mul %y, %R : ({out_ty}, {out_ty}) -> {out_ty}")
        loss = "%m"
        if rank:
            loss = "%l"
            lines.append(f"  %l = oflow.reduce_sum %m {{axes = array<i64: {axes}>, keepdims = false}}"
                         f" : ({out_ty}) -> {ty((), self.R[0].dtype)}")
        lines.append(f"  return {loss} : {ty((), self.R[0].dtype)}")
        lines.append("}")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

def cases():
    rng = np.random.default_rng(0)

    def rand(*shape, lo=-2.0, hi=2.0):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    def with_zeros(a, frac=0.3):
        a = a.copy()
        a[rng.random(a.shape) < frac] = 0.0
        return a

    out = []
    add = out.append

    # Element-wise unary: a few shapes, positive inputs where the op needs them.
    unary = [("Neg", torch.neg, {}), ("Exp", torch.exp, {}), ("Log", torch.log, {"lo": 0.1}),
             ("Sqrt", torch.sqrt, {"lo": 0.1}), ("Reciprocal", torch.reciprocal, {"lo": 0.3}),
             ("Tanh", torch.tanh, {}), ("Sigmoid", torch.sigmoid, {}), ("Relu", torch.relu, {}),
             ("Erf", torch.erf, {}), ("Abs", torch.abs, {})]
    for op, fn, kw in unary:
        for shape in [(7,), (3, 5), (2, 3, 4)]:
            add(Case(f"{op.lower()}_{'x'.join(map(str, shape))}", {"X": rand(*shape, **kw)},
                     lambda t, fn=fn: fn(t["X"]), onnx_op=op))
    # relu'(0) = 0 and abs'(0) = 0, as torch.
    add(Case("relu_zeros", {"X": with_zeros(rand(4, 6))}, lambda t: torch.relu(t["X"]), onnx_op="Relu"))
    add(Case("abs_zeros", {"X": with_zeros(rand(4, 6))}, lambda t: torch.abs(t["X"]), onnx_op="Abs"))
    for shape in [(6,), (3, 4)]:
        tag = "x".join(map(str, shape))
        add(Case(f"rsqrt_{tag}", {"X": rand(*shape, lo=0.2)}, lambda t: torch.rsqrt(t["X"]),
                 mlir="oflow.rsqrt %X : {X}"))
        for approx, code in [("none", "none"), ("tanh", "tanh")]:
            add(Case(f"gelu_{approx}_{tag}", {"X": rand(*shape, lo=-3, hi=3)},
                     lambda t, a=approx: F.gelu(t["X"], approximate=a),
                     mlir=f"oflow.gelu {code} %X : {{X}}"))

    # Broadcasting binary ops.
    shapes = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((5,), ())]
    binary = [("Add", torch.add, {}), ("Sub", torch.sub, {}), ("Mul", torch.mul, {}),
              ("Div", torch.div, {"lo": 0.5}), ("Max", torch.maximum, {}), ("Min", torch.minimum, {}),
              ("Pow", torch.pow, {"lo": 0.3})]
    for op, fn, kw in binary:
        for sa, sb in shapes:
            tag = "x".join(map(str, sa)) + "_" + ("x".join(map(str, sb)) or "s")
            a = rand(*sa, **(kw if op == "Pow" else {}))
            b = rand(*sb, **(kw if op == "Div" else {})) if op != "Pow" else rand(*sb, lo=-1.5, hi=2.5)
            add(Case(f"{op.lower()}_{tag}", {"A": a, "B": b}, lambda t, fn=fn: fn(t["A"], t["B"]),
                     onnx_op=op))
    # Ties split the gradient in half (torch.maximum / torch.minimum).
    for op, fn in [("Max", torch.maximum), ("Min", torch.minimum)]:
        a = rand(4, 5)
        b = a.copy()
        b[rng.random(b.shape) < 0.5] += 1.0
        add(Case(f"{op.lower()}_ties", {"A": a, "B": b}, lambda t, fn=fn: fn(t["A"], t["B"]), onnx_op=op))
    # Pow with an exponent initializer of 0 and a base with zeros.
    add(Case("pow_zero_exponent", {"A": rand(3, 4, lo=0.2), "B": np.array([0.0, 1.0, 2.0, 0.5], np.float32)},
             lambda t: torch.pow(t["A"], t["B"]), onnx_op="Pow"))
    add(Case("pow_zero_base", {"A": with_zeros(rand(3, 4, lo=0.2)), "B": np.array([1.0, 2.0, 3.0, 2.5], np.float32)},
             lambda t: torch.pow(t["A"], t["B"]), onnx_op="Pow"))

    for cshape, sa, sb in [((3, 4), (3, 4), (3, 4)), ((1, 4), (3, 1), (4,)), ((2, 3, 4), (3, 4), ())]:
        cond = rng.random(cshape) < 0.5
        add(Case(f"where_{'x'.join(map(str, cshape))}", {"C": cond, "A": rand(*sa), "B": rand(*sb)},
                 lambda t: torch.where(t["C"], t["A"], t["B"]), onnx_op="Where",
                 attrs={"_inputs": ["C", "A", "B"]}))

    c = Case("cast_f32_to_f64", {"X": rand(3, 4)}, lambda t: t["X"].double(), onnx_op="Cast",
             attrs={"to": TensorProto.DOUBLE})
    c.double = True
    add(c)
    # ONNX Dropout in inference imports as nothing at all: the op itself.
    for shape in [(3, 4), (2, 3, 5)]:
        add(Case(f"dropout_ratio0_{'x'.join(map(str, shape))}", {"X": rand(*shape)},
                 lambda t: t["X"] * 1.0, mlir="oflow.dropout %X {{ratio = 0.0 : f64}} : {X}"))

    # Linear algebra.
    for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2))]:
        tag = "x".join(map(str, sa)) + "_" + "x".join(map(str, sb))
        add(Case(f"matmul_{tag}", {"A": rand(*sa), "B": rand(*sb)}, lambda t: t["A"] @ t["B"],
                 onnx_op="MatMul"))
    for ta in (False, True):
        for tb in (False, True):
            sa = (2, 4, 3) if ta else (2, 3, 4)
            sb = (5, 4) if tb else (4, 5)
            flags = ", ".join(f for f, on in [("transpose_a", ta), ("transpose_b", tb)] if on)
            add(Case(f"matmul_t{int(ta)}{int(tb)}", {"A": rand(*sa), "B": rand(*sb)},
                     lambda t, ta=ta, tb=tb: (t["A"].transpose(-1, -2) if ta else t["A"]) @
                     (t["B"].transpose(-1, -2) if tb else t["B"]),
                     mlir="oflow.matmul %A, %B {{" + flags + "}} : ({A}, {B}) -> {out}"))
    for ta, tb, alpha, beta, cs in [(0, 0, 1.0, 1.0, (5,)), (0, 1, 0.5, 2.0, (3, 5)),
                                    (1, 0, 1.5, 0.3, (1, 5)), (1, 1, 1.0, 1.0, (3, 1)),
                                    (0, 1, 2.0, 1.0, ())]:
        a = rand(4, 3) if ta else rand(3, 4)
        b = rand(5, 4) if tb else rand(4, 5)

        def gemm(t, ta=ta, tb=tb, alpha=alpha, beta=beta):
            x = t["A"].t() if ta else t["A"]
            y = t["B"].t() if tb else t["B"]
            return alpha * (x @ y) + beta * t["C"]
        add(Case(f"gemm_t{ta}{tb}_c{'x'.join(map(str, cs)) or 's'}", {"A": a, "B": b, "C": rand(*cs)},
                 gemm, onnx_op="Gemm", attrs={"transA": ta, "transB": tb, "alpha": alpha, "beta": beta}))
    add(Case("gemm_no_c", {"A": rand(3, 4), "B": rand(5, 4)}, lambda t: t["A"] @ t["B"].t(),
             onnx_op="Gemm", attrs={"transB": 1}))

    # Einsum (pairwise batched matrix products; diagonals through a mask).
    einsums = [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
               ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
               ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
               ("i,i->", [(6,), (6,)]), ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(3, 4)]),
               ("ij->", [(3, 4)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("bii->bi", [(2, 3, 3)]),
               ("...ij,...jk->...ik", [(2, 1, 3, 4), (2, 5, 4, 2)]), ("ij,jk", [(3, 4), (4, 2)]),
               ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
               ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]), ("ij,kl->", [(2, 3), (4, 5)])]
    for eq, shapes in einsums:
        names = [f"X{i}" for i in range(len(shapes))]
        tag = eq.replace("->", "_to_").replace(",", "_").replace("...", "e")
        add(Case(f"einsum_{tag or 'x'}", {n: rand(*sh) for n, sh in zip(names, shapes)},
                 lambda t, eq=eq, names=names: torch.einsum(eq, *[t[n] for n in names]),
                 onnx_op="Einsum", attrs={"equation": eq}, opset=12))

    # Reductions.
    for axes, keep in [([1], 1), ([0, 2], 0), ([0, 1, 2], 0), ([2], 1)]:
        tag = "_".join(map(str, axes)) + f"_k{keep}"
        x = rand(2, 3, 4)
        add(Case(f"reduce_sum_{tag}", {"X": x}, lambda t, a=axes, k=keep: t["X"].sum(dim=a, keepdim=bool(k)),
                 onnx_op="ReduceSum", opset=13, attrs={"keepdims": keep, "_inputs": ["X", "axes"]},
                 extra_nodes=[helper.make_node("Constant", [], ["axes"], name="axes",
                                               value=numpy_helper.from_array(np.array(axes, np.int64)))]))
        add(Case(f"reduce_mean_{tag}", {"X": x}, lambda t, a=axes, k=keep: t["X"].mean(dim=a, keepdim=bool(k)),
                 onnx_op="ReduceMean", attrs={"axes": axes, "keepdims": keep}))
        add(Case(f"reduce_max_{tag}", {"X": x}, lambda t, a=axes, k=keep: t["X"].amax(dim=a, keepdim=bool(k)),
                 onnx_op="ReduceMax", attrs={"axes": axes, "keepdims": keep}))
    # Tied maxima share the gradient evenly (torch.amax).
    tied = np.round(rand(3, 6)).astype(np.float32)
    add(Case("reduce_max_ties", {"X": tied}, lambda t: t["X"].amax(dim=1, keepdim=True),
             onnx_op="ReduceMax", attrs={"axes": [1], "keepdims": 1}))

    for axis in [-1, 0, 1]:
        for op, fn in [("Softmax", torch.softmax), ("LogSoftmax", torch.log_softmax)]:
            add(Case(f"{op.lower()}_axis{axis}", {"X": rand(3, 4, 5)}, lambda t, a=axis, fn=fn: fn(t["X"], a),
                     onnx_op=op, attrs={"axis": axis}))

    # Normalizations.
    for shape, axis, bias, eps in [((2, 3, 8), -1, True, 1e-5), ((2, 3, 4), 1, True, 1e-3),
                                   ((4, 6), 1, False, 1e-5), ((2, 3, 4), 0, True, 1e-5)]:
        ns = shape[axis:] if axis >= 0 else shape[axis:]
        inits = {"X": rand(*shape), "S": rand(*ns), **({"B": rand(*ns)} if bias else {})}
        add(Case(f"layer_norm_{'x'.join(map(str, shape))}_a{axis}{'' if bias else '_nobias'}", inits,
                 lambda t, ns=ns, eps=eps: F.layer_norm(t["X"], ns, t["S"], t.get("B"), eps),
                 onnx_op="LayerNormalization", attrs={"axis": axis, "epsilon": eps}))
    for shape in [(4, 3, 5, 5), (8, 3), (2, 4, 6)]:
        c = shape[1]
        bn = {"X": rand(*shape), "S": rand(c), "B": rand(c), "M": rand(c), "V": rand(c, lo=0.5)}
        add(Case(f"batch_norm_training_{'x'.join(map(str, shape))}", dict(bn),
                 lambda t: F.batch_norm(t["X"], t["M"].detach().clone(), t["V"].detach().clone(),
                                        t["S"], t["B"], True, 0.1, 1e-5),
                 onnx_op="BatchNormalization", opset=15, outputs=3, no_grad=("M", "V"),
                 attrs={"training_mode": 1, "momentum": 0.9, "epsilon": 1e-5}))
        add(Case(f"batch_norm_inference_{'x'.join(map(str, shape))}", dict(bn),
                 lambda t: F.batch_norm(t["X"], t["M"], t["V"], t["S"], t["B"], False, 0.0, 1e-3),
                 onnx_op="BatchNormalization", opset=15, no_grad=("M", "V"), attrs={"epsilon": 1e-3}))

    # Convolution and pooling.
    for n, cin, h, cout, k, s, p, d, g, bias in [
            (2, 3, 7, 4, 3, 1, 1, 1, 1, True), (1, 4, 8, 6, 3, 2, 0, 1, 2, False),
            (2, 2, 9, 2, 2, 1, 2, 2, 1, True), (1, 4, 6, 4, 3, 1, 1, 1, 4, True)]:
        inits = {"X": rand(n, cin, h, h), "W": rand(cout, cin // g, k, k), **({"B": rand(cout)} if bias else {})}
        add(Case(f"conv_{cin}to{cout}_k{k}s{s}p{p}d{d}g{g}{'' if bias else '_nobias'}", inits,
                 lambda t, s=s, p=p, d=d, g=g: F.conv2d(t["X"], t["W"], t.get("B"), s, p, d, g),
                 onnx_op="Conv", attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p] * 4,
                                        "dilations": [d, d], "group": g}))
    add(Case("conv_asym_pads", {"X": rand(1, 2, 6, 6), "W": rand(3, 2, 3, 3)},
             lambda t: F.conv2d(F.pad(t["X"], (0, 1, 1, 2)), t["W"]),
             onnx_op="Conv", attrs={"kernel_shape": [3, 3], "pads": [1, 0, 2, 1]}))
    for k, s, p, ceil in [(2, 2, 0, 0), (3, 1, 1, 0), (3, 2, 1, 1)]:
        add(Case(f"max_pool_k{k}s{s}p{p}c{ceil}", {"X": rand(2, 3, 7, 7)},
                 lambda t, k=k, s=s, p=p, c=ceil: F.max_pool2d(t["X"], k, s, p, ceil_mode=bool(c)),
                 onnx_op="MaxPool", attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p] * 4,
                                           "ceil_mode": ceil}))
        for cip in (0, 1):
            add(Case(f"avg_pool_k{k}s{s}p{p}c{ceil}i{cip}", {"X": rand(2, 3, 7, 7)},
                     lambda t, k=k, s=s, p=p, c=ceil, i=cip: F.avg_pool2d(t["X"], k, s, p, bool(c), bool(i)),
                     onnx_op="AveragePool", attrs={"kernel_shape": [k, k], "strides": [s, s],
                                                   "pads": [p] * 4, "ceil_mode": ceil,
                                                   "count_include_pad": cip}))
    add(Case("max_pool_dilated", {"X": rand(1, 2, 8, 8)}, lambda t: F.max_pool2d(t["X"], 2, 1, 0, 2),
             onnx_op="MaxPool", attrs={"kernel_shape": [2, 2], "dilations": [2, 2]}))
    for shape in [(2, 3, 4, 5), (1, 4, 1, 1)]:
        add(Case(f"global_avg_pool_{'x'.join(map(str, shape))}", {"X": rand(*shape)},
                 lambda t: t["X"].mean(dim=(2, 3), keepdim=True), onnx_op="GlobalAveragePool"))

    # Shape ops.
    def const(name, values):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(np.array(values, np.int64)))
    for shape, new in [((2, 3, 4), [6, 4]), ((2, 6), [3, 2, 2]), ((4, 3), [-1])]:
        add(Case(f"reshape_{'x'.join(map(str, shape))}", {"X": rand(*shape)},
                 lambda t, new=new: t["X"].reshape(new), onnx_op="Reshape",
                 attrs={"_inputs": ["X", "shape"]}, extra_nodes=[const("shape", new)]))
    for axis in (0, 1, 2):
        add(Case(f"flatten_a{axis}", {"X": rand(2, 3, 4)},
                 lambda t, a=axis: t["X"].reshape(int(np.prod(t["X"].shape[:a])), -1),
                 onnx_op="Flatten", attrs={"axis": axis}))
    for perm in ([1, 0, 2], [2, 0, 1], [0, 2, 1, 3]):
        shape = (2, 3, 4, 5)[:len(perm)]
        add(Case(f"transpose_{''.join(map(str, perm))}", {"X": rand(*shape)},
                 lambda t, p=perm: t["X"].permute(p), onnx_op="Transpose", attrs={"perm": perm}))
    add(Case("squeeze", {"X": rand(2, 1, 3, 1)}, lambda t: t["X"].reshape(2, 3), onnx_op="Squeeze",
             opset=13, attrs={"_inputs": ["X", "axes"]}, extra_nodes=[const("axes", [1, 3])]))
    add(Case("unsqueeze", {"X": rand(2, 3)}, lambda t: t["X"].reshape(1, 2, 1, 3), onnx_op="Unsqueeze",
             opset=13, attrs={"_inputs": ["X", "axes"]}, extra_nodes=[const("axes", [0, 2])]))
    for shape, new in [((3, 1), [3, 4]), ((4,), [2, 3, 4]), ((1, 3, 1), [2, 3, 5])]:
        add(Case(f"expand_{'x'.join(map(str, shape))}", {"X": rand(*shape)},
                 lambda t, new=new: t["X"].expand(*new), onnx_op="Expand",
                 attrs={"_inputs": ["X", "shape"]}, extra_nodes=[const("shape", new)]))
    for axis in (0, 1):
        shapes = [(2, 3), (2, 3), (2, 3)]
        shapes = [tuple(s if i != axis else s + j for i, s in enumerate(sh)) for j, sh in enumerate(shapes)]
        inits = {f"X{i}": rand(*s) for i, s in enumerate(shapes)}
        add(Case(f"concat_a{axis}", inits, lambda t, a=axis: torch.cat([t["X0"], t["X1"], t["X2"]], a),
                 onnx_op="Concat", attrs={"axis": axis}))
    for starts, ends, axes, steps in [([1], [3], [0], [1]), ([0, 1], [4, 6], [0, 1], [2, 2]),
                                      ([-1], [-5], [1], [-1]), ([3, 0], [0, 2], [0, 1], [-2, 1])]:
        tag = "_".join(map(str, starts + ends + axes + steps)).replace("-", "m")

        def torch_slice(t, starts=starts, ends=ends, axes=axes, steps=steps):
            x = t["X"]
            for s, e, a, st in zip(starts, ends, axes, steps):
                dim = x.shape[a]
                idx = list(range(dim))[slice(s, e, st)]
                x = torch.index_select(x, a, torch.tensor(idx, dtype=torch.long))
            return x
        add(Case(f"slice_{tag}", {"X": rand(5, 6)}, torch_slice, onnx_op="Slice", opset=13,
                 attrs={"_inputs": ["X", "starts", "ends", "axes", "steps"]},
                 extra_nodes=[const("starts", starts), const("ends", ends), const("axes", axes),
                              const("steps", steps)]))
    for axis, sizes in [(0, [1, 3]), (1, [2, 2, 2])]:
        add(Case(f"split_a{axis}", {"X": rand(4, 6)},
                 lambda t, a=axis, s=sizes: torch.split(t["X"], s, a), onnx_op="Split", opset=13,
                 outputs=len(sizes), attrs={"axis": axis, "_inputs": ["X", "split"]},
                 extra_nodes=[const("split", sizes)]))
    for axis, idx in [(0, [[0, 2], [2, 3]]), (1, [1, -1, 1]), (0, 2)]:
        ind = np.array(idx, np.int64)
        add(Case(f"gather_a{axis}_{'x'.join(map(str, ind.shape)) or 's'}", {"X": rand(4, 5), "I": ind},
                 lambda t, a=axis: oflow_interp.gather_t(t["X"], t["I"], a), onnx_op="Gather",
                 attrs={"axis": axis}))
    for upper in (0, 1):
        for k in (-1, 0, 2):
            add(Case(f"trilu_u{upper}_k{k}".replace("-", "m"), {"X": rand(2, 4, 5)},
                     lambda t, u=upper, k=k: (torch.triu if u else torch.tril)(t["X"], k),
                     onnx_op="Trilu", attrs={"upper": upper, "_inputs": ["X", "k"]},
                     extra_nodes=[helper.make_node("Constant", [], ["k"], name="k",
                                                   value=numpy_helper.from_array(np.array(k, np.int64)))]))

    # Losses.
    for reduction in ("mean", "sum", "none"):
        for shape, ignore in [((5, 4), None), ((3, 4, 2), 1)]:
            labels = rng.integers(0, shape[1], (shape[0],) + shape[2:]).astype(np.int64)
            kw = {} if ignore is None else {"ignore_index": ignore}
            tag = f"{reduction}_{'x'.join(map(str, shape))}{'' if ignore is None else '_ign'}"
            add(Case(f"sce_{tag}", {"X": rand(*shape), "L": labels},
                     lambda t, r=reduction, kw=kw: F.cross_entropy(t["X"], t["L"], reduction=r, **kw),
                     onnx_op="SoftmaxCrossEntropyLoss", attrs={"reduction": reduction, **kw}))
            add(Case(f"nll_{tag}", {"X": rand(*shape), "L": labels},
                     lambda t, r=reduction, kw=kw: F.nll_loss(t["X"], t["L"], reduction=r, **kw),
                     onnx_op="NegativeLogLikelihoodLoss", attrs={"reduction": reduction, **kw}))
        for shape in [(4, 3), (2, 3, 4)]:
            add(Case(f"mse_{reduction}_{'x'.join(map(str, shape))}", {"X": rand(*shape), "T": rand(*shape)},
                     lambda t, r=reduction: F.mse_loss(t["X"], t["T"], reduction=r),
                     mlir=f"oflow.mse_loss {reduction} %X, %T : ({{X}}, {{T}}) -> {{out}}"))
    return out


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def rel_err(got, ref):
    got = np.asarray(got, np.float64).reshape(ref.shape)
    ref = ref.astype(np.float64)
    denom = np.linalg.norm(ref)
    return np.linalg.norm(got - ref) / (denom if denom > 0 else 1.0)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def emit(case, root):
    d = os.path.join(root, case.name)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    refs = case.reference(seed=len(case.name))
    if case.mlir:
        path = os.path.join(d, "model.mlir")
        with open(path, "w") as f:
            f.write(case.mlir_model())
    else:
        path = os.path.join(d, "model.onnx")
        onnx.save(case.onnx_model(), path)
    for k, g in refs.items():
        np.save(os.path.join(d, "ref", f"{k}.npy"), g.astype(np.float32))
    return path, refs


# The frozen R initializers (R, or R0, R1, ... for multi-output ops).
FREEZE = "R[0-9]*"


def differentiate(case, path, tools):
    """oflow-compile --emit=mlir | oflow-opt --oflow-autodiff, generic form."""
    imp = run([tools["compile"], path, "--emit=mlir", "-o", "-"])
    if imp.returncode:
        return None, "import failed: " + imp.stderr
    opt = run([tools["opt"], "-", "--oflow-autodiff=freeze=" + FREEZE,
               "--mlir-print-op-generic"], input=imp.stdout)
    if opt.returncode:
        return None, "oflow-autodiff failed: " + opt.stderr
    return opt.stdout, None


def check_case(case, root, tools, interpret, exe_mode, compile_args=()):
    path, refs = emit(case, root)
    ir, err = differentiate(case, path, tools)
    if err:
        return [err]
    problems = []
    trained = re.findall(r'"oflow.gradient"\(%[\w#]+\) <\{name = "([^"]+)"\}>', ir)
    if sorted(trained) != sorted(refs):
        problems.append(f"trained {sorted(trained)}, expected {sorted(refs)}")
    if interpret:
        inits = dict(case.inits)
        inits.update(zip(case.r_names(), case.R))
        try:
            got = oflow_interp.gradients(ir, inits)
        except Exception as e:  # report, keep checking the other cases
            return problems + [f"interpreter: {type(e).__name__}: {e}"]
        for k, ref in refs.items():
            if k in got:
                e = rel_err(got[k], ref)
                if not e <= TOL:
                    problems.append(f"gradient of {k}: relative error {e:.2e} (interpreter)")
    if exe_mode:
        exe = os.path.join(root, case.name, "train")
        comp = run([tools["compile"], path, "--target", "cpu", "--freeze", FREEZE,
                    *compile_args, "-o", exe])
        if comp.returncode:
            return problems + ["oflow-compile failed: " + comp.stderr[-2000:]]
        dump = os.path.join(root, case.name, "grads")
        step = run([exe, "--steps", "1", "--dump-grads", dump])
        if step.returncode:
            return problems + ["the executable failed: " + step.stderr[-2000:]]
        for k, ref in refs.items():
            f = os.path.join(dump, f"{k}.npy")
            if not os.path.exists(f):
                problems.append(f"no dumped gradient {k}.npy")
                continue
            e = rel_err(np.load(f), ref)
            if not e <= TOL:
                problems.append(f"gradient of {k}: relative error {e:.2e}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--emit-only", metavar="DIR", help="write models and references, check oflow-autodiff runs")
    ap.add_argument("--oflow-compile", metavar="PATH", required=True, help="the oflow-compile binary")
    ap.add_argument("--oflow-opt", metavar="PATH", help="the oflow-opt binary (default: next to oflow-compile)")
    ap.add_argument("--interpret", action="store_true", help="check gradients with the reference interpreter")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--compile-arg", action="append", default=[], metavar="ARG",
                    help="an extra oflow-compile argument for the executables")
    ap.add_argument("--skip", action="append", default=[], metavar="REGEX[:WHY]",
                    help="skip the cases whose name matches REGEX (known failures elsewhere)")
    ap.add_argument("--list", action="store_true", help="list the cases")
    args = ap.parse_args()
    tools = {"compile": args.oflow_compile,
             "opt": args.oflow_opt or os.path.join(os.path.dirname(args.oflow_compile), "oflow-opt")}
    skips = [tuple(s.split(":", 1)) if ":" in s else (s, "") for s in args.skip]
    selected = []
    for c in cases():
        if not re.search(args.filter, c.name):
            continue
        why = next((w for pat, w in skips if re.fullmatch(pat, c.name)), None)
        if why is not None:
            print(f"SKIP {c.name}" + (f": {why}" if why else ""))
            continue
        selected.append(c)
    if args.list:
        print("\n".join(c.name for c in selected))
        return 0
    root = args.emit_only or tempfile.mkdtemp(prefix="grad_ops.")
    failures = 0
    for case in selected:
        problems = check_case(case, root, tools, args.interpret, exe_mode=not args.emit_only,
                              compile_args=args.compile_arg)
        if problems:
            failures += 1
            print(f"FAIL {case.name}: " + "; ".join(p.strip() for p in problems))
    mode = "emit-only" + (" + interpreter" if args.interpret else "") if args.emit_only else "executable"
    print(f"grad_ops ({mode}): {len(selected) - failures} passed, {failures} failed of {len(selected)} cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
