#!/usr/bin/env bash
# The GPU check of issue #5, in ONE call on the GPU machine (< 5 minutes):
#
#   bash bench/gpu_check.sh gpu-bundle                 # on the H200 (bundle from bench/gpu_bundle.sh)
#   bash bench/gpu_check.sh gpu-bundle --cpu-dry-run   # here: the same flow on the CPU
#
# Options: --budget SECONDS (default 300: every part's timeout is cut to what is
# left of it, keeping 15 s for the table), --python PY (default python3 on the
# GPU machine, /usr/bin/python3 in the dry run), --keep (keep the results
# folder in /tmp; by default it is removed at the end), --no-profile (skip the
# 2 GPT-2 steps with OFLOW_CUDA_PROFILE=1 that print the GPU time per kernel
# and GEMM, every 10 s while they run, before the timed run; --profile-steps
# N, --profile-seconds S change them), --parts A,B,... (run only these parts, e.g.
# gpt2-weights,gpt2-profile; the report covers what ran).
#
# Parts, in this order, each under `timeout`, each writing its own result:
#   env, ldd, runtime-check, example mlp|cnn|gpt, gpt2-weights, gpt2-profile (fp32:
#   per-kernel GPU times against the bundle's --emit=kernels-json predictions),
#   gpt2-oflow fp32, gpt2-oflow tf32 (the fp32 executable with --allow-tf32), gpt2-profile-bf16, gpt2-oflow bf16,
#   gpt2-oflow-bf16-unfused (bin/gpt2s-bf16-unfused, --no-fused-attention, when bundled), calibrate (bandwidth and
#   GEMM rates, written as $OUT/calibrated-profile.json),
#   gpt2-torch eager (fp32 with TF32 off, tf32, bf16), resnet50-weights,
#   resnet50-oflow fp32 and bf16, resnet50-torch (eager fp32 with TF32 off, bf16),
#   gpt2-torch compile-tf32, gpt2-torch compile-bf16, then the report.
# A part that fails, times out or is skipped for lack of time shows as such in
# the table; the table is always printed, and written to $OUT/gpu_check.md
# (with gpu_check.json of the raw results and gpu_check.log) when $OUT is set.
# Exit status: 0 when no part failed or timed out, 1 otherwise.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

BUNDLE=""
DRY=0
BUDGET=300
PY=""
KEEP=0
PROFILE=1
PROFILE_STEPS=2
PROFILE_S=25
ONLY=""
while (($#)); do
  case "$1" in
    --cpu-dry-run) DRY=1 ;;
    --budget) BUDGET=$2; shift ;;
    --python) PY=$2; shift ;;
    --keep) KEEP=1 ;;
    --profile) PROFILE=1 ;;
    --no-profile) PROFILE=0 ;;
    --profile-steps) PROFILE_STEPS=$2; shift ;;
    --profile-seconds) PROFILE_S=$2; shift ;;
    --parts) ONLY=",$2,"; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "gpu_check: unknown option '$1'" >&2; exit 2 ;;
    *) BUNDLE=$1 ;;
  esac
  shift
done
[ -n "$BUNDLE" ] || { echo "usage: bash bench/gpu_check.sh BUNDLE [--cpu-dry-run] [--budget S]" >&2; exit 2; }
[ -f "$BUNDLE/bundle.json" ] || { echo "gpu_check: $BUNDLE/bundle.json not found (carry the bundle: bench/gpu_bundle.sh)" >&2; exit 2; }
BUNDLE=$(cd "$BUNDLE" && pwd)
# The executables travel compressed (gpu_bundle.sh): unpack them once.
if [ -f "$BUNDLE/bin.tar.gz" ] && [ ! -d "$BUNDLE/bin" ]; then
  tar -C "$BUNDLE" -xzf "$BUNDLE/bin.tar.gz" ||
    { echo "gpu_check: cannot unpack $BUNDLE/bin.tar.gz" >&2; exit 2; }
fi
if [ -z "$PY" ]; then
  if ((DRY)); then PY=/usr/bin/python3; else PY=python3; fi
fi
DEVICE=cuda; ((DRY)) && DEVICE=cpu
RESERVE=15
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
RES=$(mktemp -d /tmp/gpu_check.XXXXXX)
LOG=$RES/gpu_check.log
: >"$RES/parts.tsv"
exec > >(tee -a "$LOG") 2>&1

say() { printf '[gpu_check %3ss] %s\n' "$SECONDS" "$*"; }

# --- library path: the bundle's (unpacked from lib.tar.gz), then the CUDA
# libraries torch's wheels (or a toolkit, or the driver folder) provide here.
LIBDIRS=$BUNDLE/lib
if [ -f "$BUNDLE/lib.tar.gz" ]; then
  if tar -C "$RES" -xzf "$BUNDLE/lib.tar.gz"; then LIBDIRS=$RES/lib
  else echo "gpu_check: cannot unpack $BUNDLE/lib.tar.gz: the executables may miss libraries"; fi
fi
export GPU_CHECK_LIBDIR=$LIBDIRS
if ((!DRY)); then
  extra=$(timeout 60 "$PY" - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = []
roots = list(site.getsitepackages()) + [site.getusersitepackages()]
try:
    import nvidia
    roots += list(getattr(nvidia, "__path__", []))
except Exception:
    pass
for r in roots:
    for pat in ("nvidia/*/lib", "nvidia/cu*/lib", "nvidia/*/lib64", "*/lib", "lib"):
        for d in glob.glob(os.path.join(r, pat)):
            if glob.glob(os.path.join(d, "lib*.so*")) and any(
                    glob.glob(os.path.join(d, p)) for p in ("libcublas*", "libnccl*", "libcudart*", "libcuda.so*")):
                dirs.append(os.path.realpath(d))
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
seen = []
for d in dirs:
    if d not in seen:
        seen.append(d)
print(":".join(seen))
EOF
)
  [ -n "$extra" ] && LIBDIRS=$LIBDIRS:$extra
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [ -d "$d" ] && LIBDIRS=$LIBDIRS:$d
  done
fi
# Only the oflow executables (and ldd) get it: torch and numpy keep this machine's
# own libz, libgfortran, ... (gpu_check.py puts it in the executables' environment).
export GPU_CHECK_LD_LIBRARY_PATH=$LIBDIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

say "bundle $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)), device $DEVICE, budget ${BUDGET}s, results $RES"
say "LD_LIBRARY_PATH of the executables: $GPU_CHECK_LD_LIBRARY_PATH"

FAILED=0
# part NAME WANT_S MIN_S CMD...: run CMD under `timeout`, cut to the budget left.
part() {
  local name=$1 want=$2 min=$3; shift 3
  if [ -n "$ONLY" ] && [[ "$ONLY" != *",$name,"* ]]; then return; fi
  local left=$((BUDGET - SECONDS - RESERVE))
  if ((left < min)); then
    say "$name: skipped (${left}s of the budget left, needs ${min}s)"
    printf '%s\tskipped: budget\n' "$name" >>"$RES/parts.tsv"
    return
  fi
  local t=$want; ((t > left)) && t=$left
  say "$name: start (timeout ${t}s)"
  local t0=$SECONDS rc
  GPU_CHECK_PART_TIMEOUT=$t timeout -k 5 "$t" "$@" >"$RES/$name.out" 2>&1
  rc=$?
  sed 's/^/    /' "$RES/$name.out" | tail -n 25
  local status=ok
  if ((rc == 124 || rc == 137)); then status="timeout after ${t}s"; FAILED=1
  elif ((rc != 0)); then status="failed: exit $rc: $(grep -v '^\s*$' "$RES/$name.out" | tail -n 1 | cut -c1-200)"; FAILED=1
  fi
  printf '%s\t%s\n' "$name" "$status" >>"$RES/parts.tsv"
  say "$name: $status ($((SECONDS - t0))s)"
}

C=(bench/gpu_check.py --bundle "$BUNDLE" --res "$RES" --device "$DEVICE")
if ((DRY)); then
  G2STEPS=5; G2WARM=2; EXT=60; G2T=60; RNSTEPS=3; RNWARM=1; RNT=120
else
  G2STEPS=13; G2WARM=3; EXT=50; G2T=50; RNSTEPS=10; RNWARM=3; RNT=60
fi
has_exe() { [ -x "$BUNDLE/bin/$1" ]; }

if ((!DRY)); then
  say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader 2>&1 | head -n 2)"
fi
part env 40 5 "$PY" "${C[@]}" env
part ldd 30 5 "$PY" "${C[@]}" ldd
part runtime-check 40 10 "$PY" "${C[@]}" runtime-check --timeout 30
for ex in mlp cnn gpt; do
  part "example-$ex" "$EXT" 10 "$PY" "${C[@]}" example "$ex" --timeout "$((EXT - 10))"
done
W=$RES/gpt2s-weights
part gpt2-weights 60 15 "$PY" "${C[@]}" gpt2-weights --dest "$W"
if has_exe gpt2s && ((PROFILE)); then
  part gpt2-profile "$PROFILE_S" 15 "$PY" "${C[@]}" gpt2-profile --exe bin/gpt2s --precision fp32 \
    --weights "$W/gpt2s.onnx" --steps "$PROFILE_STEPS" --timeout "$((PROFILE_S - 5))"
fi
if has_exe gpt2s; then
  part gpt2-oflow-fp32 "$G2T" 20 "$PY" "${C[@]}" gpt2-oflow --exe bin/gpt2s --precision fp32 \
    --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM" --timeout "$((G2T - 5))"
  part gpt2-oflow-tf32 "$G2T" 20 "$PY" "${C[@]}" gpt2-oflow --exe bin/gpt2s --precision tf32 \
    --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM" --timeout "$((G2T - 5))"
fi
if has_exe gpt2s-bf16 && ((PROFILE)); then
  part gpt2-profile-bf16 "$PROFILE_S" 15 "$PY" "${C[@]}" gpt2-profile --exe bin/gpt2s-bf16 --precision bf16 \
    --weights "$W/gpt2s.onnx" --steps "$PROFILE_STEPS" --timeout "$((PROFILE_S - 5))"
fi
if has_exe gpt2s-bf16; then
  part gpt2-oflow-bf16 "$G2T" 20 "$PY" "${C[@]}" gpt2-oflow --exe bin/gpt2s-bf16 --precision bf16 \
    --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM" --timeout "$((G2T - 5))"
fi
if has_exe gpt2s-bf16-unfused; then
  part gpt2-oflow-bf16-unfused "$G2T" 20 "$PY" "${C[@]}" gpt2-oflow bf16-unfused \
    --exe bin/gpt2s-bf16-unfused --precision bf16 \
    --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM" --timeout "$((G2T - 5))"
fi
part calibrate 60 15 "$PY" "${C[@]}" calibrate
part gpt2-torch-eager 75 20 "$PY" "${C[@]}" gpt2-torch --modes eager-fp32,eager-tf32,eager-bf16 \
  --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM"
# ResNet-50 (issue #17): weights and images regenerated here, oflow fp32 (cuDNN)
# and bf16, torch eager in both.
RW=$RES/resnet50-data
if [ -f "$BUNDLE/resnet50/resnet50.onnx" ]; then
  part resnet50-weights 60 15 "$PY" "${C[@]}" resnet50-weights --dest "$RW"
  for prec in fp32 bf16; do
    exe=resnet50; [ "$prec" = bf16 ] && exe=resnet50-bf16
    if has_exe "$exe"; then
      part "resnet50-oflow-$prec" "$RNT" 20 "$PY" "${C[@]}" resnet50-oflow --exe "bin/$exe" \
        --precision "$prec" --dest "$RW" --steps "$RNSTEPS" --warmup "$RNWARM" --timeout "$((RNT - 5))"
    fi
  done
  part resnet50-torch 90 20 "$PY" "${C[@]}" resnet50-torch --modes eager-fp32,eager-bf16 \
    --dest "$RW" --steps "$RNSTEPS" --warmup "$RNWARM"
  rm -rf "$RW"
fi
part gpt2-torch-compile-tf32 100 40 "$PY" "${C[@]}" gpt2-torch --modes compile-tf32 \
  --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM"
part gpt2-torch-compile-bf16 100 40 "$PY" "${C[@]}" gpt2-torch --modes compile-bf16 \
  --weights "$W/gpt2s.onnx" --steps "$G2STEPS" --warmup "$G2WARM"
rm -rf "$W"

say "report"
MD=$RES/gpu_check.md
if ! timeout 30 "$PY" bench/gpu_check.py report --bundle "$BUNDLE" --res "$RES" --device "$DEVICE" --md "$MD"; then
  # Last resort without Python: the raw part statuses.
  echo "## GPU check: the report failed; part statuses:"
  sed 's/\t/ | /' "$RES/parts.tsv"
  FAILED=1
fi
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp "$MD" "$OUT/gpu_check.md" 2>/dev/null
  cp "$RES/calibrated-profile.json" "$OUT/" 2>/dev/null
  timeout 20 "$PY" - "$RES" "$OUT/gpu_check.json" <<'EOF' 2>/dev/null
import glob, json, os, sys
res, out = sys.argv[1:3]
allr = {}
for p in sorted(glob.glob(os.path.join(res, "*.json"))):
    try:
        allr[os.path.basename(p)[:-5]] = json.load(open(p))
    except ValueError:
        pass
allr["parts"] = open(os.path.join(res, "parts.tsv")).read()
json.dump(allr, open(out, "w"), indent=1)
EOF
  for f in "$RES"/*.out; do echo "=== $(basename "$f")"; cat "$f"; done >"$OUT/gpu_check_parts.log" 2>/dev/null
  say "wrote $OUT/gpu_check.md, gpu_check.json, gpu_check_parts.log, gpu_check.log"
fi
say "done in ${SECONDS}s$( ((FAILED)) && echo ', some parts FAILED')"
# The log goes last, so that it holds the line above.
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then sleep 0.2; cp "$LOG" "$OUT/gpu_check.log" 2>/dev/null; fi
if ((KEEP)); then echo "results kept in $RES"; else rm -rf "$RES"; fi
exit $FAILED
