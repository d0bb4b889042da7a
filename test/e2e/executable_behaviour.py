#!/usr/bin/env python3
"""End-to-end behaviour of a compiled training executable (the MLP example):

  * 10 steps + save + resume for 10 more == 20 straight steps, bit for bit
    (every logged loss and the final checkpoint's state);
  * the host object compiled in 1 or 3 partitions trains the same, bit for bit;
  * --export writes the model with the trained weights, equal to PyTorch's
    after the same steps;
  * bad input gets a one-line error naming the file or step and a non-zero
    exit: wrong dtype, wrong shape, too few rows, a missing file, a corrupted
    or truncated checkpoint, a NaN/Inf loss, a weight that became NaN/Inf
    (--check-finite); a failed run leaves the previous checkpoint intact.

  executable_behaviour.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "examples", "mlp")
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def losses(path):
    with open(path) as f:
        return [json.loads(l)["loss"] for l in f if l.strip() and '"loss"' in l]


def checkpoint_bytes(directory):
    """The index (shard names and the index's own checksum line aside: the
    names carry a nonce of the index they replaced) and every shard's bytes,
    in index order."""
    with open(os.path.join(directory, "ckpt"), "rb") as f:
        index = [l for l in f.read().decode("latin-1").splitlines()
                 if re.match(r"[a-z_]+ [ -~]*$", l)]  # records, not the binary header
    shards, lines = [], []
    for line in index:
        if line.startswith("shard "):
            name = line.split()[1]
            with open(os.path.join(directory, name), "rb") as f:
                shards.append(f.read())
            line = "shard <name> " + " ".join(line.split()[2:])
        lines.append(line)
    return lines, shards


def one_line_error(proc, needle):
    """Exit != 0 and exactly one error line (progress notes may precede it)."""
    err = [l for l in proc.stderr.strip().splitlines() if "error:" in l]
    return (proc.returncode != 0 and len(err) == 1 and needle in err[0],
            err[0] if err else proc.stderr.strip())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="oflow-exe-")
    try:
        exe = os.path.join(work, "train")
        subprocess.run([args.oflow_compile, os.path.join(MLP, "mlp.onnx"), "--target", "cpu",
                        "-q", "-o", exe, "--optimizer", "sgd", "--momentum", "0.9",
                        "--lr", "0.05"], check=True)
        data = ["--data", f"x={MLP}/x.npy", "--data", f"y={MLP}/y.npy"]

        # Save + resume == straight, bit for bit.
        straight = os.path.join(work, "straight")
        r = run([exe, "--steps", "20", "--log-json", straight + ".jsonl", "--save", straight] + data)
        check(r.returncode == 0, "20 straight steps run")
        first = os.path.join(work, "first")
        r1 = run([exe, "--steps", "10", "--log-json", first + ".jsonl", "--save", first] + data)
        r2 = run([exe, "--steps", "10", "--log-json", first + "-2.jsonl", "--resume", first,
                  "--save", first] + data)
        check(r1.returncode == 0 and r2.returncode == 0, "10 + resume 10 run")
        a = losses(straight + ".jsonl")
        b = losses(first + ".jsonl") + losses(first + "-2.jsonl")
        check(len(a) == 20 and a == b, "10 + save + resume 10 logs the same 20 losses bit for bit")
        check(checkpoint_bytes(straight) == checkpoint_bytes(first),
              "the final checkpoints are byte-identical (index and shards)")

        # LLVM's code generation in partitions on threads (the default: one
        # per core) makes the same program as in one piece.
        for threads in ("1", "3"):
            exe_t = os.path.join(work, "train-threads" + threads)
            subprocess.run([args.oflow_compile, os.path.join(MLP, "mlp.onnx"), "--target", "cpu",
                            "-q", "-o", exe_t, "--optimizer", "sgd", "--momentum", "0.9",
                            "--lr", "0.05"], check=True,
                           env=dict(os.environ, OFLOW_COMPILE_THREADS=threads))
            log_t = os.path.join(work, "threads" + threads + ".jsonl")
            r = run([exe_t, "--steps", "20", "--log-json", log_t] + data)
            check(r.returncode == 0 and losses(log_t) == a,
                  f"compiled with OFLOW_COMPILE_THREADS={threads}: the same 20 losses bit for bit")

        # A gradient that is infinite while the loss is finite: loss =
        # sum(x * sqrt(w)) with w[0] = 0. Plain training notices one step
        # later, through the loss; --check-finite names the weight at once.
        from onnx import helper, TensorProto
        sq = helper.make_graph(
            [helper.make_node("Sqrt", ["w"], ["s"]), helper.make_node("Mul", ["x", "s"], ["m"]),
             helper.make_node("ReduceSum", ["m"], ["loss"], keepdims=0)],
            "sqrt_at_zero", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
            [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
            [numpy_helper.from_array(np.array([0.0, 1.0, 4.0], np.float32), "w")])
        sq_model = os.path.join(work, "sqrt0.onnx")
        onnx.save(helper.make_model(sq, opset_imports=[helper.make_opsetid("", 17)]), sq_model)
        np.save(os.path.join(work, "sq_x.npy"), np.ones((8, 3), np.float32))
        sq_exe = os.path.join(work, "sqrt0")
        subprocess.run([args.oflow_compile, sq_model, "--target", "cpu", "-q", "-o", sq_exe,
                        "--optimizer", "sgd", "--lr", "0.1"], check=True)
        sq_data = ["--data", "x=" + os.path.join(work, "sq_x.npy")]
        r = run([sq_exe, "--steps", "3"] + sq_data)
        check(r.returncode != 0 and "step 1: loss is nan" in r.stderr,
              f"an infinite gradient shows in the next step's loss ({r.stderr.strip()[-120:]})")
        r = run([sq_exe, "--steps", "3", "--check-finite"] + sq_data)
        ok, err = one_line_error(r, "step 0: param 'w' holds inf at element 0 after the update")
        check(ok, f"--check-finite: one-line error naming the step and the weight ({err!r})")

        # The same with fp16 loss scaling started so high that the first
        # steps overflow: the scaler's state (scale, good and applied steps)
        # is in the checkpoint too.
        exe16 = os.path.join(work, "train16")
        subprocess.run([args.oflow_compile, os.path.join(MLP, "mlp.onnx"), "--target", "cpu",
                        "-q", "-o", exe16, "--optimizer", "adamw", "--lr", "0.01",
                        "--precision", "fp16", "--loss-scale", "1e9"], check=True)
        s16, f16 = os.path.join(work, "straight16"), os.path.join(work, "first16")
        r = run([exe16, "--steps", "20", "--log-json", s16 + ".jsonl"] + data)
        r1 = run([exe16, "--steps", "10", "--log-json", f16 + ".jsonl", "--save", f16] + data)
        r2 = run([exe16, "--steps", "10", "--log-json", f16 + "-2.jsonl", "--resume", f16] + data)
        check(r.returncode == 0 and r1.returncode == 0 and r2.returncode == 0,
              "fp16 loss-scaled runs")
        a16 = losses(s16 + ".jsonl")
        b16 = losses(f16 + ".jsonl") + losses(f16 + "-2.jsonl")
        check(len(a16) == 20 and a16 == b16,
              "fp16 with loss scaling: 10 + save + resume 10 == 20 straight, bit for bit")

        # Export after 5 steps == torch after 5 steps.
        out = os.path.join(work, "trained.onnx")
        r = run([exe, "--steps", "5", "--export", out] + data)
        check(r.returncode == 0 and os.path.exists(out), "--export writes a model")
        spec = importlib.util.spec_from_file_location("mlp_model", os.path.join(MLP, "model.py"))
        M = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(M)
        model = M.make_model()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        x, y = M.load_data()
        for k in range(5):
            rows = [(k * 32 + i) % len(x) for i in range(32)]
            opt.zero_grad()
            model(torch.from_numpy(x[rows]), torch.from_numpy(y[rows])).backward()
            opt.step()
        exported = onnx.load(out)
        onnx.checker.check_model(exported)
        inits = {t.name: numpy_helper.to_array(t) for t in exported.graph.initializer}
        worst = max(float(np.max(np.abs(inits[n] - p.detach().numpy())))
                    for n, p in model.named_parameters())
        check(worst < 1e-5, f"exported weights equal PyTorch's after 5 steps (max diff {worst:.2e})")

        # Weights read from the model file at start (what large models do)
        # give the same run; a missing or corrupted model file is an error.
        model_copy = os.path.join(work, "model", "mlp.onnx")
        os.makedirs(os.path.dirname(model_copy))
        shutil.copy(os.path.join(MLP, "mlp.onnx"), model_copy)
        exe_ext = os.path.join(work, "train_ext")
        subprocess.run([args.oflow_compile, model_copy, "--target", "cpu", "-q", "-o", exe_ext,
                        "--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05",
                        "--embed-weights-limit", "0"], check=True)
        check(os.path.getsize(exe_ext) < os.path.getsize(exe) - 20000,
              "--embed-weights-limit 0 leaves the weights out of the executable")
        ext_log = os.path.join(work, "ext.jsonl")
        r = run([exe_ext, "--steps", "20", "--log-json", ext_log] + data)
        check(r.returncode == 0 and losses(ext_log) == a,
              "weights read from the model file give the same 20 losses")
        blob = bytearray(open(model_copy, "rb").read())
        open(model_copy, "wb").write(bytes(blob[: len(blob) // 2]))
        r = run([exe_ext, "--steps", "1"] + data)
        ok, err = one_line_error(r, "mlp.onnx")
        check(ok, f"truncated weights file: one-line error naming it ({err!r})")
        os.remove(model_copy)
        r = run([exe_ext, "--steps", "1"] + data)
        ok, err = one_line_error(r, "mlp.onnx")
        check(ok, f"missing weights file: one-line error naming it ({err!r})")

        # Bad data files.
        bad = os.path.join(work, "bad")
        os.makedirs(bad)
        np.save(f"{bad}/x_f64.npy", np.zeros((64, 32), np.float64))
        np.save(f"{bad}/x_shape.npy", np.zeros((64, 31), np.float32))
        np.save(f"{bad}/x_rows.npy", np.zeros((16, 32), np.float32))
        np.save(f"{bad}/y_float.npy", np.zeros((64,), np.float32))
        for name, file, needle in [("wrong dtype", "x=" + bad + "/x_f64.npy", "x_f64.npy"),
                                   ("wrong shape", "x=" + bad + "/x_shape.npy", "x_shape.npy"),
                                   ("too few rows", "x=" + bad + "/x_rows.npy", "x_rows.npy"),
                                   ("float labels", "y=" + bad + "/y_float.npy", "y_float.npy"),
                                   ("missing file", "x=" + bad + "/nope.npy", "nope.npy")]:
            r = run([exe, "--steps", "1", "--data", file])
            ok, err = one_line_error(r, needle)
            check(ok, f"{name}: one-line error naming the file ({err!r})")

        # Corrupted and truncated checkpoints; the previous one survives.
        ckpt = os.path.join(first, "ckpt")
        good = open(ckpt, "rb").read()
        corrupt = os.path.join(work, "corrupt")
        os.makedirs(corrupt)
        blob = bytearray(good)
        blob[len(blob) // 2] ^= 0xFF
        open(os.path.join(corrupt, "ckpt"), "wb").write(bytes(blob))
        r = run([exe, "--steps", "1", "--resume", corrupt] + data)
        ok, err = one_line_error(r, "ckpt")
        check(ok, f"corrupted checkpoint: one-line error ({err!r})")
        open(os.path.join(corrupt, "ckpt"), "wb").write(good[: len(good) // 3])
        r = run([exe, "--steps", "1", "--resume", corrupt] + data)
        ok, err = one_line_error(r, "ckpt")
        check(ok, f"truncated checkpoint: one-line error ({err!r})")

        # A NaN/Inf loss stops the run with the step named; the checkpoint
        # saved before stays intact.
        r = run([exe, "--steps", "30", "--lr", "1e30", "--resume", first, "--save", first] + data)
        ok, err = one_line_error(r, "step")
        check(ok and ("nan" in err.lower() or "inf" in err.lower()),
              f"NaN/Inf loss: one-line error naming the step ({err!r})")
        check(open(ckpt, "rb").read() == good, "the previous checkpoint is unchanged after the failed run")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
