"""MLP classifier example: model definition and data (importable by tests).

    x [32, 32] float32 -> Linear(32,64) -> ReLU -> Linear(64,64) -> ReLU
                       -> Linear(64,8) -> logits [32, 8]
    loss = F.cross_entropy(logits, y)  (mean over the batch, scalar)

`make_model()` seeds torch and returns the module with the exact initial
weights that `export.py` writes into `mlp.onnx`.  `make_data()` regenerates the
synthetic data set deterministically; `load_data()` reads the committed
`x.npy` / `y.npy` next to this file.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

IN_FEATURES = 32
HIDDEN = 64
NUM_CLASSES = 8
BATCH = 32
N = 1024
TORCH_SEED = 0
DATA_SEED = 1234


class MLP(nn.Module):
    def __init__(self, in_features=IN_FEATURES, hidden=HIDDEN, num_classes=NUM_CLASSES):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, num_classes)

    def logits(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        return self.fc3(h)

    def forward(self, x, y):
        return F.cross_entropy(self.logits(x), y)


def make_model(seed=TORCH_SEED):
    """Seed torch and build the module with its exact initial weights."""
    torch.manual_seed(seed)
    return MLP()


def make_data(seed=DATA_SEED, n=N):
    """Deterministic learnable data: labels = argmax of a fixed random teacher.

    x ~ N(0, 1) in float32; the teacher is a random 32->64->8 tanh network
    (its weights come from the same numpy RandomState, not from torch).
    Returns x float32 [n, 32], y int64 [n].
    """
    rs = np.random.RandomState(seed)
    x = rs.standard_normal((n, IN_FEATURES)).astype(np.float32)
    w1 = rs.standard_normal((IN_FEATURES, HIDDEN)) / np.sqrt(IN_FEATURES)
    w2 = rs.standard_normal((HIDDEN, NUM_CLASSES)) / np.sqrt(HIDDEN)
    y = np.argmax(np.tanh(x.astype(np.float64) @ w1) @ w2, axis=1).astype(np.int64)
    return x, y


def load_data(directory=HERE):
    """The committed data: x float32 [1024, 32], y int64 [1024]."""
    return (np.load(os.path.join(directory, "x.npy")),
            np.load(os.path.join(directory, "y.npy")))
