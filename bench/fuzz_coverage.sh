#!/bin/bash
# Line coverage of the fuzz corpus (issue #16): builds the harnesses with
# clang's source-based coverage and the replay main (build-cov/, configured
# on first use), replays each harness's committed corpus
# (test/fuzz/corpus/<harness>/), and prints llvm-cov's line coverage of what
# the harness is for: lib/Import (and the model loader) for the importers,
# the reader's own source for the runtime readers. The per-file reports go
# to build-cov/coverage/<harness>.txt.
#
#   bench/fuzz_coverage.sh [HARNESS...]     (default: all seven)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-cov
. "$root/bench/fuzz_harnesses.sh"
harnesses=${*:-$all_harnesses}
jobs=${JOBS:-$(nproc)}
build_harnesses "$root" "$build" OFLOW_COVERAGE "$jobs" $harnesses

out=$build/coverage
mkdir -p "$out"
printf "%-16s %7s %14s %14s  %s\n" harness inputs "lines covered" "functions" "sources"
for h in $harnesses; do
  exe=$build/test/fuzz/oflow-fuzz-$h
  rm -f "$out/$h".*.profraw
  LLVM_PROFILE_FILE="$out/$h.%p.profraw" "$exe" "$root/test/fuzz/corpus/$h" >/dev/null 2>&1 || true
  llvm-profdata-22 merge -sparse "$out/$h".*.profraw -o "$out/$h.profdata"
  rm -f "$out/$h".*.profraw
  case $h in
    import-onnx|import-onnxtext) sources=("$root/lib/Import" "$root/lib/Driver/ModelLoader.cpp") ;;
    # The .mlir path parses and verifies oflow IR: the dialect's verifiers
    # and shape inference are what it exercises.
    import-mlir) sources=("$root/dialects/OFlow" "$root/lib/Driver/ModelLoader.cpp") ;;
    npy) sources=("$root/runtime/lib/Npy.cpp") ;;
    tensor-pb) sources=("$root/runtime/lib/TensorPb.cpp") ;;
    manifest) sources=("$root/runtime/lib/Manifest.cpp") ;;
    checkpoint) sources=("$root/runtime/lib/Checkpoint.cpp") ;;
  esac
  existing=()
  for s in "${sources[@]}"; do [ -e "$s" ] && existing+=("$s"); done
  llvm-cov-22 report "$exe" -instr-profile="$out/$h.profdata" "${existing[@]}" >"$out/$h.txt" 2>/dev/null
  total=$(grep '^TOTAL' "$out/$h.txt")
  # TOTAL regions missed cover functions missed executed lines missed cover [branches...]
  lines=$(echo "$total" | awk '{print $10 " of " $8}')
  funcs=$(echo "$total" | awk '{print $7}')
  inputs=$(ls "$root/test/fuzz/corpus/$h" | wc -l)
  printf "%-16s %7s %14s %14s  %s\n" "$h" "$inputs" "$lines" "$funcs" "${existing[*]#$root/}"
done

# Both ONNX front-ends together: the same importer reached from binary
# protobuf and from text.
if [ -f "$out/import-onnx.profdata" ] && [ -f "$out/import-onnxtext.profdata" ]; then
  llvm-profdata-22 merge -sparse "$out/import-onnx.profdata" "$out/import-onnxtext.profdata" \
    -o "$out/import-onnx-both.profdata"
  llvm-cov-22 report "$build/test/fuzz/oflow-fuzz-import-onnx" \
    -object "$build/test/fuzz/oflow-fuzz-import-onnxtext" \
    -instr-profile="$out/import-onnx-both.profdata" "$root/lib/Import" \
    "$root/lib/Driver/ModelLoader.cpp" >"$out/import-onnx-both.txt" 2>/dev/null
  total=$(grep '^TOTAL' "$out/import-onnx-both.txt")
  printf "%-16s %7s %14s %14s  %s\n" "onnx + onnxtext" "" \
    "$(echo "$total" | awk '{print $10 " of " $8}')" "$(echo "$total" | awk '{print $7}')" \
    "lib/Import lib/Driver/ModelLoader.cpp"
fi
