#!/usr/bin/env python3
"""The CUDA runtime (liboflow_runtime_cuda.a) on any machine.

Executables linked with it must not need libcuda.so at load time (cudart is
static and loads the driver itself). Without a GPU (or with only the stub
driver) they start and fail with one clear line; --help works anyway; the
GPU check program says SKIP. With a GPU, the GPU check must PASS.
"""
import argparse
import os
import re
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*cmd, env=None):
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=120,
                          env=env)


def needed_libraries(exe):
    r = run("readelf", "-d", exe)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


NO_DEVICE = re.compile(
    r"^(?P<exe>[^:]+): error: no CUDA device: (?P<why>[^\n]+); this executable "
    r"was built with --target cuda \(build with --target cpu to run on the CPU\)\n$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--infer", required=True)
    ap.add_argument("--mesh2", required=True)
    ap.add_argument("--check", required=True)
    a = ap.parse_args()

    # 1. No load-time dependency on the driver.
    for exe in (a.train, a.infer, a.mesh2, a.check):
        libs = needed_libraries(exe)
        check(libs, "%s: readelf found no NEEDED entries" % exe)
        check(not any(l.startswith("libcuda.so") for l in libs),
              "%s needs libcuda: %s" % (exe, libs))
        check(not any(l.startswith("libcudart") for l in libs),
              "%s needs a shared cudart (want the static one): %s" % (exe, libs))
        ldd = run("ldd", exe)
        check(ldd.returncode == 0 and "not found" not in ldd.stdout,
              "%s: ldd reports missing libraries:\n%s" % (exe, ldd.stdout))
        check(not re.search(r"^\s*libcuda\.so", ldd.stdout, re.M),
              "%s: ldd lists libcuda:\n%s" % (exe, ldd.stdout))

    # 2. The GPU check: SKIP without a device, PASS with one.
    r = run(a.check)
    gpu = not r.stdout.startswith("SKIP: no CUDA device")
    if gpu:
        check(r.returncode == 0 and r.stdout.rstrip().endswith("PASS"),
              "GPU check failed (rc %d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
    else:
        check(r.returncode == 0, "GPU check SKIP exits %d" % r.returncode)
        print(r.stdout.strip())

    # 3. --help needs no GPU.
    for exe, what in ((a.train, "Trains"), (a.infer, "Runs")):
        r = run(exe, "--help")
        check(r.returncode == 0 and what in r.stdout and "--allow-tf32" in r.stdout,
              "%s --help: rc %d\n%s%s" % (exe, r.returncode, r.stdout[:300], r.stderr))

    # 4. Without a GPU: one line, exit 1, before anything else happens.
    if not gpu:
        for exe, args in ((a.train, ["--steps", "2"]),
                          (a.train, ["--check-memory", "--log-json", "/dev/null"]),
                          (a.infer, ["--output-dir", "/tmp/none"])):
            r = run(exe, *args)
            m = NO_DEVICE.match(r.stderr)
            check(r.returncode == 1 and m is not None and r.stdout == "" and
                  m.group("exe") == os.path.basename(exe),
                  "%s %s: rc %d, stderr %r" % (exe, " ".join(args), r.returncode,
                                               r.stderr))
        # A hidden GPU says so too.
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        r = run(a.train, env=env)
        check(r.returncode == 1 and NO_DEVICE.match(r.stderr) is not None,
              "CUDA_VISIBLE_DEVICES='': rc %d, stderr %r" % (r.returncode, r.stderr))
    # A mesh program checks its launch before the GPU.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    r = run(a.mesh2, env=env)
    check(r.returncode == 1 and "was not started by mpirun" in r.stderr,
          "mesh program without mpirun: rc %d, stderr %r" % (r.returncode, r.stderr))

    if failures:
        print("%d failures" % len(failures))
        return 1
    print("PASS (%s)" % ("GPU" if gpu else "no GPU"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
