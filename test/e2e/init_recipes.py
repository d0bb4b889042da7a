#!/usr/bin/env python3
"""Weights drawn from initializer recipes (native IR, no weight file).

An MLP in oflow's native IR whose six weights carry `#oflow.init` recipes
(normal, zeros, uniform, constant, truncated_normal, ones) is compiled for
one device and for meshes where the plan splits the weights (ZeRO-3 on 2
and 2x2, so each rank draws only its piece). For each:
  1. the weights the executable starts from (--dump-weights) equal a NumPy
     reference of runtime/include/oflow_rt/InitRecipe.h bit for bit: element
     i of variable N is Philox4x32-10 with counter (i lo, i hi, attempt, 0)
     and key (seed, FNV-1a-32 of N), Box-Muller in double with the C
     library's log, cos and sqrt (Python's math module), rounded once to f32;
  2. the meshes' losses over 5 steps equal one device's within 1e-6
     (relative): one model, the same start, any plan.

  init_recipes.py --oflow-compile build/bin/oflow-compile [--mesh 2 2x2]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from philox import LOW32, check_known_answers, philox4x32_10  # noqa: E402

WEIGHTS = [  # name, recipe (kind, a, b, seed), shape
    ("fc1.weight", ("normal", 0.0, 0.1, 1), (64, 32)),
    ("fc1.bias", ("zeros", 0.0, 0.0, 0), (64,)),
    ("fc2.weight", ("uniform", -0.125, 0.125, 1), (64, 64)),
    ("fc2.bias", ("constant", 0.01, 0.0, 0), (64,)),
    ("fc3.weight", ("truncated_normal", 0.0, 0.1, 2), (8, 64)),
    ("fc3.bias", ("ones", 0.0, 0.0, 0), (8,)),
]


def recipe_text(kind, a, b, seed):
    args = {"normal": f"({a!r}, {b!r})", "uniform": f"({a!r}, {b!r})",
            "truncated_normal": f"({a!r}, {b!r})", "constant": f"({a!r})"}.get(kind, "")
    return f"#oflow.init<{kind}{args}" + (f", seed = {seed}" if seed else "") + ">"


def model_text():
    w = "\n".join(f'    %{i} = oflow.weight "{n}", {recipe_text(*r)} : tensor<{"x".join(map(str, s))}xf32>'
                  for i, (n, r, s) in enumerate(WEIGHTS))
    return f"""module attributes {{oflow.mesh = #oflow.mesh<1>}} {{
  func.func @main(%arg0: tensor<32x32xf32> {{oflow.name = "x"}}, %arg1: tensor<32xi64> {{oflow.name = "y"}}) -> (tensor<f32> {{oflow.name = "loss"}}) {{
{w}
    %6 = oflow.gemm %arg0, %0, %1 {{transpose_b}} : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %7 = oflow.relu %6 : tensor<32x64xf32>
    %8 = oflow.gemm %7, %2, %3 {{transpose_b}} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %9 = oflow.relu %8 : tensor<32x64xf32>
    %10 = oflow.gemm %9, %4, %5 {{transpose_b}} : (tensor<32x64xf32>, tensor<8x64xf32>, tensor<8xf32>) -> tensor<32x8xf32>
    %11 = oflow.softmax_cross_entropy mean %10, %arg1 {{ignore_index = -100 : i64}} : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
    return %11 : tensor<f32>
  }}
}}
"""


def fnv1a32(text):
    h = 2166136261
    for c in text.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def fraction(hi, lo):
    """53-bit fractions of [0, 1) from word pairs (exact in float64)."""
    bits = ((hi << np.uint64(32)) | lo) >> np.uint64(11)
    return bits.astype(np.float64) * 2.0 ** -53


def normal_draws(index, key, attempt):
    n = index.shape
    w = philox4x32_10([index & LOW32, index >> np.uint64(32), np.full(n, attempt, np.uint64),
                       np.zeros(n, np.uint64)], key)
    u1 = fraction(w[0], w[1]) + 2.0 ** -53
    u2 = fraction(w[2], w[3])
    # The C library's functions, one element at a time (NumPy's vector loops
    # may round differently).
    return np.array([math.sqrt(-2.0 * math.log(a)) * math.cos(2.0 * math.pi * b)
                     for a, b in zip(u1, u2)])


def reference(name, recipe, shape):
    kind, a, b, seed = recipe
    size = int(np.prod(shape))
    index = np.arange(size, dtype=np.uint64)
    key = [seed, fnv1a32(name)]
    if kind == "zeros":
        v = np.zeros(size)
    elif kind == "ones":
        v = np.ones(size)
    elif kind == "constant":
        v = np.full(size, a)
    elif kind == "uniform":
        w = philox4x32_10([index & LOW32, index >> np.uint64(32), np.zeros(size, np.uint64),
                           np.zeros(size, np.uint64)], key)
        v = a + (b - a) * fraction(w[0], w[1])
    elif kind == "normal":
        v = a + b * normal_draws(index, key, 0)
    else:  # truncated_normal: attempt 0, 1, ... until |z| <= 2
        z = normal_draws(index, key, 0)
        attempt = 0
        while np.any(np.abs(z) > 2.0):
            attempt += 1
            bad = np.abs(z) > 2.0
            z[bad] = normal_draws(index[bad], key, attempt)
        v = a + b * z
    return v.astype(np.float32).reshape(shape)


def run(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oflow-compile", required=True)
    ap.add_argument("--mesh", nargs="*", default=["2", "2x2"])
    args = ap.parse_args()
    check_known_answers()
    problems = []
    with tempfile.TemporaryDirectory(prefix="oflow-init-") as tmp:
        model = os.path.join(tmp, "mlp.mlir")
        with open(model, "w") as f:
            f.write(model_text())
        refs = {n: reference(n, r, s) for n, r, s in WEIGHTS}
        losses = {}
        for mesh in ["1"] + args.mesh:
            exe = os.path.join(tmp, f"mlp-{mesh}")
            cmd = [args.oflow_compile, model, "--target", "cpu", "-O0", "--lr", "0.05", "-q"]
            if mesh != "1":
                cmd += ["--mesh", mesh, "--shard-state", "all"]
                plan = run(cmd + ["--emit=plan", "-o", "-"]).stdout
                split = [n for n, _, _ in WEIGHTS
                         if any(f"name={n} " in l and "S(" in l for l in plan.splitlines())]
                if "fc1.weight" not in split:
                    problems.append(f"mesh {mesh}: fc1.weight is not split ({split})")
            run(cmd + ["-o", exe])
            dump, log = os.path.join(tmp, f"w-{mesh}"), os.path.join(tmp, f"log-{mesh}.jsonl")
            argv = [exe, "--steps", "5", "--dump-weights", dump, "--log-json", log, "--threads", "1"]
            if mesh == "1":
                run(argv)
            else:
                ranks = int(np.prod([int(d) for d in mesh.split("x")]))
                env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                           OMPI_MCA_rmaps_base_oversubscribe="1")
                run(["mpirun", "--oversubscribe", "-np", str(ranks)] + argv, env=env)
            for name, ref in refs.items():
                got = np.load(os.path.join(dump, name + ".npy"))
                if got.shape != ref.shape or not np.array_equal(got.view(np.uint32), ref.view(np.uint32)):
                    diff = np.sum(got != ref) if got.shape == ref.shape else "shape"
                    problems.append(f"mesh {mesh}: {name} differs from the reference ({diff} elements)")
            with open(log) as f:
                losses[mesh] = [json.loads(l)["loss"] for l in f if '"loss"' in l]
            print(f"mesh {mesh}: 6 weights drawn as the reference; losses {losses[mesh]}")
        for mesh in args.mesh:
            a, b = np.array(losses["1"]), np.array(losses[mesh])
            if a.shape != b.shape or np.max(np.abs(a - b) / np.abs(a)) > 1e-6:
                problems.append(f"mesh {mesh}: losses {b} vs one device's {a}")
    for p in problems:
        print("FAIL", p)
    print("all passed" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
