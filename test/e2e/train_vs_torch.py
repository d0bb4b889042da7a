#!/usr/bin/env python3
"""End-to-end: compile an example, train it, and compare with PyTorch.

The reference is the very nn.Module the example exports (examples/<name>/
model.py, make_model()), trained with torch.optim from the same initial
weights on the same rows (step k uses rows (k*B + i) mod N). Checks:
  * the loss of every step within --rtol (relative) of PyTorch's,
  * the loss falls by at least 20% over the run,
  * first-step gradients ||oflow - torch|| / ||torch|| <= --grad-rtol per tensor,
and the executable runs in its memory-checking mode (dead arena regions are
filled with NaN), so a memory-plan bug cannot hide.

  train_vs_torch.py --oflow-compile build/bin/oflow-compile --example mlp --optimizer sgd
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

# Hyper-parameters per optimizer (the same on both sides).
OPTIMIZERS = {
    "sgd": dict(flags=["--optimizer", "sgd"], make=lambda p, lr: torch.optim.SGD(p, lr=lr)),
    "momentum": dict(flags=["--optimizer", "sgd", "--momentum", "0.9", "--nesterov"],
                     make=lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9, nesterov=True)),
    "adamw": dict(flags=["--optimizer", "adamw", "--weight-decay", "0.01"],
                  make=lambda p, lr: torch.optim.AdamW(p, lr=lr, weight_decay=0.01)),
}
# Learning rates that make each example learn visibly within the run.
LR = {
    ("mlp", "sgd"): 1.0, ("mlp", "momentum"): 0.2, ("mlp", "adamw"): 0.01,
    ("cnn", "sgd"): 0.1, ("cnn", "momentum"): 0.02, ("cnn", "adamw"): 0.005,
    ("gpt", "sgd"): 0.5, ("gpt", "momentum"): 0.1, ("gpt", "adamw"): 0.005,
}
INPUTS = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}


def load_example(name):
    spec = importlib.util.spec_from_file_location(
        f"oflow_example_{name}", os.path.join(EXAMPLES, name, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_run(example, data, optimizer, lr, steps, batch):
    torch.set_num_threads(1)
    model = example.make_model()
    model.train()
    opt = OPTIMIZERS[optimizer]["make"](model.parameters(), lr)
    n = len(data[0])
    losses, grads = [], {}
    for k in range(steps):
        rows = [(k * batch + i) % n for i in range(batch)]
        args = [torch.from_numpy(d[rows]) for d in data]
        opt.zero_grad()
        loss = model(*args)
        loss.backward()
        if k == 0:
            grads = {name: p.grad.detach().numpy().copy()
                     for name, p in model.named_parameters()}
        losses.append(loss.item())
        opt.step()
    return losses, grads


def oflow_run(args, example_name, optimizer, lr, workdir):
    model = os.path.join(EXAMPLES, example_name, f"{example_name}.onnx")
    exe = os.path.join(workdir, "train")
    cmd = [args.oflow_compile, model, "--target", args.target, "-o", exe, "--lr", str(lr)]
    cmd += OPTIMIZERS[optimizer]["flags"]
    subprocess.run(cmd, check=True)
    log = os.path.join(workdir, "log.jsonl")
    grads_dir = os.path.join(workdir, "grads")
    run = [exe, "--steps", str(args.steps), "--log-json", log, "--check-memory",
           "--dump-grads", grads_dir]
    for name in INPUTS[example_name]:
        run += ["--data", f"{name}={os.path.join(EXAMPLES, example_name, name + '.npy')}"]
    subprocess.run(run, check=True, stdout=subprocess.DEVNULL)
    with open(log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    losses = [r["loss"] for r in records if "loss" in r]
    grads = {f[:-4]: np.load(os.path.join(grads_dir, f))
             for f in os.listdir(grads_dir) if f.endswith(".npy")}
    return losses, grads


def fall(losses):
    """Relative fall of the loss: mean of the first 4 steps vs the last 4 (one
    batch's loss is noisy)."""
    return 1 - np.mean(losses[-4:]) / np.mean(losses[:4])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--example", required=True, choices=sorted(INPUTS))
    p.add_argument("--optimizer", required=True, choices=sorted(OPTIMIZERS))
    p.add_argument("--target", default="cpu", choices=["cpu", "cuda-emulated"],
                   help="cuda-emulated: the CUDA target's kernels as host loops")
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--grad-rtol", type=float, default=1e-4)
    args = p.parse_args()

    example = load_example(args.example)
    data = example.load_data()
    lr = LR[(args.example, args.optimizer)]
    ref_losses, ref_grads = torch_run(example, data, args.optimizer, lr, args.steps,
                                      example.BATCH)
    with tempfile.TemporaryDirectory() as workdir:
        losses, grads = oflow_run(args, args.example, args.optimizer, lr, workdir)

    failures = []
    if len(losses) != args.steps:
        failures.append(f"expected {args.steps} logged steps, got {len(losses)}")
    worst = 0.0
    for k, (a, b) in enumerate(zip(losses, ref_losses)):
        rel = abs(a - b) / max(abs(b), 1e-12)
        worst = max(worst, rel)
        if rel > args.rtol:
            failures.append(f"step {k}: loss {a:.9g} vs torch {b:.9g} (rel {rel:.2e})")
    drop = fall(ref_losses)
    if losses and fall(losses) < 0.2:
        failures.append(f"loss fell only {100 * fall(losses):.1f}% (mean of the "
                        f"first 4 steps vs the last 4)")
    worst_grad = 0.0
    # Some gradients are zero in exact arithmetic (a conv bias before batch
    # norm, a key bias under softmax: adding a constant changes nothing), so
    # both sides hold rounding noise; measure those against a small fraction
    # of the whole gradient's norm instead of their own.
    total = float(np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2))
                              for g in ref_grads.values())))
    for name, g in ref_grads.items():
        if name not in grads:
            failures.append(f"no first-step gradient dumped for {name}")
            continue
        denom = max(float(np.linalg.norm(g)), 1e-2 * total, 1e-30)
        rel = float(np.linalg.norm(grads[name] - g)) / denom
        worst_grad = max(worst_grad, rel)
        if rel > args.grad_rtol:
            failures.append(f"gradient of {name}: ||d||/||g|| = {rel:.2e} (||g|| = {np.linalg.norm(g):.3e}, all {total:.3e})")
    print(f"{args.example}/{args.optimizer}: {len(losses)} steps, loss "
          f"{losses[0] if losses else float('nan'):.4f} -> "
          f"{losses[-1] if losses else float('nan'):.4f} (torch drop {100 * drop:.1f}%), "
          f"max loss rel diff {worst:.2e}, max grad rel diff {worst_grad:.2e}")
    for f in failures[:20]:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
