"""Export the MLP classifier example to ONNX, with its training data.

Run from anywhere:  /usr/bin/python3 examples/mlp/export.py
Writes next to this file: mlp.onnx, x.npy, y.npy  (all byte-reproducible).

Model (examples/mlp/model.py, class MLP, built by make_model(): torch.manual_seed(0)):
    x [32, 32] f32 -> fc1 Linear(32,64) -> ReLU -> fc2 Linear(64,64) -> ReLU
                   -> fc3 Linear(64,8) -> logits [32, 8]
    loss = F.cross_entropy(logits, y)   -> scalar f32 (mean over the batch)

ONNX (opset 17, static shapes, exported with training=TrainingMode.TRAINING and
do_constant_folding=False, initializers embedded and named after the parameters):
    inputs : x    float32 [32, 32]
             y    int64   [32]
    output : loss float32 []   (scalar)
    initializers: fc1.weight [64,32], fc1.bias [64], fc2.weight [64,64],
                  fc2.bias [64], fc3.weight [8,64], fc3.bias [8]
    ops    : ['Gemm', 'Relu', 'SoftmaxCrossEntropyLoss']
    Each Linear is one Gemm(transB=1) on the named weight/bias.  The loss is a
    single SoftmaxCrossEntropyLoss(reduction='mean', ignore_index=-100).

Data (model.make_data(), numpy RandomState(1234)):
    x.npy float32 [1024, 32]  ~ N(0, 1)
    y.npy int64   [1024]      = argmax(tanh(x @ W1) @ W2) for a fixed random
                               "teacher" 32->64->8 (numpy weights), classes 0..7.
    Batch 32 => 32 batches per epoch.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import common  # noqa: E402
import model as M  # noqa: E402

OPSET = 17
EXPECTED_OPS = ['Gemm', 'Relu', 'SoftmaxCrossEntropyLoss']


def main():
    onnx_path = os.path.join(HERE, "mlp.onnx")
    x_path, y_path = os.path.join(HERE, "x.npy"), os.path.join(HERE, "y.npy")

    x, y = M.make_data()
    np.save(x_path, x)
    np.save(y_path, y)
    print("x", x.dtype, x.shape, " y", y.dtype, y.shape, " class counts", np.bincount(y, minlength=8).tolist())

    model = M.make_model()
    B = M.BATCH
    common.export_loss_model(model, (torch.from_numpy(x[:B]), torch.from_numpy(y[:B])),
                             onnx_path, ["x", "y"], OPSET)
    summary = common.check_exported(onnx_path, model)
    common.compare_with_torch(onnx_path, model, {"x": x[:B], "y": y[:B]})

    print("op types:", summary["ops"])
    if summary["ops"] != EXPECTED_OPS:
        print("WARNING: op types differ from the docstring:", EXPECTED_OPS)
    common.report_files([onnx_path, x_path, y_path])


if __name__ == "__main__":
    main()
