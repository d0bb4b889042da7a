#!/usr/bin/python3
"""--planner ilp against the greedy planner (issue #15 item 5).

For each model and mesh, compiles with `--planner ilp --emit=plan
--mlir-timing` and reads the plan's `planner` record: the integer program's
predicted seconds (compute plus boxing, the cost model both planners use)
for its plan and for the greedy plan, whether CBC proved it optimal, and the
program's size before and after coarsening; the train step --emit=simulate
predicts for each planner's plan (after boxing and bucketing, which the
planners' per-op prices do not see); and the time of the SBP choice pass
with each planner. Prints a table; never fails on speed.

  bench/ilp_bench.py [--compiler build/bin/oflow-compile] [--quick]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pass_seconds(report):
    """Wall seconds of oflow-infer-sbp in an --mlir-timing report (the sum
    over the memory search's tries)."""
    total = 0.0
    for line in report.splitlines():
        if "InferSbp" in line or "infer-sbp" in line:
            m = re.match(r"\s*([0-9.]+)", line)
            if m:
                total += float(m.group(1))
    return total


def simulated_step(compiler, model, mesh, planner, extra):
    """--emit=simulate's predicted train step (after boxing and bucketing)."""
    cmd = [compiler, model, "--emit=simulate", "-o", "-", "--planner", planner,
           "--mesh", mesh] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"simulate entry=train ops=.*step_seconds=([0-9.e+-]+)", proc.stdout)
    return float(m.group(1)) if m else float("nan")


def compile_plan(compiler, model, mesh, planner, extra):
    cmd = [compiler, model, "--emit=plan", "-o", "-", "--mlir-timing",
           "--planner", planner, "--mesh", mesh] + extra
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - start
    if proc.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + proc.stderr[-800:])
    record = {}
    for line in proc.stdout.splitlines():
        if line.startswith("planner entry=train "):
            record = dict(kv.split("=", 1) for kv in line.split()[1:])
    return wall, pass_seconds(proc.stderr), record


def generated(work, name, args):
    path = os.path.join(work, name + ".mlir")
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples/gpt-config/gen.py"),
                        *args, "-o", path], check=True, cwd=ROOT)
    return path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compiler", default=os.path.join(ROOT, "build/bin/oflow-compile"))
    p.add_argument("--quick", action="store_true", help="the examples only")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="oflow-ilp-bench-")
    cpu = ["--target", "cpu"]
    h200 = ["--target", "cuda", "--precision", "bf16", "--optimizer", "adamw",
            "--memory-limit", "100000GiB"]
    cases = []
    for model in ["mlp", "cnn", "gpt"]:
        for mesh in ["4", "2x2", "4x2"]:
            cases.append((model, f"examples/{model}/{model}.onnx", mesh, cpu))
    if not args.quick:
        gpt2s = generated(work, "gpt2s", ["--layers", "12", "--d-model", "768", "--heads", "12",
                                          "--vocab", "50304", "--seq", "1024", "--batch", "64"])
        for mesh in ["8", "2x8", "8x4"]:
            cases.append(("GPT-2 small shape, batch 64", gpt2s, mesh, h200))
        gpt7b = generated(work, "gpt7b", ["--layers", "32", "--d-model", "4096", "--heads", "32",
                                          "--vocab", "50304", "--seq", "2048", "--batch", "512"])
        for mesh in ["16x8", "128x8"]:
            cases.append(("GPT 7B shape, batch 512", gpt7b, mesh, h200))
    print("| model | mesh | ops | tied groups | left for CBC (ops, edges, binaries) "
          "| program: greedy plan | ILP plan | ILP vs greedy | proven "
          "| simulate step: greedy | ILP | ILP vs greedy | SBP choice: greedy s | ilp s |")
    print("|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, path, mesh, extra in cases:
        try:
            _, greedy_pass, _ = compile_plan(args.compiler, path, mesh, "greedy", extra)
            _, ilp_pass, r = compile_plan(args.compiler, path, mesh, "ilp", extra)
        except RuntimeError as e:
            print(f"| {name} | {mesh} | failed: {str(e).splitlines()[-1][:120]} |")
            continue
        step_greedy = simulated_step(args.compiler, path, mesh, "greedy", extra)
        step_ilp = simulated_step(args.compiler, path, mesh, "ilp", extra)
        ilp = float(r["seconds"])
        greedy = float(r.get("greedy_seconds", "nan"))
        print(f"| {name} | {mesh} | {r['ops']} | {r['tied_groups']} | {r['solver_ops']}, "
              f"{r['solver_edges']}, {r['solver_variables']} | {greedy * 1e3:.4g} ms "
              f"| {ilp * 1e3:.4g} ms | {100 * (ilp / greedy - 1):+.1f}% | {r['optimal']} "
              f"| {step_greedy * 1e3:.4g} ms | {step_ilp * 1e3:.4g} ms "
              f"| {100 * (step_ilp / step_greedy - 1):+.1f}% "
              f"| {greedy_pass:.2f} | {ilp_pass:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
