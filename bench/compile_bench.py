#!/usr/bin/env python3
"""Compile time over depth (issue #14 item 6): oflow-compile's wall time for
GPT-2-shaped models of 1, 2, 4 and 12 layers (examples/gpt2s: width 768, 12
heads, T 1024, batch 8, vocabulary 50257, AdamW) on the CUDA and CPU targets,
and for an EfficientNet-B0-shaped CNN (torchvision efficientnet_b0, 10
classes, no dropout or stochastic depth, 64x64 images, batch 8: 81 convolutions, 4M
parameters) on the CPU
target. Prints a table (seconds, and the growth from 1 to 12 layers) and,
with --timing, the slowest stages of each compile (--mlir-timing).

    /usr/bin/python3 bench/compile_bench.py --oflow-compile build/bin/oflow-compile
    /usr/bin/python3 bench/compile_bench.py --oflow-compile build/bin/oflow-compile \\
        --layers 1 2 --targets cpu --no-cnn --timeout 600

Each row is one compile to an executable (--emit=exe, -O 2 unless --opt), on
this machine's cores; a compile over --timeout is reported as such.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def export_gpt(layers, work):
    name = "small" if layers == 12 else f"small-{layers}l"
    out = os.path.join(work, name)
    if not os.path.exists(os.path.join(out, "gpt2s.onnx")):
        subprocess.run([PY, os.path.join(ROOT, "examples/gpt2s/export.py"), "--config", name,
                        "--out", out], check=True, capture_output=True)
    return os.path.join(out, "gpt2s.onnx")


def export_cnn(work):
    path = os.path.join(work, "efficientnet_b0.onnx")
    if os.path.exists(path):
        return path
    code = r"""
import sys, torch, torchvision
sys.path.insert(0, sys.argv[2])
import common
torch.manual_seed(0)
m = torchvision.models.efficientnet_b0(num_classes=10, stochastic_depth_prob=0.0)
m.classifier[0].p = 0.0
class WithLoss(torch.nn.Module):
    def __init__(self, m):
        super().__init__(); self.m = m
    def forward(self, x, y):
        return torch.nn.functional.cross_entropy(self.m(x), y)
x = torch.randn(8, 3, 64, 64); y = torch.randint(0, 10, (8,))
common.export_loss_model(WithLoss(m).train(), (x, y), sys.argv[1], ["x", "y"], 17)
"""
    subprocess.run([PY, "-c", code, path, os.path.join(ROOT, "examples")], check=True,
                   capture_output=True)
    return path


def compile_time(compiler, model, target, opt, timeout, timing):
    exe = os.path.join(os.path.dirname(model), f"exe-{target}")
    cmd = [compiler, model, "--target", target, "-O", str(opt), "--optimizer", "adamw",
           "--embed-weights-limit", "0", "-q", "-o", exe]
    if timing:
        cmd.append("--mlir-timing")
    t = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout} s"
    wall = time.time() - t
    if proc.returncode:
        return None, (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]
    stages = []
    if timing:
        for line in proc.stderr.splitlines():
            m = re.match(r"\s+([\d.]+) \(\s*[\d.]+%\)\s+([\d.]+) \(\s*[\d.]+%\)\s+(\S.*)$", line)
            if m:
                stages.append((float(m.group(2)), m.group(3)))
        stages.sort(reverse=True)
    return wall, "; ".join(f"{n} {s:.1f}s" for s, n in stages[1:6])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4, 12])
    p.add_argument("--targets", nargs="+", default=["cuda", "cpu"])
    p.add_argument("--no-cnn", action="store_true")
    p.add_argument("--opt", type=int, default=2)
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--timing", action="store_true")
    p.add_argument("--work", help="export folder (kept between runs)")
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="compile-bench.")
    os.makedirs(work, exist_ok=True)
    rows = []
    print(f"{'model':<24}{'target':<8}{'seconds':>10}  notes", flush=True)
    for target in args.targets:
        for layers in args.layers:
            model = export_gpt(layers, work)
            wall, note = compile_time(args.oflow_compile, model, target, args.opt, args.timeout,
                                      args.timing)
            rows.append((f"gpt2s {layers} layers", target, wall))
            print(f"{'gpt2s ' + str(layers) + ' layers':<24}{target:<8}"
                  f"{(f'{wall:.1f}' if wall else 'n/a'):>10}  {note}", flush=True)
    if not args.no_cnn:
        model = export_cnn(work)
        wall, note = compile_time(args.oflow_compile, model, "cpu", args.opt, args.timeout,
                                  args.timing)
        rows.append(("efficientnet_b0 64x64", "cpu", wall))
        print(f"{'efficientnet_b0 64x64':<24}{'cpu':<8}{(f'{wall:.1f}' if wall else 'n/a'):>10}  {note}",
              flush=True)
    for target in args.targets:
        t = {r[0]: r[2] for r in rows if r[1] == target}
        lo, hi = t.get("gpt2s 1 layers"), t.get("gpt2s 12 layers")
        if lo and hi:
            print(f"{target}: 12 layers / 1 layer = {hi / lo:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
