#!/usr/bin/env bash
# slurm_test.sh CLI SAMPLE WORKDIR: a real single-machine Slurm (slurmctld,
# slurmd and munged from Debian's slurm-wlm and munge, installed here when
# missing) runs the sbatch sample (2 tasks, `bubblescope-cli run` under
# srun, headless) to the end, then a second, long one that `scancel` stops:
# both traces are valid, the first run finished with every rank and step,
# written by the trace collector (a third srun task placed on the batch
# host, where `run` runs, not by a rank), the second marked stopped.
#
# The daemons run in a network namespace of their own (only loopback) with a
# generated slurm.conf (ProctrackType=proctrack/linuxproc, TaskPlugin=
# task/none, root as SlurmUser) and a munge key made for the test; sbatch,
# squeue and scancel run in it too. Nothing listens on this machine's
# network. Skips (exit 77, saying why) when Slurm cannot start here; every
# daemon and the namespace are removed on every exit path.
set -u
cli="$(readlink -f "$1")"
sample="$(readlink -f "$2")"
dir="$(readlink -f "$3")"
ns="bsslurm$$"
daemons=""

skip() { echo "SKIP: $*"; exit 77; }
cleanup() {
  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  for p in $daemons; do kill -9 "$p" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
logs() { for f in "$dir"/*.log "$dir"/job-*.out; do [ -f "$f" ] && { echo "--- $f"; tail -15 "$f"; }; done; }
fail() { echo "FAIL: $*"; logs; exit 1; }

# A run of this test killed outright (ctest's timeout) cannot clean up: its
# namespaces, named after its pid, are removed here once that pid is gone.
for old in $(ip netns list 2>/dev/null | sed -n 's/^\(bsslurm[0-9]*\)[-a-z]*\( .*\)\{0,1\}$/\1/p' | sort -u); do
  [ -d "/proc/${old#bsslurm}" ] && continue
  for n in $(ip netns list | awk '{print $1}' | grep -E "^$old(-[a-z]+)?$"); do
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$n" 2>/dev/null
  done
done
[ "$(id -u)" = 0 ] || skip "needs root (Slurm's daemons as SlurmUser root, a network namespace)"
if [ ! -x /usr/sbin/slurmctld ] || [ ! -x /usr/sbin/munged ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 ||
    skip "slurm-wlm and munge are missing and cannot be installed"
fi
for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged; do
  [ -x "$b" ] || skip "$b is missing"
done
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace here"
ip -n "$ns" link set lo up
# An address besides loopback: getaddrinfo (AI_ADDRCONFIG) resolves nothing
# in a namespace with loopback alone. A veth pair inside it reaches nowhere.
ip -n "$ns" link add bs0 type veth peer name bs1 && ip -n "$ns" addr add 10.213.1.1/24 dev bs0 &&
  ip -n "$ns" link set bs0 up || skip "cannot configure the namespace's network"
# Only the network namespace (ip netns exec would also remount /sys, hiding
# the cgroup file system slurmd looks for).
in_ns() { nsenter --net="/run/netns/$ns" "$@"; }
waited() { "$@" & wait $!; }

rm -rf "$dir" && mkdir -p "$dir/state" "$dir/spool" "$dir/munge" && cd "$dir" || fail "workdir"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$dir/munge/munge.key"
node=$(hostname -s)
cores=$(nproc)
cat >"$dir/slurm.conf" <<CONF
ClusterName=bstest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldPort=16817
SlurmdPort=16818
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cores State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$dir/slurm.conf"
unset SLURM_MPI_TYPE SLURM_JOB_ID

# The daemons stay in the foreground (-D / -F) as children of this script.
in_ns /usr/sbin/munged -F --force --key-file="$dir/munge/munge.key" \
  --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
  --seed-file="$dir/munge/seed" --log-file="$dir/munged.log" &
daemons="$daemons $!"; disown
for _ in $(seq 1 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.socket" ] || skip "munged did not start: $(tail -3 "$dir/munged.log" 2>/dev/null)"
in_ns /usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.stderr.log" 2>&1 &
daemons="$daemons $!"; disown
in_ns /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "$node" >"$dir/slurmd.stderr.log" 2>&1 &
daemons="$daemons $!"; disown
ready=""
for _ in $(seq 1 60); do
  state=$(in_ns timeout 5 sinfo -h -N -o '%T' 2>/dev/null | head -1)
  case "$state" in idle*|mixed*|allocated*) ready=1; break ;; esac
  sleep 0.2
done
[ -n "$ready" ] || { logs; skip "Slurm did not start here (node state '${state:-none}')"; }
echo "slurm: node $node ($cores cores) $state; srun --mpi=list: $(in_ns srun --mpi=list 2>&1 | tr -s '\n\t ' ' ')"

export PATH="$(dirname "$cli"):$PATH" OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# wait_job ID SECONDS: until the job has left the queue.
wait_job() {
  local end=$(( $(date +%s) + $2 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [ -z "$(in_ns timeout 5 squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

# 1. The sample to its end.
id=$(STEPS=5 TRACE="$dir/done.db" in_ns sbatch --parsable -D "$dir" -o "$dir/job-%j.out" "$sample") ||
  fail "sbatch refused the sample"
wait_job "$id" 120 || fail "job $id did not end in 120 s"
grep -Eq '^step +5/5' "$dir/job-$id.out" || fail "job $id did not train 5 steps"
info=$("$cli" info "$dir/done.db") || fail "info cannot read the trace of job $id"
echo "$info" | grep -E '^run|  rank'
echo "$info" | grep -Eq '^run 1 .*\[finished\]' || fail "job $id's run is not finished"
[ "$(echo "$info" | grep -c '^  rank ')" = 2 ] || fail "job $id's trace lacks a rank"
# The collector, srun's third task placed on the batch host (where `run`
# runs), wrote the trace: the run's writer is a process of this host that is
# neither rank, and `run` said where it placed it.
grep -q "^run: trace collector on $node (srun task 2)" "$dir/job-$id.out" ||
  fail "job $id did not place the trace collector on $node"
writer=$(python3 - "$dir/done.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
host, pid = db.execute("SELECT writer_host, writer_pid FROM runs WHERE id = 1").fetchone()
ranks = {r: p for r, p in db.execute("SELECT rank, pid FROM ranks WHERE run = 1")}
events = sorted(r for (r,) in db.execute("SELECT DISTINCT rank FROM event_blocks WHERE run = 1"))
print(host, pid, "rank-pids", *sorted(ranks.values()), "event-ranks", *events)
PY
) || fail "cannot read the writer of job $id's trace"
echo "trace writer: $writer"
read -r whost wpid _ r0 r1 _ e0 e1 <<<"$writer"
[ "$whost" = "$(hostname)" ] || fail "job $id's trace was written on '$whost', not on $(hostname)"
[ "$e0 $e1" = "0 1" ] || fail "job $id's trace lacks events of a rank ($writer)"
[ "$wpid" != "$r0" ] && [ "$wpid" != "$r1" ] ||
  fail "job $id's trace was written by a rank (pid $wpid), not by the collector"

# 2. A long job, cancelled while it trains.
id=$(STEPS=1000000 TRACE="$dir/stopped.db" in_ns sbatch --parsable -D "$dir" -o "$dir/job-%j.out" \
  "$sample") || fail "sbatch refused the second job"
for _ in $(seq 1 600); do
  grep -Eq '^step +20/' "$dir/job-$id.out" 2>/dev/null && break
  sleep 0.1
done
grep -Eq '^step +20/' "$dir/job-$id.out" || fail "job $id made no progress"
in_ns scancel "$id" || fail "scancel $id"
wait_job "$id" 60 || fail "job $id still queued 60 s after scancel"
info=$("$cli" info "$dir/stopped.db") || fail "info cannot read the trace of the cancelled job"
echo "$info" | grep -E '^run|  error'
echo "$info" | grep -Eq '^run 1 .*\[stopped\]' || fail "the cancelled job's run is not marked stopped"
"$cli" export "$dir/stopped.db" --run 1 --format chrome "$dir/stopped.json" >/dev/null ||
  fail "export failed on the cancelled job's trace"
echo "PASS: sbatch ran the sample to the end; scancel stopped job $id and its run reads stopped"
