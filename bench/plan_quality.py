#!/usr/bin/python3
"""Plan quality (issue #15): the automatic plan against hand-written ones.

For GPT models from examples/gpt-config/gen.py (GPT 1.5B: 48 layers, d 1600,
25 heads, T 1024; GPT 7B: 32 layers, d 4096, 32 heads, T 2048; vocabulary
50304; 4 sequences per device), bf16 GEMMs, AdamW with f32 state, on meshes
8, 8x4, 16x8 and 128x8 (the last axis a node's 8 GPUs on NVLink, the first
one across nodes on InfiniBand), with the H100 profile at a 76 GiB limit and
the H200 profile at 136 GiB, it runs `oflow-compile --emit=simulate` for

  * the automatic plan (`--memory-limit` alone: the planner picks sharding
    and recomputation),
  * each hand plan of bench/plans/*.json (flags, and `--sbp` hints written
    per mesh), without and with selective recomputation,

and prints one markdown row per (model, mesh, device): each plan's
predicted step, peak memory per device, collective bytes per device per
step and whether it fits, then whether the automatic plan fits and is within
2% of the best fitting hand plan. Hand plans are never search candidates.
It also checks each hand plan's state bytes against the closed forms for
oflow's f32 state (DP 12P, ZeRO-2 4P + 8P/N, ZeRO-3 12P/N: parameters and
both Adam moments; gradients live in the arena, among the activations; plus
the buffers, batch norm's running statistics, whole in every plan) and its
collective bytes against the ring formulas for the plan as it ran (see
`forms`: micro-batches, ZeRO-3's gathered weights kept or gathered again).
The hand plans DP, ZeRO-2 and ZeRO-3 run with --tensor-parallel none, so
that they are those algorithms exactly.

  bench/plan_quality.py [--models 1.5b 7b resnet50] [--meshes 8 8x4 16x8 128x8]
                        [--devices h100 h200] [--jobs 2] [--json OUT.json]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {
    "1.5b": dict(layers=48, d_model=1600, heads=25, seq=1024),
    "7b": dict(layers=32, d_model=4096, heads=32, seq=2048),
    # torchvision's ResNet-50 (bench/resnet50.py: the graph, no weights),
    # 224x224, 32 images per device: exported once, its batch set per mesh.
    "resnet50": dict(onnx=True, images=32, size=224),
}
VOCAB = 50304
SEQS_PER_DEVICE = 4
LIMITS = {"h100": "76GiB", "h200": "136GiB"}


def mesh_axes(mesh):
    return [int(x) for x in mesh.split("x")]


def mesh_flags(mesh):
    axes = mesh_axes(mesh)
    flags = ["--mesh", mesh]
    if len(axes) == 2:
        flags += ["--mesh-names", "node", "gpu", "--links", "ib", "nvlink"]
    else:
        flags += ["--links", "nvlink"]
    return flags


def hint_flags(plan, mesh):
    """`--sbp` hints of a plan file for this mesh: tensor-parallel layouts on
    the last axis (B on the others), data inputs split on the others (B on
    the last)."""
    hints = plan.get("hints", {})
    rank = len(mesh_axes(mesh))
    out = []
    for h in hints.get("tensor", []):
        name, layout = h.split("=")
        out += ["--sbp", "%s=%s" % (name, ",".join(["B"] * (rank - 1) + [layout]))]
    for name in hints.get("data", []):
        out += ["--sbp", "%s=%s" % (name, ",".join(["S(0)"] * (rank - 1) + ["B"]))]
    return out


def parse(text):
    r = {}
    # The train entry's total (with recomputation, its copies' time too).
    m = re.search(r"^simulate entry=train ops=.*$", text, re.M)
    if m:
        f = dict(kv.split("=", 1) for kv in m.group(0).split()[1:] if "=" in kv)
        r.update(compute_s=float(f["compute_seconds"]), collectives=int(f["collectives"]),
                 bytes=int(f["bytes_per_device"]), comm_s=float(f["comm_seconds"]),
                 step_s=float(f["step_seconds"]),
                 recompute_s=float(f.get("recompute_seconds", 0)))
    m = re.search(r"simulate memory peak_bytes_per_device=(\d+) state_bytes=(\d+) arena_bytes=(\d+)", text)
    if m:
        r.update(peak=int(m.group(1)), state=int(m.group(2)), arena=int(m.group(3)))
    m = re.search(r"memory_limit bytes=(\d+) fits=(\w+)", text)
    if m:
        r.update(limit=int(m.group(1)), fits=m.group(2) == "yes")
    m = re.search(r"memory_search tried=(\d+) chosen=(\S+)", text)
    if m:
        r.update(tries=int(m.group(1)), chosen=m.group(2))
    else:
        r["chosen"] = ""
    return r


def run(compiler, model, mesh, device, flags):
    cmd = ([compiler, model, "--target", "cuda", "--precision", "bf16", "--optimizer", "adamw",
            "--device", device, "--memory-limit", LIMITS[device], "--emit=simulate", "-q",
            "-o", "-"] + mesh_flags(mesh) + flags)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r = parse(p.stdout + p.stderr)
    if p.returncode:
        err = [l for l in p.stderr.splitlines() if "error" in l]
        r["error"] = (err[-1] if err else p.stderr.strip()[-300:])[:300]
        m = re.search(r"smallest per-device peak[^0-9]*([0-9.]+) ?(GiB|GB|MiB)", p.stderr)
        if m:
            r["fits"] = False
    return r


def resnet_for(work, cfg, devices):
    """ResNet-50's graph with a batch of `images` per device: exported once
    (at one device's batch), then the inputs' batch rewritten (the graph
    flattens before its classifier, so nothing else names the batch)."""
    import onnx
    base = os.path.join(work, "resnet50-base")
    if not os.path.exists(os.path.join(base, "resnet50.onnx")):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench/resnet50.py"), "export",
                        "--out", base, "--batch", str(cfg["images"]), "--size", str(cfg["size"])],
                       check=True, capture_output=True)
    model = onnx.load(os.path.join(base, "resnet50.onnx"), load_external_data=False)
    inputs = {i.name for i in model.graph.initializer}
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if value.name not in inputs and len(dims) and dims[0].dim_value == cfg["images"]:
            dims[0].dim_value = cfg["images"] * devices
    del model.graph.value_info[:]
    # Beside the export: its weights file is then in the model's folder.
    path = os.path.join(base, "resnet50-%d.onnx" % devices)
    onnx.save(model, path)
    return path


def params_of(cfg):
    if cfg.get("onnx"):
        return 25557032  # torchvision's ResNet-50, 1000 classes
    d, L = cfg["d_model"], cfg["layers"]
    return VOCAB * d + cfg["seq"] * d + L * (12 * d * d + 13 * d) + 2 * d


def buffer_bytes_of(cfg):
    """Bytes of the model's buffers (batch norm's running statistics), which
    every plan keeps whole, as FSDP does."""
    if cfg.get("onnx"):
        return 4 * 53120  # ResNet-50's running means and variances, f32
    return 0


def statistics_bytes_of(cfg):
    """Bytes of the batch statistics SyncBatchNorm reduces each step: per
    channel of every batch norm, four f64 sums (the forward pass's batch sum
    and centred sum of squares, two in the backward pass), whichever plan:
    every plan splits the batch over every device."""
    if cfg.get("onnx"):
        return 4 * 8 * 53120 // 2  # ResNet-50: 26,560 batch-norm channels
    return 0


def forms(name, P, N, buffers, chosen, statistics=0):
    """The closed forms of a hand plan as it ran (`chosen`: the search's
    micro-batches K and whether ZeRO-3 kept its gathered weights): state
    bytes per device (DP 12P, ZeRO-2 4P + 8P/N, ZeRO-3 12P/N, plus the
    buffers) and collective bytes per device per step, f = (N-1)/N of each
    f32 tensor per ring pass: DP one all-reduce, 2f x 4P, whatever K (the
    gradients summed over the micro-batches first); ZeRO-2 K reduce-scatters
    (each micro-batch's gradient scattered as it is made) and one all-gather
    of the updated parameters, (K + 1) f x 4P; ZeRO-3 per micro-batch an
    all-gather for the forward pass, another for the backward pass unless
    kept, and a reduce-scatter, K (2 or 3) f x 4P. On a mesh of two axes
    the hierarchical forms (reduce-scatter inside a node, the rest across
    nodes on 1/n of the bytes, all-gather inside) sum to the same totals
    with N all the devices. SyncBatchNorm's statistics (`statistics` bytes
    per micro-batch) are all-reduced on top, 2f each, in every plan."""
    m = re.search(r"micro_batches=(\d+)", chosen)
    K = int(m.group(1)) if m else 1
    f = (N - 1) / N
    stats = K * 2 * f * statistics
    if name == "DP":
        return 12 * P + buffers, 2 * f * 4 * P + stats
    if name == "ZeRO-2":
        return 4 * P + 8 * P / N + buffers, (K + 1) * f * 4 * P + stats
    passes = 2 if "keep_gathered" in chosen else 3
    return 12 * P / N + buffers, K * passes * f * 4 * P + stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compiler", default=os.path.join(ROOT, "build/bin/oflow-compile"))
    p.add_argument("--models", nargs="+", default=["1.5b", "7b"], choices=sorted(MODELS))
    p.add_argument("--meshes", nargs="+", default=["8", "8x4", "16x8", "128x8"])
    p.add_argument("--devices", nargs="+", default=["h100", "h200"], choices=sorted(LIMITS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--json", help="also write every result here (as they come)")
    p.add_argument("--from-json", help="print the tables of a (possibly partial) earlier --json")
    p.add_argument("--recompute-plans", nargs="+", default=["none", "selective"],
                   choices=["none", "selective"],
                   help="the hand plans' recomputation variants to run (a row where every "
                        "plan fits needs only `none`: recomputing costs time and nothing fits "
                        "that did not)")
    p.add_argument("--resume", action="store_true",
                   help="keep the results already in --json and run only the rest")
    a = p.parse_args()
    plans = []
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "plans", "*.json"))):
        with open(path) as f:
            plan = json.load(f)
        for recompute in a.recompute_plans:
            plans.append(dict(plan, key="%s%s" % (plan["name"], "" if recompute == "none" else " +rc"),
                              recompute=recompute))
    if a.from_json:
        with open(a.from_json) as f:
            results = {tuple(k.split()): v for k, v in json.load(f).items()}
        a.devices = sorted({row[2] for row in results})
        return report(a, plans, results)
    work = tempfile.mkdtemp(prefix="oflow-plan-quality-")
    jobs, results = [], {}
    if a.resume and a.json and os.path.exists(a.json):
        with open(a.json) as f:
            results = {tuple(k.split()): v for k, v in json.load(f).items()}
    for model in a.models:
        cfg = MODELS[model]
        for mesh in a.meshes:
            devices = 1
            for n in mesh_axes(mesh):
                devices *= n
            if cfg.get("onnx"):
                path = resnet_for(work, cfg, devices)
            else:
                path = os.path.join(work, "gpt%s-%s.mlir" % (model, mesh))
                subprocess.run([sys.executable, os.path.join(ROOT, "examples/gpt-config/gen.py"),
                                "--layers", str(cfg["layers"]), "--d-model", str(cfg["d_model"]),
                                "--heads", str(cfg["heads"]), "--vocab", str(VOCAB), "--seq", str(cfg["seq"]),
                                "--batch", str(SEQS_PER_DEVICE * devices), "-o", path], check=True)
            for device in a.devices:
                row = (model, mesh, device)
                done = results.get(row, {})
                if "step_s" not in done.get("auto", {}):
                    jobs.append((row, "auto", path, []))
                for plan in plans:
                    if "step_s" in done.get(plan["key"], {}):
                        continue
                    # Tensor-parallel hints name a GPT's weights.
                    if cfg.get("onnx") and plan.get("hints"):
                        continue
                    flags = plan["flags"] + ["--recompute", plan["recompute"]] + hint_flags(plan, mesh)
                    jobs.append((row, plan["key"], path, flags))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(run, a.compiler, path, row[1], row[2], flags): (row, key)
                   for row, key, path, flags in jobs}
        for i, fut in enumerate(concurrent.futures.as_completed(futures)):
            row, key = futures[fut]
            results.setdefault(row, {})[key] = fut.result()
            if a.json:  # as they come, so that a long run cut short keeps its rows
                with open(a.json, "w") as f:
                    json.dump({"%s %s %s" % r: v for r, v in results.items()}, f, indent=1)
            print("  [%d/%d] %s %s %s %s: %s" % (i + 1, len(jobs), *row, key,
                                              fut.result().get("error") or
                                              "%.1f ms" % (1e3 * fut.result().get("step_s", 0))),
                  file=sys.stderr, flush=True)

    if a.json:
        with open(a.json, "w") as f:
            json.dump({"%s %s %s" % row: v for row, v in results.items()}, f, indent=1)
    return report(a, plans, results)


def report(a, plans, results):
    keys = ["auto"] + [pl["key"] for pl in plans]
    print("## Plan quality: predicted step ms / peak GB per device / collective GB per device per step"
          " (x: does not fit)\n")
    print("| model | mesh | device, limit | " + " | ".join(keys) + " | automatic vs best fitting hand plan |")
    print("|---|---|---|" + "---|" * len(keys) + "---|")
    verdicts = []
    for row in sorted(results, key=lambda r: (r[0], mesh_axes(r[1])[0] * mesh_axes(r[1])[-1], r[1], r[2])):
        res = results[row]
        cells = []
        for k in keys:
            r = res.get(k, {})
            if "step_s" not in r:
                cells.append("error" if r.get("error") else "n/a")
                continue
            cell = "%.0f / %.1f / %.1f" % (1e3 * r["step_s"], r.get("peak", 0) / 1e9, r["bytes"] / 1e9)
            if not r.get("fits", True):
                cell += " x"
            micro = re.search(r"micro_batches=(\d+)", r.get("chosen", ""))
            if k == "auto" and r.get("chosen"):
                cell += " (%s)" % r["chosen"]
            elif micro:  # the search's last resort, not the hand plan itself
                cell += " (only with %s micro-batches)" % micro.group(1)
            cells.append(cell)

        def plain_fit(r):
            return ("step_s" in r and r.get("fits", True)
                    and "micro_batches" not in r.get("chosen", ""))
        hand = [(res[k]["step_s"], k) for k in keys[1:] if plain_fit(res.get(k, {}))]
        auto = res.get("auto", {})
        if not hand:
            verdict = "no hand plan fits" + ("; automatic fits" if auto.get("fits") else "")
        elif "step_s" not in auto or not auto.get("fits", True):
            verdict = "**automatic plan does not fit**"
        else:
            best, name = min(hand)
            ratio = auto["step_s"] / best
            verdict = "%+.1f%% vs %s%s" % (100 * (ratio - 1), name,
                                           "" if ratio <= 1.02 else " **(> 2%)**")
            verdicts.append(ratio)
        print("| %s | %s | %s %s | %s | %s |" % (row[0], row[1], row[2], LIMITS[row[2]],
                                                 " | ".join(cells), verdict))

    print("\n## Hand plans' state and collective bytes against the closed forms (P parameters, N devices)\n")
    print("| model | mesh | device | plan | as run | state GB | closed form GB | off | collective GB | formula GB | off |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for row in sorted(results, key=lambda r: (r[0], mesh_axes(r[1])[0] * mesh_axes(r[1])[-1], r[1])):
        model, mesh = row[0], row[1]
        P = params_of(MODELS[model])
        N = 1
        for n in mesh_axes(mesh):
            N *= n
        Bf = buffer_bytes_of(MODELS[model])
        for name in ("DP", "ZeRO-2", "ZeRO-3"):
            r = results[row].get(name, {})
            if "state" not in r:
                continue
            state, moved = forms(name, P, N, Bf, r.get("chosen", ""),
                                 statistics_bytes_of(MODELS[model]))
            print("| %s | %s | %s | %s | %s | %.2f | %.2f | %+.1f%% | %.2f | %.2f | %+.1f%% |" % (
                model, mesh, row[2], name, r.get("chosen") or "-", r["state"] / 1e9, state / 1e9,
                100 * (r["state"] / state - 1), r["bytes"] / 1e9, moved / 1e9,
                100 * (r["bytes"] / moved - 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
