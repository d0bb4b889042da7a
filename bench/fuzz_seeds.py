#!/usr/bin/python3
"""Seed inputs for the fuzz harnesses (test/fuzz), one folder per harness.

  fuzz_seeds.py OUT_DIR

writes OUT_DIR/<harness>/<seed files> from what the tree and Debian's ONNX
test data hold: the ONNX node tests' models (under 2 KiB) and the examples'
models for import-onnx; the .onnxtext sections of the lit tests for
import-onnxtext; the lit tests' .mlir inputs, split at `// -----`, for
import-mlir; the node tests' input .pb files for tensor-pb; the examples'
.npy files and small arrays of every dtype for npy; the manifests of the
runtime's unit tests for manifest; and a valid checkpoint of the harness's
fixed manifest, in its framing, for checkpoint. bench/fuzz.sh merges these
with the committed corpus before each run.
"""
import glob
import hashlib
import os
import re
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE = "/usr/share/libonnx-testdata/data/node"


def put(out, harness, data, ext=""):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()[:16] + ext
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    out = sys.argv[1]
    for path in sorted(glob.glob(os.path.join(NODE, "*", "model.onnx"))):
        if os.path.getsize(path) < 2048:
            put(out, "import-onnx", open(path, "rb").read())
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*", "*.onnx"))):
        if os.path.getsize(path) < 256 * 1024:
            put(out, "import-onnx", open(path, "rb").read())
    for path in sorted(glob.glob(os.path.join(NODE, "*", "test_data_set_0", "input_*.pb")))[::4]:
        if os.path.getsize(path) < 4096:
            put(out, "tensor-pb", open(path, "rb").read())

    # Lit tests: split-file sections and split-input-file chunks.
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.test"), recursive=True)):
        text = open(path).read()
        for m in re.finditer(r"^#--- \S+\.onnxtext\n(.*?)(?=^#--- |\Z)", text, re.M | re.S):
            body = "\n".join(l for l in m.group(1).splitlines() if not l.startswith("#"))
            put(out, "import-onnxtext", body + "\n")
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        for chunk in open(path).read().split("// -----"):
            if len(chunk) < 8192:
                put(out, "import-mlir", chunk)

    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*", "*.npy"))):
        data = np.load(path)
        small = data[:2]
        import io
        buf = io.BytesIO()
        np.save(buf, small)
        put(out, "npy", buf.getvalue())
    import io
    for dtype in ["<f4", "<f8", "<i8", "<i4", "|b1", "<f2", ">f4", "|u1"]:
        for shape in [(), (3,), (2, 3)]:
            buf = io.BytesIO()
            np.save(buf, np.arange(int(np.prod(shape)), dtype=np.float64).astype(dtype).reshape(shape))
            put(out, "npy", buf.getvalue())
    buf = io.BytesIO()
    np.save(buf, np.zeros((2, 3), np.float32).T)  # Fortran order
    put(out, "npy", buf.getvalue())

    src = open(os.path.join(ROOT, "test", "runtime", "ManifestTest.cpp")).read()
    for m in re.finditer(r'R"\((oflow-manifest.*?)\)"', src, re.S):
        put(out, "manifest", m.group(1))
    put(out, "manifest", "oflow-manifest 1\nmode train\nbatch 1\nstate_bytes 1024\nio_bytes 0\n"
                         "arena_bytes 0\nvar w param f32 2 8 8 0 0\nvar w.m optimizer f32 2 8 8 512 -1\n"
                         "mesh 2 2\n")

    # The checkpoint harness's framing: u64 step, index text, NUL, pieces.
    text = ("mesh 1\nvar w param f32 2 8 8\nvar w.m optimizer f32 2 8 8\n"
            "shard ckpt-7-0000000000000000-r0of1 536\npiece 0 0 0 8 8\npiece 1 0 0 8 8\n")
    pieces = np.arange(128, dtype=np.float32).tobytes()
    put(out, "checkpoint", struct.pack("<Q", 7) + text.encode() + b"\0" + pieces)
    half = text.replace("piece 1 0 0 8 8\n", "").replace(" 536\n", " 280\n")
    put(out, "checkpoint", struct.pack("<Q", 7) + half.encode() + b"\0" + pieces[:256])
    for h in sorted(os.listdir(out)):
        print(f"{h}: {len(os.listdir(os.path.join(out, h)))} seeds")


if __name__ == "__main__":
    main()
