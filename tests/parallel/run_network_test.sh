#!/usr/bin/env bash
# run_network_test.sh CLI WORKDIR: during a local 2-rank `run`, no process of
# the job (run, mpirun, the ranks) has a listening TCP socket on an address
# other than loopback: read from /proc/net/tcp and tcp6 and each process's
# socket inodes (/proc/PID/fd). Then the run is stopped with SIGTERM.
set -u
cli="$1"
dir="$2"
mkdir -p "$dir"
out="$dir/network.out"
err="$dir/network.err"
fail() {
  echo "FAIL: $*"
  echo "--- run stdout (tail)"; tail -5 "$out"
  echo "--- run stderr"; cat "$err"
  [ -n "${run_pid:-}" ] && kill -9 "$run_pid" 2>/dev/null
  for p in ${job:-}; do kill -9 "$p" 2>/dev/null; done
  exit 1
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$cli" run --dp 2 --steps 1000000 >"$out" 2>"$err" &
run_pid=$!
for _ in $(seq 1 600); do
  grep -Eq '^step +3/' "$out" && break
  kill -0 "$run_pid" 2>/dev/null || fail "run ended before training"
  sleep 0.1
done
grep -Eq '^step +3/' "$out" || fail "no progress to step 3 after 60 s"

# Every process of the job: run and its descendants.
job="$run_pid"
frontier="$run_pid"
while [ -n "$frontier" ]; do
  next=""
  for p in $frontier; do next="$next $(pgrep -P "$p" | tr '\n' ' ')"; done
  frontier=$(echo $next)
  job="$job $frontier"
done
[ "$(echo $job | wc -w)" -ge 4 ] || fail "expected run, mpirun and 2 ranks, found: $job"

inodes=""
for p in $job; do
  for fd in /proc/$p/fd/*; do
    t=$(readlink "$fd" 2>/dev/null) || continue
    case "$t" in socket:\[*\]) inodes="$inodes ${t#socket:[}" ;; esac
  done
done
inodes=$(echo "$inodes" | tr -d ']')
# Listening sockets (state 0A) of the job; loopback is 127.x.x.x (stored
# little-endian: the hex ends in 7F), ::1, or ::ffff:127.x.x.x.
listening=0
bad=""
for table in /proc/net/tcp /proc/net/tcp6; do
  while read -r _ local _ state _ _ _ _ _ inode _; do
    [ "$state" = 0A ] || continue
    case " $inodes " in *" $inode "*) ;; *) continue ;; esac
    listening=$((listening + 1))
    addr=${local%:*}
    case "$addr" in
      ??????7F | 00000000000000000000000001000000 | 0000000000000000FFFF0000??????7F) ;;
      *) bad="$bad $table:$local" ;;
    esac
  done < <(tail -n +2 "$table")
done
echo "job processes: $job; listening sockets: $listening"
[ -z "$bad" ] || fail "listening on non-loopback addresses:$bad"

kill -TERM "$run_pid"
wait "$run_pid"
run_pid=""
echo "PASS: $listening listening sockets of the job, all on loopback"
