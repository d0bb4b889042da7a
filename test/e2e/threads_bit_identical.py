#!/usr/bin/env python3
"""The CPU target's generated loop nests on several threads (#17 item 4).

Each outlined nest over parallel dimensions runs its iterations in ranges on
the runtime's OpenMP threads; no iteration changes, so a run's losses are
the same bit for bit at every `--threads`. Checked on the examples (MLP,
GPT; the CNN with its convolutions as im2col + GEMMs): 8 steps at 1, 2 and
3 threads log identical losses, and the LLVM IR really hands nests to
oflow_rt_parallel_for (a test that cannot fail would not tell). With
oneDNN's convolutions (the CNN's default) the filter gradients sum over the
batch in an order that depends on the thread count, so there the losses
only agree to float32 rounding.

  threads_bit_identical.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAILURES = []

EXAMPLES = {
    "mlp": ("mlp/mlp.onnx", ["x=mlp/x.npy", "y=mlp/y.npy"], []),
    "gpt": ("gpt/gpt.onnx", ["tokens=gpt/tokens.npy", "targets=gpt/targets.npy"], []),
    "cnn-im2col": ("cnn/cnn.onnx", ["x=cnn/x.npy", "y=cnn/y.npy"], ["--conv", "im2col"]),
    "cnn-dnnl": ("cnn/cnn.onnx", ["x=cnn/x.npy", "y=cnn/y.npy"], ["--conv", "dnnl"]),
}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def losses(path):
    with open(path) as f:
        return [json.loads(l)["loss"] for l in f if l.strip() and '"loss"' in l]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    examples = os.path.join(ROOT, "examples")
    with tempfile.TemporaryDirectory(prefix="oflow-threads-") as work:
        for name, (model, data, extra) in EXAMPLES.items():
            model = os.path.join(examples, model)
            exe = os.path.join(work, name)
            common = [args.oflow_compile, model, "--target", "cpu", "-q",
                      "--optimizer", "adamw", "--lr", "0.01"] + extra
            subprocess.run(common + ["-o", exe], check=True)
            ll = exe + ".ll"
            subprocess.run(common + ["--emit=llvm", "-o", ll], check=True)
            with open(ll) as f:
                handed = f.read().count("call void @oflow_rt_parallel_for(")
            check(handed > 0, f"{name}: {handed} nests run on the threads")

            runs = {}
            for threads in (1, 2, 3):
                log = os.path.join(work, f"{name}-{threads}.jsonl")
                cmd = [exe, "--steps", "8", "--threads", str(threads), "--log-json", log]
                for d in data:
                    cmd += ["--data", d.split("=")[0] + "=" + os.path.join(examples, d.split("=")[1])]
                r = subprocess.run(cmd, capture_output=True, text=True)
                check(r.returncode == 0, f"{name}: runs at --threads {threads} "
                      f"({r.stderr.strip()[-200:]})")
                runs[threads] = losses(log) if r.returncode == 0 else []
            base = runs[1]
            check(len(base) == 8, f"{name}: 8 losses logged")
            for threads in (2, 3):
                if name == "cnn-dnnl":
                    worst = max((abs(a - b) / max(abs(a), 1e-30)
                                 for a, b in zip(base, runs[threads])), default=1.0)
                    check(len(runs[threads]) == 8 and worst < 1e-5,
                          f"{name}: --threads {threads} within {worst:.1e} of one thread "
                          "(oneDNN's summation order)")
                else:
                    check(runs[threads] == base,
                          f"{name}: --threads {threads} logs one thread's losses bit for bit")
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
