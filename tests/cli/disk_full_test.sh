#!/usr/bin/env bash
# disk_full_test.sh CLI: `run` tracing onto a disk that fills up stops the
# job as it happens (not when it ends), says why, marks the run failed with
# that reason, and keeps the steps committed before. The disk is a 1 MiB
# tmpfs in a private mount namespace: needs root (skipped, exit 77, without).
set -u
cli="$1"
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "skipped: needs root and unshare to mount a small tmpfs"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/full"
# 3000 steps would take minutes; a full disk must end the job in seconds.
unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '$dir/full' || exit 77
  OPENBLAS_NUM_THREADS=1 timeout 120 '$cli' run --dp 2 --steps 3000 --trace '$dir/full/t.db' \
    >'$dir/run.out' 2>'$dir/run.err'
  echo \$? >'$dir/rc'
  ls '$dir/full' >'$dir/ls.out'
  '$cli' info '$dir/full/t.db' >'$dir/info.out' 2>&1"
rc=$(cat "$dir/rc" 2>/dev/null || echo none)
fail() { echo "FAIL: $*"; echo "--- run stderr"; cat "$dir/run.err"; echo "--- info"; cat "$dir/info.out"; exit 1; }
[ "$rc" = 124 ] && fail "the job ran on for 120 s after the disk filled"
[ "$rc" = 0 ] && fail "run succeeded on a full disk"
tail -1 "$dir/run.err" | grep -q '^error: the trace collector failed: trace file: .*disk is full' \
  || fail "run did not end with the disk-full reason"
grep -q '\[failed\]' "$dir/info.out" || fail "the run is not marked failed"
grep -q 'error: the trace collector failed: trace file: .*disk is full' "$dir/info.out" \
  || fail "the trace does not record the disk-full reason"
grep -Eq 'step records [1-9]' "$dir/info.out" || fail "the committed steps are gone"
# run's 256 KiB reserve (the space to mark the run in) goes with run.
! grep -q 'reserve' "$dir/ls.out" || fail "run left its space reserve: $(cat "$dir/ls.out")"
echo "ok: $(grep -Eo 'step records [0-9]+' "$dir/info.out") kept"
