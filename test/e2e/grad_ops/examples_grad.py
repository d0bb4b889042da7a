#!/usr/bin/env python3
"""Gradients of the example models (MLP, CNN, GPT) against PyTorch.

Imports examples/<m>/<m>.onnx (oflow-compile --emit=mlir), runs
oflow-opt --oflow-autodiff, evaluates the differentiated IR on the first batch
with the reference interpreter (oflow_interp.py, float64) and compares every
oflow.gradient with the gradient PyTorch's autograd gives the same module
(examples/<m>/model.py make_model(), train mode, same batch, float64):
||oflow - torch|| <= 1e-4 ||torch|| per weight, and the trained set must equal
torch's parameters (BN running statistics and mask buffers are not trained).
"""
import argparse
import importlib.util
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))
import oflow_interp  # noqa: E402

TOL = 1e-4


def load_module(name):
    spec = importlib.util.spec_from_file_location(
        f"{name}_model", os.path.join(ROOT, "examples", name, "model.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(name, tools):
    onnx_path = os.path.join(ROOT, "examples", name, f"{name}.onnx")
    proto = onnx.load(onnx_path)
    weights = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in weights]
    batch = inputs[0].type.tensor_type.shape.dim[0].dim_value
    mod = load_module(name)
    data = [d[:batch] for d in mod.load_data()]

    imp = subprocess.run([tools["compile"], onnx_path, "--emit=mlir", "--print-weights", "-o", "-"],
                         capture_output=True, text=True, check=True)
    opt = subprocess.run([tools["opt"], "-", "--oflow-autodiff", "--mlir-print-op-generic"],
                         input=imp.stdout, capture_output=True, text=True)
    if opt.returncode:
        return [f"oflow-autodiff failed: {opt.stderr}"]
    got = oflow_interp.gradients(opt.stdout, weights, data)

    torch.manual_seed(0)
    model = mod.make_model().double().train()
    loss = model(*[torch.from_numpy(d.astype(np.float64) if d.dtype.kind == "f" else d)
                   for d in data])
    loss.backward()
    ref = {k: p.grad.numpy() for k, p in model.named_parameters() if p.grad is not None}

    # A gradient that is zero in exact arithmetic (a conv bias followed by
    # batch norm) is rounding noise in both: measure errors against at least
    # 1e-6 of the largest gradient norm of the model.
    floor = 1e-6 * max(np.linalg.norm(g) for g in ref.values())
    problems = []
    if sorted(got) != sorted(ref):
        problems.append(f"trained {sorted(got)}, torch trains {sorted(ref)}")
    worst = 0.0
    for k in sorted(set(got) & set(ref)):
        r = ref[k].astype(np.float64)
        e = np.linalg.norm(got[k].reshape(r.shape) - r) / max(np.linalg.norm(r), floor)
        worst = max(worst, e)
        if not e <= TOL:
            problems.append(f"gradient of {k}: relative error {e:.2e}")
    print(f"{name}: {len(got)} gradients, worst relative error {worst:.1e}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--oflow-compile", required=True)
    ap.add_argument("--oflow-opt", required=True)
    ap.add_argument("models", nargs="*", default=["mlp", "cnn", "gpt"])
    args = ap.parse_args()
    tools = {"compile": args.oflow_compile, "opt": args.oflow_opt}
    failed = 0
    for name in args.models:
        problems = check(name, tools)
        for p in problems:
            print(f"FAIL {name}: {p}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
