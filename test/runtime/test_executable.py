#!/usr/bin/python3
"""Drives executables built from the fake program (fake/fake_program.c) and
the runtime, as a user would: training, data errors, checkpoints, resume,
signals, divergence, gradient dumps, export, evaluation and inference.

The fake trains pred = x.w + b[tag] with MSE, SGD momentum 0.9 and
lr_k = lr / (1 + 0.1 k); `reference()` replays that in NumPy (float32) so
the losses the executable logs are checked against the rows it should read.
"""
import argparse
import json
import os
import shutil
import re
import signal
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

B, D, T = 8, 4, 3
W0 = np.array([0.1, -0.2, 0.3, 0.0], np.float32)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(exe, *args, **kw):
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                          timeout=kw.get("timeout", 60))


def one_line_error(r, exe, *parts, code=None, after_steps=False):
    """A failed run: non-zero exit, and stderr ends in the one line
    `<exe>: error: ...` (only progress notes such as "resumed from" before it).
    Unless `after_steps`, no step may have run."""
    name = os.path.basename(exe)
    lines = r.stderr.strip().splitlines()
    ok = (r.returncode != 0 and lines and
          lines[-1].startswith(name + ": error: ") and
          sum(": error: " in l for l in lines) == 1 and
          all(p in lines[-1] for p in parts) and
          (code is None or r.returncode == code))
    check(ok, "expected one-line error with %r (code %s), got rc=%d stderr=%r" %
          (parts, code, r.returncode, r.stderr))
    if not after_steps:
        check("step " not in r.stdout, "a step ran before the error: %r" % r.stdout[:200])


def json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def losses(path):
    return [(e["step"], e["loss"], e["lr"]) for e in json_lines(path) if "loss" in e]


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


DTYPES = {"f32": np.float32, "i64": np.int64}


def read_index(d):
    """DIR/ckpt, the checkpoint index (runtime/include/oflow_rt/Checkpoint.h):
    the step and its text."""
    data = open(os.path.join(d, "ckpt"), "rb").read()
    assert data[:8] == b"OFLOWCK2", data[:8]
    step, n = struct.unpack_from("<QQ", data, 8)
    assert struct.unpack_from("<Q", data, 24 + n)[0] == fnv1a64(data[:24 + n])
    return step, data[24:24 + n].decode()


def write_index(d, step, text):
    head = b"OFLOWCK2" + struct.pack("<QQ", step, len(text)) + text.encode()
    open(os.path.join(d, "ckpt"), "wb").write(head + struct.pack("<Q", fnv1a64(head)))


def read_ckpt(d):
    """A checkpoint directory: (step, variable table, {name: global array}),
    each variable assembled from the pieces of every shard."""
    step, text = read_index(d)
    table, vars_, values, shard = "", [], {}, None
    for line in text.splitlines():
        w = line.split()
        if w[0] == "var":
            table += line[4:] + "\n"
            dims = [int(x) for x in w[5:5 + int(w[4])]]
            vars_.append((w[1], DTYPES[w[3]], dims))
            values[w[1]] = np.zeros(dims, DTYPES[w[3]])
        elif w[0] == "shard":
            shard = open(os.path.join(d, w[1]), "rb").read()
            assert shard[:8] == b"OFLOWSH1" and len(shard) == int(w[2])
            assert struct.unpack_from("<Q", shard, len(shard) - 8)[0] == fnv1a64(shard[:-8])
            at = 16
        elif w[0] == "piece":
            name, dt, dims = vars_[int(w[1])]
            r = len(dims)
            off, size = [int(x) for x in w[2:2 + r]], [int(x) for x in w[2 + r:2 + 2 * r]]
            n = int(np.prod(size)) * np.dtype(dt).itemsize
            piece = np.frombuffer(shard[at:at + n], dt).reshape(size)
            values[name][tuple(slice(o, o + s) for o, s in zip(off, size))] = piece
            at += n
    return step, table, values


def dir_bytes(d):
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}


def params(values):
    return values["w"], values["b"], int(values["num_batches_tracked"])


def rows(n, k):
    return [(k * B + i) % n for i in range(B)]


def forward(w, b, x, tag, y):
    resid = (x @ w + b[tag] - y).astype(np.float32)
    return np.float32(np.mean(resid * resid)), resid


def reference(x, tag, y, lr, steps):
    """Losses of the fake's training on the unshuffled row rule."""
    w, b = W0.copy(), np.zeros(T, np.float32)
    vw, vb = np.zeros(D, np.float32), np.zeros(T, np.float32)
    out = []
    for k in range(steps):
        r = rows(len(x), k)
        loss, resid = forward(w, b, x[r], tag[r], y[r])
        out.append(loss)
        gw = (2.0 / B * resid) @ x[r]
        gb = np.zeros(T, np.float32)
        np.add.at(gb, tag[r], 2.0 / B * resid)
        lr_k = np.float32(lr) / np.float32(1 + 0.1 * k)
        vw = np.float32(0.9) * vw + gw
        vb = np.float32(0.9) * vb + gb
        w, b = w - lr_k * vw, b - lr_k * vb
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--infer", required=True)
    ap.add_argument("--minimal", required=True)
    a = ap.parse_args()
    train, infer, minimal = a.train, a.infer, a.minimal
    tmp = tempfile.mkdtemp(prefix="oflow-rt-exe-")
    p = lambda *names: os.path.join(tmp, *names)

    rng = np.random.default_rng(0)
    n = 20
    x = rng.standard_normal((n, D)).astype(np.float32)
    tag = rng.integers(0, T, n).astype(np.int64)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) +
         np.array([0.5, -1.0, 2.0], np.float32)[tag] +
         0.01 * rng.standard_normal(n)).astype(np.float32)
    np.save(p("x.npy"), x)
    np.save(p("tag.npy"), tag)
    np.save(p("y.npy"), y)
    data = ["--data", "x=" + p("x.npy"), "tag=" + p("tag.npy"), "y=" + p("y.npy")]

    # --help and usage errors.
    r = run(train, "--help")
    check(r.returncode == 0 and "--resume DIR" in r.stdout and "tag  i64[8]" in r.stdout,
          "train --help: %r" % r.stdout[:300])
    one_line_error(run(train, "--bogus"), train, "unknown option '--bogus'", code=2)
    one_line_error(run(train, "--steps", "x"), train, "--steps wants an integer", code=2)

    # Training: the loss falls, the log parses, the losses are the reference's.
    r = run(train, "--steps", 60, "--lr", 0.05, *data, "--log-json", p("log.json"))
    check(r.returncode == 0, "train run failed: %s" % r.stderr)
    check(r.stderr == "", "unexpected stderr with every input given: %r" % r.stderr)
    log = losses(p("log.json"))
    check([s for s, _, _ in log] == list(range(60)), "JSON steps are not 0..59")
    check(len([l for l in r.stdout.splitlines() if l.startswith("step ")]) == 60,
          "stdout lacks one line per step")
    check(all(k in json_lines(p("log.json"))[0] for k in ("samples_per_s", "elapsed_s")),
          "JSON lacks throughput fields")
    first = json_lines(p("log.json"))[0]
    _, resid0 = forward(W0, np.zeros(T, np.float32), x[:B], tag[:B], y[:B])
    check(abs(first.get("mae", -1) - np.mean(np.abs(resid0))) < 1e-6 and " mae " in r.stdout,
          "the extra scalar output 'mae' is not logged: %s" % first)
    check(log[-1][1] < 0.2 * log[0][1], "loss did not fall: %s -> %s" % (log[0][1], log[-1][1]))
    ref = reference(x, tag, y, 0.05, 60)
    worst = max(abs(l - r_) / max(abs(r_), 1e-6) for (_, l, _), r_ in zip(log, ref))
    check(worst < 1e-4, "losses differ from the NumPy reference (rel %g)" % worst)
    check(log[0][1] == float(ref[0]) or abs(log[0][1] - ref[0]) < 1e-6 * ref[0],
          "step 0 loss is not the loss before the update")
    check(abs(log[3][2] - 0.05 / 1.3) < 1e-8, "lr_used of step 3: %s" % log[3][2])

    # --check-gradients: the program's gradients against central differences
    # of its loss; a bias gradient 3% off (the fake's test hook) fails and is
    # named, the right one passes, and a tolerance of 10% lets it through.
    r = run(train, "--check-gradients", *data)
    check(r.returncode == 0 and "0 of 2 tensors above the tolerance" in r.stderr,
          "check-gradients on right gradients: rc=%d %r" % (r.returncode, r.stderr))
    wrong = dict(os.environ, FAKE_BIAS_GRAD_SCALE="1.03")
    r = subprocess.run([train, "--check-gradients", *data], capture_output=True, text=True, env=wrong)
    bad = [l for l in r.stderr.splitlines() if l.rstrip().endswith("FAIL")]
    check(r.returncode == 1 and len(bad) == 1 and bad[0].split()[0] == "b",
          "check-gradients on a 3%% wrong bias gradient: rc=%d %r" % (r.returncode, r.stderr))
    r = subprocess.run([train, "--check-gradients=0.1", *data], capture_output=True, text=True,
                       env=wrong)
    check(r.returncode == 0, "check-gradients=0.1 with a 3%% error: rc=%d %r" % (r.returncode, r.stderr))
    one_line_error(run(train, "--check-gradients=x"), train, "--check-gradients wants", code=2)

    # Synthetic data: one warning, deterministic.
    r1 = run(train, "--steps", 3, "--log-json", p("s1.json"))
    r2 = run(train, "--steps", 3, "--log-json", p("s2.json"))
    check(r1.returncode == 0 and r1.stderr.count("warning:") == 1 and
          "no --data for x, tag, y" in r1.stderr, "synthetic warning: %r" % r1.stderr)
    check(losses(p("s1.json")) == losses(p("s2.json")), "synthetic data is not deterministic")
    r = run(train, "--steps", 2, "--data", "x=" + p("x.npy"))
    check(r.returncode == 0 and "no --data for tag, y" in r.stderr, "partial synthetic: %r" % r.stderr)

    # Bad data files: one line naming the file and the problem, before any step.
    np.save(p("x64.npy"), x.astype(np.float64))
    np.save(p("tagf.npy"), tag.astype(np.float32))
    np.save(p("x5.npy"), np.zeros((n, 5), np.float32))
    np.save(p("x1d.npy"), np.zeros(n * 4, np.float32))
    np.save(p("xfew.npy"), x[:5])
    np.save(p("xfortran.npy"), np.asfortranarray(x))
    np.save(p("tag32.npy"), tag.astype(np.int32))
    with open(p("notnpy.npy"), "wb") as f:
        f.write(b"hello, world, not numpy")
    bad = [
        ("x=" + p("x64.npy"), ["x64.npy", "dtype f64, but input 'x' is f32"]),
        ("tag=" + p("tagf.npy"), ["tagf.npy", "dtype f32, but input 'tag' is i64"]),
        ("x=" + p("x5.npy"), ["x5.npy", "shape [20,5], but input 'x' needs [N,4]"]),
        ("x=" + p("x1d.npy"), ["x1d.npy", "shape [80]"]),
        ("x=" + p("xfew.npy"), ["xfew.npy", "5 rows, fewer than the batch of 8"]),
        ("x=" + p("xfortran.npy"), ["xfortran.npy", "Fortran-order"]),
        ("x=" + p("missing.npy"), ["missing.npy", "cannot open"]),
        ("x=" + p("notnpy.npy"), ["notnpy.npy", "bad magic"]),
    ]
    for arg, parts in bad:
        one_line_error(run(train, "--steps", 3, "--data", arg), train, *parts)
    one_line_error(run(train, "--data", "z=" + p("x.npy")), train,
                   "no input 'z' (its inputs: x, tag, y)", code=2)
    r = run(train, "--steps", 3, "--data", "x=" + p("x.npy"), "tag=" + p("tag32.npy"),
            "y=" + p("y.npy"), "--log-json", p("t32.json"))
    check(r.returncode == 0, "an int32 file for an i64 input: %s" % r.stderr)
    check(losses(p("t32.json")) == losses(p("log.json"))[:3], "int32 labels fed differently")

    # Save 10 + resume 10 == 20 straight, bit for bit (shuffled, saving every 4).
    shuf = ["--shuffle", "--seed", 5, "--lr", 0.03]
    r = run(train, "--steps", 20, *data, *shuf, "--save", p("A"), "--log-json", p("a.json"))
    check(r.returncode == 0, "straight run: %s" % r.stderr)
    r = run(train, "--steps", 10, *data, *shuf, "--save", p("B"), "--save-every", 4,
            "--log-json", p("b.json"))
    check(r.returncode == 0, "first half: %s" % r.stderr)
    check(read_ckpt(p("B"))[0] == 10, "first half saved the wrong step")
    shutil.copytree(p("B"), p("B0"))
    r = run(train, "--steps", 10, *data, *shuf, "--resume", p("B"), "--save", p("C"),
            "--log-json", p("c.json"))
    check(r.returncode == 0 and "resumed from" in r.stderr, "second half: %s" % r.stderr)
    check(losses(p("a.json")) == losses(p("b.json")) + losses(p("c.json")),
          "resumed losses differ from the straight run")
    check(dir_bytes(p("A")) == dir_bytes(p("C")),
          "resumed final checkpoint differs from the straight run's")
    check(losses(p("a.json")) != losses(p("log.json"))[:20], "--shuffle changed nothing")
    step, table, state = read_ckpt(p("A"))
    check(step == 20 and params(state)[2] == 20, "checkpoint step/counter: %d" % step)
    check(table.splitlines()[0] == "w param f32 1 4", "variable table: %r" % table)

    # Damaged checkpoints: one-line errors naming the file.
    good = open(p("B0", "ckpt"), "rb").read()
    shutil.copytree(p("B0"), p("D"))
    ck = p("D", "ckpt")
    damaged = [
        (good[:len(good) // 2] + bytes([good[len(good) // 2] ^ 0x10]) + good[len(good) // 2 + 1:],
         "checksum mismatch"),
        (good[:-20], "truncated"),
        (b"GARBAGE!" + good[8:], "bad magic"),
    ]
    for content, what in damaged:
        open(ck, "wb").write(content)
        one_line_error(run(train, "--resume", p("D"), *data), train, ck, what)
    step, text = read_index(p("B0"))
    write_index(p("D"), step, text.replace("var b param f32 1 3", "var b param f32 1 2"))
    one_line_error(run(train, "--resume", p("D"), *data), train, ck,
                   "does not match this program", "b param f32 1 2")
    open(ck, "wb").write(good)
    shard = [f for f in os.listdir(p("D")) if f.startswith("ckpt-")][0]
    sb = open(p("D", shard), "rb").read()
    open(p("D", shard), "wb").write(sb[:-3])
    one_line_error(run(train, "--resume", p("D"), *data), train, p("D", shard), "truncated")
    os.unlink(p("D", shard))
    one_line_error(run(train, "--resume", p("D"), *data), train, p("D", shard), "cannot open")
    one_line_error(run(train, "--resume", p("nowhere"), *data), train, "cannot open")

    # A failed save leaves the previous checkpoint intact.
    shutil.copytree(p("B0"), p("F"))
    os.makedirs(p("F", "ckpt.tmp"))
    r = run(train, "--steps", 5, *data, "--resume", p("F"), "--save", p("F"))
    one_line_error(r, train, "ckpt.tmp: cannot create", after_steps=True)
    check(open(p("F", "ckpt"), "rb").read() == good, "a failed save damaged the checkpoint")

    # SIGTERM / SIGINT: the step in flight finishes, the state is saved.
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        d = p("S%d" % sig)
        proc = subprocess.Popen([train, "--steps", str(10 ** 9), *data, "--save", d],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = 0
        for line in proc.stdout:
            seen += 1
            if seen == 50:
                proc.send_signal(sig)
        rest = proc.stderr.read()
        proc.wait(timeout=30)
        check(proc.returncode == code, "signal %d: exit %d, want %d" % (sig, proc.returncode, code))
        step, _, state = read_ckpt(d)
        # After SIGTERM stdout goes to /dev/null (a launcher that forwarded
        # it may have stopped reading), so the last step's line may be
        # missing; stderr names the step.
        last = re.search(r"stopped by signal %d after step (\d+)" % sig, rest)
        check(last is not None and step == int(last.group(1)) + 1 and params(state)[2] == step
              and (seen == step if sig == signal.SIGINT else step - 1 <= seen <= step),
              "signal %d: saved step %d after %d logged steps; stderr %r" % (sig, step, seen, rest))
        r = run(train, "--steps", 1, *data, "--resume", d)
        check(r.returncode == 0 and r.stdout.startswith("step %d " % step),
              "resume after signal %d: %r %r" % (sig, r.stdout, r.stderr))

    # Divergence: the step is named, nothing is saved.
    r = run(train, "--steps", 50, *data, "--lr", 1e30, "--save", p("N"))
    one_line_error(r, train, "loss is", "training diverged", after_steps=True)
    bad_step = r.stderr.split("step ")[1].split(":")[0]
    check(bad_step.isdigit() and int(bad_step) > 0, "divergence step: %r" % r.stderr)
    check(not os.path.exists(p("N", "ckpt")), "a diverged state was saved")

    # --dump-grads: the first step's gradients, then training goes on.
    r = run(train, "--steps", 2, *data, "--dump-grads", p("G"), "--log-json", p("g.json"))
    check(r.returncode == 0 and len(losses(p("g.json"))) == 2, "dump-grads run: %s" % r.stderr)
    _, resid = forward(W0, np.zeros(T, np.float32), x[:B], tag[:B], y[:B])
    gw = (2.0 / B * resid) @ x[:B]
    gb = np.zeros(T, np.float32)
    np.add.at(gb, tag[:B], 2.0 / B * resid)
    for name, want in (("w", gw), ("b", gb)):
        got = np.load(p("G", name + ".npy"))
        check(got.dtype == np.float32 and got.shape == want.shape and
              np.allclose(got, want, rtol=1e-5, atol=1e-6), "gradient %s: %s vs %s" % (name, got, want))

    # --eval-data: eval_loss from the grads entry on the held-out rows.
    ex, et, ey = x[:12] * 0.5, tag[:12], y[:12]
    np.save(p("ex.npy"), ex)
    np.save(p("et.npy"), et)
    np.save(p("ey.npy"), ey)
    r = run(train, "--steps", 10, *data, "--save", p("E"), "--log-json", p("e.json"),
            "--eval-data", "x=" + p("ex.npy"), "tag=" + p("et.npy"), "y=" + p("ey.npy"),
            "--eval-every", 5)
    check(r.returncode == 0 and r.stdout.count("eval_loss") == 2, "eval run: %r %r" % (r.stdout[-300:], r.stderr))
    evals = [e for e in json_lines(p("e.json")) if "eval_loss" in e]
    check([e["step"] for e in evals] == [4, 9], "eval steps: %s" % evals)
    w, b, _ = params(read_ckpt(p("E"))[2])
    want = np.mean([forward(w, b, ex[rows(12, j)], et[rows(12, j)], ey[rows(12, j)])[0] for j in range(2)])
    check(evals and abs(evals[-1]["eval_loss"] - want) < 1e-5 * max(want, 1),
          "eval_loss %s, want %s" % (evals[-1:], want))
    check(losses(p("e.json")) == losses(p("log.json"))[:10], "evaluation changed the training")
    one_line_error(run(train, *data, "--eval-data", "x=" + p("ex.npy")), train,
                   "no file for input 'tag'", code=2)

    # --check-memory runs the same training with the arena poisoned.
    r = run(train, "--steps", 10, *data, "--check-memory", "--threads", 1, "--log-json", p("m.json"))
    check(r.returncode == 0 and losses(p("m.json")) == losses(p("log.json"))[:10],
          "--check-memory: %s" % r.stderr)

    # --export: the embedded model with the trained variables.
    one_line_error(run(train, *data, "--export", p("nodir", "out.onnx")), train,
                   "cannot write to " + p("nodir"))
    r = run(train, "--steps", 20, *data, "--save", p("X"), "--export", p("out.onnx"))
    check(r.returncode == 0, "export run: %s" % r.stderr)
    m = onnx.load(p("out.onnx"))
    onnx.checker.check_model(m)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    w, b, count = params(read_ckpt(p("X"))[2])
    check(np.array_equal(inits["w"], w) and np.array_equal(inits["b"], b) and
          int(inits["num_batches_tracked"]) == count == 20, "exported initializers: %s" % inits)

    # Inference: .npy and .pb inputs, named or positional; .npy or .pb outputs.
    xi, ti = x[:B], tag[:B]
    want = xi @ W0  # b starts at zero
    np.save(p("xi.npy"), xi)
    open(p("input_0.pb"), "wb").write(numpy_helper.from_array(xi, "x").SerializeToString())
    open(p("input_1.pb"), "wb").write(numpy_helper.from_array(ti, "tag").SerializeToString())
    r = run(infer, "--input", "x=" + p("xi.npy"), "tag=" + p("input_1.pb"), "--output-dir", p("O1"))
    check(r.returncode == 0, "infer named: %s" % r.stderr)
    got = np.load(p("O1", "y%2Fpred.npy"))
    check(np.allclose(got, want, rtol=1e-5, atol=1e-6), "infer output %s vs %s" % (got, want))
    r = run(infer, p("input_0.pb"), p("input_1.pb"), "--output-dir", p("O2"), "--output-format", "pb")
    check(r.returncode == 0, "infer positional: %s" % r.stderr)
    t = onnx.TensorProto()
    t.ParseFromString(open(p("O2", "y%2Fpred.pb"), "rb").read())
    check(t.name == "y/pred" and np.allclose(numpy_helper.to_array(t), want, rtol=1e-5, atol=1e-6),
          "infer .pb output")
    one_line_error(run(infer, p("input_1.pb"), p("input_0.pb"), "--output-dir", p("O3")),
                   infer, "input_1.pb", "dtype i64, but input 'x' is f32")
    np.save(p("x7.npy"), x[:7])
    one_line_error(run(infer, p("x7.npy"), p("input_1.pb"), "--output-dir", p("O3")),
                   infer, "x7.npy", "shape [7,4], but input 'x' is [8,4]")
    one_line_error(run(infer, p("input_0.pb"), "--output-dir", p("O3")), infer,
                   "no file for input 'tag'", code=2)
    one_line_error(run(infer, "--steps", 3), infer, "unknown option '--steps'", code=2)
    r = run(infer, "--help")
    check(r.returncode == 0 and "y/pred  f32[8]" in r.stdout and "input_0.pb" in r.stdout,
          "infer --help: %r" % r.stdout)

    # --weights: start from the exported model's initializers.
    r = run(train, "--steps", 1, *data, "--weights", p("out.onnx"), "--log-json", p("wt.json"))
    want = forward(w, b, x[:B], tag[:B], y[:B])[0]
    check(r.returncode == 0 and abs(losses(p("wt.json"))[0][1] - want) <= 1e-6 * max(want, 1e-3),
          "--weights: first loss %s, want %s (%s)" % (losses(p("wt.json")), want, r.stderr))
    r = run(infer, p("input_0.pb"), p("input_1.pb"), "--output-dir", p("OW"), "--weights", p("out.onnx"))
    check(r.returncode == 0 and np.allclose(np.load(p("OW", "y%2Fpred.npy")), x[:B] @ w + b[tag[:B]],
                                            rtol=1e-5, atol=1e-6), "infer --weights: %s" % r.stderr)
    open(p("junk.onnx"), "wb").write(b"\xff\xff\xff not onnx")
    one_line_error(run(train, *data, "--weights", p("junk.onnx")), train, "junk.onnx", "not a valid ONNX model")
    one_line_error(run(infer, p("input_0.pb"), p("input_1.pb"), "--output-dir", p("OW"),
                       "--weights", p("gone.onnx")), infer, "gone.onnx: cannot open")

    # A program without the optional parts: clear errors before any step.
    one_line_error(run(minimal, "--steps", 2), minimal, "no default learning rate: pass --lr", code=2)
    r = run(minimal, "--steps", 2, "--lr", 0.05)
    check(r.returncode == 0 and r.stdout.startswith("step 0 ") and r.stderr == "",
          "minimal program without inputs: %r %r" % (r.stdout, r.stderr))
    one_line_error(run(minimal, "--lr", 0.1, "--data", "x=" + p("x.npy")), minimal,
                   "no input 'x' (its inputs: (none))", code=2)
    one_line_error(run(minimal, "--lr", 0.1, "--dump-grads", p("G2")), minimal,
                   "--dump-grads needs the grads entry point", "_mlir_ciface_oflow_grad_step is missing")
    one_line_error(run(minimal, "--lr", 0.1, "--export", p("o.onnx")), minimal,
                   "embeds no ONNX model")
    one_line_error(run(minimal, "--lr", 0.1, "--check-memory"), minimal,
                   "compiled without the poison scalar", code=2)
    one_line_error(run(infer, "--help", "--output-dir"), infer, "--output-dir needs a value", code=2)

    if failures:
        print("%d checks failed (work dir kept: %s)" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp)
    print("all runtime executable checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
