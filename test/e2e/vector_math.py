#!/usr/bin/env python3
"""The CPU target's vector code on the inputs that take special paths.

oflow-vectorize-elementwise turns row reductions and elementwise ops into
vector tiles, i1 masks are read through i8 copies, and
oflow-vector-math-to-libmvec calls glibc's vector exp/erf/tanh/log, halving
exp arguments below ln(FLT_MIN) (whose results are subnormal or 0) so that
libmvec stays on its fast path. This test compiles one inference model over
rows of such values (-inf, NaN, the subnormal range of exp, overflow, a
causal mask, rows of 16 to 256 elements and one of 20 that stays scalar),
runs it, and compares every output with numpy in float64 rounded to float32:
within 4 ulp (32 for the row sums and softmax), counting subnormal steps as
ulps, with inf and NaN exactly where numpy has them.

  vector_math.py --oflow-compile PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SPECIAL = [-np.inf, np.inf, np.nan, -1e30, -200.0, -174.8, -174.6, -150.0, -104.0,
           -103.9, -100.0, -95.5, -90.0, -88.0, -87.34, -87.33, -87.0, -50.0, -1e-3,
           0.0, 1e-3, 1.0, 10.0, 50.0, 88.0, 88.7, 88.8, 100.0]


def rows(width, rng):
    """[8, width]: special values first, then the subnormal range of exp, then random."""
    x = rng.standard_normal((8, width)).astype(np.float32) * 4
    flat = x.reshape(-1)
    special = np.array(SPECIAL, np.float32)
    flat[:min(len(special), flat.size)] = special[:flat.size]
    ramp = np.linspace(-180, -80, num=min(flat.size - len(special), 200), dtype=np.float32)
    flat[len(special):len(special) + ramp.size] = ramp
    return x


def model(width):
    """Exp, Erf, Tanh, Log|x|, masked softmax, row max and row sum of exp."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, width])
    mask = np.tril(np.ones((8, width), bool), k=width // 2)
    nodes = [
        helper.make_node("Exp", ["x"], ["exp"]),
        helper.make_node("Erf", ["x"], ["erf"]),
        helper.make_node("Tanh", ["x"], ["tanh"]),
        helper.make_node("Abs", ["x"], ["abs"]),
        helper.make_node("Log", ["abs"], ["log"]),
        helper.make_node("Where", ["mask", "x", "neg_inf"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["softmax"], axis=-1),
        helper.make_node("ReduceMax", ["masked"], ["rowmax"], axes=[-1], keepdims=1),
        helper.make_node("Exp", ["masked"], ["masked_exp"]),
        helper.make_node("ReduceSum", ["masked_exp", "axes"], ["rowsum"], keepdims=1),
    ]
    inits = [numpy_helper.from_array(mask, "mask"),
             numpy_helper.from_array(np.array(-np.inf, np.float32), "neg_inf"),
             numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    outs = ["exp", "erf", "tanh", "log", "softmax", "rowmax", "rowsum"]
    shapes = {o: [8, 1] if o.startswith("row") else [8, width] for o in outs}
    graph = helper.make_graph(nodes, "vector_math", [x],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o])
                               for o in outs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return m, mask, outs


def reference(x, mask):
    import math
    d = x.astype(np.float64)
    masked = np.where(mask, d, -np.inf)
    with np.errstate(all="ignore"):
        shifted = masked - masked.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        return {
            "exp": np.exp(d),
            "erf": np.vectorize(math.erf, otypes=[np.float64])(d),
            "tanh": np.tanh(d),
            "log": np.log(np.abs(d)),
            "softmax": e / e.sum(axis=-1, keepdims=True),
            "rowmax": masked.max(axis=-1, keepdims=True),
            "rowsum": np.exp(masked).sum(axis=-1, keepdims=True),
        }


def compare(name, got, want, ulps):
    with np.errstate(over="ignore"):
        want32 = want.astype(np.float32)
    if got.shape != want32.shape:
        return "%s: shape %s, expected %s" % (name, got.shape, want32.shape)
    nan_ok = np.isnan(got) == np.isnan(want32)
    inf_ok = np.where(np.isinf(want32), got == want32, ~np.isinf(got))
    finite = np.isfinite(want32) & np.isfinite(got)
    spacing = np.maximum(np.spacing(np.abs(want32)), np.float32(2.0 ** -149))
    err = np.zeros_like(want32)
    err[finite] = np.abs(got[finite].astype(np.float64) - want[finite]) / spacing[finite]
    bad = ~nan_ok | ~inf_ok | (err > ulps)
    if bad.any():
        i = np.argwhere(bad)[0]
        return "%s: %d elements off, first at %s: %r, expected %r (%.1f ulp)" % (
            name, int(bad.sum()), tuple(i), float(got[tuple(i)]), float(want[tuple(i)]),
            float(err[tuple(i)]))
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # 64 and 256: one vector tile per row; 512: two tiles of 256; 48: a row
        # of three 16-wide libmvec calls; 20: not a multiple of 16, scalar.
        for width in (8, 16, 48, 64, 256, 512, 20):
            m, mask, outs = model(width)
            path = os.path.join(work, "m%d.onnx" % width)
            onnx.save(m, path)
            exe = os.path.join(work, "m%d" % width)
            subprocess.run([args.oflow_compile, path, "--mode", "infer", "--target", "cpu",
                            "-q", "-o", exe], check=True)
            x = rows(width, rng)
            np.save(os.path.join(work, "x.npy"), x)
            out = os.path.join(work, "out%d" % width)
            subprocess.run([exe, os.path.join(work, "x.npy"), "--output-dir", out],
                           check=True, stdout=subprocess.DEVNULL)
            want = reference(x, mask)
            for name in outs:
                got = np.load(os.path.join(out, name + ".npy"))
                # Sums over a row round once per partial sum.
                err = compare(name, got, want[name],
                              32 if name in ("softmax", "rowsum") else 4)
                print("width %3d %-8s %s" % (width, name, err or "ok"))
                if err:
                    failures.append("width %d: %s" % (width, err))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
