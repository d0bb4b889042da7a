#!/usr/bin/env bash
# Installs oflow's build and test dependencies (Debian 12 packages), then
# configures and builds. Idempotent: when every package is present it only
# (re)builds, incrementally.
#
#   scripts/setup.sh            install if needed, configure, build
#   OFLOW_BUILD_DIR=dir ...     build somewhere other than ./build
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools llvm-22 clang-22 lld-22
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libcli11-dev libfmt-dev googletest libgtest-dev libgmock-dev
  openmpi-bin libopenmpi-dev libopenblas-dev libopenblas0-openmp libdnnl-dev coinor-libcbc-dev ccache ninja-build cmake g++
  python3-onnx python3-numpy python3-torch python3-torchvision
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} missing packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${OFLOW_BUILD_DIR:-build}
JOBS=${OFLOW_JOBS:-2}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLLVM_USE_LINKER=lld -DCMAKE_EXE_LINKER_FLAGS="-B/usr/lib/llvm-22/bin" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
ninja -C "$BUILD_DIR" -j "$JOBS"
