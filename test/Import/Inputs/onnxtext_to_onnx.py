"""Converts an ONNX text-format model to a binary .onnx file, adding what the
ONNX 1.12 text syntax cannot express:

  --name OUTPUT=NODE   names the node that produces OUTPUT (node names)
  --fill INIT=VALUE    sets every element of the float initializer INIT to
                       VALUE (non-finite values such as -inf or nan)

Usage: onnxtext_to_onnx.py IN.onnxtext OUT.onnx [--name O=N]... [--fill I=V]...
"""
import argparse

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.parser

parser = argparse.ArgumentParser()
parser.add_argument("input")
parser.add_argument("output")
parser.add_argument("--name", action="append", default=[])
parser.add_argument("--fill", action="append", default=[])
args = parser.parse_args()

with open(args.input) as f:
    model = onnx.parser.parse_model(f.read())

for spec in args.name:
    output, name = spec.split("=", 1)
    nodes = [n for n in model.graph.node if output in n.output]
    if len(nodes) != 1:
        raise SystemExit(f"--name {spec}: no single node produces '{output}'")
    nodes[0].name = name

for spec in args.fill:
    init, value = spec.split("=", 1)
    tensors = [t for t in model.graph.initializer if t.name == init]
    if len(tensors) != 1:
        raise SystemExit(f"--fill {spec}: no initializer '{init}'")
    old = onnx.numpy_helper.to_array(tensors[0])
    new = np.full(old.shape, float(value), dtype=old.dtype)
    tensors[0].CopyFrom(onnx.numpy_helper.from_array(new, init))

onnx.checker.check_model(model)
with open(args.output, "wb") as f:
    f.write(model.SerializeToString())
