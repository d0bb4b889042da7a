#!/usr/bin/env python3
"""The native-IR GPT generator (examples/gpt-config/gen.py) against the ONNX
GPT example, and on a mesh.

  1. The generator's model at the example's size (2 layers, d 64, 4 heads,
     vocabulary 80, 64 tokens, batch 8), started from the example's own
     weights (`--weights examples/gpt/gpt.onnx`), trains 5 SGD steps with the
     same losses as the compiled ONNX example, bit for bit: the same graph.
  2. Started from its recipes, its first loss is ln(80) within 0.05 (GPT-2's
     N(0, 0.02) init), and on a 2x2 mesh (ZeRO-3: each rank draws its pieces)
     its 5 losses equal one device's within 1e-5.

  gpt_config.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "gpt")
DATA = ["--data", f"tokens={EXAMPLE}/tokens.npy", "--data", f"targets={EXAMPLE}/targets.npy"]


def run(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def losses(argv, log, ranks=1):
    argv = argv + ["--steps", "5", "--threads", "1", "--log-json", log] + DATA
    if ranks == 1:
        run(argv)
    else:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        run(["mpirun", "--oversubscribe", "-np", str(ranks)] + argv, env=env)
    with open(log) as f:
        return [json.loads(l)["loss"] for l in f if '"loss"' in l]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oflow-compile", required=True)
    args = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory(prefix="oflow-gptcfg-") as tmp:
        model = os.path.join(tmp, "gpt.mlir")
        run([sys.executable, os.path.join(ROOT, "examples", "gpt-config", "gen.py"), "--layers", "2",
             "--d-model", "64", "--heads", "4", "--vocab", "80", "--seq", "64", "--batch", "8",
             "-o", model])
        common = ["--target", "cpu", "-O0", "--lr", "0.01", "-q"]
        gen, onnx_exe, gen22 = (os.path.join(tmp, n) for n in ("gen", "onnx", "gen22"))
        run([args.oflow_compile, model, "-o", gen] + common)
        run([args.oflow_compile, os.path.join(EXAMPLE, "gpt.onnx"), "-o", onnx_exe] + common)
        run([args.oflow_compile, model, "-o", gen22, "--mesh", "2x2", "--shard-state", "all"] + common)

        a = losses([gen, "--weights", os.path.join(EXAMPLE, "gpt.onnx")], os.path.join(tmp, "a.jsonl"))
        b = losses([onnx_exe], os.path.join(tmp, "b.jsonl"))
        print(f"generated, the example's weights: {a}\nONNX example:                     {b}")
        if a != b or len(a) != 5:
            problems.append("the generated model's losses are not the ONNX example's")

        one = losses([gen], os.path.join(tmp, "one.jsonl"))
        mesh = losses([gen22], os.path.join(tmp, "mesh.jsonl"), ranks=4)
        print(f"recipes, 1 device: {one}\nrecipes, 2x2:      {mesh}")
        if not one or abs(one[0] - math.log(80)) > 0.05:
            problems.append(f"first loss {one[:1]} is not ln(80) = {math.log(80):.4f} within 0.05")
        if len(mesh) != len(one) or any(abs(x - y) > 1e-5 * abs(y) for x, y in zip(mesh, one)):
            problems.append("the 2x2 losses differ from one device's")
    for p in problems:
        print("FAIL", p)
    print("all passed" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
