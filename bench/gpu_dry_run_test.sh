#!/usr/bin/env bash
# ctest gpu-check-dry-run: the GPU check's whole flow on the CPU (about 60 s):
# bench/gpu_bundle.sh --cpu-dry-run (CPU executables, -O0, tiny GPT-2 config) into a
# temporary folder, then bench/gpu_check.sh on it. Passes when no part failed and
# every loss trajectory is within 1e-3 relative of PyTorch (the table's first goal).
#
#   bash bench/gpu_dry_run_test.sh [path/to/oflow-compile]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMPILER=${1:-$ROOT/build/bin/oflow-compile}
TMP=$(mktemp -d /tmp/gpu_dry_run.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
bash "$ROOT/bench/gpu_bundle.sh" --cpu-dry-run --compiler "$COMPILER" --out "$TMP/bundle"
mkdir "$TMP/out"
rc=0
OUT=$TMP/out bash "$ROOT/bench/gpu_check.sh" "$TMP/bundle" --cpu-dry-run || rc=$?
md=$TMP/out/gpu_check.md
[ -s "$md" ] || { echo "FAIL: no table written to \$OUT/gpu_check.md"; exit 1; }
((rc == 0)) || { echo "FAIL: gpu_check.sh exited $rc (a part failed)"; exit 1; }
for ex in mlp cnn gpt; do
  grep -q "^| $ex | ok |" "$md" || { echo "FAIL: example $ex is not ok"; exit 1; }
done
grep -q "^| oflow | fp32 (TF32 off; MFU vs tf32 peak) | ok |" "$md" || { echo "FAIL: the GPT-2 oflow fp32 row is not ok"; exit 1; }
grep -q "^| oflow | tf32 (--allow-tf32) | ok |" "$md" || { echo "FAIL: the GPT-2 oflow tf32 row is not ok"; exit 1; }
# ResNet-50 (issue #17): weights regenerated, oflow and torch in both precisions.
sed -n '/^### ResNet-50/,$p' "$md" >"$TMP/resnet50.md"
for row in "oflow | fp32 (TF32 off)" "torch eager | fp32 (TF32 off)" "oflow | bf16" "torch eager | bf16"; do
  grep -q "^| $row | ok |" "$TMP/resnet50.md" || { echo "FAIL: the ResNet-50 row '$row' is not ok"; cat "$TMP/resnet50.md"; exit 1; }
done
# The calibration is a device profile the compiler reads, per-shape GEMM times included.
"$COMPILER" "$ROOT/examples/mlp/mlp.onnx" --target cuda --emit=kernels-json --device "$TMP/out/calibrated-profile.json" -o "$TMP/profile.txt" >"$TMP/compile.log" 2>&1 ||
  { echo "FAIL: oflow-compile does not read the calibrated profile:"; cat "$TMP/compile.log"; exit 1; }
grep -q '"gemms"' "$TMP/profile.txt" || { echo "FAIL: the calibrated profile has no per-shape GEMM times"; exit 1; }
grep -q "^- loss within 0.001 relative of PyTorch (fp32): met" "$md" || { echo "FAIL: loss goal not met"; exit 1; }
for f in gpu_check.json gpu_check.log gpu_check_parts.log; do
  [ -s "$TMP/out/$f" ] || { echo "FAIL: \$OUT/$f missing"; exit 1; }
done
echo "PASS: GPU check dry run"
