#!/usr/bin/python3
"""Runs every ONNX backend node test through oflow-compile's inference mode.

Walks /usr/share/libonnx-testdata/data/node/*/model.onnx (932 models in the
Debian libonnx-testdata package) and for each

    oflow-compile MODEL --mode infer --target cpu -o EXE
    EXE test_data_set_N/input_*.pb --output-dir OUT --output-format pb

then compares every output with the test's output_*.pb (rtol 1e-4, atol
1e-5; integers and booleans exactly). Classes:

  passed       compiled, and every data set's outputs match
  unsupported  exit status 1 with exactly one "error:" line on stderr (a clean
               diagnostic: an op, attribute or type oflow does not support)
  failure      anything else: wrong numbers, a signal/abort/assertion, a
               timeout, another exit status, an empty or multi-line stderr

Exits non-zero iff there is a failure, the number of models is not the
expected one (932), or a test in the committed list of expected passes
(onnx_node_tests.expected) does not pass. Registered with ctest as
`onnx-node-tests`.
"""

import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_DATA_DIR = "/usr/share/libonnx-testdata/data/node"
EXPECTED_TOTAL = 932
TIMEOUT_S = 60
MAX_STDERR_KEPT = 4000

# Diagnostics name nodes as "node 'NAME' (OpType, domain opset N)" or
# "node #INDEX (OpType, domain opset N)"; several issues are joined with "; ",
# and missing converters are listed as
# "unsupported ONNX op(s): node 'a' (Foo, ai.onnx opset 13), node #4 (...)".
OP_RE = re.compile(r"\(([A-Za-z_][\w.]*), ([\w.]*) opset (\w+)\)")
NODE_RE = re.compile(r"node (?:'(?:[^'\\]|\\.)*'|#\d+|\S+) " + OP_RE.pattern)
UNSUPPORTED_OPS_PREFIX = "unsupported ONNX op"
# "; "-joined clauses that continue the previous issue rather than start one.
CONTINUATIONS = ("oflow supports", "pass ", "convert ")


RTOL, ATOL = 1e-4, 1e-5

# Tests whose expected outputs follow ONNX's reference where oflow
# deliberately follows PyTorch (the correctness oracle for training). They are
# run and reported as deviations, not counted as failures.
KNOWN_DEVIATIONS = {
    "test_batchnorm_epsilon_training_mode":
        "running variance: oflow uses the unbiased batch variance (PyTorch), "
        "ONNX's reference the biased one",
    "test_batchnorm_example_training_mode":
        "running variance: oflow uses the unbiased batch variance (PyTorch), "
        "ONNX's reference the biased one",
}


def compare(expected, actual):
    """None when `actual` matches `expected`, else why not."""
    if actual.shape != expected.shape:
        return "shape %s, expected %s" % (actual.shape, expected.shape)
    if expected.dtype.kind in "fc":
        if not np.allclose(actual.astype(np.float64), expected.astype(np.float64),
                           rtol=RTOL, atol=ATOL, equal_nan=True):
            diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
            return "max abs diff %.3g" % np.nanmax(diff)
        return None
    if not np.array_equal(actual, expected):
        return "%d of %d elements differ" % (int(np.sum(actual != expected)), actual.size)
    return None


def run_data_sets(exe, model, workdir, timeout):
    """Runs `exe` on each test_data_set_*; None on success, else the failure."""
    graph = onnx.load(model, load_external_data=False).graph
    outputs = [o.name for o in graph.output]
    for data_set in sorted(glob.glob(os.path.join(os.path.dirname(model), "test_data_set_*"))):
        inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")),
                        key=lambda f: int(re.findall(r"\d+", os.path.basename(f))[0]))
        out = os.path.join(workdir, os.path.basename(data_set))
        proc = subprocess.run([exe] + inputs + ["--output-dir", out, "--output-format", "pb"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
        if proc.returncode != 0:
            return "the executable failed on %s: %s" % (
                os.path.basename(data_set),
                proc.stderr.decode("utf-8", "replace").strip()[-300:])
        for i, name in enumerate(outputs):
            expected_file = os.path.join(data_set, "output_%d.pb" % i)
            if not os.path.exists(expected_file):
                continue
            expected = numpy_helper.to_array(onnx.load_tensor(expected_file))
            escaped = "".join(c if (c.isalnum() and c.isascii()) or c in "._:-" else
                              "".join("%%%02X" % b for b in c.encode()) for c in name)
            got_file = os.path.join(out, escaped + ".pb")
            if not os.path.exists(got_file):
                return "no output %s" % name
            why = compare(expected, numpy_helper.to_array(onnx.load_tensor(got_file)))
            if why:
                return "%s output %s: %s" % (os.path.basename(data_set), name, why)
    return None


# --target: cpu, or cuda-emulated (the CUDA target's kernels as host loops).
TARGET = "cpu"


def run_one(compiler, model, timeout):
    name = os.path.basename(os.path.dirname(model))
    start = time.monotonic()
    result = {"name": name, "model": model}
    workdir = tempfile.mkdtemp(prefix="oflow-node-")
    try:
        return run_compiled(compiler, model, timeout, workdir, result, start)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_compiled(compiler, model, timeout, workdir, result, start):
    exe = os.path.join(workdir, "infer")
    try:
        proc = subprocess.run(
            [compiler, model, "--mode", "infer", "--target", TARGET, "-q", "-o", exe],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode("utf-8", "replace")
        result.update(
            cls="failure",
            returncode=None,
            reason="timeout after %d s" % timeout,
            stderr=stderr[-MAX_STDERR_KEPT:],
            seconds=round(time.monotonic() - start, 3),
        )
        return result
    except OSError as e:
        result.update(cls="failure", returncode=None,
                      reason="could not run: %s" % e, stderr="",
                      seconds=0.0)
        return result

    stderr = proc.stderr.decode("utf-8", "replace")
    rc = proc.returncode
    result.update(returncode=rc, stderr=stderr[-MAX_STDERR_KEPT:],
                  seconds=round(time.monotonic() - start, 3))
    lines = stderr.rstrip("\n").split("\n") if stderr.strip() else []
    if rc == 0:
        try:
            why = run_data_sets(exe, model, workdir, timeout)
        except subprocess.TimeoutExpired:
            why = "the executable timed out after %d s" % timeout
        cls = "failure" if why else "passed"
        if why and result["name"] in KNOWN_DEVIATIONS:
            cls, why = "deviation", "%s (%s)" % (KNOWN_DEVIATIONS[result["name"]], why)
        result.update(cls=cls, reason=why or "",
                      seconds=round(time.monotonic() - start, 3))
    elif rc < 0:
        try:
            signame = signal.Signals(-rc).name
        except ValueError:
            signame = "signal %d" % -rc
        result.update(cls="failure", reason="killed by %s" % signame)
    elif rc != 1:
        result.update(cls="failure", reason="exit status %d" % rc)
    elif not lines:
        result.update(cls="failure", reason="exit status 1 with empty stderr")
    elif len(lines) > 1:
        result.update(cls="failure",
                      reason="exit status 1 with %d-line stderr" % len(lines))
    elif "error:" not in lines[0]:
        result.update(cls="failure",
                      reason="exit status 1 without 'error:' in stderr")
    else:
        result.update(cls="unsupported", reason=lines[0])
    return result


def diagnostic_text(line, model):
    """The message of a one-line diagnostic, without the 'PATH: error: ' prefix."""
    idx = line.find("error:")
    msg = line[idx + len("error:"):].strip() if idx >= 0 else line.strip()
    return msg.replace(model, "<model>")


def normalize(text):
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\b\d+\b(?!-D)", "N", text)
    return text if len(text) <= 110 else text[:107] + "..."


def reason_keys(result):
    """Summary keys for an unsupported result, as (kind, key) pairs: kind "op"
    for each op type with no converter, kind "reason" for anything else
    ("OpType: why" for node diagnostics, else the normalized message)."""
    msg = diagnostic_text(result["reason"], result["model"])
    issues = []
    for part in msg.split("; "):
        # "oflow supports opsets 7 to 17 (...)" continues the opset message,
        # "pass --batch N or --shape ..." the dynamic-dimension one.
        if issues and part.startswith(CONTINUATIONS):
            continue
        issues.append(part)
    keys = []
    for issue in issues:
        if issue.startswith(UNSUPPORTED_OPS_PREFIX):
            ops = [m.group(1) for m in OP_RE.finditer(issue)]
            if ops:
                keys += [("op", op) for op in ops]
                continue
        m = NODE_RE.match(issue)
        if m and issue[m.end():].startswith(": "):
            keys.append(("reason", "%s: %s" % (m.group(1),
                                               normalize(issue[m.end() + 2:]))))
        else:
            keys.append(("reason", normalize(issue)))
    # Count each key once per model.
    return list(dict.fromkeys(keys))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oflow-compile", required=True, metavar="PATH",
                    help="the oflow-compile binary to test")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                    help="directory of node tests (default: %(default)s)")
    ap.add_argument("--expected-total", type=int, default=EXPECTED_TOTAL,
                    help="expected number of models (default: %(default)s)")
    ap.add_argument("--json", metavar="OUT", help="write per-model results here")
    ap.add_argument("--list", action="store_true",
                    help="print every model's class")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="parallel workers (default: %(default)s)")
    ap.add_argument("--timeout", type=int, default=TIMEOUT_S,
                    help="per-model timeout in seconds (default: %(default)s)")
    ap.add_argument("--expected-passes", metavar="FILE",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "onnx_node_tests.expected"),
                    help="tests that must pass (default: %(default)s)")
    ap.add_argument("--write-expected", metavar="FILE",
                    help="write the list of passing tests here")
    ap.add_argument("--only", metavar="REGEX", help="run only matching tests")
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda-emulated"],
                    help="code generation target (default: %(default)s)")
    ap.add_argument("--top", type=int, default=25,
                    help="how many unsupported reasons to summarize")
    args = ap.parse_args()
    global TARGET
    TARGET = args.target

    compiler = os.path.abspath(args.oflow_compile)
    if not os.access(compiler, os.X_OK):
        print("error: %s is not an executable" % compiler, file=sys.stderr)
        return 2
    models = sorted(glob.glob(os.path.join(args.data_dir, "*", "model.onnx")))
    if args.only:
        models = [m for m in models if re.search(args.only, m)]
        args.expected_total = len(models)
        args.expected_passes = None

    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_one, compiler, m, args.timeout) for m in models]
        for f in futures:
            results.append(f.result())
    elapsed = time.monotonic() - start

    counts = collections.Counter(r["cls"] for r in results)
    total = len(results)

    if args.list:
        for r in results:
            print("%-12s %s" % (r["cls"], r["name"]))
        print()

    tallies = {"op": collections.Counter(), "reason": collections.Counter()}
    examples = {}
    for r in results:
        if r["cls"] != "unsupported":
            continue
        for kind, key in reason_keys(r):
            tallies[kind][key] += 1
            examples.setdefault((kind, key), r["name"])
    for kind, title in (("op", "Unsupported ONNX op types (models naming them; example)"),
                        ("reason", "Other unsupported reasons (models; example)")):
        tally = tallies[kind]
        if not tally:
            continue
        print("%s:" % title)
        for key, n in tally.most_common(args.top):
            print("  %4d  %s  (%s)" % (n, key, examples[(kind, key)]))
        if len(tally) > args.top:
            rest = tally.most_common()[args.top:]
            print("        ... and %d more (%d models): %s" % (
                len(rest), sum(n for _, n in rest),
                ", ".join(k for k, _ in rest[:40]) + (", ..." if len(rest) > 40 else "")))
        print()

    failures = [r for r in results if r["cls"] == "failure"]
    if failures:
        print("FAILURES (%d):" % len(failures))
        for r in failures:
            print("--- %s: %s" % (r["name"], r["reason"]))
            print("    %s" % r["model"])
            text = r["stderr"].rstrip("\n")
            if text:
                for line in text.split("\n")[:40]:
                    print("    | " + line)
                if text.count("\n") >= 40:
                    print("    | ... (%d more lines)" % (text.count("\n") - 39))
        print()

    print("ONNX node tests: %s (%.1f s, %d workers)" % (args.data_dir, elapsed, args.jobs))
    print("  %-12s %5d" % ("passed", counts["passed"]))
    print("  %-12s %5d" % ("unsupported", counts["unsupported"]))
    print("  %-12s %5d" % ("deviations", counts["deviation"]))
    for r in results:
        if r["cls"] == "deviation":
            print("    %s: %s" % (r["name"], r["reason"]))
    print("  %-12s %5d" % ("failures", counts["failure"]))
    print("  %-12s %5d%s" % ("total", total,
                             "" if total == args.expected_total
                             else "   (expected %d!)" % args.expected_total))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"compiler": compiler, "data_dir": args.data_dir,
                       "counts": {"passed": counts["passed"],
                                  "unsupported": counts["unsupported"],
                                  "failure": counts["failure"],
                                  "total": total},
                       "results": results}, f, indent=1)

    passed = {r["name"] for r in results if r["cls"] == "passed"}
    missing = []
    if args.expected_passes and os.path.exists(args.expected_passes):
        with open(args.expected_passes) as f:
            listed = [l.strip() for l in f if l.strip() and not l.startswith("#")]
        missing = [n for n in listed if n not in passed]
        if missing:
            print("expected to pass but did not (%d): %s" % (len(missing), ", ".join(missing)))
        new = sorted(passed - set(listed))
        if new:
            print("passing but not in %s yet (%d): %s" % (
                os.path.basename(args.expected_passes), len(new), ", ".join(new)))
    if args.write_expected:
        with open(args.write_expected, "w") as f:
            f.write("# ONNX node tests that oflow's inference executables pass\n")
            f.write("# (test/onnx_node_tests.py --write-expected regenerates it).\n")
            for n in sorted(passed):
                f.write(n + "\n")

    ok = not failures and total == args.expected_total and not missing
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
