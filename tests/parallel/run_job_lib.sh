# run_job_lib.sh: sourced by the run_*_test.sh scripts, which set `cli`,
# `out` and `err` (files for run's stdout and stderr) first.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# fail MESSAGE: says why with run's output, kills what is left of the job,
# exits 1.
fail() {
  echo "FAIL: $*"
  echo "--- run stdout (tail)"; tail -5 "$out"
  echo "--- run stderr"; cat "$err"
  [ -n "${run_pid:-}" ] && kill -9 "$run_pid" 2>/dev/null
  for p in ${job:-}; do kill -9 "$p" 2>/dev/null; done
  exit 1
}

# start_run STEP ARGS...: starts `$cli run ARGS` in the background (pid in
# run_pid) and waits until rank 0 has printed step STEP.
start_run() {
  local step="$1"
  shift
  : >"$out"  # not the last run's output: the background job may open it late
  : >"$err"
  "$cli" run "$@" >"$out" 2>"$err" &
  run_pid=$!
  for _ in $(seq 1 600); do
    grep -Eq "^step +$step/" "$out" && return 0
    kill -0 "$run_pid" 2>/dev/null || fail "run ended before training"
    sleep 0.1
  done
  fail "no progress to step $step after 60 s"
}

# find_job: mpirun (run's child) in mpirun_pid; it and the ranks (its
# children) in job.
find_job() {
  mpirun_pid=$(pgrep -P "$run_pid" | head -1)
  job="$mpirun_pid $(pgrep -P "$mpirun_pid" | tr '\n' ' ')"
}

# rank_pid R: the pid of rank R among mpirun's children (OpenMPI tells each
# its rank in the environment).
rank_pid() {
  for p in $(pgrep -P "$mpirun_pid"); do
    r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ "$r" = "$1" ] && echo "$p"
  done
}

# alive PID: true while PID runs (a zombie is gone).
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null; }

# holders_of FILE...: the pids of the processes that hold any FILE open
# (their /proc/PID/fd links point at it), space-separated; empty when none.
holders_of() {
  local f match=()
  for f in "$@"; do match+=(-o -lname "$(readlink -f "$f")"); done
  find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \( "${match[@]:1}" \) 2>/dev/null |
    cut -d/ -f3 | sort -u | tr '\n' ' '
}
