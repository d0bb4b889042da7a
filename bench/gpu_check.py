#!/usr/bin/env python3
"""The parts of the GPU check (issue #5); bench/gpu_check.sh runs each under `timeout`.

Every part writes one JSON result into the results folder (--res) and never
needs another part to have succeeded; `report` reads whatever is there and
prints the table. Subcommands:

  env          the device, driver, torch and bundle
  ldd          each executable's shared libraries with the bundle's LD_LIBRARY_PATH
  example NAME an example's oflow executable vs the CPU target's trajectory and vs
               torch (its own nn.Module, weights read from its ONNX initializers,
               same rows, AdamW, fp32 with TF32 off) on the same device
  gpt2-weights regenerate GPT-2 small's initial weights (examples/gpt2s/weights.py)
               into a complete ONNX file (graph from the bundle, data written here)
  gpt2-oflow   time the oflow GPT-2 executable (--weights the regenerated file)
  gpt2-torch   time torch on the same model, batch, data and weights:
               --modes eager-fp32,eager-tf32,eager-bf16,compile-tf32,compile-bf16
  gpt2-profile a few oflow GPT-2 steps with OFLOW_CUDA_PROFILE=1 (graphs off): GPU time
               per kernel and GEMM, joined with the bundle's `--emit=kernels-json`
               predictions (h200 profile) kernel by kernel
  calibrate    HBM bandwidth (copy and read) and GEMM rates per precision over the
               GEMM shapes of the bundle's GPT-2 report, written as a device profile
               (`--device FILE.json`); the built-in h200 profile is never edited
  report       the markdown table (stdout, and --md FILE)

Device: `--device cuda` on the GPU machine, `--device cpu` for the dry run.
Only the standard library is needed by `ldd` and `report` (so the table is
printed even where torch or numpy is broken).
"""
import argparse
import collections
import glob
import importlib.util
import json
import math
import re
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Peak dense rates of one H200 SXM (the H100 SXM's, per NVIDIA's datasheet),
# used as the MFU denominators. Measured on this workplace's H200: a bf16
# 8192^3 GEMM ran at ~790 TFLOP/s (so 80% of this peak is the practical ceiling).
PEAK_FLOPS = {
    "bf16": 989.4e12,   # tensor cores, bf16 inputs, fp32 accumulate, dense
    "tf32": 494.7e12,   # tensor cores, tf32 (fp32 storage), dense
    "fp32": 66.9e12,    # CUDA cores, plain fp32 FMA (TF32 disabled)
}
LOSS_RTOL_GOAL = 1e-3
MFU_GOAL = 0.40


# ----------------------------------------------------------------------------- helpers

def load_bundle(path):
    with open(os.path.join(path, "bundle.json")) as f:
        return json.load(f)


def write_result(res_dir, name, obj):
    os.makedirs(res_dir, exist_ok=True)
    tmp = os.path.join(res_dir, name + ".json.tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, os.path.join(res_dir, name + ".json"))


def read_result(res_dir, name):
    try:
        with open(os.path.join(res_dir, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_jsonl(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    break  # a line cut short by a killed run
    return [r for r in out if "loss" in r]


def step_times(elapsed, warmup):
    """Per-step seconds from the cumulative `elapsed_s` of each step's record."""
    d = [b - a for a, b in zip(elapsed, elapsed[1:])]
    # d[i] is step i+1's time; keep steps >= warmup.
    return d[max(warmup - 1, 0):]


def max_rel(a, b):
    if not a or not b:
        return None
    n = min(len(a), len(b))
    worst = 0.0
    for x, y in zip(a[:n], b[:n]):
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            return float("inf")
        worst = max(worst, abs(x - y) / max(abs(y), 1e-30))
    return worst


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def exe_env():
    """The environment of the oflow executables: the bundle's library path first."""
    env = dict(os.environ)
    path = os.environ.get("GPU_CHECK_LD_LIBRARY_PATH")
    if path:
        env["LD_LIBRARY_PATH"] = path
    return env


def run_oflow(exe, args, log, timeout):
    """Run an oflow executable; return (records, error)."""
    if not os.path.exists(exe):
        return None, "not in the bundle"
    # gpu_check.sh may have cut this part's `timeout` to the budget left: stop the
    # executable ourselves a little earlier, so that it is not left running.
    outer = int(os.environ.get("GPU_CHECK_PART_TIMEOUT", "0") or 0)
    if outer > 0:
        timeout = max(1, min(timeout, outer - 5))
    if os.path.exists(log):
        os.remove(log)
    try:
        p = subprocess.run([exe] + args + ["--log-json", log], capture_output=True, text=True,
                           timeout=timeout, env=exe_env())
    except subprocess.TimeoutExpired:
        # The steps finished so far are in the log (one flushed line each).
        done = read_jsonl(log) if os.path.exists(log) else []
        return done, "timed out after %ds (%d steps done)" % (timeout, len(done))
    if p.returncode != 0:
        msg = last_line(p.stderr) or last_line(p.stdout)
        if "error while loading shared libraries" in (p.stderr or ""):
            msg = "missing library: " + msg
        return None, "exit %d: %s" % (p.returncode, msg)
    return read_jsonl(log), None


def device_bytes(records):
    vals = [r["device_bytes"] for r in records if isinstance(r.get("device_bytes"), (int, float))]
    return max(vals) if vals else None


def import_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # torch.compile re-imports the module of a traced class
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- torch side

def torch_setup(device, precision):
    import torch
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("torch %s sees no CUDA device" % torch.__version__)
    if device == "cuda":
        tf32 = precision in ("tf32", "bf16")
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
    return torch


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def make_adamw(torch, params, lr, wd, device):
    kw = {}
    if device == "cuda":
        kw["fused"] = True
    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd, **kw)
    except (TypeError, RuntimeError):
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)


def onnx_initializers(path):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    return [(i.name, numpy_helper.to_array(i)) for i in model.graph.initializer]


def train_torch(torch, model, data, batch, steps, lr, wd, device, bf16=False, compile_=False,
                optimizer="adamw"):
    """Train `model` for `steps` steps (rows (k*B+i) mod N) with AdamW or plain SGD
    (`optimizer`); return losses, step seconds, peak bytes."""
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model = model.to(device)
    model.train()
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=lr)
    else:
        opt = make_adamw(torch, model.parameters(), lr, wd, device)
    fwd = torch.compile(model) if compile_ else model
    tensors = [torch.from_numpy(d).to(device) for d in data]
    n = len(data[0])
    losses, times = [], []
    for k in range(steps):
        rows = torch.tensor([(k * batch + i) % n for i in range(batch)], device=device)
        sync(torch, device)
        t = time.perf_counter()
        args = [x.index_select(0, rows) for x in tensors]
        opt.zero_grad(set_to_none=True)
        if bf16:
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                loss = fwd(*args)
        else:
            loss = fwd(*args)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach().float().item()))
        sync(torch, device)
        times.append(time.perf_counter() - t)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else None
    return losses, times, peak


def run_torch_modes(a, prefix, extra, train):
    """For each of a.modes ("eager-fp32", "compile-bf16", ...): `train(kind,
    precision)` -> (losses, step seconds, peak bytes), written as the result
    `prefix + mode` with `extra`; an error is that mode's, not the part's
    end. Returns 1 when a mode failed."""
    import torch
    failed = 0
    for mode in a.modes.split(","):
        kind, precision = mode.split("-")
        name = prefix + mode
        res = dict(extra, impl="torch.compile" if kind == "compile" else "torch eager",
                   mode=mode, precision=precision, device=a.device, steps=a.steps,
                   warmup=a.warmup, torch=torch.__version__)
        if kind == "compile" and not hasattr(torch, "compile"):
            res["unsupported"] = "torch %s has no torch.compile" % torch.__version__
            print("  %s: n/a (%s)" % (mode, res["unsupported"]))
            write_result(a.res, name, res)
            continue
        try:
            torch_setup(a.device, precision)
            t = time.time()
            losses, times, peak = train(kind, precision)
            res.update(losses=losses, step_times_s=times[a.warmup:], first_step_s=times[0],
                       device_bytes=peak, wall_s=time.time() - t)
            print("  %s: losses %s" % (mode, " ".join("%.4f" % x for x in losses)))
            print("  %s: step times (ms) %s" % (mode, " ".join("%.1f" % (1e3 * x) for x in times)))
        except Exception as e:
            res["error"] = "%s: %s" % (e.__class__.__name__, last_line(str(e)))
            print("  %s: %s" % (mode, res["error"]))
            failed = 1
        write_result(a.res, name, res)
        if a.device == "cuda":
            torch.cuda.empty_cache()
    return failed


# ----------------------------------------------------------------------------- parts

def cmd_env(a):
    info = {"host": platform.node(), "python": sys.version.split()[0], "device": a.device}
    try:
        b = load_bundle(a.bundle)
        info["bundle"] = {k: b.get(k) for k in ("target", "cpu_dry_run", "gpt2_config", "commit",
                                                "dirty", "built")}
    except OSError as e:
        info["bundle_error"] = str(e)
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,"
                            "clocks.max.sm", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        info["nvidia_smi"] = p.stdout.strip() or last_line(p.stderr)
    except (OSError, subprocess.TimeoutExpired) as e:
        info["nvidia_smi"] = "unavailable (%s)" % e.__class__.__name__
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_cuda"] = getattr(torch.version, "cuda", None)
        if a.device == "cuda" and torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["sm"] = "%d.%d" % torch.cuda.get_device_capability(0)
        info["torch_compile"] = hasattr(torch, "compile")
        import numpy
        info["numpy"] = numpy.__version__
        import onnx
        info["onnx"] = onnx.__version__
    except Exception as e:  # report whatever was found
        info["import_error"] = "%s: %s" % (e.__class__.__name__, e)
    info["ld_library_path"] = os.environ.get("GPU_CHECK_LD_LIBRARY_PATH", "")
    write_result(a.res, "env", info)
    for k, v in info.items():
        print("  %s: %s" % (k, v))


def cmd_ldd(a):
    b = load_bundle(a.bundle)
    exes = sorted(glob.glob(os.path.join(a.bundle, "bin", "*")))
    out = {}
    for exe in exes:
        name = os.path.basename(exe)
        try:
            p = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=30,
                               env=exe_env())
            lines = (p.stdout + p.stderr).splitlines()
            missing = sorted({l.strip().split()[0] if "=>" in l else l.strip()[:160]
                              for l in lines if "not found" in l})
            libdir = os.path.abspath(os.environ.get("GPU_CHECK_LIBDIR", os.path.join(a.bundle, "lib")))
            from_bundle = sorted({l.split()[0] for l in lines
                                  if "=>" in l and l.split("=>")[1].split()[0].startswith(libdir + "/")})
            cuda = sorted({l.split()[0] for l in lines
                           if any(s in l for s in ("libcu", "libnccl", "libnv"))})
            out[name] = {"missing": missing, "from_bundle": from_bundle, "cuda": cuda,
                         "rc": p.returncode, "error": last_line(p.stderr) if p.returncode else ""}
        except (OSError, subprocess.TimeoutExpired) as e:
            out[name] = {"missing": [], "error": str(e)}
        status = "MISSING " + ", ".join(out[name]["missing"]) if out[name].get("missing") else "ok"
        print("  %-12s %s  (CUDA libs: %s)" % (name, status, ", ".join(out[name].get("cuda", [])) or "none"))
    write_result(a.res, "ldd", {"executables": out, "target": b.get("target")})
    missing = sorted(n for n, r in out.items() if r.get("missing") or r.get("error"))
    if missing:
        print("  FAILED: unresolved libraries in " + ", ".join(missing))
    return 1 if missing else 0


def cmd_example(a):
    b = load_bundle(a.bundle)
    ex = b["examples"][a.name]
    res = {"name": a.name, "device": a.device, "steps": ex["steps"], "optimizer": ex["optimizer"],
           "lr": ex["lr"]}
    ref = read_jsonl(os.path.join(a.bundle, ex["reference"]))
    res["cpu_losses"] = [r["loss"] for r in ref]
    args = ["--steps", str(ex["steps"])]
    for name, path in ex["data"].items():
        args += ["--data", "%s=%s" % (name, os.path.join(ROOT, path))]
    t = time.time()
    recs, err = run_oflow(os.path.join(a.bundle, ex["exe"]), args,
                          os.path.join(a.res, "example-%s.oflow.jsonl" % a.name), a.timeout)
    res["oflow_wall_s"] = time.time() - t
    if err:
        res["oflow_error"] = err
    else:
        res["oflow_losses"] = [r["loss"] for r in recs]
        res["oflow_step_s"] = statistics.median(step_times([r["elapsed_s"] for r in recs], 3))
        res["oflow_device_bytes"] = device_bytes(recs)
        res["rel_vs_cpu"] = max_rel(res["oflow_losses"], res["cpu_losses"])
    print("  oflow: %s" % (err or "losses %.5f -> %.5f" % (res["oflow_losses"][0], res["oflow_losses"][-1])))
    if not err:
        # The same run with every kernel launched from the host (issue #14
        # item 3): the step time a CUDA graph saves, and the same losses.
        res["oflow_graph_replays"] = recs[-1].get("cuda_graph_replays")
        recs, err2 = run_oflow(os.path.join(a.bundle, ex["exe"]), args + ["--no-cuda-graph"],
                               os.path.join(a.res, "example-%s.nograph.jsonl" % a.name), a.timeout)
        if err2:
            res["oflow_nograph_error"] = err2
        else:
            res["oflow_nograph_step_s"] = statistics.median(
                step_times([r["elapsed_s"] for r in recs], 3))
            res["graph_vs_nograph"] = max_rel([r["loss"] for r in recs], res["oflow_losses"])
        print("  oflow --no-cuda-graph: %s" % (err2 or "%.3f ms/step (graph %.3f), losses within %s" % (
            1e3 * res["oflow_nograph_step_s"], 1e3 * res["oflow_step_s"],
            fmt_rel(res["graph_vs_nograph"]))))
    write_result(a.res, "example-" + a.name, res)   # partial result, in case torch fails

    try:
        torch = torch_setup(a.device, "fp32")
        import numpy as np
        m = import_path("oflow_example_" + a.name, os.path.join(ROOT, "examples", a.name, "model.py"))
        model = m.make_model()
        inits = dict(onnx_initializers(os.path.join(ROOT, "examples", a.name, a.name + ".onnx")))
        state = model.state_dict()
        with torch.no_grad():
            for k, v in inits.items():
                state[k].copy_(torch.from_numpy(np.array(v)))
        params = {k for k, _ in model.named_parameters()}
        assert params <= set(inits), "parameters missing from the ONNX: %s" % (params - set(inits))
        data = [np.load(os.path.join(ROOT, p)) for p in ex["data"].values()]
        losses, times, peak = train_torch(torch, model, data, m.BATCH, ex["steps"], ex["lr"],
                                          ex["weight_decay"], a.device)
        res["torch_losses"] = losses
        res["torch_step_s"] = statistics.median(times[3:] or times)
        res["torch_peak_bytes"] = peak
        res["torch_rel_vs_cpu"] = max_rel(losses, res["cpu_losses"])
        if "oflow_losses" in res:
            res["rel_vs_torch"] = max_rel(res["oflow_losses"], losses)
        print("  torch: losses %.5f -> %.5f" % (losses[0], losses[-1]))
    except Exception as e:
        res["torch_error"] = "%s: %s" % (e.__class__.__name__, str(e)[:300])
        print("  torch: " + res["torch_error"])
    write_result(a.res, "example-" + a.name, res)
    errors = ["%s: %s" % (k.split("_")[0], res[k]) for k in ("oflow_error", "torch_error") if k in res]
    if errors:
        print("  FAILED: " + "; ".join(errors))
    return 1 if errors else 0


def gpt2_config(bundle):
    with open(os.path.join(bundle, "gpt2s", "config.json")) as f:
        return json.load(f)


def cmd_gpt2_weights(a):
    import numpy as np  # noqa: F401
    import onnx
    from onnx import numpy_helper
    W = import_path("gpt2s_weights", os.path.join(ROOT, "examples", "gpt2s", "weights.py"))
    cfg = gpt2_config(a.bundle)
    t = time.time()
    model = onnx.load(os.path.join(a.bundle, "gpt2s", "gpt2s.onnx"), load_external_data=False)
    index = {init.name: i for i, init in enumerate(model.graph.initializer)}
    count = 0
    for name, arr in W.initial_weights(W.CONFIGS[cfg["name"]], cfg["weight_seed"]):
        i = index[name]
        old = model.graph.initializer[i]
        assert list(old.dims) == list(arr.shape), (name, list(old.dims), arr.shape)
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(arr, name))
        count += 1
    assert count == len(index), "the graph has initializers the generator does not make"
    os.makedirs(a.dest, exist_ok=True)
    path = os.path.join(a.dest, "gpt2s.onnx")
    data = "gpt2s.onnx.data"
    if os.path.exists(os.path.join(a.dest, data)):
        os.remove(os.path.join(a.dest, data))
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=0)
    res = {"path": path, "initializers": count, "seconds": time.time() - t,
           "bytes": os.path.getsize(os.path.join(a.dest, data))}
    print("  %d initializers, %.1f MB, %.1f s -> %s" % (count, res["bytes"] / 1e6, res["seconds"], path))
    write_result(a.res, "gpt2-weights", res)


def cmd_gpt2_oflow(a):
    b = load_bundle(a.bundle)
    g = b["gpt2s"]
    cfg = gpt2_config(a.bundle)
    res = {"impl": "oflow", "precision": a.precision, "device": a.device, "steps": a.steps,
           "warmup": a.warmup, "tokens_per_step": cfg["batch"] * cfg["block"]}
    args = ["--steps", str(a.steps), "--weights", a.weights]
    if a.precision == "tf32":  # the fp32 executable, its GEMMs on TF32 tensor cores
        args.append("--allow-tf32")
    for name, path in g["data"].items():
        args += ["--data", "%s=%s" % (name, os.path.join(a.bundle, path))]
    t = time.time()
    label = a.name or a.precision  # e.g. bf16-unfused: another executable, same precision
    recs, err = run_oflow(os.path.join(a.bundle, a.exe), args,
                          os.path.join(a.res, "gpt2-oflow-%s.jsonl" % label), a.timeout)
    res["wall_s"] = time.time() - t
    if err:
        res["error"] = err
        print("  " + err)
    if recs:  # complete, or the steps a timed-out run finished
        res["losses"] = [r["loss"] for r in recs]
        el = [r["elapsed_s"] for r in recs]
        res["first_step_s"] = el[0] if el else None
        res["step_times_s"] = (step_times(el, a.warmup) or step_times(el, 1)
                               or el[:1])
        res["device_bytes"] = device_bytes(recs)
        print("  losses %s" % " ".join("%.4f" % x for x in res["losses"]))
        print("  step times (ms) %s" % " ".join("%.1f" % (1e3 * x) for x in res["step_times_s"]))
    write_result(a.res, "gpt2-oflow-" + label, res)
    return 1 if err else 0


# ----------------------------------------------------------------------------- ResNet-50 (#17)

def resnet50_module():
    return import_path("oflow_resnet50", os.path.join(ROOT, "bench", "resnet50.py"))


def cmd_resnet50_weights(a):
    b = load_bundle(a.bundle)
    r = b.get("resnet50")
    if not r:
        write_result(a.res, "resnet50-weights", {"error": "not in the bundle"})
        print("  not in the bundle")
        return 1
    R = resnet50_module()
    t = time.time()
    count, size = R.regenerate(os.path.join(a.bundle, r["graph"]), a.dest, r["batch"], r["size"],
                               rows=2 * r["batch"], seed=r["seed"])
    res = {"initializers": count, "bytes": size, "seconds": time.time() - t}
    print("  %d initializers, %.1f MB, %.1f s -> %s" % (count, size / 1e6, res["seconds"], a.dest))
    write_result(a.res, "resnet50-weights", res)
    return 0


def cmd_resnet50_oflow(a):
    b = load_bundle(a.bundle)
    r = b.get("resnet50") or {}
    res = {"impl": "oflow", "precision": a.precision, "steps": a.steps, "warmup": a.warmup,
           "images_per_step": r.get("batch")}
    args = ["--steps", str(a.steps), "--weights", os.path.join(a.dest, "resnet50.onnx"),
            "--data", "x=" + os.path.join(a.dest, "x.npy"),
            "--data", "y=" + os.path.join(a.dest, "y.npy")]
    t = time.time()
    recs, err = run_oflow(os.path.join(a.bundle, a.exe), args,
                          os.path.join(a.res, "resnet50-oflow-%s.jsonl" % a.precision), a.timeout)
    res["wall_s"] = time.time() - t
    if err:
        res["error"] = err
        print("  " + err)
    if recs:
        res["losses"] = [x["loss"] for x in recs]
        el = [x["elapsed_s"] for x in recs]
        res["first_step_s"] = el[0] if el else None
        res["step_times_s"] = step_times(el, a.warmup) or step_times(el, 1) or el[:1]
        res["device_bytes"] = device_bytes(recs)
        print("  losses %s" % " ".join("%.4f" % x for x in res["losses"]))
        print("  step times (ms) %s" % " ".join("%.1f" % (1e3 * x) for x in res["step_times_s"]))
    write_result(a.res, "resnet50-oflow-" + a.precision, res)
    return 1 if err else 0


def cmd_resnet50_torch(a):
    import numpy as np
    r = load_bundle(a.bundle).get("resnet50") or {}
    R = resnet50_module()
    import torch
    data = [np.load(os.path.join(a.dest, n)) for n in ("x.npy", "y.npy")]

    def train(kind, precision):
        model = R.torch_model(os.path.join(a.dest, "resnet50.onnx"))
        return train_torch(torch, model, data, r["batch"], a.steps, r["lr"], 0.0, a.device,
                           bf16=precision == "bf16", compile_=kind == "compile",
                           optimizer=r["optimizer"])
    return run_torch_modes(a, "resnet50-torch-", {"images_per_step": r.get("batch")}, train)


def resnet50_report(res, b, part_status):
    """The ResNet-50 rows (issue #17: oflow at least as fast as torch eager)."""
    r = b.get("resnet50")
    if not r:
        return ["### ResNet-50: not in the bundle", ""]
    L = ["### ResNet-50 (torchvision, %dx%d, batch %d, 1000 classes; %s lr %g)" % (
        r["size"], r["size"], r["batch"], r["optimizer"], r["lr"]), ""]
    w = read_result(res, "resnet50-weights")
    L.append("Weights and images regenerated from the seed: %s." % (
        "%d initializers in %.1f s" % (w["initializers"], w["seconds"]) if w and "seconds" in w
        else status_of(part_status, "resnet50-weights", w)))
    L.append("")
    L.append("| implementation | precision | status | step (ms, median) | images/s | peak device memory (GiB) | step 0 (s) | loss first → last | max rel Δ loss vs torch eager, same precision |")
    L.append("|---|---|---|---:|---:|---:|---:|---|---:|")
    times = {}
    for prec in ("fp32", "bf16"):
        for impl, name in (("oflow", "resnet50-oflow-" + prec), ("torch eager", "resnet50-torch-eager-" + prec)):
            x = read_result(res, name)
            st = status_of(part_status, name, x, group="resnet50-torch" if impl != "oflow" else None)
            x = x or {}
            losses = x.get("losses") or []
            if x.get("step_times_s"):
                step = statistics.median(x["step_times_s"])
                times[name] = step
                ref = read_result(res, "resnet50-torch-eager-" + prec) or {}
                rel = max_rel(losses, ref.get("losses")) if impl == "oflow" else None
                L.append("| %s | %s | %s | %.1f | %.0f | %s | %.2f | %s | %s |" % (
                    impl, prec + (" (TF32 off)" if prec == "fp32" else ""), st, 1e3 * step,
                    r["batch"] / step, fmt_bytes(x.get("device_bytes")), x.get("first_step_s") or 0.0,
                    "%.4f → %.4f" % (losses[0], losses[-1]) if losses else "n/a", fmt_rel(rel)))
            else:
                L.append("| %s | %s | %s | n/a | n/a | n/a | n/a | n/a | n/a |" % (impl, prec, st))
    L.append("")
    for prec in ("fp32", "bf16"):
        mine, theirs = times.get("resnet50-oflow-" + prec), times.get("resnet50-torch-eager-" + prec)
        L.append("- ResNet-50 %s: oflow at least as fast as torch eager: %s" % (
            prec, "n/a (missing a side)" if not (mine and theirs) else
            "%s (%.1f vs %.1f ms)" % ("yes" if mine <= theirs else "NO", 1e3 * mine, 1e3 * theirs)))
    L.append("")
    return L


PROFILE_ROW = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+(\S.*)$")
GEMM_LABEL = re.compile(r"^gemm(?: (\w+))? [NT]{2} (\d+)x(\d+)x(\d+)(?: x(\d+))?$")
GEMM_STRATEGY = re.compile(r"^(\w+) (?:(\d+)x )?(\d+)x(\d+)x(\d+)")


def parse_profile(text):
    """The last table OFLOW_CUDA_PROFILE printed (at exit, or the latest partial
    one): (its header line, {label: (total ms, calls)})."""
    blocks = (text or "").split("oflow cuda profile (")
    if len(blocks) < 2:
        return None, {}
    lines = blocks[-1].splitlines()
    rows = {}
    for line in lines[1:]:
        m = PROFILE_ROW.match(line)
        if m:
            rows[m.group(5).strip()] = (float(m.group(1)), int(m.group(3)))
    return "oflow cuda profile (" + lines[0], rows


def launch_key(launch):
    """A report line's key: a generated kernel by name, a GEMM by precision and shape."""
    if launch.get("strategy", "").startswith("attention "):
        # The fused attention's calls: the report's strategy is the profile's label.
        return ("attention", launch["strategy"])
    if launch.get("kind") == "gemm":
        m = GEMM_STRATEGY.match(launch.get("strategy", ""))
        if not m:
            return None
        prec, batch, mm, nn, kk = m.groups()
        return ("gemm", prec, int(mm), int(nn), int(kk), int(batch or 1))
    return ("kernel", launch.get("name"))


def label_key(label):
    """A profile label's key (see launch_key)."""
    if label.startswith("attention "):
        return ("attention", label)
    m = GEMM_LABEL.match(label)
    if m:
        prec, mm, nn, kk, batch = m.groups()
        return ("gemm", prec or "fp32", int(mm), int(nn), int(kk), int(batch or 1))
    return ("kernel", label.split(" <<<")[0])


def kernels_vs_profile(report, rows, steps, entry="oflow_train_step"):
    """Per key: predicted seconds per step (the report's lines summed, launch
    overhead included) against measured GPU seconds per step. Returns
    (rows sorted by measured time, totals)."""
    ent = next((e for e in report.get("entries", []) if e.get("entry") == entry), None)
    if ent is None:
        return [], {"error": "no entry %s in the report" % entry}
    pred = {}
    for launch in ent.get("launches", []):
        key = launch_key(launch)
        if key is None:
            continue
        p = pred.setdefault(key, {"predicted_s": 0.0, "count": 0, "strategy": launch.get("strategy"),
                                  "bound": launch.get("bound"), "origins": launch.get("origins", ""),
                                  "hbm_bytes": 0})
        p["predicted_s"] += launch.get("predicted_s", 0.0)
        p["hbm_bytes"] += launch.get("hbm_bytes", 0)
        p["count"] += 1
    meas = {}
    for label, (ms, calls) in rows.items():
        key = label_key(label)
        m = meas.setdefault(key, {"measured_s": 0.0, "calls": 0, "label": label})
        m["measured_s"] += ms / 1e3 / max(steps, 1)
        m["calls"] += calls
    out = []
    for key in set(pred) | set(meas):
        p, m = pred.get(key, {}), meas.get(key, {})
        name = key[1] if key[0] in ("kernel", "attention") else "gemm %s %dx%dx%d%s" % (
            key[1], key[2], key[3], key[4], " x%d" % key[5] if key[5] > 1 else "")
        ps, ms_ = p.get("predicted_s"), m.get("measured_s")
        ratio = ms_ / ps if ps and ms_ is not None else None
        out.append({"name": name, "strategy": p.get("strategy"), "bound": p.get("bound"),
                    "origins": p.get("origins"), "launches": p.get("count"),
                    "hbm_bytes": p.get("hbm_bytes"),
                    "predicted_s": ps, "measured_s": ms_, "ratio": ratio,
                    "off_2x": ratio is not None and (ratio > 2 or ratio < 0.5)})
    out.sort(key=lambda r: -(r["measured_s"] or 0))
    matched = [r for r in out if r["ratio"] is not None]
    # The profiled run launches one by one (no graph): each launch costs the
    # profile's launch_s instead of graph_launch_s.
    dev = report.get("device", {})
    extra = (dev.get("launch_s", 0) - dev.get("graph_launch_s", 0)) if ent.get("cuda_graph") else 0
    totals = {
        "predicted_s": ent.get("predicted_s"),
        "predicted_no_graph_s": (ent.get("predicted_s") or 0) + extra * len(ent.get("launches", [])),
        "measured_s": sum(r["measured_s"] or 0 for r in out),
        "matched": len(matched), "unmatched_predicted": sum(1 for r in out if r["measured_s"] is None),
        "unmatched_measured": sum(1 for r in out if r["predicted_s"] is None),
        "off_2x": sum(1 for r in matched if r["off_2x"]),
        "off_2x_measured_s": sum(r["measured_s"] for r in matched if r["off_2x"]),
    }
    return out, totals


def cmd_gpt2_profile(a):
    """A few GPT-2 steps with OFLOW_CUDA_PROFILE=1: GPU time per kernel and GEMM."""
    b = load_bundle(a.bundle)
    g = b["gpt2s"]
    exe = os.path.join(a.bundle, a.exe)
    if not os.path.exists(exe):
        print("  not in the bundle")
        return 1
    args = [exe, "--steps", str(a.steps), "--weights", a.weights]
    for name, path in g["data"].items():
        args += ["--data", "%s=%s" % (name, os.path.join(a.bundle, path))]
    env = exe_env()
    env["OFLOW_CUDA_PROFILE"] = "1"
    env["OFLOW_CUDA_PROFILE_TOP"] = "100000"  # every label: the comparison needs them all
    env["OFLOW_CUDA_PROFILE_EVERY"] = "10"  # partial reports while it runs
    outer = int(os.environ.get("GPU_CHECK_PART_TIMEOUT", "0") or 0)
    timeout = max(1, min(a.timeout, outer - 5)) if outer > 0 else a.timeout
    rc, stderr = 0, ""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
        rc, stderr = p.returncode, p.stderr
        print(p.stdout[-3000:])
    except subprocess.TimeoutExpired as e:
        print("  timed out after %ds" % timeout)
        rc = 1
        stderr = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    header, rows = parse_profile(stderr)
    print("\n".join(stderr.splitlines()[:3] + ["  ..."]) if header else stderr[-3000:])
    res = {"precision": a.precision, "steps": a.steps, "header": header, "exit": rc,
           "labels": len(rows)}
    kpath = os.path.join(a.bundle, "gpt2s", "kernels-%s.json" % a.precision)
    if rows and os.path.exists(kpath):
        with open(kpath) as f:
            report = json.load(f)
        # Only the finished steps count: a partial table is scaled by what ran
        # (the calls most generated kernels made: each runs once a step).
        steps = a.steps
        if not (header and "at exit" in header):
            calls = collections.Counter(c for label, (_, c) in rows.items()
                                        if label_key(label)[0] == "kernel")
            steps = calls.most_common(1)[0][0] if calls else 1
        res["kernels"], res["totals"] = kernels_vs_profile(report, rows, steps)
        t = res["totals"]
        print("  measured %.2f ms of GPU time per step, predicted %.2f ms (%.2f ms without "
              "the CUDA graph); %d kernels matched, %d more than 2x off (%.2f ms of the step)" % (
                  1e3 * t.get("measured_s", 0), 1e3 * (t.get("predicted_s") or 0),
                  1e3 * t.get("predicted_no_graph_s", 0), t.get("matched", 0),
                  t.get("off_2x", 0), 1e3 * t.get("off_2x_measured_s", 0)))
    elif rows:
        res["error"] = "no %s in the bundle: no predictions to compare" % os.path.relpath(kpath, a.bundle)
    write_result(a.res, "gpt2-profile-" + a.precision, res)
    return rc


def cmd_gpt2_torch(a):
    import numpy as np
    cfg = gpt2_config(a.bundle)
    b = load_bundle(a.bundle)
    g = b["gpt2s"]
    M = import_path("gpt2s_model", os.path.join(ROOT, "examples", "gpt2s", "model.py"))
    import torch
    t = time.time()
    if a.weights and os.path.exists(a.weights):
        named = onnx_initializers(a.weights)
        source = "regenerated ONNX"
    else:
        named = list(M.W.initial_weights(M.W.CONFIGS[cfg["name"]], cfg["weight_seed"]))
        source = "weights.py"
    print("  weights from %s (%.1f s)" % (source, time.time() - t))
    data = [np.load(os.path.join(a.bundle, p)) for p in g["data"].values()]

    def train(kind, precision):
        model = M.load_weights(M.GPT2S(cfg), named)
        return train_torch(torch, model, data, cfg["batch"], a.steps, g["lr"], g["weight_decay"],
                           a.device, bf16=precision == "bf16", compile_=kind == "compile")
    return run_torch_modes(a, "gpt2-torch-", {"tokens_per_step": cfg["batch"] * cfg["block"]},
                           train)


# ----------------------------------------------------------------------------- report

def fmt_rel(x):
    if x is None:
        return "n/a"
    if x == float("inf"):
        return "inf"
    return "%.1e" % x


def fmt_pct(x):
    return "%.1f%%" % (100 * x) if x >= 1e-3 else "%.2g%%" % (100 * x)


def fmt_bytes(x, unit=2 ** 30, digits=2):
    return "n/a" if x is None else ("%.*f" % (digits, x / unit))


def status_of(part_status, name, result, err_key="error", group=None):
    """ok | n/a: ... | failed: ... | timeout | skipped: ... from the shell's status file and the result."""
    st = part_status.get(name, part_status.get(group))
    if result and result.get("unsupported"):
        return "n/a: " + result["unsupported"]
    if result and result.get(err_key):
        return "failed: " + result[err_key]
    if st and st != "ok":
        return st
    if result is None:
        return "missing"
    return "ok"


def cmd_calibrate(a):
    """Measured HBM bandwidth and GEMM rates as a device profile (--device FILE.json)."""
    import torch
    cuda = a.device == "cuda"
    dev = torch.device(a.device)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def best_time(fn, reps):
        fn()
        sync()
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            sync()
            best = min(best, time.perf_counter() - t)
        return best

    def gemm_time(fn, target_s=0.02):
        """Seconds of GPU time per call: back-to-back calls between two events
        (the queue stays full, so the host's launch cost is hidden as it is in
        a CUDA graph), the best of three groups."""
        one = best_time(fn, 2)
        if not cuda:
            return one
        reps = max(3, min(200, int(target_s / max(one, 1e-6))))
        best = float("inf")
        for _ in range(3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) * 1e-3 / reps)
        return best

    res = {"device": a.device}
    n = (1 << 29) if cuda else (1 << 22)  # 2 GiB of floats on the GPU
    x = torch.ones(n, dtype=torch.float32, device=dev)
    y = torch.empty_like(x)
    res["copy_bytes_per_s"] = 2 * 4 * n / best_time(lambda: y.copy_(x), 5)
    res["read_bytes_per_s"] = 4 * n / best_time(lambda: x.sum(), 5)
    del x, y
    print("  HBM: copy %.2f TB/s (read + write), read %.2f TB/s" % (
        res["copy_bytes_per_s"] / 1e12, res["read_bytes_per_s"] / 1e12))

    # The GEMM shapes of GPT-2's training step, as the report lists them.
    rates = {}
    for prec, dtype, tf32, report_prec in (("fp32", torch.float32, False, "fp32"),
                                           ("tf32", torch.float32, True, "fp32"),
                                           ("bf16", torch.bfloat16, False, "bf16"),
                                           ("fp16", torch.float16, False, "bf16")):
        path = os.path.join(a.bundle, "gpt2s", "kernels-%s.json" % report_prec)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            report = json.load(f)
        ent = next((e for e in report.get("entries", []) if e.get("entry") == "oflow_train_step"), None)
        shapes = collections.Counter()
        for launch in (ent or {}).get("launches", []):
            key = launch_key(launch) if launch.get("kind") == "gemm" else None
            if key and key[1] == report_prec:
                shapes[key[2:]] += 1
        if not shapes:
            continue
        if cuda:
            torch.backends.cuda.matmul.allow_tf32 = tf32
        flops = seconds = 0.0
        per_shape = []
        for (m, nn, k, batch), count in sorted(shapes.items()):
            A = torch.randn(batch, m, k, device=dev).to(dtype)
            B = torch.randn(batch, k, nn, device=dev).to(dtype)
            try:
                t = gemm_time(lambda: torch.bmm(A, B))
            except RuntimeError as e:  # e.g. no fp16 GEMM in a CPU build of torch
                print("  %s GEMMs: not timed (%s)" % (prec, str(e).splitlines()[0][:120]))
                per_shape = []
                break
            f = 2.0 * m * nn * k * batch
            row = {"m": m, "n": nn, "k": k, "batch": batch, "count": count,
                   "seconds": t, "flops_per_s": f / t}
            if dtype != torch.float32:
                # oflow's low-precision GEMMs write f32 (CUDA_R_32F C/D): time that too
                # where this torch has mm/bmm(..., out_dtype=).
                try:
                    row["seconds_f32_out"] = gemm_time(
                        lambda: torch.bmm(A, B, out_dtype=torch.float32))
                except (TypeError, RuntimeError) as e:
                    row["f32_out_error"] = str(e).splitlines()[0][:120]
            # An extent of 50257 (the vocabulary) is not a multiple of 8: time the same
            # GEMM with it padded to a multiple of 64, as the CUDA runtime runs it
            # (runtime/lib/cuda/CudaBlas.cpp).
            pad = [((d + 63) // 64) * 64 if d % 8 else d for d in (m, nn, k)]
            if pad != [m, nn, k]:
                Ap = torch.randn(batch, pad[0], pad[2], device=dev).to(dtype)
                Bp = torch.randn(batch, pad[2], pad[1], device=dev).to(dtype)
                row["padded"] = {"m": pad[0], "n": pad[1], "k": pad[2],
                                 "seconds": gemm_time(lambda: torch.bmm(Ap, Bp))}
                del Ap, Bp
            flops += f * count
            seconds += (row.get("seconds_f32_out") or t) * count
            per_shape.append(row)
            del A, B
        if not per_shape:
            continue
        rates[prec] = {"flops_per_s": flops / seconds, "step_gemm_s": seconds, "shapes": per_shape}
        print("  %s GEMMs (%d shapes, %d calls a step): %.1f TFLOP/s, %.2f ms a step" % (
            prec, len(shapes), sum(shapes.values()), flops / seconds / 1e12, 1e3 * seconds))
        for row in per_shape:
            print("    %5d x %5d x %5d x%-3d %8.1f us%s%s" % (
                row["m"], row["n"], row["k"], row["batch"], 1e6 * row["seconds"],
                "  f32 out %.1f us" % (1e6 * row["seconds_f32_out"]) if "seconds_f32_out" in row else "",
                "  padded %dx%dx%d %.1f us" % (row["padded"]["m"], row["padded"]["n"], row["padded"]["k"],
                                               1e6 * row["padded"]["seconds"]) if "padded" in row else ""))
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    res["gemm"] = rates
    # The profile: measured figures where measured, the built-in h200's elsewhere
    # (latency and launch costs are not measured here).
    base = {"bf16": 650e12, "fp16": 650e12, "tf32": 330e12, "fp32": 50e12}
    sms = torch.cuda.get_device_properties(0).multi_processor_count if cuda else 132
    profile = {
        "name": ("h200" if cuda else "cpu-dry-run") + "-calibrated",
        "hbm_bytes_per_s": res["copy_bytes_per_s"],
        "flops_per_s": {k: rates.get(k, {}).get("flops_per_s", v) for k, v in base.items()},
        "memory_latency_s": 6e-7, "launch_s": 4e-6, "graph_launch_s": 1e-6,
        "multiprocessors": sms, "max_threads_per_multiprocessor": 2048,
    }
    # Each measured shape's time (f32 output where measured, as oflow writes):
    # the kernel report prices a GEMM of exactly this shape and precision with it.
    profile["gemms"] = [
        {"precision": prec, "m": r["m"], "n": r["n"], "k": r["k"], "batch": r["batch"],
         "seconds": r.get("seconds_f32_out") or r["seconds"]}
        for prec, v in sorted(rates.items()) for r in v["shapes"]] + [
        # The padded extents: what the runtime runs for unaligned rows (CudaBlas.cpp).
        {"precision": prec, "m": r["padded"]["m"], "n": r["padded"]["n"], "k": r["padded"]["k"],
         "batch": r["batch"], "seconds": r["padded"]["seconds"]}
        for prec, v in sorted(rates.items()) for r in v["shapes"] if "padded" in r]
    if cuda:
        profile["memory_bytes"] = torch.cuda.get_device_properties(0).total_memory
    res["profile"] = profile
    with open(os.path.join(a.res, "calibrated-profile.json"), "w") as f:
        json.dump(profile, f, indent=2)
    write_result(a.res, "calibrate", res)
    return 0


def cmd_runtime_check(a):
    """The CUDA runtime's own GPU test (oflow-cuda-runtime-check): cuBLASLt GEMMs,
    one-rank NCCL collectives, the mgpu* launch wrappers, device buffers."""
    exe = os.path.join(a.bundle, "bin", "oflow-cuda-runtime-check")
    if not os.path.exists(exe):
        write_result(a.res, "runtime-check", {"status": "n/a: not in the bundle"})
        print("  n/a: %s is not in the bundle" % exe)
        return 0
    try:
        p = subprocess.run([exe], capture_output=True, text=True, env=exe_env(),
                           timeout=max(10, a.timeout))
        lines = (p.stdout + p.stderr).splitlines()
        rc = p.returncode
    except (OSError, subprocess.TimeoutExpired) as e:
        lines, rc = [str(e)], -1
    passed = [l for l in lines if l.startswith("PASS")]
    failed = [l for l in lines if l.startswith("FAIL")]
    skipped = [l for l in lines if l.startswith("SKIP")]
    for l in lines[-40:]:
        print("  " + l)
    status = ("skipped: " + skipped[0][:160]) if skipped and not passed else \
             ("ok" if rc == 0 and not failed else "FAILED (exit %d)" % rc)
    write_result(a.res, "runtime-check", {"status": status, "passed": len(passed),
                                          "failed": failed[:20], "rc": rc})
    return 0 if rc == 0 and not failed else 1


def cmd_report(a):
    res = a.res
    part_status = {}
    try:
        with open(os.path.join(res, "parts.tsv")) as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                if len(fields) >= 2:
                    part_status[fields[0]] = fields[1]
    except OSError:
        pass
    try:
        b = load_bundle(a.bundle)
    except (OSError, ValueError) as e:
        b = {"examples": {}, "gpt2s": {"executables": []}, "error": str(e)}
    env = read_result(res, "env") or {}
    ldd = (read_result(res, "ldd") or {}).get("executables", {})
    dry = a.device == "cpu"
    L = []
    L.append("## GPU check (issue #5)%s" % (" — CPU DRY RUN (numbers are not GPU numbers)" if dry else ""))
    L.append("")
    L.append("- device: %s; torch %s (CUDA %s); %s" % (
        env.get("gpu") or env.get("device", a.device), env.get("torch", "?"), env.get("torch_cuda"),
        env.get("nvidia_smi", "")))
    L.append("- bundle: target %s, commit %s%s, built %s, GPT-2 config %s" % (
        b.get("target"), b.get("commit"), " (dirty)" if b.get("dirty") else "", b.get("built"),
        b.get("gpt2_config")))
    L.append("- run: %s" % time.strftime("%Y-%m-%d %H:%M:%S"))
    L.append("")
    L.append("### Shared libraries (ldd with the bundle's LD_LIBRARY_PATH)")
    L.append("")
    if not ldd:
        L.append("ldd part: %s" % part_status.get("ldd", "no result"))
    else:
        L.append("| executable | missing | from the bundle | CUDA libraries resolved |")
        L.append("|---|---|---:|---|")
        for name, r in sorted(ldd.items()):
            L.append("| %s | %s | %d | %s |" % (name, ", ".join(r.get("missing", [])) or "none",
                                               len(r.get("from_bundle", [])),
                                               ", ".join(r.get("cuda", [])) or "-"))
    L.append("")
    rc = read_result(res, "runtime-check") or {}
    L.append("### CUDA runtime check (oflow-cuda-runtime-check: GEMMs, NCCL, launches, buffers)")
    L.append("")
    L.append("- %s; %s checks passed%s" % (
        rc.get("status", part_status.get("runtime-check", "no result")), rc.get("passed", 0),
        "; failed: " + "; ".join(rc.get("failed", [])) if rc.get("failed") else ""))
    L.append("")
    L.append("### Examples: loss trajectories (AdamW, shipped data; max relative difference over all steps)")
    L.append("")
    L.append("| example | status | steps | oflow loss first → last | vs CPU target | vs torch (same device, fp32, TF32 off) | torch vs CPU target | oflow step (ms) | oflow step, --no-cuda-graph (ms) | graph vs no graph | torch step (ms) | oflow device MiB | torch MiB |")
    L.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    loss_goal = []
    for ex in sorted(b.get("examples", {})):
        r = read_result(res, "example-" + ex)
        if r and r.get("oflow_error"):
            st = "failed: " + r["oflow_error"]
        elif r and r.get("torch_error"):
            st = "oflow ok; torch failed: " + r["torch_error"]
        elif r and part_status.get("example-" + ex, "ok").startswith("timeout"):
            st = part_status["example-" + ex] + " (in torch)"
        else:
            st = status_of(part_status, "example-" + ex, r)
        missing = ldd.get(ex, {}).get("missing")
        if missing:
            st += " (missing: %s)" % ", ".join(missing)
        r = r or {}
        ol = r.get("oflow_losses")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            ex, st, r.get("steps", "?"),
            "%.5f → %.5f" % (ol[0], ol[-1]) if ol else "n/a",
            fmt_rel(r.get("rel_vs_cpu")), fmt_rel(r.get("rel_vs_torch")),
            fmt_rel(r.get("torch_rel_vs_cpu")),
            "%.3f" % (1e3 * r["oflow_step_s"]) if r.get("oflow_step_s") is not None else "n/a",
            "%.3f" % (1e3 * r["oflow_nograph_step_s"])
            if r.get("oflow_nograph_step_s") is not None else r.get("oflow_nograph_error", "n/a"),
            fmt_rel(r.get("graph_vs_nograph")),
            "%.3f" % (1e3 * r["torch_step_s"]) if r.get("torch_step_s") is not None else "n/a",
            fmt_bytes(r.get("oflow_device_bytes"), 2 ** 20, 1),
            fmt_bytes(r.get("torch_peak_bytes"), 2 ** 20, 1)))
        loss_goal.append((ex, r.get("rel_vs_torch")))

    cfg = None
    try:
        cfg = gpt2_config(a.bundle)
    except (OSError, ValueError):
        pass
    L.append("")
    if cfg:
        fpt = cfg["flops_per_token"]
        L.append("### GPT-2 %s (%.1fM parameters, %d layers, d %d, vocab %d, T %d, batch %d; AdamW lr %g)" % (
            cfg["name"], cfg["num_params"] / 1e6, cfg["n_layer"], cfg["d_model"], cfg["vocab"],
            cfg["block"], cfg["batch"], b.get("gpt2s", {}).get("lr", float("nan"))))
        L.append("")
        w = read_result(res, "gpt2-weights")
        L.append("Weights regenerated from the seed: %s." % (
            "%d initializers in %.1f s" % (w["initializers"], w["seconds"]) if w
            else status_of(part_status, "gpt2-weights", w)))
        L.append("")
        L.append("| implementation | precision | status | step (ms, median) | tokens/s | MFU | peak device memory (GiB) | tokens/s vs torch.compile | step 0 (s) | loss first → last | max rel Δ loss vs torch eager fp32 |")
        L.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
        rows = []
        oflow_exes = {e["precision"]: e for e in b.get("gpt2s", {}).get("executables", [])}
        for prec in ("fp32", "tf32", "bf16"):
            name = "gpt2-oflow-" + prec
            r = read_result(res, name)
            if (prec if prec != "tf32" else "fp32") not in oflow_exes:
                why = b.get("gpt2s", {}).get("bf16_unsupported") if prec == "bf16" else None
                r = {"unsupported": why or "no executable in the bundle"}
            rows.append(("oflow", {"fp32": "fp32 (TF32 off; MFU vs tf32 peak)",
                                   "tf32": "tf32 (--allow-tf32)"}.get(prec, prec), prec, name, r))
        # The bf16 executable compiled with --no-fused-attention, where the
        # bundle has one: what the fused attention kernels gain.
        unfused = read_result(res, "gpt2-oflow-bf16-unfused")
        if unfused:
            rows.append(("oflow", "bf16, --no-fused-attention", "bf16",
                         "gpt2-oflow-bf16-unfused", unfused))
        for mode in ("eager-fp32", "eager-tf32", "compile-tf32", "eager-bf16", "compile-bf16"):
            kind, prec = mode.split("-")
            name = "gpt2-torch-" + mode
            rows.append(("torch.compile" if kind == "compile" else "torch eager",
                         prec + (" (TF32 off)" if prec == "fp32" else ""), prec, name,
                         read_result(res, name)))
        ref = read_result(res, "gpt2-torch-eager-fp32") or {}
        tps = {}
        for impl, plabel, prec, name, r in rows:
            if r and r.get("step_times_s"):
                tps[name] = cfg["batch"] * cfg["block"] / statistics.median(r["step_times_s"])
        compiled = {"fp32": tps.get("gpt2-torch-compile-tf32"), "tf32": tps.get("gpt2-torch-compile-tf32"),
                    "bf16": tps.get("gpt2-torch-compile-bf16")}
        for impl, plabel, prec, name, r in rows:
            st = status_of(part_status, name, r,
                           group="gpt2-torch-eager" if name.startswith("gpt2-torch-eager") else None)
            r = r or {}
            if name in tps:
                step = statistics.median(r["step_times_s"])
                peak_prec = "tf32" if (impl == "oflow" and prec == "fp32") else prec
                mfu = fpt * tps[name] / PEAK_FLOPS[peak_prec]
                vs = compiled.get(prec)
                rel = max_rel(r.get("losses"), ref.get("losses")) if name != "gpt2-torch-eager-fp32" else None
                losses = r.get("losses") or []
                L.append("| %s | %s | %s | %.1f | %.0f | %s | %s | %s | %.2f | %s | %s |" % (
                    impl, plabel, st, 1e3 * step, tps[name], fmt_pct(mfu),
                    fmt_bytes(r.get("device_bytes")),
                    "%.2fx" % (tps[name] / vs) if vs else "n/a",
                    r.get("first_step_s") or 0.0,
                    "%.4f → %.4f" % (losses[0], losses[-1]) if losses else "n/a",
                    fmt_rel(rel)))
                r["_mfu"], r["_vs"], r["_rel"] = mfu, (tps[name] / vs if vs else None), rel
            else:
                L.append("| %s | %s | %s | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |" % (impl, plabel, st))
            rows_by_name = None  # noqa: F841
            if name == "gpt2-oflow-fp32":
                loss_goal.append(("gpt2s fp32", r.get("_rel")))
        of32 = read_result(res, "gpt2-oflow-fp32")
        of16 = read_result(res, "gpt2-oflow-bf16")
        L.append("")
        L.append("MFU = (6·N + 12·layers·d·T) FLOP per token × tokens/s / peak (N = %.1fM, %.3f GFLOP/token); "
                 "peaks (H200 SXM datasheet, dense): bf16 %.0f, tf32 %.0f, fp32 %.1f TFLOP/s. Step times: "
                 "oflow from its --log-json `elapsed_s`, torch from a synchronized wall clock around each "
                 "step (data slice, forward, backward, AdamW, loss read back); median of the steps after %s warm-up."
                 % (cfg["num_params"] / 1e6, fpt / 1e9, PEAK_FLOPS["bf16"] / 1e12,
                    PEAK_FLOPS["tf32"] / 1e12, PEAK_FLOPS["fp32"] / 1e12,
                    (of32 or ref or {}).get("warmup", "the")))
    else:
        L.append("### GPT-2: no config in the bundle")
        of32 = of16 = None

    # Kernel by kernel: the report's predictions against OFLOW_CUDA_PROFILE.
    for prec in ("fp32", "bf16"):
        pr = read_result(res, "gpt2-profile-" + prec)
        if not pr:
            continue
        L.append("")
        L.append("### GPT-2 %s kernel by kernel: `--emit=kernels` (h200 profile) vs OFLOW_CUDA_PROFILE" % prec)
        L.append("")
        t = pr.get("totals")
        if not t:
            L.append("- %s" % (pr.get("error") or "no profile table (%s)" % (pr.get("header") or "no output")))
            continue
        L.append("- %s" % pr.get("header"))
        L.append("- GPU time a step: measured %.2f ms (graphs off, each launch timed by events), predicted "
                 "%.2f ms with the CUDA graph, %.2f ms without; %d kernels and GEMM shapes matched, "
                 "%d predicted but not seen, %d seen but not predicted; **%d more than 2x off**, "
                 "%.2f ms of the measured step" % (
                     1e3 * t["measured_s"], 1e3 * (t.get("predicted_s") or 0), 1e3 * t["predicted_no_graph_s"],
                     t["matched"], t["unmatched_predicted"], t["unmatched_measured"], t["off_2x"],
                     1e3 * t["off_2x_measured_s"]))
        L.append("")
        L.append("| kernel or GEMM | strategy | bound | launches | HBM MB | predicted us | measured us | measured / predicted |")
        L.append("|---|---|---|---:|---:|---:|---:|---:|")
        for r in pr.get("kernels", [])[:30]:
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["name"], r.get("strategy") or "", r.get("bound") or "", r.get("launches") or "",
                "%.1f" % (r["hbm_bytes"] / 1e6) if r.get("hbm_bytes") else "",
                "%.1f" % (1e6 * r["predicted_s"]) if r.get("predicted_s") is not None else "n/a",
                "%.1f" % (1e6 * r["measured_s"]) if r.get("measured_s") is not None else "n/a",
                ("%.2fx%s" % (r["ratio"], " **off**" if r.get("off_2x") else "")) if r.get("ratio") else "n/a"))
    cal = read_result(res, "calibrate")
    if cal:
        L.append("")
        L.append("### Calibration (written as a device profile: `--device calibrated-profile.json`)")
        L.append("")
        L.append("- HBM: copy %.2f TB/s (bytes read + written), read %.2f TB/s; built-in h200: 4.30" % (
            cal["copy_bytes_per_s"] / 1e12, cal["read_bytes_per_s"] / 1e12))
        for prec, g in sorted(cal.get("gemm", {}).items()):
            L.append("- %s GEMMs over GPT-2's step shapes (%d shapes): %.1f TFLOP/s, %.2f ms a step" % (
                prec, len(g["shapes"]), g["flops_per_s"] / 1e12, 1e3 * g["step_gemm_s"]))

    # Goals (shown, not asserted).
    L.append("")
    L.append("### Goals (reported, not asserted)")
    L.append("")

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "NOT met")
    bad = [n for n, v in loss_goal if v is not None and v > LOSS_RTOL_GOAL]
    unmeasured = [n for n, v in loss_goal if v is None]
    if bad:
        loss_verdict = "NOT met"
    elif len(unmeasured) == len(loss_goal):
        loss_verdict = "n/a"
    elif unmeasured:
        loss_verdict = "met where measured (not measured: %s)" % ", ".join(unmeasured)
    else:
        loss_verdict = "met"
    L.append("- loss within %g relative of PyTorch (fp32): %s (%s)" % (
        LOSS_RTOL_GOAL, loss_verdict,
        ", ".join("%s %s" % (n, fmt_rel(v)) for n, v in loss_goal) or "no results"))
    if cfg:
        o = (of32 or {}).get("_vs") if of32 else None
        # recompute outside the loop's dicts (read_result returns fresh objects)
        t_c = None
        c = read_result(res, "gpt2-torch-compile-tf32")
        if c and c.get("step_times_s"):
            t_c = statistics.median(c["step_times_s"])
        t_o = statistics.median(of32["step_times_s"]) if of32 and of32.get("step_times_s") else None
        L.append("- oflow fp32 throughput ≥ torch.compile (tf32): %s (%s)" % (
            verdict(None if not (t_c and t_o) else t_o <= t_c),
            "%.2fx" % (t_c / t_o) if t_c and t_o else "missing a side"))
        # Issue #14: faster than PyTorch eager in the same precision.
        for prec in ("fp32", "tf32", "bf16"):
            mine = read_result(res, "gpt2-oflow-" + prec)
            theirs = read_result(res, "gpt2-torch-eager-" + prec)
            t_m = statistics.median(mine["step_times_s"]) if mine and mine.get("step_times_s") else None
            t_t = statistics.median(theirs["step_times_s"]) if theirs and theirs.get("step_times_s") else None
            L.append("- oflow %s step faster than torch eager %s: %s (%s)" % (
                prec, prec, verdict(None if not (t_m and t_t) else t_m < t_t),
                "%.1f vs %.1f ms" % (1e3 * t_m, 1e3 * t_t) if t_m and t_t else "missing a side"))
        t_b = statistics.median(of16["step_times_s"]) if of16 and of16.get("step_times_s") else None
        mfu_b = cfg["flops_per_token"] * cfg["batch"] * cfg["block"] / t_b / PEAK_FLOPS["bf16"] if t_b else None
        L.append("- oflow bf16 MFU ≥ %d%%: %s (%s)" % (
            100 * MFU_GOAL, verdict(None if mfu_b is None else mfu_b >= MFU_GOAL),
            "%.1f%%" % (100 * mfu_b) if mfu_b is not None else
            "no bf16 executable: " + str(b.get("gpt2s", {}).get("bf16_unsupported", "not built"))))
        del o
    L.append("")
    L.extend(resnet50_report(res, b, part_status))
    failed = sorted(k for k, v in part_status.items() if v.startswith(("failed", "timeout")))
    skipped = sorted(k for k, v in part_status.items() if v.startswith("skipped"))
    L.append("")
    L.append("Parts: %d run, failed/timed out: %s; skipped: %s." % (
        len(part_status), ", ".join(failed) or "none", ", ".join(skipped) or "none"))
    text = "\n".join(L) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("part", choices=["env", "ldd", "runtime-check", "example", "gpt2-weights", "gpt2-oflow",
                                    "gpt2-profile", "gpt2-torch", "calibrate", "resnet50-weights",
                                    "resnet50-oflow", "resnet50-torch", "report"])
    p.add_argument("name", nargs="?")
    p.add_argument("--bundle", required=True)
    p.add_argument("--res", required=True)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--timeout", type=int, default=120, help="for the oflow executable")
    p.add_argument("--dest", help="gpt2-weights, resnet50-*: where the regenerated weights are")
    p.add_argument("--weights", help="the regenerated GPT-2 weights (ONNX)")
    p.add_argument("--exe", default="bin/gpt2s")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--modes", default="eager-fp32,eager-tf32,eager-bf16")
    p.add_argument("--steps", type=int, default=13)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--md", help="report: also write the table here")
    a = p.parse_args()
    return {"env": cmd_env, "ldd": cmd_ldd, "runtime-check": cmd_runtime_check, "example": cmd_example, "gpt2-weights": cmd_gpt2_weights,
            "gpt2-oflow": cmd_gpt2_oflow, "gpt2-profile": cmd_gpt2_profile, "gpt2-torch": cmd_gpt2_torch,
            "calibrate": cmd_calibrate, "resnet50-weights": cmd_resnet50_weights,
            "resnet50-oflow": cmd_resnet50_oflow, "resnet50-torch": cmd_resnet50_torch,
            "report": cmd_report}[a.part](a) or 0


if __name__ == "__main__":
    sys.exit(main())
