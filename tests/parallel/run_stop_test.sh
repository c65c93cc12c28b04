#!/usr/bin/env bash
# run_stop_test.sh CLI WORKDIR MODE: a 2-rank `run` that traces, stopped from
# outside once it trains.
# - int, term: SIGINT or SIGTERM to `run` (what Ctrl-C and the app's Stop
#   send). Passes when `run` exits 128 + signal with the one line
#   "run: stopped by SIGxxx; run 1 marked stopped" on stderr, no process of
#   the job is left, the trace's run is [stopped] with that reason, and no
#   process holds the trace open after `run` has exited (nothing can write
#   to it any more).
# - kill-launcher: SIGKILL to `run`. Passes when every process of the job
#   ends by itself and the trace's run reads [interrupted].
# How long either takes is printed, not bounded: run's own 3 s grace before
# SIGKILL is its deadline; on a busy machine the rest waits for a core.
# HANG_S only turns a job that never ends into a failure.
set -u
cli="$1"
dir="$2"
mode="$3"
mkdir -p "$dir"
db="$dir/stop-$mode.db"
out="$dir/stop-$mode.out"
err="$dir/stop-$mode.err"
rm -f "$db" "$db-wal" "$db-shm"
. "$(dirname "$0")/run_job_lib.sh"
HANG_S=60

start_run 5 --dp 2 --steps 1000000 --trace "$db"
find_job
[ "$(echo $job | wc -w)" -ge 3 ] || fail "expected mpirun and 2 ranks, found: $job"
left() {
  local l=""
  for p in $job; do alive "$p" && l="$l $p"; done
  echo "$l"
}

case "$mode" in
  int) sig=INT; code=130 ;;
  term) sig=TERM; code=143 ;;
  kill-launcher) sig=KILL; code=137 ;;
  *) fail "unknown mode $mode" ;;
esac
start=$(date +%s%N)
kill -s "$sig" "$run_pid"
wait "$run_pid"
rc=$?
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
run_pid=""
[ "$rc" -eq "$code" ] || fail "run exited $rc, expected $code"

if [ "$mode" = kill-launcher ]; then
  while :; do
    l=$(left)
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ -z "$l" ] && break
    [ "$ms" -ge $((HANG_S * 1000)) ] && fail "job processes$l still run ${ms} ms after run was killed"
    sleep 0.05
  done
  echo "the job was gone ${ms} ms after run was SIGKILLed"
  info=$("$cli" info "$db") || fail "info failed on the trace"
  echo "$info" | grep -Eq '^run 1 .*\[interrupted\]' || fail "trace run not interrupted: $info"
  echo "PASS"
  exit 0
fi

echo "run exited with $rc after ${run_ms} ms"
l=$(left)
[ -z "$l" ] || fail "job processes$l still run after run exited"
[ "$(wc -l <"$err")" -eq 1 ] || fail "expected one line on stderr"
grep -Eqx "run: stopped by SIG$sig; run 1 marked stopped" "$err" || fail "unexpected stop line"
# Nothing writes to the file after run has exited: no process holds it (or
# its WAL) open, and every process of the job is gone, so none can open it.
holders=$(holders_of "$db" "$db-wal")
[ -z "$holders" ] || fail "processes $holders still hold the trace open after run exited"
info=$("$cli" info "$db") || fail "info failed on the trace"
echo "$info" | grep -Eq '^run 1 .*\[stopped\]' || fail "trace run not stopped: $info"
echo "$info" | grep -Eqx "  error: stopped by SIG$sig" || fail "trace reason: $info"
echo "PASS: $(cat "$err")"
