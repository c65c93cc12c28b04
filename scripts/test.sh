#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test with
# ctest. GPU tests (label gpu) skip cleanly on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
export OPENBLAS_NUM_THREADS=1
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
