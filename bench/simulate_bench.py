#!/usr/bin/env python3
"""--emit=simulate's predicted step time against measured CPU-mesh steps
(issue #15 item 7's benchmark; the bytes are checked exactly by the test
e2e-dist-*-traffic).

For each example and mesh it compiles the example for `--target cpu` twice,
once with --emit=simulate (the cpu device profile and the built-in links)
and once to an executable, runs the executable under mpirun for --steps
steps (one BLAS thread per rank) and prints predicted and measured step
time: the median of the per-step times after --warmup steps, from the
runtime's --log-json ("elapsed_s").

The ranks are oversubscribed on a machine with fewer cores than ranks (this
one has 2): a 4-rank mesh shares 2 cores, so measured steps include the
ranks' waiting for each other, which the model (one device per rank) does
not price. The table says how many cores there were.

  bench/simulate_bench.py --oflow-compile build/bin/oflow-compile \\
      [--examples mlp cnn gpt] [--meshes 2 4 2x2] [--steps 30]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}


def devices(mesh):
    n = 1
    for d in mesh.split("x"):
        n *= int(d)
    return n


def compile_(compiler, example, mesh, out, emit):
    cmd = [compiler, f"examples/{example}/{example}.onnx", "--target", "cpu",
           "--mesh", mesh, "-o", out, f"--emit={emit}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"compile {example} on {mesh}: {proc.stderr.strip()[-300:]}")


def predicted(path):
    """(step seconds, collective bytes per device) of the train entry."""
    for line in open(path):
        m = re.match(r"simulate entry=train ops=.*bytes_per_device=(\d+)"
                     r".*step_seconds=([0-9.e+-]+)", line)
        if m:
            return float(m.group(2)), int(m.group(1))
    sys.exit(f"{path}: no simulate line for the train entry")


def measured(exe, example, mesh, steps, warmup):
    log = exe + ".json"
    argv = ["mpirun", "--oversubscribe", "-np", str(devices(mesh)), exe,
            "--steps", str(steps), "--log-json", log, "--collective-timeout", "0"]
    for name in DATA[example]:
        argv += ["--data", f"{name}=examples/{example}/{name}.npy"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"run {exe}: {proc.stderr.strip()[-300:]}")
    elapsed = [json.loads(l)["elapsed_s"] for l in open(log) if '"loss"' in l]
    times = [b - a for a, b in zip(elapsed, elapsed[1:])][warmup:]
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--examples", nargs="+", default=["mlp", "cnn", "gpt"])
    p.add_argument("--meshes", nargs="+", default=["2", "4", "2x2"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    compiler = os.path.abspath(args.oflow_compile)
    work = tempfile.mkdtemp(prefix="oflow-simbench-")
    print(f"# {os.cpu_count()} cores; ranks beyond that are oversubscribed; "
          f"median of steps {args.warmup + 1}..{args.steps - 1}")
    print("| example | mesh | ranks | predicted step | measured step | measured / predicted "
          "| collective bytes per device (predicted) |")
    print("|---|---|---|---|---|---|---|")
    for example in args.examples:
        for mesh in args.meshes:
            base = os.path.join(work, f"{example}-{mesh}")
            compile_(compiler, example, mesh, base + ".sim", "simulate")
            compile_(compiler, example, mesh, base, "exe")
            step, bytes_ = predicted(base + ".sim")
            real = measured(base, example, mesh, args.steps, args.warmup)
            print(f"| {example} | {mesh} | {devices(mesh)} | {step * 1e3:.3f} ms "
                  f"| {real * 1e3:.3f} ms | {real / step:.2f} | {bytes_} |", flush=True)


if __name__ == "__main__":
    main()
