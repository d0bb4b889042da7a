#!/usr/bin/env python3
"""Training dropout (ratio > 0): oflow's masks, their statistics, meshes, and
a model trained against PyTorch fed oflow's masks.

oflow.dropout keeps element i (row-major index in the global tensor) of step
k iff word 0 of Philox4x32-10(counter = (i lo, i hi, k lo, k hi), key =
(seed lo, seed hi)) >= ceil(ratio * 2^32), and scales kept elements by
1 / (1 - ratio). `philox4x32_10` below is checked against Random123's
known-answer vectors, then:

  1. masks: a probe model loss = sum(Dropout(X @ W) * R), X = I and R fed
     as data, whose weight gradient is the mask times R / (1 - ratio), at
     ratios 0.1, 0.5, 0.9: the mask of steps 0-2 equals the reference bit
     for bit (step 0
     from --dump-grads, steps 1 and 2 from the weights --export writes after
     each step of plain SGD), kept values are R / (1 - ratio), the kept
     fraction is within 5 sigma of 1 - ratio, and consecutive steps' masks
     overlap as independent draws do;
  2. meshes (--mesh 2x2 ...), where data parallelism splits both dropouts,
     and gradient accumulation (--micro-batches K, on one device and on the
     first mesh): the probe's gradient equals the one-device gradient
     exactly and its losses over 3 steps agree (the masks do not depend on
     the plan);
  3. PyTorch: an MLP with dropout between its layers, trained 10 SGD steps
     by oflow and by PyTorch (float64) with oflow's masks: first-step
     gradients within 1e-4 (relative norm), every loss within 1e-4
     (relative), and the evaluation loss after training (dropout off) equal
     to PyTorch's eval-mode loss within 1e-4.

  dropout_vs_torch.py --oflow-compile build/bin/oflow-compile [--target cpu]
                      [--mesh 2 2x2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from philox import LOW32, check_known_answers, philox4x32_10  # noqa: E402


def reference_mask(shape, ratio, seed, step):
    """oflow's keep mask (bool) of a tensor of `shape` at `step`."""
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    n = index.shape
    word = philox4x32_10([index & LOW32, index >> np.uint64(32),
                          np.full(n, step & 0xFFFFFFFF, np.uint64), np.full(n, step >> 32, np.uint64)],
                         [seed & 0xFFFFFFFF, seed >> 32])[0]
    threshold = min(int(np.ceil(np.ldexp(ratio, 32))), 0xFFFFFFFF)
    return (word >= np.uint64(threshold)).reshape(shape)


def keep_scale(ratio):
    return np.float32(1.0) / np.float32(1.0 - ratio)


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def mpirun(ranks, argv):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return run(["mpirun", "--oversubscribe", "-np", str(ranks)] + argv + ["--threads", "1"], env=env)


def dropout_node(inp, out, ratio, seed, name):
    return [helper.make_node("Constant", [], [name + "_ratio"],
                             value=numpy_helper.from_array(np.array(ratio, np.float32))),
            helper.make_node("Constant", [], [name + "_training"],
                             value=numpy_helper.from_array(np.array(True))),
            helper.make_node("Dropout", [inp, name + "_ratio", name + "_training"], [out],
                             name=name, seed=seed)]


def save_model(path, nodes, inputs, inits, output="loss"):
    graph = helper.make_graph(
        nodes, "dropout", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, [])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


# ---------------------------------------------------------------------------
# 1 and 2: the probe's masks
# ---------------------------------------------------------------------------

B, H = 32, 256  # X is the B x B identity, so dW = mask * R / (1 - ratio)


def probe(tmp, ratio, seed, rng):
    """Writes the probe model and its data (X and R are data, so that a mesh
    splits both dropouts, forward and backward); returns (path, data args, R)."""
    nodes = [helper.make_node("MatMul", ["X", "W"], ["h"])]
    nodes += dropout_node("h", "d", ratio, seed, "drop")
    nodes += [helper.make_node("Mul", ["d", "R"], ["dr"]),
              helper.make_node("ReduceSum", ["dr"], ["loss"], keepdims=0)]
    path = os.path.join(tmp, f"probe_{ratio}.onnx")
    save_model(path, nodes, [("X", TensorProto.FLOAT, [B, B]), ("R", TensorProto.FLOAT, [B, H])],
               {"W": rng.uniform(-1, 1, (B, H)).astype(np.float32)})
    r = rng.uniform(0.5, 1.5, (B, H)).astype(np.float32)
    x, rf = os.path.join(tmp, "eye.npy"), os.path.join(tmp, f"r_{ratio}.npy")
    np.save(x, np.eye(B, dtype=np.float32))
    np.save(rf, r)
    return path, ["--data", f"X={x}", f"R={rf}"], r


def losses_of(log):
    with open(log) as f:
        return np.array([json.loads(line)["loss"] for line in f if '"loss"' in line])


def check_masks(args, tmp, problems):
    rng = np.random.default_rng(0)
    probes = {}
    for ratio in (0.1, 0.5, 0.9):
        seed = 1234567 + int(ratio * 10)
        path, data, r = probe(tmp, ratio, seed, rng)
        exe = os.path.join(tmp, f"probe_{ratio}")
        run([args.oflow_compile, path, "--target", args.target, "--optimizer", "sgd",
             "--lr", "1", "-o", exe])
        dump, log = os.path.join(tmp, f"grads_{ratio}"), os.path.join(tmp, f"probe_{ratio}.jsonl")
        run([exe, "--steps", "1", "--dump-grads", dump] + data)
        g = np.load(os.path.join(dump, "W.npy"))
        masks = [g != 0]
        # Later steps: plain SGD at lr 1 moves W where the gradient is not 0
        # (R >= 0.5, |W| <= 1 + the steps so far: never absorbed).
        prev = None
        for steps in (1, 2, 3):
            out = os.path.join(tmp, f"w_{ratio}_{steps}.onnx")
            run([exe, "--steps", str(steps), "--export", out] +
                (["--log-json", log] if steps == 3 else []) + data)
            w = {t.name: numpy_helper.to_array(t) for t in onnx.load(out).graph.initializer}["W"]
            if prev is not None:
                masks.append(w != prev)
            prev = w
        probes[ratio] = (path, data, g, losses_of(log))
        for step, mask in enumerate(masks):
            want = reference_mask((B, H), ratio, seed, step)
            if not np.array_equal(mask, want):
                problems.append(f"ratio {ratio} step {step}: {np.sum(mask != want)} of {mask.size} "
                                f"mask bits differ from Philox4x32-10")
            kept = mask.mean()
            sigma = np.sqrt(ratio * (1 - ratio) / mask.size)
            if abs(kept - (1 - ratio)) > 5 * sigma:
                problems.append(f"ratio {ratio} step {step}: kept {kept:.4f}, expected "
                                f"{1 - ratio:.4f} +- {5 * sigma:.4f}")
        both = (masks[0] & masks[1]).mean()
        sigma = np.sqrt((1 - ratio) ** 2 * (1 - (1 - ratio) ** 2) / masks[0].size)
        if abs(both - (1 - ratio) ** 2) > 5 * sigma:
            problems.append(f"ratio {ratio}: steps 0 and 1 both keep {both:.4f} of the elements, "
                            f"independent draws {(1 - ratio) ** 2:.4f} +- {5 * sigma:.4f}")
        want = np.where(masks[0], r * keep_scale(ratio), 0).astype(np.float32)
        err = np.abs(g - want).max() / np.abs(want).max()
        if err > 1e-6:
            problems.append(f"ratio {ratio}: kept gradients are not R / (1 - ratio) (max error {err:.2e})")
        print(f"ratio {ratio}: masks of steps 0-2 match Philox4x32-10; kept "
              f"{', '.join(f'{m.mean():.4f}' for m in masks)}")
    return probes


def check_meshes(args, tmp, probes, problems):
    """Each mesh, and --micro-batches K on one device and on the first mesh
    (micro-batch k of a rank is rows k*B/(NK).. of its rows, and its masks
    are those rows' masks)."""
    plans = [(mesh, 1) for mesh in args.mesh]
    plans += [(mesh, k) for k in args.micro_batches for mesh in ["1"] + args.mesh[:1]]
    for mesh, k in plans:
        ranks = int(np.prod([int(d) for d in mesh.split("x")]))
        what = f"mesh {mesh}" + (f" with --micro-batches {k}" if k > 1 else "")
        for ratio, (path, data, g, losses) in probes.items():
            exe = os.path.join(tmp, f"probe_{ratio}_{mesh}_{k}")
            flags = [path, "--target", args.target, "--optimizer", "sgd", "--lr", "1",
                     "--mesh", mesh, "--micro-batches", str(k)]
            ir = run([args.oflow_compile, *flags, "--emit=partitioned", "-o", "-"]).stdout
            if ir.count(" offsets(") < 2:
                problems.append(f"{what}: the probe's dropouts are not split "
                                f"(the plan changed; this check needs split ones)")
            run([args.oflow_compile, *flags, "-o", exe])
            dump, log = os.path.join(tmp, f"grads_{ratio}_{mesh}_{k}"), os.path.join(tmp, f"log_{ratio}_{mesh}_{k}")
            mpirun(ranks, [exe, "--steps", "1", "--dump-grads", dump] + data)
            got = np.load(os.path.join(dump, "W.npy"))
            if not np.array_equal(got, g):
                problems.append(f"{what}, ratio {ratio}: the gradient differs from one "
                                f"device's in {np.sum(got != g)} elements")
            mpirun(ranks, [exe, "--steps", "3", "--log-json", log] + data)
            mesh_losses = losses_of(log)
            if not np.allclose(mesh_losses, losses, rtol=1e-5, atol=1e-5):
                problems.append(f"{what}, ratio {ratio}: losses {mesh_losses}, one device {losses}")
        print(f"{what}: gradients equal one device's, losses agree")


# ---------------------------------------------------------------------------
# 3: an MLP against PyTorch fed oflow's masks
# ---------------------------------------------------------------------------

N, D, HID, C = 16, 20, 64, 5
RATIO, SEED, LR, STEPS = 0.3, 424242, 0.2, 10


def check_mlp(args, tmp, problems):
    rng = np.random.default_rng(1)
    w = {"W1": rng.normal(0, 0.3, (D, HID)), "b1": rng.normal(0, 0.1, HID),
         "W2": rng.normal(0, 0.3, (HID, C)), "b2": rng.normal(0, 0.1, C)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    x = rng.normal(0, 1, (N, D)).astype(np.float32)
    y = rng.integers(0, C, N).astype(np.int64)
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["m1"]),
             helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r1"])]
    nodes += dropout_node("r1", "d1", RATIO, SEED, "drop1")
    nodes += [helper.make_node("MatMul", ["d1", "W2"], ["m2"]),
              helper.make_node("Add", ["m2", "b2"], ["logits"]),
              helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"])]
    path = os.path.join(tmp, "mlp.onnx")
    save_model(path, nodes, [("x", TensorProto.FLOAT, [N, D]), ("y", TensorProto.INT64, [N])], w)
    xf, yf = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(xf, x)
    np.save(yf, y)
    data = ["--data", f"x={xf}", f"y={yf}"]
    exe = os.path.join(tmp, "mlp")
    run([args.oflow_compile, path, "--target", args.target, "--optimizer", "sgd",
         "--lr", str(LR), "-o", exe])
    dump, log = os.path.join(tmp, "mlp_grads"), os.path.join(tmp, "mlp.jsonl")
    run([exe, "--steps", "1", "--dump-grads", dump] + data)
    run([exe, "--steps", str(STEPS), "--log-json", log, "--eval-data", f"x={xf}", f"y={yf}"] + data)
    with open(log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    losses = [r["loss"] for r in records if "loss" in r]
    eval_loss = [r["eval_loss"] for r in records if "eval_loss" in r][-1]

    # PyTorch, float64, with oflow's masks.
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
    opt = torch.optim.SGD(params.values(), lr=LR)
    xt, yt = torch.tensor(x, dtype=torch.float64), torch.tensor(y)
    scale = float(keep_scale(RATIO))

    def forward(step):
        h = F.relu(xt @ params["W1"] + params["b1"])
        if step is not None:
            h = h * torch.tensor(reference_mask((N, HID), RATIO, SEED, step), dtype=torch.float64) * scale
        return F.cross_entropy(h @ params["W2"] + params["b2"], yt)

    ref_losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = forward(step)
        loss.backward()
        if step == 0:
            for k, p in params.items():
                got = np.load(os.path.join(dump, f"{k}.npy")).astype(np.float64)
                ref = p.grad.numpy()
                e = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                if not e <= 1e-4:
                    problems.append(f"MLP: first-step gradient of {k}: relative error {e:.2e}")
        ref_losses.append(loss.item())
        opt.step()
    with torch.no_grad():
        ref_eval = forward(None).item()
    for step, (a, b) in enumerate(zip(losses, ref_losses)):
        if not abs(a - b) <= 1e-4 * abs(b):
            problems.append(f"MLP: step {step} loss {a:.7g}, PyTorch with oflow's masks {b:.7g}")
    if len(losses) != STEPS:
        problems.append(f"MLP: {len(losses)} losses logged, expected {STEPS}")
    if not abs(eval_loss - ref_eval) <= 1e-4 * abs(ref_eval):
        problems.append(f"MLP: eval loss {eval_loss:.7g}, PyTorch eval mode {ref_eval:.7g}")
    print(f"MLP: losses {losses[0]:.6f} .. {losses[-1]:.6f} (PyTorch {ref_losses[0]:.6f} .. "
          f"{ref_losses[-1]:.6f}); eval {eval_loss:.6f} (PyTorch {ref_eval:.6f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oflow-compile", required=True, metavar="PATH")
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda-emulated", "cuda"])
    ap.add_argument("--mesh", nargs="*", default=[], metavar="MESH",
                    help="meshes whose probe gradients must equal one device's (mpirun)")
    ap.add_argument("--micro-batches", nargs="*", type=int, default=[], metavar="K",
                    help="gradient accumulation counts checked the same way, on one "
                         "device and on the first --mesh")
    args = ap.parse_args()
    check_known_answers()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        probes = check_masks(args, tmp, problems)
        check_meshes(args, tmp, probes, problems)
        check_mlp(args, tmp, problems)
    for p in problems:
        print("FAIL:", p)
    print("dropout: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
