#!/usr/bin/python3
"""Drives the fake mesh program (fake/fake_dist.c, mesh 2) under mpirun next
to its single-device twin: the mesh must log exactly the twin's numbers
(synthetic data, data files, shuffling), dump and export the same global
tensors, and save checkpoints that resume on the other mesh. Then faults:
a wrong -np, no mpirun, a rank that dies mid-run, a missing shard: each a
clear error and a non-zero exit, never a hang.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def losses(path):
    with open(path) as f:
        return [(e["step"], e["loss"], e["lr"]) for e in map(json.loads, f) if "loss" in e]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--single", required=True)
    ap.add_argument("--mesh2", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="oflow-rt-dist-")
    p = lambda *names: os.path.join(tmp, *names)

    def run1(*args):
        return subprocess.run([a.single, *map(str, args)], capture_output=True,
                              text=True, timeout=60)

    def run2(*args, np_=2, env=None):
        cmd = [a.mpirun, "--oversubscribe", "-np", str(np_), a.mesh2, *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **(env or {})))

    def same_run(args, what):
        """The mesh and the single device log the same losses, bit for bit."""
        r1 = run1(*args, "--log-json", p("one.json"))
        r2 = run2(*args, "--log-json", p("two.json"))
        check(r1.returncode == 0 and r2.returncode == 0,
              "%s: rc %d/%d: %s %s" % (what, r1.returncode, r2.returncode, r1.stderr, r2.stderr))
        if r1.returncode or r2.returncode:
            return
        l1, l2 = losses(p("one.json")), losses(p("two.json"))
        check(l1 == l2 and len(l1) > 0, "%s: losses differ:\n%s\n%s" % (what, l1, l2))
        steps = [l for l in r2.stdout.splitlines() if l.startswith("step ")]
        check(len(steps) == len(l1), "%s: rank 0 alone logs steps: %d lines" % (what, len(steps)))
        return l1

    # Synthetic data: the global batch, sliced per rank.
    same_run(["--steps", 8], "synthetic")
    r = run2("--steps", 1)
    check(r.stderr.count("warning: no --data") == 1, "one warning, from rank 0: %r" % r.stderr)

    # Data files, straight and shuffled: each rank reads its rows of the rule.
    rng = np.random.default_rng(1)
    n = 20
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)).astype(np.float32)
    np.save(p("x.npy"), x)
    np.save(p("y.npy"), y)
    data = ["--data", "x=" + p("x.npy"), "y=" + p("y.npy")]
    ref = same_run(["--steps", 12, *data], "data files")
    same_run(["--steps", 12, *data, "--shuffle", "--seed", 3], "shuffled")
    if ref:
        check(ref[-1][1] < 0.5 * ref[0][1], "loss did not fall: %s" % ref)

    # Gradients and export: the global tensors, gathered to rank 0.
    r1 = run1("--steps", 3, *data, "--dump-grads", p("G1"), "--export", p("one.onnx"))
    r2 = run2("--steps", 3, *data, "--dump-grads", p("G2"), "--export", p("two.onnx"))
    check(r1.returncode == 0 and r2.returncode == 0, "dump/export: %s %s" % (r1.stderr, r2.stderr))
    g1, g2 = np.load(p("G1", "w.npy")), np.load(p("G2", "w.npy"))
    check(g2.shape == (4,) and np.array_equal(g1, g2), "dumped gradients: %s vs %s" % (g1, g2))
    i1 = {t.name: numpy_helper.to_array(t) for t in onnx.load(p("one.onnx")).graph.initializer if t.name != "b"}
    i2 = {t.name: numpy_helper.to_array(t) for t in onnx.load(p("two.onnx")).graph.initializer if t.name != "b"}
    check(i2["w"].shape == (4,) and np.array_equal(i1["w"], i2["w"]) and
          int(i2["num_batches_tracked"]) == 3, "exported: %s vs %s" % (i1, i2))

    # Checkpoints: 4 + 4 steps on any mix of meshes == 8 straight.
    straight = ref[:8] if ref else None
    for first, second, tag in ((run2, run1, "2->1"), (run1, run2, "1->2"), (run2, run2, "2->2")):
        d = p("ck" + tag.replace("->", "_"))
        ra = first("--steps", 4, *data, "--save", d, "--log-json", p("a.json"))
        rb = second("--steps", 4, *data, "--resume", d, "--log-json", p("b.json"))
        check(ra.returncode == 0 and rb.returncode == 0 and "resumed from" in rb.stderr,
              "%s: %s %s" % (tag, ra.stderr, rb.stderr))
        if ra.returncode == 0 and rb.returncode == 0:
            check(losses(p("a.json")) + losses(p("b.json")) == straight,
                  "%s: resumed losses differ from the straight run" % tag)
    shards = sorted(f for f in os.listdir(p("ck2_1")) if f.startswith("ckpt-"))
    check(len(shards) == 2 and all(f.endswith(("r0of2", "r1of2")) for f in shards),
          "a mesh-2 checkpoint has two shards: %s" % shards)

    # Faults. A wrong -np, and no mpirun: the launch is refused at once.
    r = run2("--steps", 2, np_=3)
    check(r.returncode != 0 and "compiled for a mesh of 2 devices but runs on 3 ranks: "
          "run it as mpirun -np 2" in r.stderr and "step " not in r.stdout,
          "wrong -np: rc %d %r" % (r.returncode, r.stderr))
    r = subprocess.run([a.mesh2, "--steps", "2"], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items()
                            if not k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))})
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1 and len(lines) == 1 and "error: this program was compiled for a "
          "mesh of 2 devices but was not started by mpirun" in lines[0],
          "without mpirun: rc %d %r" % (r.returncode, r.stderr))
    r = subprocess.run([a.mesh2, "--help"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "--resume" in r.stdout, "--help needs no mpirun: %r" % r.stderr)

    # A rank that dies at step 3: mpirun ends the job, non-zero, promptly.
    start = time.time()
    r = run2("--steps", 1000, *data, env={"OFLOW_FAKE_EXIT_RANK": "1"})
    check(r.returncode != 0 and time.time() - start < 60,
          "a dead rank: rc %d after %.0f s" % (r.returncode, time.time() - start))

    # An error on every rank (a bad flag) ends the job without a hang.
    r = run2("--steps", 2, "--bogus")
    check(r.returncode != 0 and "error: unknown option '--bogus'" in r.stderr,
          "bad flag: rc %d %r" % (r.returncode, r.stderr))

    # A missing shard: every rank names it; non-zero; nothing trains.
    d = p("ck2_1")
    gone = os.path.join(d, shards[1]) if len(shards) == 2 else d
    os.rename(gone, gone + ".away")
    for r, what in ((run2("--steps", 2, *data, "--resume", d), "mesh"),
                    (run1("--steps", 2, *data, "--resume", d), "single")):
        check(r.returncode != 0 and gone + ": cannot open" in r.stderr and
              "step " not in r.stdout, "missing shard (%s): rc %d %r" % (what, r.returncode, r.stderr))

    if failures:
        print("%d checks failed (work dir kept: %s)" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp)
    print("all distributed runtime checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
