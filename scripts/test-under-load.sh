#!/usr/bin/env bash
# test-under-load.sh [-n RUNS] [-w WORKERS] [-- CTEST_ARGS...]
#
# Runs the default test suite (what ./scripts/test.sh runs: every test but
# the `slow` label) RUNS times in a row (default 3) while a load generator
# keeps WORKERS busy loops running (default twice the cores), and prints
# each run's result, time and the load average. Exits 0 only when every run
# passed. The tests must not depend on how fast the machine is
# (docs/testing.md); this is the check that they do not.
#
# The load: WORKERS processes of `while :; do :; done` (bash, nothing to
# install), started before the first run and stopped on every way out of
# this script (end, failure, Ctrl-C, SIGTERM). LOAD_NICE (default 0) is their
# nice level: on a machine shared with other work, LOAD_NICE=19 adds only
# what the others leave idle. Expects a built tree (./scripts/build.sh);
# CTEST_ARGS go to ctest after the defaults (e.g. -- -R tracer to try one
# suite). Results also go to build/test-under-load.log.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
workers=$((2 * $(nproc)))
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    -w) workers="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -f build/CTestTestfile.cmake ] || { echo "error: no build/ to test: run ./scripts/build.sh first" >&2; exit 2; }

load_pids=()
suite_pid=""
stop_load() {
  [ ${#load_pids[@]} -gt 0 ] || return 0
  kill "${load_pids[@]}" 2>/dev/null || true
  wait "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
}
# On Ctrl-C or SIGTERM: the running suite (its own process group) and the
# load stop at once, not when the suite would have ended.
stop_all() {
  [ -z "$suite_pid" ] || kill -TERM -- "-$suite_pid" 2>/dev/null || true
  stop_load
}
trap stop_load EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

log=build/test-under-load.log
say() { echo "$*" | tee -a "$log"; }
: >"$log"
say "test-under-load: $runs run(s) of the default suite (-LE slow), $workers busy loops at nice ${LOAD_NICE:-0}, $(nproc) cores"
say "before the load: $(uptime)"
for _ in $(seq 1 "$workers"); do
  nice -n "${LOAD_NICE:-0}" bash -c 'while :; do :; done' &
  load_pids+=($!)
done

export OPENBLAS_NUM_THREADS=1
passed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  rc=0
  setsid bash -c 'cd build && exec ctest --output-on-failure -j "$(nproc)" --timeout 600 -LE slow "$@"' \
    ctest "$@" >"build/test-under-load-$i.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid" || rc=$?
  suite_pid=""
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E '^[0-9]+% tests passed' "build/test-under-load-$i.log" || echo "no ctest summary")
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); verdict=PASS
  else
    verdict=FAIL
  fi
  say "run $i: $verdict in ${secs} s ($summary); $(uptime | sed 's/.*load average/load average/')"
  [ "$rc" -eq 0 ] || grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Not Run)\)' \
    "build/test-under-load-$i.log" | tee -a "$log" || true
done
stop_load
say "$passed of $runs runs passed under load (logs: build/test-under-load-N.log)"
[ "$passed" -eq "$runs" ]
