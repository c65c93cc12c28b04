#!/usr/bin/env bash
# run_hang_test.sh CLI WORKDIR: a 2-rank `run --hang-timeout 3` that traces;
# once it trains, rank 1 is stopped with SIGSTOP (it hangs; rank 0 waits on
# it in the gradient all-reduce). Passes when `run` ends by itself, exits
# non-zero with one error line naming rank 1, its last span (or, when rank 1
# was stopped before a span or heartbeat of it reached run, its last step or
# "none yet": under load rank 0 can reach step 5 first) and how long it
# made no progress (at least the 3 s timeout: the watchdog's own clock),
# no process of the job is left, and the trace's run is failed with that
# message. How long after the stop `run` ended is printed, not bounded: rank
# 1's last progress came before the stop by however long the machine kept it
# waiting, and the abort waits for a core (the watchdog's timing is checked
# on a fake clock by tests/cli/hang_watchdog_test.cpp). The ctest timeout
# turns a watchdog that never fires into a failure.
set -u
cli="$1"
dir="$2"
mkdir -p "$dir"
db="$dir/hang.db"
out="$dir/hang.out"
err="$dir/hang.err"
rm -f "$db" "$db-wal" "$db-shm"
. "$(dirname "$0")/run_job_lib.sh"

start_run 5 --dp 2 --steps 1000000 --trace "$db" --hang-timeout 3
grep -q 'bubblescope-heartbeat' "$out" "$err" && fail "heartbeat lines reached the user"
find_job
victim=$(rank_pid 1)
[ -n "$victim" ] || fail "rank 1 not found among mpirun's children"

start=$(date +%s%N)
kill -STOP "$victim"
wait "$run_pid"
rc=$?
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
run_pid=""
echo "run exited with $rc ${run_ms} ms after rank 1 was stopped"
[ "$rc" -ne 0 ] || fail "run exited 0"
for p in $job; do alive "$p" && fail "job process $p still runs after run exited"; done
[ "$(wc -l <"$err")" -eq 1 ] || fail "expected one line on stderr"
line='^error: rank 1 made no progress for ([3-9]|[1-9][0-9]+) s \(--hang-timeout 3\); its last span: ([A-Za-z_.0-9 -]+ \(step [0-9]+(, micro-batch [0-9]+)?\)|after step [0-9]+|none yet \(it reported no completed step\)); the watchdog aborted the job$'
grep -Eq "$line" "$err" || fail "unexpected error line: $(cat "$err")"
info=$("$cli" info "$db") || fail "info failed on the trace"
echo "$info" | grep -Eq '^run 1 .*\[failed\]' || fail "trace run not failed: $info"
echo "$info" | grep -Eq '^  error: rank 1 made no progress for' || fail "trace error: $info"
echo "PASS: $(cat "$err")"
