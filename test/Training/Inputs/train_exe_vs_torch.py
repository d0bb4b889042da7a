#!/usr/bin/env python3
"""The training passes end to end: compile an example with oflow-compile,
run the executable, and compare every step's loss and learning rate with
torch.optim + clip_grad_norm_ + the matching torch LR scheduler on the very
nn.Module the example exports (same weights, same rows: step k uses rows
(k*B + i) mod N).

Usage: train_exe_vs_torch.py OFLOW_COMPILE WORKDIR EXAMPLE STEPS -- <oflow-compile training flags>
The flags are the training options of oflow-compile (--optimizer, --lr,
--momentum, --dampening, --nesterov, --weight-decay, --beta1/2, --eps,
--clip-grad-norm, --schedule, --warmup-steps, --total-steps, --min-lr).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
INPUTS = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}


def parse_flags(flags):
    p = argparse.ArgumentParser()
    p.add_argument("--optimizer", default="sgd")
    # Unset: torch.optim's defaults (SGD has none in torch 1.13; torch 2's 1e-3).
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--dampening", type=float, default=0.0)
    p.add_argument("--nesterov", action="store_true")
    p.add_argument("--weight-decay", type=float, default=None)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--clip-grad-norm", type=float, default=0.0)
    p.add_argument("--schedule", default="constant")
    p.add_argument("--warmup-steps", type=int, default=0)
    p.add_argument("--total-steps", type=int, default=0)
    p.add_argument("--min-lr", type=float, default=0.0)
    return p.parse_args(flags)


def torch_run(example, data, o, steps, batch):
    torch.set_num_threads(1)
    model = example.make_model()
    model.train()
    params = list(model.parameters())
    # The executable receives the base rate as f32. What the flags leave
    # unset is left to torch.optim's own defaults.
    given = {}
    if o.lr is not None:
        given["lr"] = float(np.float32(o.lr))
    if o.weight_decay is not None:
        given["weight_decay"] = o.weight_decay
    if o.optimizer == "sgd":
        opt = torch.optim.SGD(params, **{"lr": 1e-3, **given}, momentum=o.momentum,
                              dampening=o.dampening, nesterov=o.nesterov)
    else:
        cls = torch.optim.Adam if o.optimizer == "adam" else torch.optim.AdamW
        opt = cls(params, betas=(o.beta1, o.beta2), eps=o.eps, **given)
    W, T, eta = o.warmup_steps, o.total_steps, o.min_lr
    sched = None
    if o.schedule == "linear-warmup":
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / W))
    elif o.schedule == "cosine" or (o.schedule == "warmup-cosine" and W == 0):
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T, eta_min=eta)
    elif o.schedule == "warmup-cosine":
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [
            torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / W),
            torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T - W, eta_min=eta)],
            milestones=[W])
    n = len(data[0])
    losses, lrs = [], []
    for k in range(steps):
        rows = [(k * batch + i) % n for i in range(batch)]
        args = [torch.from_numpy(d[rows]) for d in data]
        opt.zero_grad()
        loss = model(*args)
        loss.backward()
        if o.clip_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, o.clip_grad_norm)
        losses.append(loss.item())
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if sched:
            sched.step()
    return losses, lrs


def main():
    argv = sys.argv[1:]
    split = argv.index("--")
    oflow_compile, workdir, name, steps = argv[:split]
    steps = int(steps)
    flags = argv[split + 1:]
    o = parse_flags(flags)
    warnings.simplefilter("ignore", UserWarning)

    spec = importlib.util.spec_from_file_location(
        f"oflow_example_{name}", os.path.join(ROOT, "examples", name, "model.py"))
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ref_losses, ref_lrs = torch_run(example, example.load_data(), o, steps, example.BATCH)

    os.makedirs(workdir, exist_ok=True)
    exe = os.path.join(workdir, "train")
    subprocess.run([oflow_compile, os.path.join(ROOT, "examples", name, f"{name}.onnx"),
                    "--target", "cpu", "-q", "-o", exe] + flags, check=True)
    log = os.path.join(workdir, "log.jsonl")
    run = [exe, "--steps", str(steps), "--log-json", log, "--check-memory"]
    for inp in INPUTS[name]:
        run += ["--data", f"{inp}={os.path.join(ROOT, 'examples', name, inp + '.npy')}"]
    subprocess.run(run, check=True, stdout=subprocess.DEVNULL)
    with open(log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    records = [r for r in records if "loss" in r]

    failures = []
    if len(records) != steps:
        failures.append(f"expected {steps} steps, got {len(records)}")
    worst = 0.0
    for k, (r, ref, ref_lr) in enumerate(zip(records, ref_losses, ref_lrs)):
        rel = abs(r["loss"] - ref) / max(abs(ref), 1e-12)
        worst = max(worst, rel)
        if rel > 1e-4:
            failures.append(f"step {k}: loss {r['loss']:.9g} vs torch {ref:.9g} (rel {rel:.2e})")
        if not np.isclose(r["lr"], np.float32(ref_lr), rtol=1e-6, atol=0):
            failures.append(f"step {k}: lr {r['lr']!r} vs torch {ref_lr!r}")
    print(f"{name} {' '.join(flags)}: {len(records)} steps, loss "
          f"{ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}, max loss rel diff {worst:.2e}")
    for f in failures[:10]:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
