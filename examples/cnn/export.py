"""Export the small CNN classifier example to ONNX, with its training data.

Run from anywhere:  /usr/bin/python3 examples/cnn/export.py
Writes next to this file: cnn.onnx, x.npy, y.npy  (all byte-reproducible).

Model (examples/cnn/model.py, class CNN, built by make_model(): torch.manual_seed(0), train mode):
    x [32, 1, 16, 16] f32
      conv1 Conv2d(1, 8, 3, padding=1) -> bn1 BatchNorm2d(8) -> ReLU -> MaxPool2d(2)      [32, 8, 8, 8]
      conv2 Conv2d(8, 16, 3, padding=1) -> bn2 BatchNorm2d(16) -> ReLU -> AvgPool2d(2)    [32, 16, 4, 4]
      flatten [32, 256] -> fc Linear(256, 8) -> logits [32, 8]
    loss = F.cross_entropy(logits, y)   -> scalar f32 (mean over the batch)
    (AvgPool2d uses count_include_pad=False: identical values since padding=0,
    but torch 1.13 otherwise emits a no-op zero Pad in front of AveragePool.)

ONNX (opset 17, static shapes, exported with training=TrainingMode.TRAINING and
do_constant_folding=False, initializers embedded and named after the parameters):
    inputs : x    float32 [32, 1, 16, 16]
             y    int64   [32]
    output : loss float32 []   (scalar)
    initializers: conv1.weight [8,1,3,3], conv1.bias [8],
                  bn1.weight [8], bn1.bias [8], bn1.running_mean [8], bn1.running_var [8],
                  conv2.weight [16,8,3,3], conv2.bias [16],
                  bn2.weight [16], bn2.bias [16], bn2.running_mean [16], bn2.running_var [16],
                  fc.weight [8,256], fc.bias [8]
    ops    : ['AveragePool', 'BatchNormalization', 'Conv', 'Flatten', 'Gemm',
              'MaxPool', 'Relu', 'SoftmaxCrossEntropyLoss']

Training-mode export, what torch 1.13 did:
  * BatchNormalization has training_mode=1, epsilon=1e-5, momentum=0.9 (ONNX
    momentum = 1 - torch momentum 0.1) and three outputs: Y, running_mean,
    running_var.  Y is normalised with the *batch* statistics.  The two
    running-stat outputs are dangling (not graph outputs, not used), so the
    running_mean / running_var initializers only feed those dead outputs; they
    are buffers, not trainable parameters.  Note ONNX defines the running_var
    update with the population (biased) batch variance while torch uses the
    unbiased one, so they would differ by a factor n/(n-1) anyway.
  * bn*.num_batches_tracked is dropped (torch warns "Removing mutation from
    node aten::add_ ... This changes graph semantics").
  * Surprise: tracing runs forward() once in train mode, which updates the
    running stats, and torch then writes those *updated* buffers (one momentum
    step on the example batch) as the running_mean / running_var initializers.
    common.export_loss_model exports a deep copy and then restores the buffers
    to make_model()'s values (zeros / ones), so every initializer equals the
    freshly built module exactly (checked after export).
  * Conv has bias (conv1.bias / conv2.bias) even though BN follows; Linear is
    Gemm(transB=1); flatten is Flatten(axis=1).

Data (model.make_data(), numpy RandomState(4321)):
    x.npy float32 [512, 1, 16, 16]: class k in 0..7 is a soft bar (length ~12 px,
          width ~1.5 px) at angle k * 22.5 degrees through a centre jittered by
          up to +-2 px, brightness U(0.7, 1.3), plus N(0, 0.3) pixel noise.
    y.npy int64 [512]: 64 images per class, shuffled.
    Batch 32 => 16 batches per epoch.
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
EXPECTED_OPS = ['AveragePool', 'BatchNormalization', 'Conv', 'Flatten', 'Gemm',
                'MaxPool', 'Relu', 'SoftmaxCrossEntropyLoss']


def main():
    onnx_path = os.path.join(HERE, "cnn.onnx")
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
