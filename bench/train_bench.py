#!/usr/bin/env python3
"""Training step time and peak memory: oflow's CPU executable vs PyTorch eager.

For each example (default: mlp and gpt) it compiles the example with
`oflow-compile --target cpu`, runs it for --steps steps on the shipped data,
and trains the same nn.Module with torch.optim for the same steps, both on
--threads threads (default 1; oflow `--threads N`, torch.set_num_threads(N) and
OMP_NUM_THREADS=N). It prints a table:
median step time (after --warmup steps), peak resident memory of the process,
and oflow's static memory plan (planned arena peak vs. the naive sum of all
buffers vs. the liveness lower bound).

  bench/train_bench.py --oflow-compile build/bin/oflow-compile [--examples mlp gpt]

Besides the examples, --examples takes stock torchvision models (issue #17):
resnet18 (10 classes, 32x32 images, batch 8), resnet18-224 (224x224, batch
32), mobilenet_v2 (width 0.25), mobilenet_v3_small (width 0.5) and shufflenet
(v2 x0.5) at 64x64, batch 16, and mnasnet (0.5) and regnet_x_400mf at 64x64,
batch 8, exported to ONNX here with random weights and random data.
(EfficientNet-B0's constructor fixes its classifier's dropout at 0.2, and
training dropout has no gradient rule yet: not benchmarked.)
--compile-flag passes a flag to oflow-compile (e.g. --compile-flag=--conv=im2col).
"""
import argparse
import importlib.util
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}
# Stock torchvision models: (constructor, image size, batch, extra arguments).
ZOO = {"resnet18": ("resnet18", 32, 8, ""), "resnet18-224": ("resnet18", 224, 32, ""),
       "mobilenet_v2": ("mobilenet_v2", 64, 16, ", width_mult=0.25, dropout=0.0"),
       "mobilenet_v3_small": ("mobilenet_v3_small", 64, 16, ", width_mult=0.5, dropout=0.0"),
       "shufflenet": ("shufflenet_v2_x0_5", 64, 16, ""),
       "mnasnet": ("mnasnet0_5", 64, 8, ", dropout=0.0"),
       "regnet_x_400mf": ("regnet_x_400mf", 64, 8, "")}

ZOO_MODEL = r"""
import sys
import numpy as np, torch, torchvision
sys.path.insert(0, {examples!r})
import common
BATCH = {batch}
def make_model():
    torch.manual_seed(0)
    return common.WithCrossEntropy(
        torchvision.models.{ctor}(weights=None, num_classes=10{kwargs}))
def load_data():
    return np.load({x!r}), np.load({y!r})
"""


def model_files(example, work):
    """(ONNX model, model.py for the torch side, {input: .npy}) of `example`."""
    if example not in ZOO:
        d = os.path.join(ROOT, "examples", example)
        return (os.path.join(d, example + ".onnx"), os.path.join(d, "model.py"),
                {n: os.path.join(d, n + ".npy") for n in INPUTS[example]})
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import common
    ctor, size, batch, kwargs = ZOO[example]
    d = os.path.join(work, example)
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(0)
    data = {"x": os.path.join(d, "x.npy"), "y": os.path.join(d, "y.npy")}
    np.save(data["x"], rng.standard_normal((4 * batch, 3, size, size)).astype(np.float32))
    np.save(data["y"], rng.randint(0, 10, 4 * batch).astype(np.int64))
    model_py = os.path.join(d, "model.py")
    with open(model_py, "w") as f:
        f.write(ZOO_MODEL.format(examples=os.path.join(ROOT, "examples"), batch=batch,
                                 ctor=ctor, kwargs=kwargs, x=data["x"], y=data["y"]))
    spec = importlib.util.spec_from_file_location("zoo_model", model_py)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    model = m.make_model()
    model.train()
    x, y = m.load_data()
    onnx_path = os.path.join(d, example + ".onnx")
    common.export_loss_model(model, (torch.from_numpy(x[:batch]), torch.from_numpy(y[:batch])),
                             onnx_path, ["x", "y"], 17)
    return onnx_path, model_py, data

TORCH_CHILD = r"""
import importlib.util, json, resource, sys, time
import numpy as np, torch
path, steps, warmup, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
spec = importlib.util.spec_from_file_location("m", path)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
model = m.make_model(); model.train()
data = m.load_data(); B = m.BATCH; n = len(data[0])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
times = []
for k in range(steps):
    rows = [(k * B + i) % n for i in range(B)]
    args = [torch.from_numpy(d[rows]) for d in data]
    t = time.perf_counter()
    opt.zero_grad(); loss = model(*args); loss.backward(); opt.step()
    times.append(time.perf_counter() - t)
print(json.dumps({"times": times[warmup:],
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run_oflow(compiler, example, steps, warmup, work, files, flags, threads):
    exe = os.path.join(work, example + ".exe")
    t = time.perf_counter()
    proc = subprocess.run([compiler, files[0],
                           "--target", "cpu", "-o", exe, "--lr", "0.01"] + flags,
                          capture_output=True, text=True, check=True)
    compile_s = time.perf_counter() - t
    plan = re.search(r"memory plan \(train\): peak ([\d.]+ \w+), naive ([\d.]+ \w+), "
                     r"liveness lower bound ([\d.]+ \w+)", proc.stderr)
    log = os.path.join(work, example + ".jsonl")
    cmd = [exe, "--steps", str(steps), "--log-json", log]
    for name, path in files[2].items():
        cmd += ["--data", f"{name}={path}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(cmd + ["--threads", str(threads)], check=True, stdout=subprocess.DEVNULL)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(log) as f:
        elapsed = [json.loads(l)["elapsed_s"] for l in f if '"loss"' in l]
    times = [b - a for a, b in zip(elapsed, elapsed[1:])][warmup:]
    return dict(step_ms=1e3 * statistics.median(times), rss_kib=rss if rss > before else rss,
                compile_s=compile_s, plan=plan.groups() if plan else ("?", "?", "?"))


def run_torch(example, steps, warmup, files, threads):
    proc = subprocess.run([sys.executable, "-c", TORCH_CHILD, files[1],
                           str(steps), str(warmup), str(threads)],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return dict(step_ms=1e3 * statistics.median(r["times"]), rss_kib=r["rss_kib"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--examples", nargs="+", default=["mlp", "gpt"],
                   choices=sorted(INPUTS) + sorted(ZOO))
    p.add_argument("--compile-flag", action="append", default=[])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=1, help="threads on both sides")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for ex in args.examples:
            files = model_files(ex, work)
            o = run_oflow(args.oflow_compile, ex, args.steps, args.warmup, work, files,
                          args.compile_flag, args.threads)
            t = run_torch(ex, args.steps, args.warmup, files, args.threads)
            rows.append((ex, o, t))
    print("| model | oflow step (ms) | torch eager step (ms) | speed-up | oflow peak RSS (MiB) "
          "| torch peak RSS (MiB) | plan peak | plan naive | liveness bound | compile (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ex, o, t in rows:
        print(f"| {ex} | {o['step_ms']:.3f} | {t['step_ms']:.3f} | "
              f"{t['step_ms'] / o['step_ms']:.2f}x | {o['rss_kib'] / 1024:.1f} | "
              f"{t['rss_kib'] / 1024:.1f} | {o['plan'][0]} | {o['plan'][1]} | {o['plan'][2]} | "
              f"{o['compile_s']:.2f} |")
    print(f"({args.threads} thread(s) each; SGD; median step after warm-up; "
          "peak RSS of the whole process)")


if __name__ == "__main__":
    sys.exit(main())
