#!/usr/bin/env bash
# run_collector_hang_test.sh CLI WORKDIR: a 2-rank `run --hang-timeout 3`
# that traces; once it trains, the trace collector (MPI rank 2) is stopped
# with SIGSTOP. The ranks train on (their spans go to a full ring), so only
# the collector's silence shows the stall. Passes when `run` ends by itself,
# exits non-zero with one error line naming the collector and how long it was
# silent (at least the 3 s timeout), no process of the job is left, and the
# trace's run is failed with that message. The ctest timeout turns a
# watchdog that never fires into a failure.
set -u
cli="$1"
dir="$2"
mkdir -p "$dir"
db="$dir/collector-hang.db"
out="$dir/collector-hang.out"
err="$dir/collector-hang.err"
rm -f "$db" "$db-wal" "$db-shm"
. "$(dirname "$0")/run_job_lib.sh"

start_run 5 --dp 2 --steps 1000000 --trace "$db" --hang-timeout 3
find_job
victim=$(rank_pid 2)
[ -n "$victim" ] || fail "the collector (rank 2) not found among mpirun's children"

kill -STOP "$victim"
wait "$run_pid"
rc=$?
run_pid=""
echo "run exited with $rc"
[ "$rc" -ne 0 ] || fail "run exited 0"
for p in $job; do alive "$p" && fail "job process $p still runs after run exited"; done
grep -q 'bubblescope-heartbeat' "$out" "$err" && fail "heartbeat lines reached the user"
[ "$(wc -l <"$err")" -eq 1 ] || fail "expected one line on stderr"
line='^error: the trace collector \(MPI rank 2\) sent no heartbeat for ([3-9]|[1-9][0-9]+) s \(--hang-timeout 3\): it is stopped or frozen, and the spans the ranks sent since are not in the trace; the watchdog aborted the job$'
grep -Eq "$line" "$err" || fail "unexpected error line: $(cat "$err")"
info=$("$cli" info "$db") || fail "info failed on the trace"
echo "$info" | grep -Eq '^run 1 .*\[failed\]' || fail "trace run not failed: $info"
echo "$info" | grep -Eq '^  error: the trace collector \(MPI rank 2\) sent no heartbeat' ||
  fail "trace error: $info"
echo "PASS: $(cat "$err")"
