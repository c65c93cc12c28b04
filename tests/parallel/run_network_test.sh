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
. "$(dirname "$0")/run_job_lib.sh"

start_run 3 --dp 2 --steps 1000000
find_job
job="$run_pid $job"  # run, mpirun and the ranks
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
