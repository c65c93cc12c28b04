#!/usr/bin/env bash
# GPU check (issue 34 point 4): the one prepared script for a machine with an
# NVIDIA GPU. It checks what is wired today and says SKIP (not wired) for what
# is not, with one PASS / FAIL / SKIP line per check, printed at the end and
# written to $BUILD_DIR/gpu-check-summary.txt. No network is needed.
#
#   scripts/gpu-check.sh              # BUILD_DIR=build-gpu JOBS=$(nproc) TEST_TIMEOUT=120 STEPS=5
#   CLEAN=0 scripts/gpu-check.sh      # a rerun after a fix: keeps $BUILD_DIR, builds incrementally
#   scripts/gpu-check.sh --self-test  # checks the loss comparison on made-up logs (no GPU, no build)
#
# Checks, in order:
#   build       configure $BUILD_DIR from scratch (CUDA on, GUI off; CLEAN=0 keeps it) and build
#               only gpu_test, gpu_nccl_test, cuda_math_test and bubblescope-cli
#   ctest       cuda_math_test and every test labelled gpu (ctest -L gpu), one line each
#   fp32 train  train --backend cuda --model tiny against the same run on the CPU
#               (same seed, $STEPS steps): every printed loss within 1e-4 relative,
#               plus 1e-4 absolute for the printout's rounding (%.4f: each printed
#               loss is off its value by up to 5e-5)
#   trace       that GPU run's trace file (--trace) opens with `info` and, exported
#               to Chrome JSON, holds CUPTI's kernels
#   bf16 train  train --backend cuda --precision bf16 against the fp32 CPU run:
#               every loss within 2e-2 relative (gpu_test's bound for bf16 operands)
#   checkpoint  train --backend cuda --save, resumed on the cpu (--load): its step
#               against the CPU run one step longer, 1e-4 relative
#   parallel    run --backend cuda of dp2, tp2, pp2 1f1b, dp2 ZeRO-3 and dp2 with
#               fp16 grad compression against
#               run --backend cpu, each loss within 1e-4 relative (the ranks share
#               one GPU through host staging; 2+ GPUs: NCCL)
#   traced run  run --backend cuda --dp 2 --pp 2 --trace, exported to Chrome JSON:
#               dp all-reduces and pp sends with their dim, and CUPTI's kernels on
#               the ranks' GPU stream lanes
#   bench       bench train --backend cuda --model gpt2-124m --torch: tokens_per_s and mfu
#
# Exit status: 0 when every check that ran passed (SKIP lines allowed), 1 when
# one failed, 2 when nvcc is missing or the build failed, 3 when this machine
# has no GPU (then nothing is built or run: every check is a SKIP line).
# Budget: under 8 minutes on one H200 (most of it the build); each test and
# each run is capped at TEST_TIMEOUT seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-$(nproc)}"
test_timeout="${TEST_TIMEOUT:-120}"
steps="${STEPS:-5}"
clean="${CLEAN:-1}"
build_targets=(gpu_test gpu_nccl_test cuda_math_test bubblescope-cli)
summary_file="$build_dir/gpu-check-summary.txt"
start_s=$SECONDS
summary=()   # "STATUS  name  detail" lines, printed at the end
failed=0
device=""

note() { printf '== %s (%ds)\n' "$*" "$((SECONDS - start_s))"; }
add() {
  summary+=("$(printf '%-5s %s' "$1" "$2")")
  if [ "$1" = FAIL ]; then failed=1; fi
}

# Compares the "step N/M | loss X | ..." lines of two train logs: prints one
# detail line and succeeds when both have the same steps and every loss pair
# is within rel * |cpu| + abs.
compare_losses() {
  local cpu_log="$1" gpu_log="$2" rel="$3" abs="$4"
  awk -v rel="$rel" -v abs="$abs" -v finite='^[-+]?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$' '
    function loss_of(line,   m) {
      if (match(line, /\| loss [-+0-9.eEnaif]+ /)) return substr(line, RSTART + 7, RLENGTH - 8)
      return ""
    }
    FNR == 1 { file++ }
    /^step +[0-9]+\/[0-9]+ \| loss / {
      split($0, a, /[ \/]+/)
      step = a[2]
      if (file == 1) { cpu[step] = loss_of($0); order[++n] = step }
      else gpu[step] = loss_of($0)
    }
    END {
      if (n == 0) { print "no step lines in the CPU run"; exit 1 }
      worst = 0; bad = ""
      for (i = 1; i <= n; i++) {
        s = order[i]
        if (!(s in gpu)) { print "step " s " missing from the GPU run"; exit 1 }
        # NaN-aware: only plain decimal numbers compare; nan, inf (which some
        # awks read as 0) or nothing on either side fail.
        if (cpu[s] !~ finite || gpu[s] !~ finite) {
          print "step " s ": cpu " cpu[s] ", gpu " gpu[s] " (not a finite number)"; exit 1
        }
        c = cpu[s] + 0; g = gpu[s] + 0
        d = g - c; if (d < 0) d = -d
        m = c < 0 ? -c : c
        r = m > 0 ? d / m : d
        if (r > worst) worst = r
        if (d > rel * m + abs && bad == "") bad = "step " s ": cpu " cpu[s] ", gpu " gpu[s]
      }
      if (bad != "") { printf "%s (bound %g rel + %g abs)\n", bad, rel, abs; exit 1 }
      printf "%d steps, max relative difference %.2e (bound %g rel + %g abs)\n", n, worst, rel, abs
    }' "$cpu_log" "$gpu_log"
}

# --self-test: the comparison on made-up logs, so that it is known to fail.
if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  line() { printf 'step %5d/3 | loss %s | lr 1.00e-03 | grad norm 1.000 |      100 tok/s |    0.01 s\n' "$1" "$2"; }
  { echo "model tiny"; line 1 5.5000; line 2 5.4000; line 3 5.3000; } >"$tmp/cpu"
  { line 1 5.5001; line 2 5.4004; line 3 5.3000; } >"$tmp/near"
  { line 1 5.5000; line 2 5.4020; line 3 5.3000; } >"$tmp/far"
  { line 1 5.5000; line 2 nan; line 3 5.3000; } >"$tmp/nan"
  { line 1 5.5000; line 2 5.4000; } >"$tmp/short"
  ok=0
  expect() {  # expect pass|fail LOG
    local got=pass detail
    detail=$(compare_losses "$tmp/cpu" "$tmp/$2" 1e-4 1e-4) || got=fail
    if [ "$got" = "$1" ]; then echo "ok   $2: $detail"; else echo "BAD  $2 ($got, wanted $1): $detail"; ok=1; fi
  }
  expect pass cpu
  expect pass near
  expect fail far
  expect fail nan
  expect fail short
  exit "$ok"
fi

print_summary() {
  mkdir -p "$build_dir"
  {
    echo "gpu-check summary ($(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - start_s)) s)"
    echo "device: ${device:-none}"
    echo "nvcc: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    printf '%s\n' "${summary[@]}"
  } | tee "$summary_file"
}

skip_not_wired() {
  :  # everything the script checks is wired (docs/gpu.md: what is left)
}

# The parallel layouts run on the device against the CPU, each `run` flags.
# dp2 fp16: grad compression, its buckets staged through the host to the
# CPU's codec (docs/gpu.md); fp16 rounds each element once, so a GPU gradient
# one fp32 ulp off the CPU's moves its code by at most one fp16 step and the
# losses stay within the uncompressed runs' 1e-4.
parallel_layouts=("dp2:--dp 2" "tp2:--tp 2" "pp2 1f1b:--pp 2 --schedule 1f1b --micro-batches 2"
  "dp2 ZeRO-3:--dp 2 --zero 3" "dp2 fp16:--dp 2 --grad-compression fp16")

if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# ---- Is there a GPU? -------------------------------------------------------------
no_gpu_reason=""
if command -v nvidia-smi >/dev/null; then
  if smi=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1) &&
    [ -n "$smi" ]; then
    device=$(head -1 <<<"$smi")
    gpus=$(wc -l <<<"$smi")
    [ "$gpus" -gt 1 ] && device="$device (x$gpus)"
  else
    no_gpu_reason="nvidia-smi: $(head -1 <<<"$smi")"
  fi
elif [ -e /dev/nvidia0 ]; then
  device="unknown (no nvidia-smi; /dev/nvidia0 exists)"  # the tests decide
else
  no_gpu_reason="no nvidia-smi and no /dev/nvidia0"
fi
if [ -z "$device" ]; then
  echo "gpu-check: no GPU on this machine ($no_gpu_reason): nothing built or run (exit 3)"
  for check in build "ctest -L gpu" "train fp32 vs cpu" "trace of the GPU run" \
    "train bf16 vs cpu" "checkpoint cuda -> cpu" "${parallel_layouts[@]%%:*}" "traced dp2 x pp2 on cuda" "kernels on GPU lanes in a trace" \
    "bench train gpt2-124m"; do
    add SKIP "$check: no GPU"
  done
  skip_not_wired
  print_summary
  exit 3
fi

if ! command -v nvcc >/dev/null; then
  echo "gpu-check: nvcc not found (install the CUDA toolkit or put it on PATH)" >&2
  add FAIL "build: nvcc not found"
  print_summary
  exit 2
fi

# ---- Build --------------------------------------------------------------------
if [ "$clean" = 1 ]; then
  note "configure $build_dir (clean) on $device"
  rm -rf "$build_dir"
else
  note "configure $build_dir (kept: CLEAN=0) on $device"
fi
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
cli="$build_dir/cli/bubblescope-cli"

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
    add "$status" "$name ${secs:+(${secs} s)}"
  done < <(grep -E "Test +#[0-9]+: " "$log")
  if [ "$rc" -ne 0 ] && ! grep -qE "Test +#[0-9]+: " "$log"; then
    add FAIL "ctest $* (no tests ran; see $log)"
  fi
}

note "host maths test"
run_ctest "$build_dir/ctest-math.log" -R '^cuda_math_test\.'
note "gpu tests (ctest -L gpu)"
run_ctest "$build_dir/ctest-gpu.log" -L gpu

# ---- Single-process training: GPU against CPU, traced ----------------------------
train_fp32() {
  local cpu_log="$build_dir/train-cpu.log" gpu_log="$build_dir/train-gpu.log"
  local db="$build_dir/train-gpu.db" detail
  rm -f "$db"
  note "train tiny, $steps steps: cpu, then cuda (traced)"
  if ! timeout "$test_timeout" "$cli" train --backend cpu --model tiny --steps "$steps" \
    --seed 1234 >"$cpu_log" 2>&1; then
    add FAIL "train fp32 vs cpu: the CPU run failed (see $cpu_log)"
    add SKIP "trace of the GPU run: no GPU run"
    return
  fi
  if ! timeout "$test_timeout" "$cli" train --backend cuda --model tiny --steps "$steps" \
    --seed 1234 --trace "$db" >"$gpu_log" 2>&1; then
    add FAIL "train fp32 vs cpu: the GPU run failed: $(grep -m1 '^error' "$gpu_log" || tail -1 "$gpu_log")"
    add SKIP "trace of the GPU run: no GPU run"
    return
  fi
  if detail=$(compare_losses "$cpu_log" "$gpu_log" 1e-4 1e-4); then
    add PASS "train fp32 vs cpu: $detail"
  else
    add FAIL "train fp32 vs cpu: $detail (logs $cpu_log, $gpu_log)"
  fi
  # The trace opens, and holds CUPTI's kernels on GPU stream lanes (the
  # single process starts its collector like every traced GPU rank).
  local json="$build_dir/train-gpu.json" info="$build_dir/train-gpu-info.log" kernels
  if ! "$cli" info "$db" >"$info" 2>&1 ||
    ! "$cli" export "$db" "$json" --run 1 --format chrome >>"$info" 2>&1; then
    add FAIL "trace of the GPU run (see $info)"
    return
  fi
  kernels=$(grep -c '"cat":"kernel"' "$json" || true)
  if [ "$kernels" -gt 0 ]; then
    add PASS "trace of the GPU run: $db opens, $kernels kernels on GPU lanes in $json"
  else
    add FAIL "trace of the GPU run: $db opens but holds no kernels (CUPTI; $json, $gpu_log)"
  fi
}

# ---- bf16 operands against the fp32 CPU run ---------------------------------------
# Bound 2e-2 relative per step: gpu_test's CudaTrainer test bounds 5 steps of
# tiny with bf16 operands (8 bits of mantissa, fp32 accumulation) so.
train_bf16() {
  local cpu_log="$build_dir/train-cpu.log" gpu_log="$build_dir/train-gpu-bf16.log" detail
  note "train tiny --precision bf16, $steps steps, against the CPU run"
  if [ ! -s "$cpu_log" ]; then
    add SKIP "train bf16 vs cpu: no CPU run"
    return
  fi
  if ! timeout "$test_timeout" "$cli" train --backend cuda --precision bf16 --model tiny \
    --steps "$steps" --seed 1234 >"$gpu_log" 2>&1; then
    add FAIL "train bf16 vs cpu: the GPU run failed: $(grep -m1 '^error' "$gpu_log" || tail -1 "$gpu_log")"
    return
  fi
  if detail=$(compare_losses "$cpu_log" "$gpu_log" 2e-2 1e-4); then
    add PASS "train bf16 vs cpu: $detail"
  else
    add FAIL "train bf16 vs cpu: $detail (logs $cpu_log, $gpu_log)"
  fi
}

# ---- A GPU run's checkpoint resumes on the CPU -------------------------------------
# The resumed CPU run's one step (step STEPS + 1; --steps is the total, the
# schedule the checkpoint's) against a CPU run of STEPS + 1 steps on the same
# schedule (--total-steps STEPS): 1e-4 relative, as fp32 above.
checkpoint_to_cpu() {
  local ckpt="$build_dir/gpu-checkpoint.safetensors" log="$build_dir/checkpoint.log"
  local ref="$build_dir/train-cpu-longer.log" resumed="$build_dir/train-cpu-resumed.log" detail
  note "train tiny on cuda --save, resume on the cpu"
  rm -f "$ckpt"
  if ! timeout "$test_timeout" "$cli" train --backend cuda --model tiny --steps "$steps" \
    --seed 1234 --save "$ckpt" >"$log" 2>&1 ||
    ! timeout "$test_timeout" "$cli" train --backend cpu --model tiny --steps "$((steps + 1))" \
      --total-steps "$steps" --seed 1234 >"$ref" 2>&1 ||
    ! timeout "$test_timeout" "$cli" train --backend cpu --load "$ckpt" --steps "$((steps + 1))" \
      >"$resumed" 2>&1; then
    add FAIL "checkpoint cuda -> cpu: a run failed (see $log, $ref, $resumed)"
    return
  fi
  # Only the steps both logs print (the resumed run prints step STEPS + 1).
  if detail=$(compare_losses <(grep -E "^step +$((steps + 1))/" "$ref") "$resumed" 1e-4 1e-4); then
    add PASS "checkpoint cuda -> cpu: resumed step $((steps + 1)): $detail"
  else
    add FAIL "checkpoint cuda -> cpu: $detail (logs $ref, $resumed)"
  fi
}

# ---- Parallel layouts on cuda against the CPU ------------------------------------
# Every rank of a job shares this machine's GPUs: with one GPU the ranks share
# it and the groups are host-staged; with two or more, NCCL.
parallel_vs_cpu() {
  local entry name flags slug cpu_log gpu_log detail
  for entry in "${parallel_layouts[@]}"; do
    name="${entry%%:*}"
    flags="${entry#*:}"
    slug=$(tr ' ' '-' <<<"$name")
    cpu_log="$build_dir/run-$slug-cpu.log"
    gpu_log="$build_dir/run-$slug-gpu.log"
    note "run $name ($flags), $steps steps: cpu, then cuda"
    # shellcheck disable=SC2086 # flags are words
    if ! timeout "$test_timeout" "$cli" run --backend cpu $flags --steps "$steps" \
      >"$cpu_log" 2>&1; then
      add FAIL "$name on cuda vs cpu: the CPU run failed (see $cpu_log)"
      continue
    fi
    # shellcheck disable=SC2086
    if ! timeout "$test_timeout" "$cli" run --backend cuda $flags --steps "$steps" \
      >"$gpu_log" 2>&1; then
      add FAIL "$name on cuda vs cpu: the GPU run failed: $(grep -m1 'error' "$gpu_log" || tail -1 "$gpu_log")"
      continue
    fi
    if detail=$(compare_losses "$cpu_log" "$gpu_log" 1e-4 1e-4); then
      add PASS "$name on cuda vs cpu: $detail ($(grep -m1 '^backend: ' "$gpu_log" | cut -c10-))"
    else
      add FAIL "$name on cuda vs cpu: $detail (logs $cpu_log, $gpu_log)"
    fi
  done
}

# ---- A traced parallel run: collectives with their dimension ---------------------
parallel_trace() {
  local db="$build_dir/run-traced.db" json="$build_dir/run-traced.json"
  local log="$build_dir/run-traced.log" dp pp kernels lanes
  rm -f "$db" "$db-wal" "$db-shm"
  note "run dp2 x pp2 1f1b on cuda, traced"
  if ! timeout "$test_timeout" "$cli" run --backend cuda --dp 2 --pp 2 --schedule 1f1b \
    --micro-batches 2 --steps 2 --trace "$db" >"$log" 2>&1 ||
    ! "$cli" export "$db" "$json" --run 1 --format chrome >>"$log" 2>&1; then
    add FAIL "traced dp2 x pp2 on cuda (see $log)"
    return
  fi
  dp=$(grep -c '"cat":"all_reduce".*"dim":"dp"' "$json" || true)
  pp=$(grep -c '"cat":"send".*"dim":"pp"' "$json" || true)
  if [ "$dp" -gt 0 ] && [ "$pp" -gt 0 ]; then
    add PASS "traced dp2 x pp2 on cuda: $dp dp all-reduces, $pp pp sends in $json"
  else
    add FAIL "traced dp2 x pp2 on cuda: $dp dp all-reduces, $pp pp sends (want both > 0; $json)"
  fi
  # CUPTI (started with every traced GPU rank): kernels on the ranks' GPU stream lanes.
  kernels=$(grep -c '"cat":"kernel"' "$json" || true)
  lanes=$(grep -c '"name":"thread_name".*"name":"gpu stream' "$json" || true)
  if [ "$kernels" -gt 0 ] && [ "$lanes" -gt 0 ]; then
    add PASS "kernels on GPU lanes in a trace: $kernels kernels on $lanes GPU stream lanes"
  else
    add FAIL "kernels on GPU lanes in a trace: $kernels kernels, $lanes GPU stream lanes (want both > 0; $json, $log)"
  fi
}

# ---- GPU training benchmark ------------------------------------------------------
gpu_bench() {
  local log="$build_dir/gpu-bench.log"
  note "bench train --backend cuda --model gpt2-124m (3 steps, --torch)"
  if timeout "$test_timeout" "$cli" bench train --backend cuda \
    --model gpt2-124m --steps 3 --batch-size 8 --torch >"$log" 2>&1 &&
    grep -qE '^tokens_per_s: ' "$log" && grep -qE '^mfu: ' "$log"; then
    add PASS "bench train gpt2-124m: $(grep -E '^(device|tokens_per_s|mfu|torch_tokens_per_s|ratio_to_torch|torch):' \
      "$log" | paste -sd ' ' -)"
  else
    add FAIL "bench train gpt2-124m (see $log)"
  fi
}

train_fp32
train_bf16
checkpoint_to_cpu
parallel_vs_cpu
parallel_trace
gpu_bench
skip_not_wired

print_summary
if [ "$failed" -ne 0 ]; then
  echo "gpu-check: FAILED (logs in $build_dir/)"
fi
exit "$failed"
