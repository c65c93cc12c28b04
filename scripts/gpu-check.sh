#!/usr/bin/env bash
# GPU check: builds with CUDA from a clean build folder (build-gpu/), runs the
# tests labelled gpu (and the host-side CUDA maths test) and prints a summary
# with one line per test. Meant for a machine with an NVIDIA GPU; on one
# without, it builds, says so, and exits 0.
#
#   scripts/gpu-check.sh             # BUILD_DIR=build-gpu, JOBS=$(nproc)
#
# Exit status: 0 when every test that ran passed (or there is no GPU), 1 when
# a test failed, 2 when the build failed. The summary is also written to
# $BUILD_DIR/gpu-check-summary.txt (copy it into docs/benchmarks.md).
# Budget: well under 6 minutes on one H200 (configure + a partial build +
# tests); each test is capped at TEST_TIMEOUT seconds.
#
# Also a traced single-process GPU training run (train --backend cuda) and the
# GPU training benchmark (bench train --backend cuda --model gpt2-124m --torch,
# 3 timed steps: tokens_per_s, mfu, torch_tokens_per_s where PyTorch is there).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-$(nproc)}"
test_timeout="${TEST_TIMEOUT:-120}"
build_targets=(gpu_test gpu_nccl_test cuda_math_test bubblescope-cli)
summary_file="$build_dir/gpu-check-summary.txt"
start_s=$SECONDS
summary=()   # "STATUS  name  detail" lines, printed at the end
failed=0

if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if ! command -v nvcc >/dev/null; then
  echo "gpu-check: nvcc not found (install the CUDA toolkit or put it on PATH)" >&2
  exit 2
fi

note() { printf '== %s (%ds)\n' "$*" "$((SECONDS - start_s))"; }
add() { summary+=("$(printf '%-5s %s' "$1" "$2")"); }

print_summary() {
  {
    echo "gpu-check summary ($(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - start_s)) s)"
    echo "device: ${device:-none}"
    echo "nvcc: $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    printf '%s\n' "${summary[@]}"
  } | tee "$summary_file"
}

# ---- Build --------------------------------------------------------------------
note "configure $build_dir (clean)"
rm -rf "$build_dir"
mkdir -p "$build_dir"
if ! cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUBBLESCOPE_WITH_CUDA=ON -DBUBBLESCOPE_WITH_GUI=OFF >"$build_dir/configure.log" 2>&1; then
  tail -30 "$build_dir/configure.log"
  add FAIL "configure (see $build_dir/configure.log)"
  print_summary
  exit 2
fi
note "build ${build_targets[*]} ($jobs jobs)"
if ! ninja -C "$build_dir" -j "$jobs" "${build_targets[@]}" >"$build_dir/build.log" 2>&1; then
  grep -E "error|FAILED" "$build_dir/build.log" | head -30
  add FAIL "build (see $build_dir/build.log)"
  print_summary
  exit 2
fi
add PASS "build (${build_targets[*]})"

# ---- Tests ----------------------------------------------------------------------
# Runs ctest with the given selection and adds one summary line per test.
run_ctest() {
  local log="$1"
  shift
  local rc=0
  (cd "$build_dir" && OPENBLAS_NUM_THREADS=1 ctest --timeout "$test_timeout" "$@") \
    >"$log" 2>&1 || rc=$?
  # "  3/21 Test #31: gpu_test.Suite.Name ......   Passed    0.12 sec"
  while IFS= read -r line; do
    local name status secs
    name=$(sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/' <<<"$line")
    secs=$(sed -nE 's/.* ([0-9.]+) sec$/\1/p' <<<"$line")
    case "$line" in
      *" Passed "*) status=PASS ;;
      *"Skipped"*) status=SKIP ;;
      *) status=FAIL ;;
    esac
    [ "$status" = FAIL ] && failed=1
    add "$status" "$name ${secs:+(${secs} s)}"
  done < <(grep -E "Test +#[0-9]+: " "$log")
  if [ "$rc" -ne 0 ] && ! grep -qE "Test +#[0-9]+: " "$log"; then
    failed=1
    add FAIL "ctest $* (no tests ran; see $log)"
  fi
}

# The host-side maths of engine/cuda against the CPU kernels (no GPU needed).
note "host maths test"
run_ctest "$build_dir/ctest-math.log" -R '^cuda_math_test\.'

device=""
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  device=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader |
    head -1)
elif ! command -v nvidia-smi >/dev/null && [ -e /dev/nvidia0 ]; then
  device="unknown (no nvidia-smi; /dev/nvidia0 exists)"  # the tests decide
fi
if [ -z "$device" ]; then
  note "no GPU on this machine: the gpu tests are skipped"
  add SKIP "gpu tests: no GPU on this machine"
  print_summary
  exit "$failed"
fi

note "gpu tests on $device"
run_ctest "$build_dir/ctest-gpu.log" -L gpu

# ---- A traced single-process GPU training run ------------------------------------
traced_gpu_run() {
  local db="$build_dir/gpu-train.db" log="$build_dir/gpu-train.log"
  rm -f "$db"
  note "traced GPU run (train --backend cuda, tiny, 5 steps)"
  if "$build_dir/cli/bubblescope-cli" train --backend cuda --model tiny --steps 5 \
    --trace "$db" >"$log" 2>&1 &&
    "$build_dir/cli/bubblescope-cli" info "$db" >>"$log" 2>&1; then
    add PASS "traced GPU run: $(grep -E '^step +5/5' "$log" | head -1)"
  else
    failed=1
    add FAIL "traced GPU run (see $log)"
  fi
}
gpu_bench() {
  local log="$build_dir/gpu-bench.log"
  note "GPU training bench (bench train --backend cuda, gpt2-124m, 3 steps, --torch)"
  if timeout "$test_timeout" "$build_dir/cli/bubblescope-cli" bench train --backend cuda \
    --model gpt2-124m --steps 3 --batch-size 8 --torch >"$log" 2>&1; then
    add PASS "GPU bench: $(grep -E '^(tokens_per_s|mfu|torch_tokens_per_s|ratio_to_torch|torch):' \
      "$log" | paste -sd ' ' -)"
  else
    failed=1
    add FAIL "GPU bench (see $log)"
  fi
}
traced_gpu_run
gpu_bench

print_summary
if [ "$failed" -ne 0 ]; then
  echo "gpu-check: FAILED (logs in $build_dir/ctest-*.log)"
fi
exit "$failed"
