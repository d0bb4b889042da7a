"""Writes small ONNX models whose initializer lives in external data, for the
importer's external-data tests:

  ok/model.onnx            data in ok/weights.bin (inside the folder)
  escape/model.onnx        location '../secret.bin' (path traversal: refused)
  absolute/model.onnx      location '/etc/passwd' (absolute: refused)
  truncated/model.onnx     ok's data file cut short
  missing/model.onnx       data file absent
  link/model.onnx          location is a symlink to a file outside the folder

Usage: make_external_data.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
w = np.arange(12, dtype=np.float32).reshape(3, 4)


def write(case, location, data=w.tobytes()):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(w.shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[t])
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
