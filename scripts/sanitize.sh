#!/usr/bin/env bash
# The sanitizer builds (docs/testing.md, "Sanitizers"): the libraries and
# their single-process unit tests under ASan+UBSan (build-asan/) and under
# TSan (build-tsan/), without CUDA and the app. Each test binary is built and
# run in turn, the ones over the threaded and lock-free code first, so a
# stopped run has still checked something and says what. Any report fails
# the script (-fno-sanitize-recover, halt_on_error).
#
#   ./scripts/sanitize.sh            both builds, every unit test
#   ./scripts/sanitize.sh asan       ASan+UBSan only
#   ./scripts/sanitize.sh tsan       TSan only
#   BUBBLESCOPE_SANITIZE_TESTS="common_test tracer_test" ./scripts/sanitize.sh tsan
#
# The multi-process suites (mpirun jobs, `run`) stay out: OpenMPI's own
# allocations and its shared-memory transport are not sanitizer-clean, and a
# rank under ASan exceeds the jobs' timeouts on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
jobs="${BUBBLESCOPE_JOBS:-$(nproc)}"
# Threaded and lock-free parts first: the recorder's ring and the trace
# session (tracer), async_sink and the trace writer's thread (storage); then
# the rest of the host code.
default_tests="common_test trace_model_test tracer_test storage_test layout_test
  engine_components_test engine_kernels_test analysis_test import_test cli_unit_test"
read -r -a tests <<<"$(echo ${BUBBLESCOPE_SANITIZE_TESTS:-$default_tests})"
kinds=("${@:-asan tsan}")
read -r -a kinds <<<"${kinds[*]}"
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) flags="address,undefined" ;;
    tsan) flags="thread" ;;
    *) echo "sanitize.sh: unknown build '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  dir="build-$kind"
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUBBLESCOPE_WITH_CUDA=OFF \
    -DBUBBLESCOPE_WITH_GUI=OFF "-DBUBBLESCOPE_SANITIZE=$flags" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  for t in "${tests[@]}"; do
    echo "sanitize: $kind: building $t in $dir/"
    ninja -C "$dir" -j "$jobs" --quiet "$t"
    echo "sanitize: $kind: running $t"
    log="$dir/sanitize-$t.log"
    if ! (cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 900 -R "^$t\\.") >"$log" 2>&1
    then
      tail -n 80 "$log"
      echo "sanitize: $kind: $t FAILED (whole output: $log)"
      exit 1
    fi
    echo "sanitize: $kind: $t clean ($(grep -o '[0-9]*% tests passed.*' "$log" || true))"
  done
done
echo "sanitize: clean"
