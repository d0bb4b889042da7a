#!/usr/bin/python3
"""Imports every ONNX backend node-test model with oflow-compile.

Walks /usr/share/libonnx-testdata/data/node/*/model.onnx (932 models in the
Debian libonnx-testdata package), runs

    oflow-compile MODEL --emit=mlir -o /dev/null

on each, and classifies the result:

  imported     exit status 0
  unsupported  exit status 1 and stderr is exactly one line containing "error:"
               (a clean, one-line diagnostic)
  failure      anything else: a signal/abort/assertion, a timeout, an exit
               status other than 0 or 1, an empty or multi-line stderr

Exits non-zero iff there is a failure or the number of models is not the
expected one (932). Registered with ctest as `onnx-node-tests`.
"""

import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

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


def run_one(compiler, model, timeout):
    name = os.path.basename(os.path.dirname(model))
    start = time.monotonic()
    result = {"name": name, "model": model}
    try:
        proc = subprocess.run(
            [compiler, model, "--emit=mlir", "-o", os.devnull],
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
        result.update(cls="imported", reason="")
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
    ap.add_argument("--top", type=int, default=25,
                    help="how many unsupported reasons to summarize")
    args = ap.parse_args()

    compiler = os.path.abspath(args.oflow_compile)
    if not os.access(compiler, os.X_OK):
        print("error: %s is not an executable" % compiler, file=sys.stderr)
        return 2
    models = sorted(glob.glob(os.path.join(args.data_dir, "*", "model.onnx")))

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
    print("  %-12s %5d" % ("imported", counts["imported"]))
    print("  %-12s %5d" % ("unsupported", counts["unsupported"]))
    print("  %-12s %5d" % ("failures", counts["failure"]))
    print("  %-12s %5d%s" % ("total", total,
                             "" if total == args.expected_total
                             else "   (expected %d!)" % args.expected_total))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"compiler": compiler, "data_dir": args.data_dir,
                       "counts": {"imported": counts["imported"],
                                  "unsupported": counts["unsupported"],
                                  "failure": counts["failure"],
                                  "total": total},
                       "results": results}, f, indent=1)

    ok = not failures and total == args.expected_total
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
