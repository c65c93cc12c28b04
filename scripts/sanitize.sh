#!/usr/bin/env bash
# The sanitizer builds (docs/testing.md, "Sanitizers"): the libraries and
# their single-process unit tests under ASan+UBSan (build-asan/) and under
# TSan (build-tsan/), without CUDA and the app, then those tests run. Any
# report fails the script (-fno-sanitize-recover, halt_on_error).
#
#   ./scripts/sanitize.sh            both builds
#   ./scripts/sanitize.sh asan       ASan+UBSan only
#   ./scripts/sanitize.sh tsan       TSan only
#
# The multi-process suites (mpirun jobs, `run`) stay out: OpenMPI's own
# allocations and its shared-memory transport are not sanitizer-clean, and a
# rank under ASan exceeds the jobs' timeouts on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
jobs="${BUBBLESCOPE_JOBS:-$(nproc)}"
# The unit tests of the libraries with threads and lock-free parts (the
# recorder's ring, async_sink, the trace writer) and of the rest of the
# host code.
tests=(common_test trace_model_test storage_test tracer_test import_test analysis_test layout_test
       cli_unit_test engine_components_test engine_kernels_test)
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
  echo "sanitize: building $kind ($flags) in $dir/"
  ninja -C "$dir" -j "$jobs" --quiet "${tests[@]}"
  regex="^($(IFS='|'; echo "${tests[*]}"))\\."
  echo "sanitize: running the $kind unit tests"
  (cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 900 -R "$regex")
done
echo "sanitize: clean"
