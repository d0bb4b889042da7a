#!/usr/bin/env bash
# Sets up (installs packages if missing), builds, and runs every test:
# lit (dialect, importer, driver), GoogleTest, and the ONNX node-test walk.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${OFLOW_BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${OFLOW_JOBS:-2}"
