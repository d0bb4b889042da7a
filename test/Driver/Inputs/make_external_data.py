"""Writes small ONNX models whose initializer lives in external data, for the
importer's external-data tests:

  ok/model.onnx            data in ok/weights.bin (inside the folder)
  escape/model.onnx        location '../secret.bin' (path traversal: refused)
  absolute/model.onnx      location '/etc/passwd' (absolute: refused)
  truncated/model.onnx     ok's data file cut short
  missing/model.onnx       data file absent
  link/model.onnx          location is a symlink to a file outside the folder
  inlink/model.onnx        location is a relative symlink to a file inside the folder
  dir/model.onnx           location names a directory
  past/model.onnx          offset past the end of the file
  overflow/model.onnx      offset + length overflows 64 bits
  train/, trainlink/       a trainable model (loss = sum((x @ w)^2)) whose weights
                           are external, for the runtime's --weights path;
                           trainlink's data is a link that leaves its folder

Usage: make_external_data.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
w = np.arange(12, dtype=np.float32).reshape(3, 4)


def write(case, location, data=w.tobytes(), offset="0", loss=False):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(w.shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    out_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    if loss:
        nodes += [helper.make_node("Mul", ["y", "y"], ["y2"], name="square"),
                  helper.make_node("ReduceSum", ["y2"], ["loss"], name="sum", keepdims=0)]
        out_info = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [out_info], initializer=[t])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if data is not None and not os.path.isabs(location) and ".." not in location:
        path = os.path.join(d, location)
        if not os.path.lexists(path):
            with open(path, "wb") as f:
                f.write(data)
    return d


write("ok", "weights.bin")
with open(os.path.join(out, "secret.bin"), "wb") as f:
    f.write(w.tobytes())
write("escape", "../secret.bin")
write("absolute", "/etc/passwd")
write("truncated", "weights.bin", data=w.tobytes()[:20])
write("missing", "weights.bin", data=None)
d = os.path.join(out, "link")
os.makedirs(d, exist_ok=True)
if not os.path.lexists(os.path.join(d, "weights.bin")):
    os.symlink(os.path.join(out, "secret.bin"), os.path.join(d, "weights.bin"))
write("link", "weights.bin", data=None)

d = os.path.join(out, "inlink")
os.makedirs(os.path.join(d, "data"), exist_ok=True)
with open(os.path.join(d, "data", "real.bin"), "wb") as f:
    f.write(w.tobytes())
if not os.path.lexists(os.path.join(d, "weights.bin")):
    os.symlink(os.path.join("data", "real.bin"), os.path.join(d, "weights.bin"))
write("inlink", "weights.bin", data=None)
write("dir", "data", data=None)
os.makedirs(os.path.join(out, "dir", "data"), exist_ok=True)
write("past", "weights.bin", offset="4096")
write("overflow", "weights.bin", offset=str(2**64 - 8))
write("train", "weights.bin", loss=True)
d = os.path.join(out, "trainlink")
os.makedirs(d, exist_ok=True)
if not os.path.lexists(os.path.join(d, "weights.bin")):
    os.symlink(os.path.join(out, "secret.bin"), os.path.join(d, "weights.bin"))
write("trainlink", "weights.bin", data=None, loss=True)
