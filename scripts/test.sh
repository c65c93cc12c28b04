#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the default suite
# with ctest: every test but those labelled `slow` (suites over about a
# minute each; `ctest -L slow` runs them, and CI does after this script).
# GPU tests (label gpu) skip cleanly on a machine without a GPU. README.md
# lists the labels and their times.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
export OPENBLAS_NUM_THREADS=1
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600 -LE slow
