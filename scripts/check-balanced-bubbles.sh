#!/usr/bin/env bash
# End-to-end check that a balanced pipeline layout measures the same bubble
# on every stage: runs LAYOUT once with SCHEDULE, traced, prints each stage's
# measured bubble from `report`, and fails when they differ by more than
# MAX_POINTS percentage points. On a balanced layout the stages idle equally
# (GPipe: each waits F + B a step), so a gap means a bubble was counted as
# something else (issue 13 item 8: a wait hidden in pp communication) - or
# that the machine was busy with other work (the check measures real time).
#
#   scripts/check-balanced-bubbles.sh [LAYOUT] [SCHEDULE] [MAX_POINTS]
#     LAYOUT      default samples/layouts/pp2-balanced.jsonc
#     SCHEDULE    default gpipe
#     MAX_POINTS  default 3
# Needs build/cli/bubblescope-cli (./scripts/build.sh; BUILD_DIR=... to change).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${BUILD_DIR:-$root/build}/cli/bubblescope-cli
layout=${1:-$root/samples/layouts/pp2-balanced.jsonc}
schedule=${2:-gpipe}
max=${3:-3}
[[ -x $cli ]] || { echo "check-balanced-bubbles: $cli is not built (./scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
"$cli" run --layout "$layout" --schedule "$schedule" --name "balanced check" \
  --trace "$tmp/run.db" >"$tmp/run.log" 2>&1 \
  || { echo "check-balanced-bubbles: the run failed:" >&2; tail -5 "$tmp/run.log" >&2; exit 1; }
"$cli" report "$tmp/run.db" >"$tmp/report.txt"
# The "Pipeline stages" table: stage, ranks, measured %, formula %, text.
awk '/^Pipeline stages/ {on = 1} on {print} on && /^$/ {exit}' "$tmp/report.txt"
awk -v max="$max" -v secs=$((SECONDS - start)) '
  /^Pipeline stages/ {on = 1; next} on && /^$/ {on = 0}
  on && $1 ~ /^[0-9]+$/ {v = $3; sub(/%/, "", v); v += 0; n++
                         if (n == 1 || v < lo) lo = v; if (n == 1 || v > hi) hi = v}
  END {
    if (n < 2) {print "check-balanced-bubbles: fewer than 2 stages in the report" > "/dev/stderr"; exit 1}
    printf "stage bubble spread: %.1f points (max %s), %d s\n", hi - lo, max, secs
    exit (hi - lo > max) ? 1 : 0
  }' "$tmp/report.txt"
