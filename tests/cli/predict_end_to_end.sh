#!/bin/sh
# predict -> run -> compare, end to end through bubblescope-cli
# (docs/prediction.md): a tiny single-rank run is calibrated, the same layout
# is predicted from that calibration and written as a simulated run, and
# compare puts the two side by side; then the bad inputs of issue 15.
# Usage: predict_end_to_end.sh BUBBLESCOPE_CLI SCRATCH_DIR. Prints "ok" or
# "FAIL: why" (exit 1). Needs jq.
set -u
cli=$1
dir=$2
fail() {
  echo "FAIL: $*"
  exit 1
}
rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
f=$dir/e2e.db

# 1. A measured run and its calibration.
"$cli" run --model tiny --steps 3 --micro-batches 2 --trace "$f" >"$dir/run.txt" 2>&1 ||
  fail "run: $(tail -1 "$dir/run.txt")"
params=$(sed -n 's/^model tiny: \([0-9]*\) parameters.*/\1/p' "$dir/run.txt")
[ -n "$params" ] || fail "run printed no parameter count"
"$cli" calibrate --trace "$f" --json >"$dir/calibration.json" || fail "calibrate failed"
[ "$(jq -r '.model.preset' "$dir/calibration.json")" = tiny ] || fail "calibration model"
[ "$(jq -r '.ranks_per_host // 1' "$dir/calibration.json")" -le "$(jq -r '.cores' "$dir/calibration.json")" ] ||
  fail "one rank counted as oversubscribed"

# 2. The single-rank prediction follows from the calibration alone: m micro-
# batches of every layer's forward and backward (wall times: one rank is not
# oversubscribed) plus the optimizer's and the step's time outside ops
# (both per parameter) times Ψ.
expected_ms=$(jq -r --argjson m 2 --argjson params "$params" '
  def w(p; o): ([.ops[] | select(.part == p and .op == o) | .wall_ns] | first // 0);
  (($m * (.model.layers * (w("block"; "forward") + w("block"; "backward"))
         + w("embedding"; "forward") + w("embedding"; "backward")
         + w("head"; "forward") + w("head"; "backward")))
   + (w("optimizer"; "step") + w("step"; "other")) * $params) / 1e6' "$dir/calibration.json")
"$cli" simulate --model tiny --steps 3 --micro-batches 2 --calibration "$f" --trace "$f" \
  >"$dir/simulate.txt" 2>&1 || fail "simulate: $(tail -1 "$dir/simulate.txt")"
predicted_ms=$(sed -n 's/^predicted step \([0-9.]*\) ms.*/\1/p' "$dir/simulate.txt")
[ -n "$predicted_ms" ] || fail "simulate printed no predicted step"
awk -v p="$predicted_ms" -v e="$expected_ms" 'BEGIN { d = p - e; if (d < 0) d = -d; exit !(e > 0 && d <= 1e-3 * e + 0.002) }' ||
  fail "predicted step $predicted_ms ms, the calibration gives $expected_ms ms"
grep -q '^warning:' "$dir/simulate.txt" && fail "a matching calibration warned: $(grep '^warning:' "$dir/simulate.txt")"

# 3. The prediction is a simulated run of the file, and compare reads both.
"$cli" info "$f" >"$dir/info.txt" 2>&1 || fail "info failed"
grep -q '^run 2  predicted dp1 tiny  \[finished\].*simulated' "$dir/info.txt" ||
  fail "no simulated run 2: $(grep '^run' "$dir/info.txt")"
"$cli" compare "$f" --run 1 --run 2 >"$dir/compare.txt" 2>&1 || fail "compare: $(tail -1 "$dir/compare.txt")"
grep -Eq '^source +measured +simulated' "$dir/compare.txt" || fail "compare shows no source row"

# 4. Bad input. A calibration of another model is used, and said so.
"$cli" simulate --model small --micro-batches 2 --calibration "$f" --trace "$dir/other.db" \
  >"$dir/other.txt" 2>&1 || fail "another model's calibration refused: $(tail -1 "$dir/other.txt")"
grep -q '^warning: the calibration was measured on model tiny (C 32, T 32, V 256), not on this one (C 256, T 128, V 256)' \
  "$dir/other.txt" || fail "another model's calibration not said: $(cat "$dir/other.txt")"
# A layout that cannot run: simulate says what run says, and the file keeps its runs.
"$cli" simulate --model tiny --pp 4 --calibration "$f" --trace "$f" >/dev/null 2>"$dir/sim-bad.txt" &&
  fail "simulate accepted pp 4 of a 2-layer model"
"$cli" run --model tiny --pp 4 --trace "$dir/run-bad.db" >/dev/null 2>"$dir/run-bad.txt" &&
  fail "run accepted pp 4 of a 2-layer model"
grep -q '^error: invalid layout: ' "$dir/sim-bad.txt" || fail "simulate: $(cat "$dir/sim-bad.txt")"
cmp -s "$dir/sim-bad.txt" "$dir/run-bad.txt" ||
  fail "simulate said '$(cat "$dir/sim-bad.txt")', run '$(cat "$dir/run-bad.txt")'"
[ "$("$cli" info "$f" | grep -c '^run ')" -eq 2 ] || fail "the failed simulate changed the file's runs"
# 5. For a background load (planning/contention.h): 4 busy threads beside
# the 1 rank on this machine's cores C stretch compute by max(1, (1 + 4)/C)
# times the calibration's own overhead, and the prediction says so; a bad
# --background is one message.
"$cli" simulate --model tiny --calibration "$f" --background 4 --trace "$dir/bg.db" \
  >"$dir/bg.txt" 2>&1 || fail "simulate --background 4: $(tail -1 "$dir/bg.txt")"
grep -q '^warning: 4.0 busy threads of other work beside 1 rank on a host of' "$dir/bg.txt" ||
  [ "$(getconf _NPROCESSORS_ONLN)" -ge 5 ] || fail "no background warning: $(cat "$dir/bg.txt")"
"$cli" simulate --model tiny --calibration "$f" --background lots --trace "$dir/bg2.db" \
  >/dev/null 2>"$dir/bg2.txt" && fail "simulate accepted --background lots"
grep -q "^error: --background: expected 'measure' or a number of busy threads from 0 to 1e6, got 'lots'" \
  "$dir/bg2.txt" || fail "bad --background: $(cat "$dir/bg2.txt")"
"$cli" simulate --model tiny --calibration "$f" --background measure --trace "$dir/bg3.db" \
  >"$dir/bg3.txt" 2>&1 || fail "simulate --background measure: $(tail -1 "$dir/bg3.txt")"
grep -Eq '^background: [0-9.]+ busy threads of other work \(measured' "$dir/bg3.txt" ||
  fail "no measured background: $(cat "$dir/bg3.txt")"
# plan predicts for a background too: 4C busy threads beside the 1 rank on C
# cores stretch its compute (1 + 4C)/C > 4 times (x the calibration's own
# overhead, about 1), on any machine.
busy=$((4 * $(getconf _NPROCESSORS_ONLN)))
"$cli" plan --world 1 --model tiny --calibration "$f" --background 0 --out-dir "$dir/plan0" \
  >"$dir/plan0.txt" 2>&1 || fail "plan --background 0: $(tail -1 "$dir/plan0.txt")"
"$cli" plan --world 1 --model tiny --calibration "$f" --background "$busy" --out-dir "$dir/plan8" \
  >"$dir/plan8.txt" 2>&1 || fail "plan --background $busy: $(tail -1 "$dir/plan8.txt")"
"$cli" plan --world 1 --model tiny --calibration "$f" --json --background 0 --out-dir "$dir/plan0" \
  | jq -e '.candidates[0].step_ms' >"$dir/plan0.ms" || fail "plan --json: no step_ms"
"$cli" plan --world 1 --model tiny --calibration "$f" --json --background "$busy" --out-dir "$dir/plan8" \
  | jq -e '.candidates[0].step_ms' >"$dir/plan8.ms" || fail "plan --json: no step_ms"
awk -v a="$(cat "$dir/plan0.ms")" -v b="$(cat "$dir/plan8.ms")" 'BEGIN { exit !(b > 2 * a) }' ||
  fail "plan for $busy busy threads predicted $(cat "$dir/plan8.ms") ms, quiet $(cat "$dir/plan0.ms")"
"$cli" plan --world 1 --model tiny --calibration "$f" --background x --out-dir "$dir/planx" \
  >/dev/null 2>"$dir/planx.txt" && fail "plan accepted --background x"
grep -q "^error: --background: expected 'measure'" "$dir/planx.txt" || fail "plan: $(cat "$dir/planx.txt")"
# plan --run --repeats 2 runs its candidates by turns and keeps each one's
# run of the median step.
"$cli" plan --world 1 --model tiny --calibration "$f" --top 2 --every-variant --run --steps 2 \
  --repeats 2 --out-dir "$dir/planr" >"$dir/planr.txt" 2>"$dir/planr.err" ||
  fail "plan --run --repeats 2: $(tail -1 "$dir/planr.err")"
[ "$(grep -c '^running .* (2 of 2) \.\.\.$' "$dir/planr.err")" -eq 2 ] ||
  fail "plan --repeats 2 did not run both candidates twice: $(cat "$dir/planr.err")"
grep -q '^predicted vs measured (2 steps each, the first left out, 2 runs of each by turns: the run of the median step)$' \
  "$dir/planr.txt" || fail "plan --repeats header: $(cat "$dir/planr.txt")"
[ "$("$cli" info "$dir/planr/plan-runs.db" | grep -c '^run ')" -eq 4 ] ||
  fail "plan --repeats 2 of 2 candidates wrote other than 4 runs"
# plan lists the best of each dp x tp x pp shape, each with the count of
# the variants it stands for; --every-variant lists them all.
"$cli" plan --world 2 --model tiny --calibration "$f" --top 20 --json --out-dir "$dir/plans" |
  jq -e '.shapes >= 2 and (.candidates | length) == .shapes and
         ([.candidates[] | "\(.layout.dp)x\(.layout.tp)x\(.layout.pp)"] | unique | length) == .shapes and
         ([.candidates[] | .variants + 1] | add) == .fitting' >/dev/null ||
  fail "plan: not one candidate per shape with its variants counted"
"$cli" plan --world 2 --model tiny --calibration "$f" --top 20 --every-variant --json \
  --out-dir "$dir/plans" | jq -e '(.candidates | length) == 20 and all(.candidates[]; .variants == 0)' \
  >/dev/null || fail "plan --every-variant: not every candidate"
# plan with nothing that fits names the constraint.
"$cli" plan --world 2 --model tiny --memory-per-rank 0.000001 --calibration "$f" \
  --out-dir "$dir/plan" >/dev/null 2>"$dir/plan.txt" && fail "plan found a layout in 1 KiB"
grep -Eq '^error: no layout fits the memory limit: all [0-9]+ valid layouts need more than' \
  "$dir/plan.txt" || fail "plan: $(cat "$dir/plan.txt")"

# 6. bench predict --replay re-predicts a file's measured runs from its
# "calibrate ..." runs, or from the calibration a bench stored in it (named
# "bench predict: runs ..."), reading the file only.
r=$dir/replay.db
"$cli" run --model tiny --steps 3 --micro-batches 2 --name "calibrate dp1 tiny b1" --trace "$r" \
  >/dev/null 2>&1 || fail "run for the replay failed"
"$cli" run --model tiny --steps 3 --micro-batches 4 --trace "$r" >/dev/null 2>&1 ||
  fail "second run for the replay failed"
"$cli" bench predict --replay "$r" >"$dir/replay1.txt" 2>&1 ||
  fail "replay: $(tail -1 "$dir/replay1.txt")"
grep -q '^replay of .*: calibration runs 1 .*dense layouts: merged here; predicted for a background of 0.00' \
  "$dir/replay1.txt" || fail "replay's calibration: $(head -1 "$dir/replay1.txt")"
grep -Eq '^dp1 tiny +4 +1 +no +[0-9.]+ +[0-9.]+ ' "$dir/replay1.txt" ||
  fail "replay's row: $(cat "$dir/replay1.txt")"
grep -q '^layouts: 1$' "$dir/replay1.txt" || fail "replay's layouts: $(cat "$dir/replay1.txt")"
"$cli" calibrate --trace "$r" --run 1 --name "bench predict: runs 1" >/dev/null 2>&1 ||
  fail "calibrate for the replay failed"
"$cli" bench predict --replay "$r" >"$dir/replay2.txt" 2>&1 ||
  fail "replay: $(tail -1 "$dir/replay2.txt")"
grep -q 'dense layouts: the one the bench stored, calibration_id 1;' "$dir/replay2.txt" ||
  fail "replay took no stored calibration: $(head -1 "$dir/replay2.txt")"
[ "$("$cli" info "$r" | grep -c '^run ')" -eq 2 ] || fail "the replay changed the file's runs"
"$cli" bench predict --replay "$r" --background=-1 >/dev/null 2>"$dir/replay3.txt" &&
  fail "replay accepted --background -1"
grep -q '^error: --background must be a number of busy threads >= 0, got -1' "$dir/replay3.txt" ||
  fail "replay's bad --background: $(cat "$dir/replay3.txt")"
echo ok
