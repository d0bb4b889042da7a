#!/usr/bin/env python3
"""--emit=plan-html renders in a browser (issue #15 item 9).

Compiles plan pages for the MLP on 2 devices, the GPT on 2x2 under a memory
limit (the limit's marker on the bars) and the MLP on 32 devices, opens
each in headless Chromium (Debian's `chromium`) and reads back the DOM after
the page's own script ran: every layer of the drawing must have laid out
with a non-empty box (SVG getBBox), and the edges, the edges carrying
collectives and the memory bars must be what the page says it drew. The
page must load nothing from the network.

  plan_html_render.py --oflow-compile build/bin/oflow-compile
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = [("mlp", "2", []), ("gpt", "2x2", ["--memory-limit", "4MiB"]), ("mlp", "32", [])]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--oflow-compile", required=True)
    args = p.parse_args()
    browser = shutil.which("chromium")
    if not browser:
        print("FAIL chromium not found (scripts/setup.sh installs Debian's chromium)")
        return 1
    failures = 0
    work = tempfile.mkdtemp(prefix="oflow-plan-html-")
    try:
        for model, mesh, extra in CASES:
            page = os.path.join(work, f"{model}-{mesh}.html")
            proc = subprocess.run([args.oflow_compile, f"examples/{model}/{model}.onnx",
                                   "--target", "cpu", "--mesh", mesh, "-q",
                                   "--emit=plan-html", "-o", page] + extra,
                                  cwd=ROOT, capture_output=True, text=True)
            what = f"{model} on {mesh}"
            if proc.returncode != 0:
                print(f"FAIL {what}: compile: {proc.stderr.strip()[-300:]}")
                failures += 1
                continue
            html = open(page).read()
            layers = int(re.search(r'data-layers="(\d+)"', html).group(1))
            collective_edges = int(re.search(r'data-collective-edges="(\d+)"', html).group(1))
            edges = html.count('<path class="edge')
            devices = 1
            for d in mesh.split("x"):
                devices *= int(d)
            bars = min(devices, 16)
            fetches = re.findall(r'\b(?:src|href)\s*=', html)
            dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                                  f"--user-data-dir={os.path.join(work, 'profile')}",
                                  "--dump-dom", "file://" + page],
                                 capture_output=True, text=True, timeout=120).stdout
            m = re.search(r'id="render-check">([^<]*)<', dom)
            got = m.group(1) if m else "no render-check in the DOM"
            want = (f"rendered {layers} of {layers} layers, {edges} edges, "
                    f"{collective_edges} with collectives, {bars} memory bars")
            limit_marker = '<span class="limit"' in html
            ok = (got == want and layers > 0 and collective_edges > 0 and not fetches
                  and limit_marker == bool(extra))
            print(("ok   " if ok else "FAIL ") + f"{what}: {got} (expected: {want}; "
                  f"network references: {len(fetches)}; limit marker: {limit_marker})")
            failures += not ok
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
