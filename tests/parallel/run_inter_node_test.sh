#!/usr/bin/env bash
# run_inter_node_test.sh CLI LAYOUT WORKDIR: a hierarchical run on emulated
# nodes behind an emulated link says so in its header, and its trace keeps
# it: `info` and `report` print the emulated link, `report` the algorithm.
set -u
cli="$1"
layout="$2"
dir="$3"
mkdir -p "$dir"
db="$dir/inter_node.db"
rm -f "$db" "$db-wal" "$db-shm"
fail() { echo "FAIL: $*"; exit 1; }
"$cli" run --layout "$layout" --steps 2 --trace "$db" >"$dir/run.out" 2>&1 \
  || { tail -20 "$dir/run.out"; fail "run failed"; }
grep -qx 'all-reduce hierarchical: the dp group spans 2 nodes of 2 dp ranks (emulated nodes)' \
  "$dir/run.out" || { cat "$dir/run.out"; fail "no nodes line in the run's header"; }
link='inter-node link emulated: 1 Gb/s, 50 us (nodes of 2 ranks)'
grep -qx "$link" "$dir/run.out" || fail "no link line in the run's header"
"$cli" info "$db" >"$dir/info.out" 2>&1 || fail "info failed"
grep -qx "  $link" "$dir/info.out" || { cat "$dir/info.out"; fail "info does not say the link was emulated"; }
"$cli" report "$db" >"$dir/report.out" 2>&1 || fail "report failed"
grep -qx "$link" "$dir/report.out" || { cat "$dir/report.out"; fail "report does not say the link was emulated"; }
grep -qx 'all_reduce hierarchical: emulated nodes of 2 ranks' "$dir/report.out" \
  || fail "report does not name the algorithm"
# The dp bytes equal the hierarchical formula (Ψ + 2Ψ/K + Ψ, not flat's 2Ψ)
# on every rank: measured over formula within 1% (bucket shards round).
"$cli" report "$db" --json >"$dir/report.json" 2>"$dir/report.err" || fail "report --json failed"
ratio=$(jq -r '[.runs[0].comm_volume[] | select(.dim == "dp+zero")
                | .measured_bytes_per_step / .formula_bytes_per_step][0]' "$dir/report.json")
awk -v r="$ratio" 'BEGIN { exit !(r == r + 0 && r > 0.99 && r < 1.01) }' \
  || fail "dp+zero measured/formula is $ratio, not 1 (hierarchical formula)"
echo "ok"
