"""--emit=simulate's compute on a CUDA target against --emit=kernels-json for
the same plan: the train entry's compute_seconds and launches are the sum of
its launches but the collectives, and the step is that compute plus the
links' seconds."""
import json
import re
import sys

sim = open(sys.argv[1]).read()
m = re.search(r"^simulate entry=train ops=\d+ compute_model=kernels launches=(\d+) "
              r"compute_seconds=(\S+) .* comm_seconds=(\S+) step_seconds=(\S+)$", sim, re.M)
if not m:
    sys.exit("no kernel-model line for the train entry in " + sys.argv[1])
launches, compute, comm, step = int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))
report = json.load(open(sys.argv[2]))
train = [e for e in report["entries"] if e["entry"] == "oflow_train_step"]
if len(train) != 1:
    sys.exit("no oflow_train_step entry in " + sys.argv[2])
kept = [k for k in train[0]["launches"] if k["kind"] != "collective"]
expected = sum(k["predicted_s"] for k in kept)
nodes = sum(k["nodes"] for k in kept)
if len(kept) == len(train[0]["launches"]):
    sys.exit("the mesh-2 plan should have collectives among its launches")
problems = []
if abs(compute - expected) > 1e-5 * expected:
    problems.append(f"compute_seconds {compute} != kernels' {expected}")
if launches != nodes:
    problems.append(f"launches {launches} != kernels' {nodes}")
if abs(step - (compute + comm)) > 1e-5 * step:
    problems.append(f"step_seconds {step} != {compute} + {comm}")
if problems:
    sys.exit("; ".join(problems))
print(f"ok: {launches} launches, {compute:.6g} s")
