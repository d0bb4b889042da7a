#!/usr/bin/env bash
# Builds gpu-bundle/: everything bench/gpu_check.sh needs on the GPU machine
# (issue #5), which has no MLIR, no Debian packages and no internet, and
# receives only the working tree plus the carried, git-ignored gpu-bundle/.
#
#   bash bench/gpu_bundle.sh                 # --target cuda executables (the real bundle)
#   bash bench/gpu_bundle.sh --cpu-dry-run   # --target cpu executables, tiny GPT-2 config:
#                                            # for `bash bench/gpu_check.sh gpu-bundle --cpu-dry-run`
# Options:
#   --out DIR             bundle folder (default gpu-bundle, relative to the repo root)
#   --compiler PATH       oflow-compile (default build/bin/oflow-compile)
#   --gpt2-config NAME    small (default) or tiny (default with --cpu-dry-run)
#   --steps N             steps of the examples' runs and CPU reference trajectories (default 24)
#   --torch-only          no oflow executables for GPT-2 (the check then times torch alone)
#   --opt-level N         oflow-compile -O N (default: the compiler's, -O2; with --cpu-dry-run 0,
#                         which compiles ~8x faster: the dry run tests the flow, not the code)
# Environment:
#   OFLOW_BF16_FLAGS      compile flags for a bf16 GPT-2 executable; default: `--precision bf16`
#                         when `oflow-compile --help` lists a --precision option naming bf16,
#                         else none (the check shows its rows as n/a)
#
# What it writes (bin/ packed as bin.tar.gz, which gpu_check.sh unpacks):
#   bin/{mlp,cnn,gpt}      the examples' training executables (AdamW, the e2e tests' lr)
#   bin/gpt2s[-bf16]       GPT-2 small (124M), weights read at start (--weights, not carried)
#   bin/gpt2s-bf16-unfused the bf16 one compiled with --no-fused-attention (CUDA target)
#   ref/<ex>.cpu.jsonl     the CPU target's loss trajectories on the shipped data
#   gpt2s/gpt2s.onnx       the GPT-2 graph; its initializers point at external data that is
#                          NOT in the bundle: gpu_check regenerates it (examples/gpt2s/weights.py)
#   gpt2s/{tokens,targets}.npy, gpt2s/config.json
#   gpt2s/kernels-{fp32,bf16}.json  --emit=kernels-json of the GPT-2 executables (CUDA;
#                          the dry run: cuda-emulated)
#   bin/resnet50[-bf16]    torchvision's ResNet-50 (224x224, batch 64; SGD), weights read at start
#   resnet50/resnet50.onnx the graph (its weights regenerated there: bench/resnet50.py), config.json,
#                          kernels-fp32.json
#   lib.tar.gz             lib/: the shared libraries of bin/* the GPU machine may lack (ldd)
#   bundle.json            what was built, with which flags and steps
# It fails when the bundle exceeds 60 MiB.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=/usr/bin/python3

OUT=gpu-bundle
COMPILER=build/bin/oflow-compile
DRY=0
GPT2_CONFIG=""
STEPS=24
TORCH_ONLY=0
OPT_LEVEL=""
while (($#)); do
  case "$1" in
    --cpu-dry-run) DRY=1 ;;
    --out) OUT=$2; shift ;;
    --compiler) COMPILER=$2; shift ;;
    --gpt2-config) GPT2_CONFIG=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --torch-only) TORCH_ONLY=1 ;;
    --opt-level) OPT_LEVEL=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$GPT2_CONFIG" ] || { ((DRY)) && GPT2_CONFIG=tiny || GPT2_CONFIG=small; }
TARGET=cuda; ((DRY)) && TARGET=cpu
[ -n "$OPT_LEVEL" ] || { ((DRY)) && OPT_LEVEL=0; }
OPT_FLAGS=(--optimizer adamw --weight-decay 0.01 ${OPT_LEVEL:+-O "$OPT_LEVEL"})
LIMIT_MIB=60

[ -x "$COMPILER" ] || { echo "gpu_bundle: no compiler at $COMPILER (build it: scripts/setup.sh)" >&2; exit 1; }
COMPILER=$(cd "$(dirname "$COMPILER")" && pwd)/$(basename "$COMPILER")
log() { printf '[gpu_bundle %5ss] %s\n' "$SECONDS" "$*"; }

# The examples: optimizer AdamW (weight decay 0.01) with the learning rates of
# test/e2e/train_vs_torch.py; data = the shipped .npy files (they travel with the tree).
declare -A LR=([mlp]=0.01 [cnn]=0.005 [gpt]=0.005)
declare -A INPUTS=([mlp]="x y" [cnn]="x y" [gpt]="tokens targets")
EXAMPLES=(mlp cnn gpt)
GPT2_LR=0.0003

# The CUDA target must exist (unless this is the dry run).
if [ "$TARGET" = cuda ]; then
  probe=$(mktemp -d)
  if ! "$COMPILER" examples/mlp/mlp.onnx --target cuda -q -o "$probe/probe" 2>"$probe/err"; then
    echo "gpu_bundle: this oflow-compile cannot build --target cuda yet:" >&2
    sed 's/^/  /' "$probe/err" >&2
    echo "gpu_bundle: use --cpu-dry-run to test the flow with CPU executables" >&2
    rm -rf "$probe"; exit 1
  fi
  rm -rf "$probe"
fi

BF16_FLAGS=${OFLOW_BF16_FLAGS-}
if [ -z "${OFLOW_BF16_FLAGS+set}" ]; then
  if "$COMPILER" --help 2>&1 | grep -E -- '--precision' | grep -qi bf16; then
    BF16_FLAGS="--precision bf16"
  fi
fi

WORK=$(mktemp -d /tmp/gpu_bundle.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/ref" "$OUT/gpt2s"
log "target $TARGET, GPT-2 config $GPT2_CONFIG, examples ${EXAMPLES[*]}, $STEPS steps, into $OUT/"

# --- the examples -----------------------------------------------------------
for ex in "${EXAMPLES[@]}"; do
  model=examples/$ex/$ex.onnx
  flags=("${OPT_FLAGS[@]}" --lr "${LR[$ex]}")
  data=()
  for name in ${INPUTS[$ex]}; do data+=(--data "$name=examples/$ex/$name.npy"); done
  log "$ex: compile --target $TARGET"
  "$COMPILER" "$model" --target "$TARGET" -q "${flags[@]}" -o "$OUT/bin/$ex"
  cpu_exe="$OUT/bin/$ex"
  if [ "$TARGET" != cpu ]; then
    cpu_exe=$WORK/$ex-cpu
    log "$ex: compile --target cpu (reference)"
    "$COMPILER" "$model" --target cpu -q "${flags[@]}" -o "$cpu_exe"
  fi
  log "$ex: CPU reference, $STEPS steps"
  OPENBLAS_NUM_THREADS=1 "$cpu_exe" --steps "$STEPS" "${data[@]}" \
    --log-json "$OUT/ref/$ex.cpu.jsonl" >"$WORK/$ex.cpu.out"
  tail -n 1 "$WORK/$ex.cpu.out" | sed "s/^/  /"
done

# --- GPT-2 small ------------------------------------------------------------
log "gpt2s: export ($GPT2_CONFIG config) with external weights"
$PY examples/gpt2s/export.py --config "$GPT2_CONFIG" --out "$WORK/gpt2s" | sed 's/^/  /'
cp "$WORK/gpt2s/gpt2s.onnx" "$WORK/gpt2s/tokens.npy" "$WORK/gpt2s/targets.npy" \
   "$WORK/gpt2s/config.json" "$OUT/gpt2s/"
GPT2_BUILT=()
if ((TORCH_ONLY)); then
  log "gpt2s: --torch-only, no oflow executable"
else
  # --embed-weights-limit 0: the initial weights stay out of the executable; it
  # reads them at start from `--weights FILE` (gpu_check regenerates that file).
  g2flags=("${OPT_FLAGS[@]}" --lr "$GPT2_LR" --embed-weights-limit 0)
  log "gpt2s: compile --target $TARGET (fp32)"
  ( time "$COMPILER" "$WORK/gpt2s/gpt2s.onnx" --target "$TARGET" -q "${g2flags[@]}" \
      -o "$OUT/bin/gpt2s" ) 2>&1 | grep -E 'real|error' | sed 's/^/  /'
  [ -x "$OUT/bin/gpt2s" ] || { echo "gpu_bundle: gpt2s compile failed" >&2; exit 1; }
  GPT2_BUILT+=("gpt2s:fp32:")
  # The per-kernel predictions (h200 profile) the check compares with the
  # kernels' measured GPU times (CUDA targets only).
  kernels_report() { # PRECISION FLAGS...
    local prec=$1 target=$TARGET; shift
    # The dry run reports the kernels the emulated CUDA target would launch
    # (its calibration times their GEMM shapes on the CPU).
    [ "$TARGET" = cuda ] || target=cuda-emulated
    log "gpt2s: --emit=kernels-json ($prec)"
    "$COMPILER" "$WORK/gpt2s/gpt2s.onnx" --target "$target" -q "${g2flags[@]}" "$@" \
      --emit=kernels-json -o "$OUT/gpt2s/kernels-$prec.json" ||
      echo "  --emit=kernels-json failed: the check will have no predictions for $prec"
  }
  kernels_report fp32
  if [ -n "$BF16_FLAGS" ]; then
    log "gpt2s: compile --target $TARGET $BF16_FLAGS"
    # shellcheck disable=SC2086
    if "$COMPILER" "$WORK/gpt2s/gpt2s.onnx" --target "$TARGET" -q "${g2flags[@]}" $BF16_FLAGS \
        -o "$OUT/bin/gpt2s-bf16" 2>"$WORK/bf16.err"; then
      GPT2_BUILT+=("gpt2s-bf16:bf16:$BF16_FLAGS")
      # shellcheck disable=SC2086
      kernels_report bf16 $BF16_FLAGS
      # The same with attention unfused: what the fused kernels gain
      # (gpu_check's gpt2-oflow-bf16-unfused part). Not an executable of
      # the bundle's table of precisions: the check runs it when present.
      if [ "$TARGET" = cuda ] && "$COMPILER" --help 2>&1 | grep -q -- '--no-fused-attention'; then
        log "gpt2s: compile --target $TARGET $BF16_FLAGS --no-fused-attention"
        # shellcheck disable=SC2086
        "$COMPILER" "$WORK/gpt2s/gpt2s.onnx" --target "$TARGET" -q "${g2flags[@]}" $BF16_FLAGS \
          --no-fused-attention -o "$OUT/bin/gpt2s-bf16-unfused" 2>"$WORK/bf16-unfused.err" ||
          echo "  unfused bf16 compile failed: $(head -c 300 "$WORK/bf16-unfused.err")"
      fi
    else
      echo "  bf16 compile failed (its rows will be n/a): $(head -c 300 "$WORK/bf16.err")"
      echo "$(head -c 300 "$WORK/bf16.err")" >"$OUT/gpt2s/bf16.unsupported"
    fi
  else
    log "gpt2s: no bf16 compile option found in oflow-compile --help (rows n/a)"
    echo "oflow-compile --help lists no bf16 precision option" >"$OUT/gpt2s/bf16.unsupported"
  fi
fi
rm -rf "$WORK/gpt2s"   # the 500 MB of weights stay here

# --- ResNet-50 (issue #17) ----------------------------------------------------
# The graph only (100 MB of weights are regenerated on the GPU machine:
# bench/resnet50.py); plain SGD (AdamW's normalised steps amplify the last
# bits of near-zero gradients into different trajectories within a few
# steps, on either side). The dry run: batch 2 at 64x64.
RN_BATCH=64; RN_SIZE=224
((DRY)) && { RN_BATCH=2; RN_SIZE=64; }
RN_FLAGS=(--optimizer sgd --lr 0.01 --embed-weights-limit 0
          ${OPT_LEVEL:+-O "$OPT_LEVEL"})
mkdir -p "$OUT/resnet50"
log "resnet50: export (${RN_SIZE}x${RN_SIZE}, batch $RN_BATCH), the graph only"
if $PY bench/resnet50.py export --out "$WORK/resnet50" --batch "$RN_BATCH" --size "$RN_SIZE" \
    >/dev/null 2>"$WORK/rn50.err"; then
  cp "$WORK/resnet50/resnet50.onnx" "$WORK/resnet50/config.json" "$OUT/resnet50/"
  for prec in fp32 bf16; do
    exe=resnet50; [ "$prec" = bf16 ] && exe=resnet50-bf16
    log "resnet50: compile --target $TARGET --precision $prec"
    ( time "$COMPILER" "$WORK/resnet50/resnet50.onnx" --target "$TARGET" -q "${RN_FLAGS[@]}" \
        --precision "$prec" -o "$OUT/bin/$exe" ) 2>&1 | grep -E 'real|error' | sed 's/^/  /'
  done
  target=cuda; ((DRY)) && target=cuda-emulated
  "$COMPILER" "$WORK/resnet50/resnet50.onnx" --target "$target" -q "${RN_FLAGS[@]}" \
    --emit=kernels-json -o "$OUT/resnet50/kernels-fp32.json" ||
    echo "  resnet50: --emit=kernels-json failed"
else
  echo "  resnet50 export failed (its rows will be n/a): $(tail -c 300 "$WORK/rn50.err")"
fi
rm -rf "$WORK/resnet50"

# The CUDA runtime's own GPU test (gpu_check's runtime-check part).
if [ "$TARGET" = cuda ] && [ -x "$(dirname "$COMPILER")/oflow-cuda-runtime-check" ]; then
  cp "$(dirname "$COMPILER")/oflow-cuda-runtime-check" "$OUT/bin/"
fi

# --- shared libraries ---------------------------------------------------------
# Everything ldd resolves, except glibc's own libraries, libstdc++/libgcc (the GPU
# machine's are newer and compatible), the CUDA driver, and the CUDA libraries
# that torch's wheels (or the CUDA toolkit) provide there.
SKIP='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libutil\.so|libresolv\.so|libnsl\.so|libanl\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcublas|libcublasLt|libnccl|libcudart|libnvrtc|libnvJitLink|libcusparse|libcufft|libcurand|libcusolver|libcudnn|libnvToolsExt)'
: >"$WORK/libs"
for exe in "$OUT"/bin/*; do
  ldd "$exe" | awk '/=>/ && $3 ~ /^\// {print $1, $3}' >>"$WORK/libs"
  if ldd "$exe" | grep -q 'not found'; then
    echo "gpu_bundle: $exe has unresolved libraries here:" >&2; ldd "$exe" | grep 'not found' >&2; exit 1
  fi
done
mkdir -p "$WORK/lib"
sort -u "$WORK/libs" | while read -r soname path; do
  if [[ "$soname" =~ $SKIP ]]; then continue; fi
  cp -L "$path" "$WORK/lib/$soname"
done
# Compressed (OpenBLAS alone is 36 MB, 3x smaller gzipped); gpu_check.sh unpacks it.
tar -C "$WORK" -czf "$OUT/lib.tar.gz" lib
log "libraries carried ($(du -sh "$WORK/lib" | cut -f1), $(du -sh "$OUT/lib.tar.gz" | cut -f1) as lib.tar.gz): $(ls "$WORK/lib" | tr '\n' ' ')"

# The executables, compressed (3-4x: with ResNet-50's two they are ~60 MB);
# gpu_check.sh unpacks them into the bundle first.
tar -C "$OUT" -czf "$OUT/bin.tar.gz" bin
log "executables as bin.tar.gz: $(du -sh "$OUT/bin" | cut -f1) -> $(du -sh "$OUT/bin.tar.gz" | cut -f1)"
rm -rf "$OUT/bin"

# --- manifest -----------------------------------------------------------------
$PY - "$OUT" "$TARGET" "$DRY" "$STEPS" "$GPT2_CONFIG" "$GPT2_LR" "$COMPILER" "${GPT2_BUILT[@]}" <<'EOF'
import json, os, subprocess, sys, time
out, target, dry, steps, g2cfg, g2lr, compiler = sys.argv[1:8]
built = sys.argv[8:]
rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
lr = {"mlp": 0.01, "cnn": 0.005, "gpt": 0.005}
inputs = {"mlp": ["x", "y"], "cnn": ["x", "y"], "gpt": ["tokens", "targets"]}
examples = {ex: {"exe": "bin/" + ex, "reference": "ref/%s.cpu.jsonl" % ex, "steps": int(steps),
                 "optimizer": "adamw", "lr": lr[ex], "weight_decay": 0.01,
                 "data": {n: "examples/%s/%s.npy" % (ex, n) for n in inputs[ex]}}
            for ex in ["mlp", "cnn", "gpt"]}
gpt2 = {"config": "gpt2s/config.json", "graph": "gpt2s/gpt2s.onnx", "optimizer": "adamw",
        "lr": float(g2lr), "weight_decay": 0.01,
        "data": {"tokens": "gpt2s/tokens.npy", "targets": "gpt2s/targets.npy"},
        "executables": [{"exe": "bin/" + b.split(":")[0], "precision": b.split(":")[1],
                         "flags": b.split(":", 2)[2]} for b in built]}
unsup = os.path.join(out, "gpt2s", "bf16.unsupported")
if os.path.exists(unsup):
    gpt2["bf16_unsupported"] = open(unsup).read().strip()
import tarfile
packed = set(tarfile.open(os.path.join(out, "bin.tar.gz")).getnames())
rn_cfg = os.path.join(out, "resnet50", "config.json")
resnet50 = None
if os.path.exists(rn_cfg):
    c = json.load(open(rn_cfg))
    resnet50 = {"graph": "resnet50/resnet50.onnx", "batch": c["batch"], "size": c["size"],
                "seed": c["seed"], "params": c["params"], "optimizer": "sgd", "lr": 0.01,
                "executables": [e for e in ("resnet50", "resnet50-bf16") if "bin/" + e in packed]}
meta = {"target": target, "cpu_dry_run": dry == "1", "gpt2_config": g2cfg, "commit": rev,
        "dirty": bool(dirty), "built": time.strftime("%Y-%m-%d %H:%M:%S"),
        "compiler": os.path.relpath(compiler), "examples": examples, "gpt2s": gpt2,
        "resnet50": resnet50}
with open(os.path.join(out, "bundle.json"), "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
EOF

size=$(du -sb "$OUT" | cut -f1)
log "bundle $OUT: $(du -sh "$OUT" | cut -f1) ($size bytes), limit $LIMIT_MIB MiB"
du -sh "$OUT"/* | sed 's/^/  /'
if ((size > LIMIT_MIB * 1024 * 1024)); then
  echo "gpu_bundle: $OUT is larger than $LIMIT_MIB MiB" >&2
  exit 1
fi
# The device tool sends the working tree (tracked + untracked, not ignored) and the
# carried paths: 64 MiB together.
tree=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null | tail -n 1 | cut -f1)
fi
tree=${tree:-0}
log "working tree that travels: $((tree / 1024)) KiB; with the bundle: $(((tree + size) / 1024 / 1024)) MiB of 64"
if ((tree + size > 64 * 1024 * 1024)); then
  echo "gpu_bundle: working tree + bundle exceed the device tool's 64 MiB" >&2
  exit 1
fi
log "done; on the GPU machine: bash bench/gpu_check.sh $OUT$( ((DRY)) && echo ' --cpu-dry-run')"
