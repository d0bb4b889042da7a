#!/usr/bin/env python3
"""oflow-pad-gemm-extents (CUDA targets) against the unpadded program.

A classifier whose logits GEMM has an odd output extent (x W^T, W [77, 32],
as GPT-2's 50257-word vocabulary): compiled for --target cuda-emulated with
the padding forced (--pad-gemm-min-macs 1: W gets zero rows up to 128, the
logits are a slice of the padded product, the gradient is written into the
padded buffer) and with it off (--pad-gemm-min-macs 0), in fp32 and bf16.
The zero rows add exact zeros to every sum, so the two programs must give
the same losses over 10 steps and the same first-step gradient within 1e-6
(f32 summation order aside), and the padded one must really be padded.

  pad_gemm_extents.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B, K, N = 64, 32, 77
STEPS = 10
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def make_model(work):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((N, K)) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["W"], ["Wt"], perm=[1, 0]),
             helper.make_node("MatMul", ["x", "Wt"], ["logits"]),
             helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                              reduction="mean")]
    graph = helper.make_graph(
        nodes, "odd_vocabulary",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, K]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [B])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(work, "odd.onnx")
    onnx.save(model, path)
    np.save(os.path.join(work, "x.npy"), rng.standard_normal((B, K)).astype(np.float32))
    np.save(os.path.join(work, "labels.npy"), rng.integers(0, N, B).astype(np.int64))
    return path


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        check(False, " ".join(cmd[:4]) + ": " + proc.stderr.strip()[-300:])
        return None
    return proc


def train(compiler, model, work, precision, min_macs):
    tag = f"{precision}-{min_macs}"
    common = [compiler, model, "--target", "cuda-emulated", "-q", "--precision", precision,
              "--pad-gemm-min-macs", str(min_macs), "--optimizer", "adamw", "--lr", "0.01"]
    ir = os.path.join(work, tag + ".mlir")
    if not run(common + ["--emit=training", "-o", ir]):
        return None
    exe = os.path.join(work, tag)
    if not run(common + ["-o", exe]):
        return None
    data = ["--data", "x=" + os.path.join(work, "x.npy"),
            "--data", "labels=" + os.path.join(work, "labels.npy")]
    log = exe + ".jsonl"
    if not run([exe, "--steps", str(STEPS), "--log-json", log] + data):
        return None
    grads = exe + ".grads"
    if not run([exe, "--steps", "1", "--dump-grads", grads] + data):
        return None
    with open(log) as f:
        losses = [json.loads(line)["loss"] for line in f if '"loss"' in line]
    return {"ir": open(ir).read(), "losses": losses,
            "grad": np.load(os.path.join(grads, sorted(os.listdir(grads))[0]))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = make_model(work)
        for precision in ("fp32", "bf16"):
            padded = train(a.oflow_compile, model, work, precision, 1)
            plain = train(a.oflow_compile, model, work, precision, 0)
            if not padded or not plain:
                continue
            check("tensor<128x32xf32>" in padded["ir"] and "oflow.concat" in padded["ir"]
                  and "oflow.concat" not in plain["ir"],
                  f"{precision}: W padded to 128 rows only with --pad-gemm-min-macs 1")
            lp, lu = padded["losses"], plain["losses"]
            worst = max(abs(x - y) / abs(y) for x, y in zip(lp, lu)) if lp and lu else 1
            check(len(lp) == len(lu) == STEPS and worst <= 1e-6 and lu[-1] < lu[0],
                  f"{precision}: {STEPS} losses within {worst:.1e} of the unpadded "
                  f"program (<= 1e-6), {lu[0]:.4f} -> {lu[-1]:.4f}")
            gp, gu = padded["grad"], plain["grad"]
            rel = float(np.abs(gp - gu).max() / np.abs(gu).max()) if gp.shape == gu.shape else 1
            check(gp.shape == gu.shape == (N, K) and rel <= 1e-6,
                  f"{precision}: first-step gradient of W {gp.shape} within {rel:.1e} (<= 1e-6)")
    if FAILURES:
        print(f"{len(FAILURES)} failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
