#!/usr/bin/env python3
"""ONNX's own Resize and Upsample node tests, with their scales and sizes
made constants (issue #17 item 3).

oflow compiles static shapes, so a Resize whose scales or sizes arrive at
run time (as in ONNX's node tests, where they are graph inputs) is refused
with a clear error by test/onnx_node_tests.py. Exported models carry them as
constants. This test turns every input but the first of each
test_resize_* / test_upsample_* model into an initializer holding the value
of test_data_set_0, compiles it (--mode infer), runs it on the data set's
first input and compares with the expected output (rtol 1e-4, atol 1e-5,
as onnx_node_tests.py). Modes oflow does not support (cubic,
tf_crop_and_resize) must fail with exactly one error line naming the node.

  resize_node_tests.py --oflow-compile build/bin/oflow-compile [--target cpu]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
UNSUPPORTED = ("cubic", "tf_crop_and_resize")


def bake(model_dir, out_path):
    """The model with inputs 1.. as initializers from test_data_set_0."""
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    graph = model.graph
    data = os.path.join(model_dir, "test_data_set_0")
    keep = []
    for i, inp in enumerate(list(graph.input)):
        if i == 0:
            keep.append(inp)
            continue
        tensor = onnx.load_tensor(os.path.join(data, "input_%d.pb" % i))
        tensor.name = inp.name
        graph.initializer.append(tensor)
    del graph.input[:]
    graph.input.extend(keep)
    onnx.save(model, out_path)
    return os.path.join(data, "input_0.pb"), os.path.join(data, "output_0.pb")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--target", default="cpu", choices=["cpu", "cuda-emulated"])
    args = p.parse_args()
    dirs = sorted(glob.glob(os.path.join(DATA, "test_resize_*")) +
                  glob.glob(os.path.join(DATA, "test_upsample_*")))
    failures, passed, refused = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="oflow-resize-") as work:
        for d in dirs:
            name = os.path.basename(d)
            model = os.path.join(work, name + ".onnx")
            x, expected = bake(d, model)
            exe = os.path.join(work, name)
            proc = subprocess.run([args.oflow_compile, model, "--mode", "infer", "--target",
                                   args.target, "-q", "-o", exe],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            if any(u in name for u in UNSUPPORTED):
                lines = stderr.split("\n") if stderr else []
                if (proc.returncode != 1 or len(lines) != 1 or "error:" not in lines[0]
                        or "Resize" not in lines[0]):
                    failures.append(f"{name}: expected one clear error, got rc "
                                    f"{proc.returncode}: {stderr[-300:]}")
                else:
                    refused += 1
                continue
            if proc.returncode != 0:
                failures.append(f"{name}: compile failed: {stderr[-300:]}")
                continue
            out = os.path.join(work, name + "-out")
            run = subprocess.run([exe, x, "--output-dir", out, "--output-format", "npy"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if run.returncode != 0:
                failures.append(f"{name}: the executable failed: "
                                f"{run.stderr.decode('utf-8', 'replace')[-300:]}")
                continue
            want = numpy_helper.to_array(onnx.load_tensor(expected))
            outputs = glob.glob(os.path.join(out, "*.npy"))
            got = np.load(outputs[0]) if len(outputs) == 1 else None
            if got is None or got.shape != want.shape or not np.allclose(
                    got, want, rtol=1e-4, atol=1e-5):
                diff = (float(np.max(np.abs(got - want)))
                        if got is not None and got.shape == want.shape else None)
                failures.append(f"{name}: output differs (shape "
                                f"{None if got is None else got.shape} vs {want.shape}, "
                                f"max abs diff {diff})")
                continue
            passed += 1
    for f in failures:
        print("FAIL:", f)
    print(f"resize node tests ({args.target}): {passed} passed, {refused} refused "
          f"clearly, {len(failures)} failed, of {len(dirs)}")
    return 1 if failures or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
