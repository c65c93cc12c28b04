#!/usr/bin/env bash
# The figures of docs/parallel.md's "Gradient communication, measured":
#  - dp 4 runs of tiny for 20 steps with each gradient compression (buckets of
#    8192 elements, peak lr 3e-3, as parallel_compressed_dp_test): the loss per
#    step and the bus bytes sent per step, beside the cost model's bytes
#    (bench allreduce's predicted_bytes_sent_per_iteration at the same buckets);
#  - bench allreduce of small at 4 ranks in 2 emulated nodes of 2, flat and
#    hierarchical, over inter-node links of 0.5 .. 20 Gb/s, ROUNDS times each
#    (the least engine time of the rounds, with its prediction).
# Writes OUT_DIR/grad-comm.json and the two SVGs (scripts/grad_comm_figures.py)
# and prints the tables.
#
#   scripts/bench-grad-comm.sh [OUT_DIR] [ROUNDS]     default docs/img, 2
# Needs build/cli/bubblescope-cli (BUILD_DIR=... to change) and python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${BUILD_DIR:-$root/build}/cli/bubblescope-cli
out=${1:-$root/docs/img}
rounds=${2:-2}
[[ -x $cli ]] || { echo "bench-grad-comm: $cli is not built (./scripts/build.sh)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
key() { sed -n "s/^$1: //p"; }
load() { cut -d' ' -f1 /proc/loadavg; }
loads="$(load)"
specs=(none fp16 bf16 int8 powersgd:2 topk:0.1)
for c in "${specs[@]}"; do
  echo "run dp4 tiny --grad-compression $c" >&2
  "$cli" run --dp 4 --model tiny --steps 20 --bucket-elements 8192 --lr 3e-3 \
    --grad-compression "$c" --name "$c" --trace "$tmp/comp.db" >"$tmp/run.log" 2>&1 \
    || { tail -5 "$tmp/run.log" >&2; exit 1; }
  "$cli" bench allreduce --ranks 4 --model tiny --bucket-mb 0.03125 --iterations 1 \
    --compression "$c" >"$tmp/bytes-$c.txt"
done
links=()
for ((r = 1; r <= rounds; ++r)); do
  for g in 0.5 1 2 5 10 20; do
    for a in flat hierarchical; do
      echo "round $r: bench allreduce $a at $g Gb/s (load $(load))" >&2
      "$cli" bench allreduce --ranks 4 --model small --iterations 5 --algorithm "$a" \
        --ranks-per-node 2 --inter-node-gbps "$g" >"$tmp/link.txt"
      links+=("$g $a $(key engine_ms <"$tmp/link.txt") $(key predicted_ms <"$tmp/link.txt")")
    done
  done
done
loads="$loads .. $(load)"
python3 - "$tmp" "$out/grad-comm.json" "$loads" "${links[@]}" <<'PY'
import json, sqlite3, sys
tmp, path, loads, links = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
db = sqlite3.connect(f"{tmp}/comp.db")
strings = dict(db.execute("select id, value from strings"))
comp = []
for run, layout in db.execute("select id, layout_json from runs order by id").fetchall():
    spec = json.loads(layout)["grad_compression"]
    losses = [r[0] for r in db.execute("select loss from steps where run=? and rank=0 order by step", (run,))]
    last = {}
    for name, value in db.execute(
            "select name, value from samples where run=? and rank=0 order by t_ns", (run,)):
        last[strings.get(name, name)] = value
    text = open(f"{tmp}/bytes-{spec}.txt").read().splitlines()
    kv = dict(l.split(": ", 1) for l in text if ": " in l)
    steps = len(losses)
    comp.append({"spec": spec, "losses": losses,
                 "bytes_sent": last["grad.bytes_sent"] / steps,
                 "bytes_uncompressed": last["grad.bytes_uncompressed"] / steps,
                 "bytes_predicted": float(kv["predicted_bytes_sent_per_iteration"])})
best = {}
for l in links:
    g, a, e, p = l.split()
    k = (float(g), a)
    if k not in best or float(e) < best[k]["engine_ms"]:
        best[k] = {"gbps": float(g), "algorithm": a, "engine_ms": float(e), "predicted_ms": float(p)}
cond = f"2-core shared machine, load average {loads}; bubblescope-cli, scripts/bench-grad-comm.sh"
json.dump({"compression": comp, "link": sorted(best.values(), key=lambda p: (p["algorithm"], p["gbps"])),
           "conditions": cond, "all_link_runs": links}, open(path, "w"), indent=1)
print("spec       loss@1  loss@20  |dloss| max vs none  bytes/step sent  predicted  ratio")
none = comp[0]["losses"]
for c in comp:
    d = max(abs(a - b) for a, b in zip(c["losses"], none))
    print(f'{c["spec"]:<10} {c["losses"][0]:.4f}  {c["losses"][-1]:.4f}  {d:.2e}  '
          f'{c["bytes_sent"]:.0f}  {c["bytes_predicted"]:.0f}  {c["bytes_uncompressed"] / c["bytes_sent"]:.3f}')
print("gbps algorithm engine_ms predicted_ms (least of the rounds)")
for p in sorted(best.values(), key=lambda p: (p["gbps"], p["algorithm"])):
    print(f'{p["gbps"]:g} {p["algorithm"]} {p["engine_ms"]:.1f} {p["predicted_ms"]:.1f}')
print("conditions:", cond)
PY
python3 "$root/scripts/grad_comm_figures.py" "$out/grad-comm.json" "$out"
echo "wrote $out/grad-compression.svg $out/allreduce-link.svg" >&2
