#!/usr/bin/env bash
# The main job: installs what is missing, builds, trains the default model on
# this machine with tracing on, and prints what the trace holds; then opens
# the desktop app on the trace when a display is present, else prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
export OPENBLAS_NUM_THREADS=1
trace="build/demo.db"
rm -f "$trace" "$trace-wal" "$trace-shm"
./build/cli/bubblescope-cli train --model tiny --steps 40 --trace "$trace"
./build/cli/bubblescope-cli info "$trace"
# With a display, open the desktop app on the trace; without one, print the report.
if [[ -n ${DISPLAY:-} || -n ${WAYLAND_DISPLAY:-} ]] && [[ -x build/gui/bubblescope ]]; then
  ./build/gui/bubblescope "$trace"
else
  ./build/cli/bubblescope-cli report "$trace"
fi
