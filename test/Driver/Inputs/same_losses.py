"""Checks that two training logs report the same losses, step by step.

usage: same_losses.py A.log B.log REL_TOL
"""
import re
import sys


def losses(path):
    with open(path) as f:
        return [float(m.group(1)) for m in re.finditer(r"loss (\S+)", f.read())]


a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not a or len(a) != len(b):
    sys.exit(f"different step counts: {len(a)} vs {len(b)}")
for step, (x, y) in enumerate(zip(a, b)):
    if abs(x - y) > tol * max(abs(x), abs(y)):
        sys.exit(f"step {step}: loss {x} vs {y}")
print(f"same losses over {len(a)} steps")
