#!/usr/bin/env python3
"""Every boxing conversion, run: a random tensor converted under mpirun equals
what one device computes (issue #4).

For each (FROM, TO) layout pair a tiny native-IR inference program is built:
the value is produced in FROM (an input split or broadcast as FROM, or a
reduction over a split axis for P(sum) / P(max)), pinned by `oflow.sbp_hint`
to FROM and then to TO, and returned (which converts TO to B). The compiled
executable runs on as many ranks as the mesh has devices; rank 0 writes the
gathered output, which must equal the NumPy result exactly (the conversions
only move or add values; sums of 2-4 partials are compared with a float
tolerance). The plan must show the conversion's collective, so a program that
skipped the boxing cannot pass.

  boxing_numerics.py --oflow-compile build/bin/oflow-compile --mesh 4
"""
import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

FAILURES = []
SHAPE = (8, 12)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def nd(entries):
    return "#oflow.nd_sbp<[" + ", ".join(entries) + "]>"


def fits(layout, sizes):
    """Whether every split of `layout` divides SHAPE on a mesh of `sizes`."""
    factor = [1] * len(SHAPE)
    for entry, size in zip(layout, sizes):
        if entry.startswith("S("):
            factor[int(entry[2])] *= size
    return all(d % f == 0 for d, f in zip(SHAPE, factor))


def program(src, dst, axes, mesh, reduced):
    """Native IR: y = hint(hint(value in `src`), `dst`)."""
    t = "tensor<8x12xf32>"
    kind = src[0]
    if all(e in ("B",) or e.startswith("S") for e in src):
        arg = f'%x: {t} {{oflow.name = "x", oflow.sbp = {nd(src)}}}'
        value, body = "%x", ""
    else:  # some entry partial: reduce a [R, 8, 12] input split along R
        op = "reduce_max" if "P(max)" in src else "reduce_sum"
        r = reduced
        split = nd(["S(0)"] * axes)
        arg = f'%x: tensor<{r}x8x12xf32> {{oflow.name = "x", oflow.sbp = {split}}}'
        body = (f"    %v = oflow.{op} %x {{axes = array<i64: 0>, keepdims = false}}"
                f" : (tensor<{r}x8x12xf32>) -> {t}\n")
        value = "%v"
    return (f"module attributes {{oflow.mesh = #oflow.mesh<{mesh}>}} {{\n  func.func @main({arg}) -> ({t} {{oflow.name = \"y\"}}) {{\n"
            f"{body}"
            f"    %a = oflow.sbp_hint {value} {{sbp = {nd(src)}}} : {t}\n"
            f"    %b = oflow.sbp_hint %a {{sbp = {nd(dst)}}} : {t}\n"
            f"    return %b : {t}\n  }}\n}}\n")


def expected(src, x):
    if "P(max)" in src:
        return x.max(axis=0)
    if any(e.startswith("P") for e in src):
        return x.sum(axis=0)
    return x


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_row_split_lookup(args, sizes, n, work, env, rng):
    """A gather from a table split by rows over every mesh axis (a vocabulary-
    parallel embedding), its result pinned to P: each rank looks up only its
    rows (masking the others, negative indices counted from the end)."""
    rows = 4 * n
    table_layout = ["S(0)"] * len(sizes)
    partial = ["P(sum)"] * len(sizes)
    ir = (f"module attributes {{oflow.mesh = #oflow.mesh<{args.mesh}>}} {{\n"
          f"  func.func @main(%t: tensor<{rows}x8xf32> {{oflow.name = \"t\", oflow.sbp = {nd(table_layout)}}},"
          f" %i: tensor<6xi64> {{oflow.name = \"i\", oflow.sbp = {nd(['B'] * len(sizes))}}})"
          f" -> (tensor<6x8xf32> {{oflow.name = \"y\"}}) {{\n"
          f"    %g = oflow.gather %t, %i : (tensor<{rows}x8xf32>, tensor<6xi64>) -> tensor<6x8xf32>\n"
          f"    %h = oflow.sbp_hint %g {{sbp = {nd(partial)}}} : tensor<6x8xf32>\n"
          f"    return %h : tensor<6x8xf32>\n  }}\n}}\n")
    path = os.path.join(work, "lookup.mlir")
    with open(path, "w") as f:
        f.write(ir)
    exe = os.path.join(work, "lookup")
    base = [args.oflow_compile, path, "--mode", "infer", "--target", "cpu", "-O0",
            "--mesh", args.mesh]
    part = run(base + ["--emit=partitioned", "-o", "-"])
    proc = run(base + ["-o", exe])
    if part.returncode or proc.returncode:
        return check(False, f"row-split lookup: compile: {(part.stderr + proc.stderr)[-400:]}")
    table = rng.standard_normal((rows, 8)).astype(np.float32)
    idx = np.array([0, rows - 1, 3, -1, -rows, rows // 2], dtype=np.int64)
    np.save(os.path.join(work, "t.npy"), table)
    np.save(os.path.join(work, "i.npy"), idx)
    out = os.path.join(work, "lookup.out")
    proc = run(["mpirun", "--oversubscribe", "-np", str(n), exe,
                "--input", f"t={os.path.join(work, 't.npy')}",
                "--input", f"i={os.path.join(work, 'i.npy')}", "--output-dir", out],
               env=env, timeout=120)
    if proc.returncode:
        return check(False, f"row-split lookup: run: {proc.stderr[-400:]}")
    y = np.load(os.path.join(out, "y.npy"))
    masked = "oflow.shard_offset" in part.stdout
    check(masked and np.array_equal(y, table[idx]),
          f"mesh {args.mesh}: lookup in a row-split table (masked locally: "
          f"{masked}) equals one device")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    p.add_argument("--mesh", required=True)
    args = p.parse_args()
    sizes = [int(d) for d in args.mesh.split("x")]
    n = int(np.prod(sizes))
    work = tempfile.mkdtemp(prefix="oflow-boxing-")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
    one_axis = ["S(0)", "S(1)", "B", "P(sum)"]
    if len(sizes) == 1:
        pairs = [([a], [b]) for a, b in itertools.product(one_axis, one_axis)]
        pairs += [(["P(max)"], ["B"]), (["P(max)"], ["S(1)"])]
    else:  # a table of 2-D conversions, including both axes changing
        table = [("S(0) S(0)", "B S(0)"), ("S(0) S(0)", "S(0) B"),
                 ("P(sum) P(sum)", "B B"),
                 ("S(0) B", "B S(0)"), ("P(sum) S(1)", "S(0) S(1)"),
                 ("B B", "S(0) S(1)"), ("S(1) S(0)", "S(0) S(1)"),
                 ("S(0) S(1)", "S(1) S(0)"), ("P(sum) P(sum)", "S(0) S(1)"),
                 ("B P(sum)", "S(1) B"), ("S(0) S(0)", "S(1) S(1)")]
        pairs = [(a.split(), b.split()) for a, b in table]
    rng = np.random.default_rng(0)
    try:
        check_row_split_lookup(args, sizes, n, work, env, rng)
        for src, dst in pairs:
            if not (fits(src, sizes) and fits(dst, sizes)):
                continue  # 8x12 does not split that way on this mesh
            what = f"mesh {args.mesh}: [{', '.join(src)}] -> [{', '.join(dst)}]"
            tag = re.sub(r"[^A-Za-z0-9]+", "_", what)
            ir = os.path.join(work, tag + ".mlir")
            with open(ir, "w") as f:
                f.write(program(src, dst, len(sizes), args.mesh, n))
            exe = os.path.join(work, tag)
            base = [args.oflow_compile, ir, "--mode", "infer", "--target", "cpu",
                    "-O0", "--mesh", args.mesh]
            plan = run(base + ["--emit=plan", "-o", "-"])
            proc = run(base + ["-o", exe])
            if plan.returncode or proc.returncode:
                check(False, f"{what}: compile: {(plan.stderr + proc.stderr)[-400:]}")
                continue
            rows = [l for l in plan.stdout.splitlines() if l.startswith("collective ")]
            converts = src == dst or any(
                f"to=[{','.join(dst)}]" in l for l in rows)
            partial = any(e.startswith("P") for e in src)
            x = rng.standard_normal((n,) + SHAPE if partial else SHAPE).astype(np.float32)
            np.save(os.path.join(work, "x.npy"), x)
            out = os.path.join(work, tag + ".out")
            proc = run(["mpirun", "--oversubscribe", "-np", str(n), exe, "--input",
                        f"x={os.path.join(work, 'x.npy')}", "--output-dir", out],
                       env=env, timeout=120)
            if proc.returncode:
                check(False, f"{what}: run: {proc.stderr[-400:]}")
                continue
            y = np.load(os.path.join(out, "y.npy"))
            want = expected(src, x)
            ok = y.shape == want.shape and np.allclose(y, want, rtol=1e-6, atol=1e-6)
            check(ok and converts, f"{what}: {len(rows)} collectives, output "
                  f"{'equals' if ok else 'DIFFERS from'} one device"
                  f"{'' if converts else ' (plan shows no conversion to the target)'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(FAILURES)} failed" if FAILURES else "all passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
