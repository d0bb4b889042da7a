#!/usr/bin/python3
"""SBP planning benchmark: compile time against graph size and mesh, and the
plan's communication against hand-written plans.

Generates GPT-2-shaped decoders (bench/import_bench.py's generator; depth
from --layers) and, for each mesh, times

    oflow-compile MODEL --target cpu --mesh M --emit=partitioned --mlir-timing

and reports the two SBP stages' wall time (choose + box, partition) from the
timing report: they should grow linearly with the number of ops and barely
with the mesh (one program for every rank). Then, for the GPT example on a
mesh of 4, it compares the communication per step of the default plan with
the hand-written ones (pure data parallel, Megatron tensor parallel, ZeRO)
forced by hints, from --emit=plan. Prints tables; never fails on speed.

  bench/plan_bench.py [--compiler build/bin/oflow-compile] [--layers 2 6 12]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_bench  # noqa: E402  (the model generator)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stage_seconds(report, name):
    """Wall seconds of a top-level stage in an --mlir-timing report."""
    for line in report.splitlines():
        if name in line:
            m = re.match(r"\s*([0-9.]+)", line)
            if m:
                return float(m.group(1))
    return float("nan")


def compile_timed(compiler, model, mesh, extra=()):
    cmd = [compiler, model, "--target", "cpu", "--emit=partitioned", "-o", os.devnull,
           "--mlir-timing"] + (["--mesh", mesh] if mesh != "1" else []) + list(extra)
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - start
    if proc.returncode:
        raise RuntimeError(proc.stderr[-500:])
    return wall, stage_seconds(proc.stderr, "SBP: choose"), stage_seconds(proc.stderr, "partition")


def plan_bytes(compiler, mesh, hints):
    cmd = [compiler, "examples/gpt/gpt.onnx", "--target", "cpu", "--mesh", mesh,
           "--emit=plan", "-o", "-"] + sum([["--sbp", h] for h in hints], [])
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout
    comm = re.search(r"communication entry=train collectives=(\d+) bytes_per_device_per_step=(\d+)", out)
    peak = re.search(r"peak_bytes_per_device=(\d+)", out)
    return int(comm.group(1)), int(comm.group(2)), int(peak.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compiler", default=os.path.join(ROOT, "build/bin/oflow-compile"))
    p.add_argument("--layers", type=int, nargs="+", default=[2, 6, 12])
    p.add_argument("--meshes", nargs="+", default=["1", "8", "8x4"])
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="oflow-plan-bench-")
    try:
        print("## compile time through partitioning (GPT-2-shaped, d_model 768, batch 1, seq 1024)\n")
        print("| blocks | mesh | wall s | SBP choose+box s | partition s |")
        print("|---|---|---|---|---|")
        for layers in args.layers:
            model = import_bench.build_gpt2(batch=1, layers=layers)
            path = import_bench.write_model(model, work, f"gpt{layers}", external=True)[0]
            for mesh in args.meshes:
                wall, sbp, part = compile_timed(args.compiler, path, mesh)
                print(f"| {layers} | {mesh} | {wall:.1f} | {sbp:.3f} | {part:.3f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("\n## plan quality: the GPT example on a mesh of 4, train step\n")
    print("| plan | collectives | bytes/device/step | planned peak bytes/device |")
    print("|---|---|---|---|")
    megatron = ["*.attn.[qkv].weight=S(0)", "*.attn.[qkv].bias=S(0)", "*.attn.proj.weight=S(1)",
                "*.mlp.fc1.weight=S(0)", "*.mlp.fc1.bias=S(0)", "*.mlp.fc2.weight=S(1)"]
    for name, hints in [("default (chosen)", []), ("data parallel (weights B)", ["*.weight=B", "*.bias=B"]),
                        ("Megatron weights, data-split batch", megatron),
                        ("Megatron weights, replicated batch", megatron + ["tokens=B", "targets=B"]),
                        ("ZeRO (all S(0))", ["*=S(0)"])]:
        n, b, peak = plan_bytes(args.compiler, "4", hints)
        print(f"| {name} | {n} | {b} | {peak} |")


if __name__ == "__main__":
    sys.exit(main())
