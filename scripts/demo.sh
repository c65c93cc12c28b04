#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs the default layout
# (a 3D layout: dp 2 x tp 2 x pp 2 = 8 ranks through mpirun, 1f1b, ZeRO 1,
# the small model, 20 steps, about 20 s on 2 cores) with tracing on, prints
# what the trace holds, then opens the desktop app on the trace when a
# display is present, else prints its report. BUBBLESCOPE_LAYOUT=FILE runs
# another layout.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# Only what the demo runs: the CLI, and the app when a display can show it
# (the tests build with test.sh; without a display the demo prints the report).
has_display() { [[ -n ${DISPLAY:-} || -n ${WAYLAND_DISPLAY:-} ]]; }
targets="bubblescope-cli"
if has_display; then targets="$targets bubblescope"; fi
BUBBLESCOPE_TARGETS="$targets" ./scripts/build.sh
export OPENBLAS_NUM_THREADS=1
trace="build/demo.db"
rm -f "$trace" "$trace-wal" "$trace-shm"
layout="${BUBBLESCOPE_LAYOUT:-samples/layouts/dp2-tp2-pp2-zero1.jsonc}"
./build/cli/bubblescope-cli run --layout "$layout" --trace "$trace"
./build/cli/bubblescope-cli info "$trace"
# With a display, open the desktop app on the trace; without one, print the report.
if has_display && [[ -x build/gui/bubblescope ]]; then
  ./build/gui/bubblescope "$trace"
else
  ./build/cli/bubblescope-cli report "$trace"
fi
