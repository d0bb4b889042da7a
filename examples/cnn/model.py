"""Small CNN classifier example: model definition and data (importable by tests).

    x [32, 1, 16, 16] float32
      -> Conv2d(1, 8, 3, padding=1) -> BatchNorm2d(8) -> ReLU -> MaxPool2d(2)     [32, 8, 8, 8]
      -> Conv2d(8, 16, 3, padding=1) -> BatchNorm2d(16) -> ReLU -> AvgPool2d(2)   [32, 16, 4, 4]
      -> flatten [32, 256] -> Linear(256, 8) -> logits [32, 8]
    loss = F.cross_entropy(logits, y)  (mean over the batch, scalar)

BatchNorm runs in training mode (batch statistics, momentum 0.1, eps 1e-5).

`make_model()` seeds torch and returns the module (in train() mode) with the
exact initial weights that `export.py` writes into `cnn.onnx`.  `make_data()`
regenerates the synthetic images deterministically; `load_data()` reads the
committed `x.npy` / `y.npy` next to this file.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

IMAGE = 16
NUM_CLASSES = 8
BATCH = 32
N = 512
TORCH_SEED = 0
DATA_SEED = 4321


class CNN(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool2 = nn.AvgPool2d(2, count_include_pad=False)  # same values; avoids a no-op Pad in ONNX
        self.fc = nn.Linear(16 * (IMAGE // 4) * (IMAGE // 4), num_classes)

    def logits(self, x):
        h = self.pool1(F.relu(self.bn1(self.conv1(x))))
        h = self.pool2(F.relu(self.bn2(self.conv2(h))))
        return self.fc(torch.flatten(h, 1))

    def forward(self, x, y):
        return F.cross_entropy(self.logits(x), y)


def make_model(seed=TORCH_SEED):
    """Seed torch and build the module (train mode) with its exact initial weights."""
    torch.manual_seed(seed)
    return CNN().train()


def make_data(seed=DATA_SEED, n=N):
    """Deterministic learnable images: class k = a bar at angle k * 22.5 degrees.

    Each image is a soft line segment (length ~12 px, width ~1.5 px) through a
    centre jittered by up to +-2 px, random brightness in [0.7, 1.3], plus
    N(0, 0.3) pixel noise.  Classes are balanced (n / 8 each) and shuffled.
    Returns x float32 [n, 1, 16, 16], y int64 [n].
    """
    rs = np.random.RandomState(seed)
    y = np.repeat(np.arange(NUM_CLASSES, dtype=np.int64), n // NUM_CLASSES)
    y = y[rs.permutation(n)]
    yy, xx = np.mgrid[0:IMAGE, 0:IMAGE].astype(np.float64)
    x = np.empty((n, 1, IMAGE, IMAGE), dtype=np.float32)
    for i in range(n):
        theta = np.pi * y[i] / NUM_CLASSES
        cy, cx = (IMAGE - 1) / 2.0 + rs.uniform(-2.0, 2.0, size=2)
        dy, dx = yy - cy, xx - cx
        along = dx * np.cos(theta) + dy * np.sin(theta)
        across = -dx * np.sin(theta) + dy * np.cos(theta)
        bar = np.exp(-0.5 * (across / 0.75) ** 2) * (np.abs(along) <= 6.0)
        img = rs.uniform(0.7, 1.3) * bar + rs.normal(0.0, 0.3, size=bar.shape)
        x[i, 0] = img.astype(np.float32)
    return x, y


def load_data(directory=HERE):
    """The committed data: x float32 [512, 1, 16, 16], y int64 [512]."""
    return (np.load(os.path.join(directory, "x.npy")),
            np.load(os.path.join(directory, "y.npy")))
