#!/usr/bin/env python3
"""Puts an imported module into oflow-autodiff's output form, structurally.

Marks every f32 weight whose name does not contain `--frozen` (default
"running_") `oflow.trainable` and adds one `oflow.gradient` per trained
weight before the return, using the weight's own value as its "gradient".
The numbers are meaningless; the shape of the IR is autodiff's contract, so
the train-step builder can be tested on real imported models without
depending on the autodiff pass. Reads stdin, writes stdout.
"""
import re
import sys

frozen = sys.argv[sys.argv.index("--frozen") + 1] if "--frozen" in sys.argv else "running_"
out, grads, seen = [], [], set()
weight = re.compile(r'^(\s*)(%\w+) = oflow\.weight "([^"]+)", (.*) : (tensor<[^>]*f32>)$')
for line in sys.stdin.read().split("\n"):
    m = weight.match(line)
    if m and frozen not in m.group(3):
        line += " {oflow.trainable}"
        if m.group(3) not in seen:
            seen.add(m.group(3))
            grads.append(f'{m.group(1)}oflow.gradient "{m.group(3)}", {m.group(2)} : {m.group(5)}')
    if line.strip().startswith("return"):
        out.extend(grads)
    out.append(line)
sys.stdout.write("\n".join(out))
