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

Besides the examples, --examples takes the model zoo of issue #17: every model
of test/e2e/torchvision_vs_torch.py (stock torchvision constructors at the
zoo test's sizes, widths and batches, dropout and stochastic depth 0; LR-ASPP
with its per-pixel cross-entropy), and resnet18-224 (ResNet-18 at 224x224,
batch 32), exported to ONNX here with random weights and random data.
--compile-flag passes a flag to oflow-compile (e.g. --compile-flag=--conv=im2col).

Runs are interleaved: each of --rounds rounds runs oflow's executable and then
PyTorch for --steps steps each, and the table gives the median over rounds of
each round's median step (both sides time the same span: from one step's
start to the next, inputs, forward, backward and the optimizer update).

Both sides run with glibc's malloc told to keep freed memory (--malloc keep,
the default: GLIBC_TUNABLES mmap_threshold 32 MiB, trim_threshold 4 GiB).
Without it PyTorch's step is bimodal on this machine: glibc returns its large
freed blocks to the kernel, and each step faults ~60 MiB back in (ResNet-18
32x32: 13,700 minor faults and 399 ms a step, against 6 faults and 72 ms with
the tunables). oflow's arena is mapped once and does not depend on it.
--malloc default leaves glibc's defaults.

  bench/train_bench.py --oflow-compile build/bin/oflow-compile --examples zoo --threads 2
"""
import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}
# The model zoo: the models of the zoo test (test/e2e/torchvision_vs_torch.py),
# built by its make_model at its image size and batch, and ResNet-18 at 224x224.
ZOO_TEST = os.path.join(ROOT, "test", "e2e")
ZOO_NAMES = ["densenet", "efficientnet_b0", "lraspp", "mnasnet", "mobilenet_v2",
             "mobilenet_v3_small", "regnet_x_400mf", "resnet18", "shufflenet"]
# name: (zoo test's model, image size and batch overriding the test's, or None)
ZOO = {n: (n, None) for n in ZOO_NAMES}
ZOO["resnet18-224"] = ("resnet18", (224, 32))

ZOO_MODEL = r"""
import sys
import numpy as np
sys.path.insert(0, {tests!r})
import torchvision_vs_torch as tv
BATCH = {batch}
def make_model():
    return tv.make_model({name!r})
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
    sys.path.insert(0, ZOO_TEST)
    import torchvision_vs_torch as tv
    name, override = ZOO[example]
    size, batch = override or tv.MODELS[name][1:3]
    d = os.path.join(work, example)
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(0)
    data = {"x": os.path.join(d, "x.npy"), "y": os.path.join(d, "y.npy")}
    np.save(data["x"], rng.standard_normal((4 * batch, 3, size, size)).astype(np.float32))
    labels = (4 * batch, size, size) if name in tv.SEGMENTATION else 4 * batch
    np.save(data["y"], rng.randint(0, tv.CLASSES, labels).astype(np.int64))
    model_py = os.path.join(d, "model.py")
    with open(model_py, "w") as f:
        f.write(ZOO_MODEL.format(tests=ZOO_TEST, batch=batch, name=name,
                                 x=data["x"], y=data["y"]))
    spec = importlib.util.spec_from_file_location("zoo_model", model_py)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    model = m.make_model()
    model.train()
    x, y = m.load_data()
    onnx_path = os.path.join(d, example + ".onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # the export's list of restored buffers
        common.export_loss_model(model, (torch.from_numpy(x[:batch]),
                                         torch.from_numpy(y[:batch])), onnx_path, ["x", "y"], 17)
    return onnx_path, model_py, data

TORCH_CHILD = r"""
import importlib.util, json, sys, time
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
    # The whole iteration, as oflow's log times it: the batch's rows, the step,
    # and the loss read back.
    t = time.perf_counter()
    rows = [(k * B + i) % n for i in range(B)]
    args = [torch.from_numpy(d[rows]) for d in data]
    opt.zero_grad(); loss = model(*args); loss.backward(); opt.step()
    loss.item()
    times.append(time.perf_counter() - t)
with open("/proc/self/status") as f:  # VmHWM: ru_maxrss counts the parent's pages
    rss = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
print(json.dumps({"times": times[warmup:], "rss_kib": rss}))
"""


def peak_rss_kib(pid="self"):
    """The process's peak resident set (VmHWM), 0 once it is gone. Not
    getrusage's ru_maxrss: Linux carries that across exec from the process
    that forked it (this script, with torch loaded, is hundreds of MiB)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return 0


def compile_oflow(compiler, example, work, files, flags):
    exe = os.path.join(work, example + ".exe")
    t = time.perf_counter()
    proc = subprocess.run([compiler, files[0],
                           "--target", "cpu", "-o", exe, "--lr", "0.01"] + flags,
                          capture_output=True, text=True, check=True)
    compile_s = time.perf_counter() - t
    plan = re.search(r"memory plan \(train\): peak ([\d.]+ \w+), naive ([\d.]+ \w+), "
                     r"liveness lower bound ([\d.]+ \w+)", proc.stderr)
    return dict(exe=exe, compile_s=compile_s, plan=plan.groups() if plan else ("?", "?", "?"))


# glibc malloc settings that keep freed memory in the process (see the docstring).
MALLOC_KEEP = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296"


def child_env(threads, malloc):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if malloc == "keep":
        env["GLIBC_TUNABLES"] = MALLOC_KEEP
    return env


def run_oflow(exe, example, steps, warmup, work, files, threads, malloc):
    log = os.path.join(work, example + ".jsonl")
    cmd = [exe, "--steps", str(steps), "--log-json", log]
    for name, path in files[2].items():
        cmd += ["--data", f"{name}={path}"]
    proc = subprocess.Popen(cmd + ["--threads", str(threads)], stdout=subprocess.DEVNULL,
                            env=child_env(threads, malloc))
    rss = 0
    while proc.poll() is None:  # VmHWM only grows; the last reading is the peak
        rss = max(rss, peak_rss_kib(proc.pid))
        time.sleep(0.02)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    with open(log) as f:
        elapsed = [json.loads(l)["elapsed_s"] for l in f if '"loss"' in l]
    times = [b - a for a, b in zip(elapsed, elapsed[1:])][warmup:]
    return dict(step_ms=1e3 * statistics.median(times), rss_kib=rss)


def run_torch(example, steps, warmup, files, threads, malloc):
    proc = subprocess.run([sys.executable, "-c", TORCH_CHILD, files[1],
                           str(steps), str(warmup), str(threads)],
                          capture_output=True, text=True, check=True,
                          env=child_env(threads, malloc))
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return dict(step_ms=1e3 * statistics.median(r["times"]), rss_kib=r["rss_kib"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--examples", nargs="+", default=["mlp", "gpt"],
                   choices=sorted(INPUTS) + sorted(ZOO) + ["zoo"],
                   help="examples and zoo models; zoo: every zoo model at its test size")
    p.add_argument("--compile-flag", action="append", default=[])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved runs of each side; the median over rounds is reported")
    p.add_argument("--threads", type=int, default=1, help="threads on both sides")
    p.add_argument("--malloc", choices=["keep", "default"], default="keep",
                   help="keep: glibc keeps freed memory on both sides (PyTorch's fast mode)")
    args = p.parse_args()
    examples = [n for e in args.examples for n in (ZOO_NAMES if e == "zoo" else [e])]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for ex in examples:
            files = model_files(ex, work)
            c = compile_oflow(args.oflow_compile, ex, work, files, args.compile_flag)
            runs = []
            for _ in range(args.rounds):
                runs.append((run_oflow(c["exe"], ex, args.steps, args.warmup, work, files,
                                       args.threads, args.malloc),
                             run_torch(ex, args.steps, args.warmup, files, args.threads,
                                       args.malloc)))
            o = dict(c, step_ms=statistics.median(r[0]["step_ms"] for r in runs),
                     rss_kib=max(r[0]["rss_kib"] for r in runs))
            t = dict(step_ms=statistics.median(r[1]["step_ms"] for r in runs),
                     rss_kib=max(r[1]["rss_kib"] for r in runs))
            rows.append((ex, o, t))
            print(f"{ex}: oflow {o['step_ms']:.3f} ms, torch {t['step_ms']:.3f} ms "
                  f"({t['step_ms'] / o['step_ms']:.2f}x), compile {c['compile_s']:.1f} s",
                  file=sys.stderr, flush=True)
    print("| model | oflow step (ms) | torch eager step (ms) | speed-up | oflow peak RSS (MiB) "
          "| torch peak RSS (MiB) | plan peak | plan naive | liveness bound | compile (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ex, o, t in rows:
        print(f"| {ex} | {o['step_ms']:.3f} | {t['step_ms']:.3f} | "
              f"{t['step_ms'] / o['step_ms']:.2f}x | {o['rss_kib'] / 1024:.1f} | "
              f"{t['rss_kib'] / 1024:.1f} | {o['plan'][0]} | {o['plan'][1]} | {o['plan'][2]} | "
              f"{o['compile_s']:.2f} |")
    print(f"({args.threads} thread(s) each; SGD; median over {args.rounds} interleaved rounds of "
          "each round's median step after warm-up; peak resident memory (VmHWM) of each process; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')} and glibc malloc "
          f"{args.malloc} on both sides)")


if __name__ == "__main__":
    sys.exit(main())
