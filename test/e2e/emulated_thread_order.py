#!/usr/bin/env python3
"""Races between the threads of the CUDA target's kernels, found on a CPU.

`--target cuda-emulated` runs a warp-synchronous kernel (shuffles,
barriers) interval by interval, each interval a loop over the block's
threads. A kernel whose threads race (one reads what another writes in the
same interval) computes something that depends on that loop's order; a
correct one does not. Each model here is compiled twice, threads ascending
and `--emulate-threads-reversed`, and both executables must log the same
losses and dump the same first-step gradients, bit for bit (issue #14 item
4; difftest case s7-O0-480-cuda-emulated was such a race).

  emulated_thread_order.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE = os.path.join(ROOT, "test", "e2e", "difftest", "cases", "s7-O0-480-cuda-emulated")
# Gradients summed by atomic float adds (an embedding's scatter-add): their
# order is the hardware's on a GPU too, so they, and the losses of the steps
# after they are applied, are compared to a rounding's tolerance.
ATOMIC = {"gpt": {"wte.weight.npy"}}
MODELS = {
    "gpt": (os.path.join(ROOT, "examples", "gpt", "gpt.onnx"),
            ["tokens=examples/gpt/tokens.npy", "targets=examples/gpt/targets.npy"], ["--optimizer", "adamw"]),
    "cnn": (os.path.join(ROOT, "examples", "cnn", "cnn.onnx"),
            ["x=examples/cnn/x.npy", "y=examples/cnn/y.npy"], ["--optimizer", "adamw"]),
    "layer-norm-race": (os.path.join(CASE, "model.onnx"),
                        [f"{n[:-4]}={os.path.join(CASE, n)}" for n in sorted(os.listdir(CASE))
                         if n.endswith(".npy")], ["--optimizer", "sgd", "--lr", "0.1"]),
}


def run_one(compiler, work, name, reversed_):
    model, data, extra = MODELS[name]
    tag = f"{name}-{'rev' if reversed_ else 'asc'}"
    exe = os.path.join(work, tag)
    cmd = [compiler, model, "--target", "cuda-emulated", "-O", "0", "-q", "-o", exe] + extra
    if reversed_:
        cmd.append("--emulate-threads-reversed")
    subprocess.run(cmd, check=True, cwd=ROOT)
    log, grads = exe + ".jsonl", exe + "-grads"
    argv = [exe, "--steps", "3", "--log-json", log, "--dump-grads", grads]
    for d in data:
        argv += ["--data", d]
    subprocess.run(argv, check=True, cwd=ROOT, capture_output=True)
    with open(log) as f:
        losses = [json.loads(l)["loss"] for l in f if '"loss"' in l]
    dumped = {n: np.load(os.path.join(grads, n)) for n in sorted(os.listdir(grads))}
    return losses, dumped


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="oflow-thread-order-") as work:
        for name in MODELS:
            la, ga = run_one(args.oflow_compile, work, name, False)
            lb, gb = run_one(args.oflow_compile, work, name, True)
            atomic = ATOMIC.get(name, set())
            differ = [n for n in ga if n not in gb or not (
                np.allclose(ga[n], gb[n], rtol=1e-5, atol=1e-7) if n in atomic
                else np.array_equal(ga[n], gb[n]))]
            same_losses = la[:1] == lb[:1] and (
                la == lb if not atomic else np.allclose(la, lb, rtol=1e-6, atol=0))
            ok = same_losses and not differ and len(ga) == len(gb) and len(la) == 3
            print(("ok   " if ok else "FAIL ") + f"{name}: threads ascending and descending give "
                  f"the same {len(la)} losses and {len(ga)} gradients bit for bit"
                  + ("" if ok else f" (losses {la} vs {lb}; gradients differ: {differ[:5]})"))
            if not ok:
                failures.append(name)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
