#!/bin/sh
# The cluster planner end to end through bubblescope-cli (docs/prediction.md,
# "The cluster model"): plan --hardware ranks layouts that fit, JSON and
# text agree; simulate --hardware writes a predicted run that info and
# compare read; bench cluster meets the issue's goal on Narayanan et al.
# Table 1 without fitting; bad input is one message.
# Usage: cluster_end_to_end.sh BUBBLESCOPE_CLI SCRATCH_DIR. Prints "ok" or
# "FAIL: why" (exit 1). Needs jq.
set -u
cli=$1
dir=$2
fail() {
  echo "FAIL: $*"
  exit 1
}
rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"

# 1. A plan of 64 A100s for the 18.4B model: every candidate fits 80 GiB,
# uses 64 GPUs and is ranked by step time.
"$cli" plan --hardware a100-80g --gpus 64 --model megatron-18.4b --global-batch 256 --json \
  >"$dir/plan.json" 2>"$dir/plan.err" || fail "plan --json: $(cat "$dir/plan.err")"
n=$(jq '.candidates | length' "$dir/plan.json")
[ "$n" -ge 1 ] || fail "no candidate"
jq -e '[.candidates[] | .memory_per_gpu_bytes <= 80 * 1024 * 1024 * 1024] | all' "$dir/plan.json" \
  >/dev/null || fail "a candidate exceeds 80 GiB"
jq -e '[.candidates[] | .layout.dp * .layout.tp * .layout.pp == 64] | all' "$dir/plan.json" \
  >/dev/null || fail "a candidate is not 64 GPUs"
jq -e '[.candidates[].step_s] | . == sort' "$dir/plan.json" >/dev/null || fail "not ranked"
"$cli" plan --hardware a100-80g --gpus 64 --model megatron-18.4b --global-batch 256 \
  >"$dir/plan.txt" 2>&1 || fail "plan: $(tail -1 "$dir/plan.txt")"
grep -q "TFLOP/s/GPU" "$dir/plan.txt" || fail "plan text has no TFLOP/s column"
first=$(jq -r '.candidates[0].name' "$dir/plan.json")
grep -q "^1 *$first " "$dir/plan.txt" || fail "text and JSON disagree on the best ($first)"

# 2. Refusals: an unknown profile, a model that fits nowhere.
"$cli" plan --hardware a100-81g --gpus 8 --model megatron-1.7b --global-batch 8 \
  >/dev/null 2>"$dir/bad.err" && fail "unknown hardware accepted"
grep -q "^error: unknown hardware 'a100-81g': not a built-in profile (a100-40g, a100-80g" \
  "$dir/bad.err" || fail "unknown hardware message: $(cat "$dir/bad.err")"
"$cli" plan --hardware a100-40g --gpus 8 --model megatron-1t --global-batch 8 \
  >/dev/null 2>"$dir/fit.err" && fail "the 1T model fitted 8 A100 40GB"
grep -q "^error: no layout fits the memory: .* 40 GiB of a GPU (the least needs" "$dir/fit.err" ||
  fail "memory refusal: $(cat "$dir/fit.err")"

"$cli" plan --hardware a100-80g --model megatron-1.7b --global-batch 8 >/dev/null 2>"$dir/gpus.err"
[ $? -eq 2 ] || fail "plan --hardware without --gpus did not exit 2"
[ "$(cat "$dir/gpus.err")" = "error: plan --hardware needs --gpus N" ] ||
  fail "missing --gpus message: $(cat "$dir/gpus.err")"

# 3. simulate --hardware writes a predicted run on two profiles; compare
# reads them side by side.
f=$dir/cluster.db
for hw in a100-80g h100-sxm; do
  "$cli" simulate --hardware "$hw" --model megatron-1.7b --dp 2 --tp 2 --pp 2 --micro-batches 4 \
    --schedule interleaved --chunks 2 --recompute --steps 1 --trace "$f" >"$dir/sim-$hw.txt" 2>&1 ||
    fail "simulate --hardware $hw: $(tail -1 "$dir/sim-$hw.txt")"
  grep -q "^tflops_per_gpu: [0-9]" "$dir/sim-$hw.txt" || fail "simulate printed no TFLOP/s"
done
"$cli" info "$f" >"$dir/info.txt" 2>&1 || fail "info"
grep -q "predicted dp2-tp2-pp2 interleaved v2 megatron-1.7b on h100-sxm" "$dir/info.txt" ||
  fail "info does not list the predicted run: $(cat "$dir/info.txt")"
"$cli" compare "$f" --run 1 --run 2 >"$dir/compare.txt" 2>&1 || fail "compare: $(tail -1 "$dir/compare.txt")"

# 4. The published runs: the issue's goal, median <= 5%, every row <= 10%,
# with the profile's parameters (no fit).
"$cli" bench cluster --no-fit >"$dir/bench.txt" 2>&1 || fail "bench cluster: $(tail -1 "$dir/bench.txt")"
median=$(sed -n 's/^median_abs_rel_error: //p' "$dir/bench.txt")
max=$(sed -n 's/^max_abs_rel_error: //p' "$dir/bench.txt")
[ -n "$median" ] && [ -n "$max" ] || fail "bench cluster printed no errors"
awk -v m="$median" -v x="$max" 'BEGIN { exit !(m <= 0.05 && x <= 0.10) }' ||
  fail "bench cluster: median $median max $max (goal 0.05, 0.10)"
echo ok
