#!/usr/bin/env python3
"""The model zoo's full matrix (issue #17 item 5): every stock torchvision
model of test/e2e/torchvision_vs_torch.py on every configuration, against
PyTorch in float64, as one table.

Each cell runs torchvision_vs_torch.py (first-step gradients per tensor and per
channel within their float32-noise tolerances, losses over the steps where
PyTorch's float32 and float64 agree) and reports its worst tensor as a
fraction of its tolerance, the steps of loss compared, and the wall time.
ctest runs a slice of this matrix (the CPU target for every model, the
emulated CUDA target and 2x2 for a few); this runs all of it.

  bench/zoo.py --oflow-compile build/bin/oflow-compile [--models resnet18 ...]
               [--configs cpu cpu-im2col cuda-emulated cpu-2x2]
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST = os.path.join(ROOT, "test", "e2e", "torchvision_vs_torch.py")
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

# configuration: extra arguments of torchvision_vs_torch.py
CONFIGS = {
    "cpu": [],
    "cpu-im2col": ["--compile-flag=--conv=im2col"],
    "cuda-emulated": ["--target", "cuda-emulated"],
    "cpu-2x2": ["--mesh", "2x2"],
}
SUMMARY = re.compile(r"worst (\S+) at ([\d.]+) x its tolerance\), losses over (\d+) steps")


def main():
    import torchvision_vs_torch as tv  # noqa: E402 (torch is slow to import)
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--models", nargs="+", default=sorted(tv.MODELS), choices=sorted(tv.MODELS))
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = p.parse_args()

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    rows, failed = [], 0
    for model in args.models:
        for config in args.configs:
            start = time.monotonic()
            try:
                proc = subprocess.run(
                    [sys.executable, TEST, "--oflow-compile", args.oflow_compile,
                     "--model", model] + CONFIGS[config],
                    capture_output=True, text=True, timeout=args.timeout, env=env)
                out, rc = proc.stdout + proc.stderr, proc.returncode
            except subprocess.TimeoutExpired:
                out, rc = f"timeout after {args.timeout} s", -1
            seconds = time.monotonic() - start
            m = SUMMARY.search(out)
            fails = [line[6:] for line in out.splitlines() if line.startswith("FAIL: ")]
            verdict = "pass" if rc == 0 else "FAIL"
            failed += rc != 0
            why = fails[0] if fails else ("" if rc == 0 else out.strip().splitlines()[-1][:120]
                                          if out.strip() else f"exit {rc}")
            rows.append((model, config, verdict, f"{float(m.group(2)):.2f}x" if m else "",
                         m.group(1) if m else "", m.group(3) if m else "", f"{seconds:.0f}", why))
            print(f"{model} {config}: {verdict} ({seconds:.0f} s)", file=sys.stderr, flush=True)

    print("| model | config | result | worst tensor / tolerance | worst tensor | loss steps "
          "compared | seconds | first failure |")
    print("|---|---|---|---:|---|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"({len(rows) - failed} of {len(rows)} cells pass; against PyTorch float64, one "
          f"thread per rank)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
