# Sourced by bench/fuzz.sh and bench/fuzz_coverage.sh: builds the fuzz
# harnesses in a clang 22 build of its own.
#   build_harnesses ROOT BUILD OPTION JOBS HARNESS...
# configures BUILD with -DOPTION=ON on first use (OFLOW_FUZZ or
# OFLOW_COVERAGE), then builds oflow-fuzz-<harness> for each HARNESS.
all_harnesses="import-onnx import-onnxtext import-mlir npy tensor-pb manifest checkpoint"

build_harnesses() {
  local root=$1 build=$2 option=$3 jobs=$4
  shift 4
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
      -D"$option"=ON >/dev/null
  fi
  local targets="" h
  for h in "$@"; do targets="$targets oflow-fuzz-$h"; done
  ninja -C "$build" -j"$jobs" $targets
}
