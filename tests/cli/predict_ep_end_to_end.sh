#!/bin/sh
# Expert parallelism predicted from its own measurement, end to end through
# bubblescope-cli (docs/prediction.md, "Expert parallelism"): a dp2 x ep2 run
# of a mixture-of-experts tiny is calibrated (its all-to-alls fitted on dim
# ep), and simulate --calibration of the same layout must print the step the
# calibration's costs add up to:
#   m x (the layers' forward + backward)
#   + m x blocks x (3 all-to-alls forward: counts E fp32 + 2 x k.b.T rows of
#     C fp32; 2 backward: 2 x k.b.T rows) from the ep all_to_all fit
#   + one dp all-reduce of the shared gradients (the experts have no replica
#     at dp = ep) + the experts' 8-byte norm all-reduce over ep
#   + (the optimizer's cost + the step's time outside ops) per parameter x
#     (shared + experts / ep), and the compute, times the calibration's
#     straggler factor (more than one rank)
#   + the step's 8-byte loss all-reduce over dp (the dp fit),
# with no warning, and its exposed ep communication the all-to-alls + norm.
# Usage: predict_ep_end_to_end.sh BUBBLESCOPE_CLI SCRATCH_DIR. Prints "ok"
# or "FAIL: why" (exit 1). Needs jq.
set -u
cli=$1
dir=$2
fail() {
  echo "FAIL: $*"
  exit 1
}
rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
f=$dir/ep.db
layout="--model tiny --experts 4 --top-k 2 --capacity-factor 2 --dp 2 --ep 2 --micro-batches 2"

"$cli" run $layout --steps 3 --trace "$f" >"$dir/run.txt" 2>&1 || fail "run: $(tail -1 "$dir/run.txt")"
params=$(sed -n 's/^model [a-z]*: \([0-9]*\) parameters.*/\1/p' "$dir/run.txt")
[ -n "$params" ] || fail "run printed no parameter count: $(head -3 "$dir/run.txt")"
"$cli" calibrate --trace "$f" --json >"$dir/calibration.json" || fail "calibrate failed"
jq -e '.links[] | select(.dim == "ep" and .collective == "all_to_all" and .group_size == 2)' \
  "$dir/calibration.json" >/dev/null || fail "no ep all_to_all fit: $(jq -c '.links' "$dir/calibration.json")"

# The sums, from the calibration alone (k 2, b 1, T 32, C 32, E 4: rows 64).
jq -r --argjson m 2 --argjson params "$params" '
  def t(e): if (.cores > 0 and .ranks_per_host > .cores) then e.cpu_ns else e.wall_ns end;
  def op(p; o): ([.ops[] | select(.part == p and .op == o)] | first // {wall_ns: 0, cpu_ns: 0});
  def fit(d; c): ([.links[] | select(.dim == d and .collective == c)] | first);
  . as $c | $c.model as $mo |
  ($mo.hidden) as $C | ($mo.hidden * $mo.mlp_ratio) as $F | ($mo.experts) as $E |
  ($mo.top_k * $mo.seq_len) as $rows |
  ($mo.layers * $E * (2 * $C * $F + $F + $C)) as $experts |
  ($params - $experts) as $shared |
  fit("ep"; "all_to_all") as $a | fit("dp"; "allreduce") as $r | fit("ep"; "allreduce") as $n |
  ($m * $mo.layers * (5 * $a.alpha_ns + $a.beta_ns_per_byte * (4 * (4 * $rows * $C) + 4 * $E))) as $a2a |
  ($n.alpha_ns + 8 * $n.beta_ns_per_byte) as $norm |
  ($r.alpha_ns + 4 * $shared * $r.beta_ns_per_byte) as $allreduce |
  ([1, ($c | t(op("step"; "straggler")))] | max) as $straggler |
  ($straggler * $m * ($mo.layers * ($c | t(op("block"; "forward")) + t(op("block"; "backward")))
         + ($c | t(op("embedding"; "forward")) + t(op("embedding"; "backward"))
                 + t(op("head"; "forward")) + t(op("head"; "backward"))))) as $compute |
  ($straggler * ($c | t(op("optimizer"; "step")) + t(op("step"; "other")))
   * ($shared + $experts / 2)) as $opt |
  ($r.alpha_ns + 8 * $r.beta_ns_per_byte) as $loss |
  "\(($compute + $a2a + $allreduce + $norm + $opt + $loss) / 1e6) \(($a2a + $norm) / 1e6)"' \
  "$dir/calibration.json" >"$dir/expected.txt" || fail "jq could not sum the calibration"
read -r expected_ms expected_ep_ms <"$dir/expected.txt"

"$cli" simulate $layout --steps 3 --calibration "$f" --trace "$f" >"$dir/simulate.txt" 2>&1 ||
  fail "simulate: $(tail -1 "$dir/simulate.txt")"
predicted_ms=$(sed -n 's/^predicted step \([0-9.]*\) ms.*/\1/p' "$dir/simulate.txt")
ep_ms=$(sed -n 's/^exposed ep communication \([0-9.]*\) ms per step.*/\1/p' "$dir/simulate.txt")
[ -n "$predicted_ms" ] && [ -n "$ep_ms" ] || fail "simulate printed: $(cat "$dir/simulate.txt")"
close() { awk -v p="$1" -v e="$2" 'BEGIN { d = p - e; if (d < 0) d = -d; exit !(e > 0 && d <= 1e-3 * e + 0.002) }'; }
close "$predicted_ms" "$expected_ms" ||
  fail "predicted step $predicted_ms ms, the calibration gives $expected_ms ms"
close "$ep_ms" "$expected_ep_ms" ||
  fail "predicted exposed ep $ep_ms ms, the calibration's all-to-alls give $expected_ep_ms ms"
grep -q '^warning:' "$dir/simulate.txt" && fail "a matching calibration warned: $(grep '^warning:' "$dir/simulate.txt")"
echo ok
