#!/usr/bin/env python3
"""End-to-end: PyTorch's GroupNorm, InstanceNorm2d, ConvTranspose2d and
F.interpolate (issue #17 item 3).

torch.onnx exports both norms through ONNX InstanceNormalization (GroupNorm
with its input reshaped to [N, groups, -1] and its own affine after), which
oflow imports as a layer norm over the spatial axes plus a per-channel
affine; ConvTranspose becomes the input gradient of a convolution. A small
convolutional classifier with one of each (random affine parameters, a
strided transposed convolution with output_padding upsampling 12x12 to
24x24), then resized bilinearly to 17x31 (half-pixel) and 20x20 (align
corners) and by nearest x2 (ONNX Resize: two constant matrix products),
trains with SGD; against PyTorch in float64: first-step gradients per tensor
within 1e-5 (relative; conv2's bias, whose exact gradient is zero, against
the whole gradient's norm), and six steps of loss within 1e-5.

  vision_ops_vs_torch.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import common  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)
STEPS, BATCH, LR = 6, 8, 0.1
ZERO_GRADIENT = {"conv2.bias"}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.conv2 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1)
        self.inorm = nn.InstanceNorm2d(8, affine=True)
        self.fc = nn.Linear(8, 10)
        # A per-position weight, so that the gradient reaching the resizes
        # is not uniform over the image (a mean alone would not check them).
        self.gate = nn.Parameter(torch.rand(1, 1, 40, 40) + 0.5)

    def forward(self, x, y):
        h = F.relu(self.gn(self.conv1(x)))
        h = F.relu(self.inorm(self.conv2(h)))
        h = F.interpolate(h, size=(17, 31), mode="bilinear", align_corners=False)
        h = F.interpolate(h, size=(20, 20), mode="bilinear", align_corners=True)
        h = F.interpolate(h, scale_factor=2.0, mode="nearest") * self.gate
        return F.cross_entropy(self.fc(h.mean((2, 3))), y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():  # affine parameters away from (1, 0)
        for w in (model.gn.weight, model.inorm.weight):
            w.uniform_(0.5, 1.5)
        for b in (model.gn.bias, model.inorm.bias):
            b.uniform_(-0.5, 0.5)
    rng = np.random.RandomState(0)
    x = rng.standard_normal((BATCH * STEPS, 3, 12, 12)).astype(np.float32)
    y = rng.randint(0, 10, BATCH * STEPS).astype(np.int64)

    with tempfile.TemporaryDirectory(prefix="oflow-vision-ops-") as work:
        onnx_path = os.path.join(work, "net.onnx")
        common.export_loss_model(model, (torch.from_numpy(x[:BATCH]), torch.from_numpy(y[:BATCH])),
                                 onnx_path, ["x", "y"], 17)
        import onnx
        ops = {n.op_type for n in onnx.load(onnx_path).graph.node}
        if not {"InstanceNormalization", "ConvTranspose", "Resize"} <= ops:
            print(f"FAIL: the export lacks InstanceNormalization, ConvTranspose or Resize "
                  f"({sorted(ops)})")
            return 1
        ref = model.double()
        opt = torch.optim.SGD(ref.parameters(), lr=LR)
        losses, grads = [], {}
        for k in range(STEPS):
            rows = [(k * BATCH + i) % len(x) for i in range(BATCH)]
            opt.zero_grad()
            loss = ref(torch.from_numpy(x[rows]).double(), torch.from_numpy(y[rows]))
            loss.backward()
            if k == 0:
                grads = {n: q.grad.numpy().copy() for n, q in ref.named_parameters()}
            losses.append(loss.item())
            opt.step()

        xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(xp, x)
        np.save(yp, y)
        exe = os.path.join(work, "train")
        subprocess.run([args.oflow_compile, onnx_path, "--target", "cpu", "-q", "-O", "0",
                        "--optimizer", "sgd", "--lr", str(LR), "-o", exe], check=True)
        log, dump = os.path.join(work, "log.jsonl"), os.path.join(work, "grads")
        subprocess.run([exe, "--steps", str(STEPS), "--data", f"x={xp}", "--data", f"y={yp}",
                        "--log-json", log, "--dump-grads", dump, "--check-memory"],
                       check=True, stdout=subprocess.DEVNULL)
        mine = [json.loads(l)["loss"] for l in open(log) if '"loss"' in l]
        failures = []
        total = float(np.sqrt(sum(float(np.sum(g ** 2)) for g in grads.values())))
        for name, g in grads.items():
            path = os.path.join(dump, name + ".npy")
            if not os.path.exists(path):
                failures.append(f"no gradient dumped for {name}")
                continue
            # conv2's bias feeds the instance norm, which subtracts it again:
            # its exact gradient is zero, so it is measured against the
            # whole gradient's norm.
            denom = total if name in ZERO_GRADIENT else np.linalg.norm(g)
            r = np.linalg.norm(np.load(path) - g) / max(denom, 1e-30)
            if r > 1e-5:
                failures.append(f"gradient of {name}: relative error {r:.2e} (> 1e-5)")
        worst = max(abs(a - b) / abs(a) for a, b in zip(losses, mine))
        if len(mine) != STEPS or worst > 1e-5:
            failures.append(f"losses {mine} vs PyTorch float64 {losses} (worst {worst:.2e})")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(grads)} first-step gradients within 1e-5 of PyTorch float64, "
              f"{STEPS} losses within {worst:.1e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
