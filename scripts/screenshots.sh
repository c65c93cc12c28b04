#!/usr/bin/env bash
# Renders the Bubblescope window on traced runs to docs/img/*.png (offscreen).
#
#   scripts/screenshots.sh            # uses build-gui/ (BUILD_DIR=... to change)
#
# Needs bubblescope and bubblescope-cli built:
#   cmake -S . -B build-gui -G Ninja && ninja -C build-gui bubblescope bubblescope-cli
# Real runs (`bubblescope-cli train --model tiny`; two multi-rank layouts
# through `bubblescope-cli run` for charts and compare; dp4 without and with
# gradient compression for the compared loss curves; real pipeline runs:
# pp4 x dp2 with 1f1b and gpipe, pp4 interleaved, pp4 zb-h1; a 3D run dp2 x
# tp2 x pp2; dp2 x pp2 with m 2 for the advice), and, for what does not fit
# here (64 ranks), a run the schedule simulator writes (`bubblescope-cli
# simulate`, source "simulated"). The teaching lab's pictures are the
# pipeline runs beside their ideal schedules.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-gui}
gui=$build/gui/bubblescope
cli=$build/cli/bubblescope-cli
out=$root/docs/img
for exe in "$gui" "$cli"; do
  [[ -x $exe ]] || { echo "screenshots: $exe is not built" >&2; exit 1; }
done
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

echo "== a real run: train tiny"
"$cli" train --model tiny --steps 8 --trace "$tmp/tiny.db" > "$tmp/train.log"
tail -n 2 "$tmp/train.log"

echo "== real multi-rank runs: dp2-zero1, then dp4-zero3 (run again with changes)"
"$cli" run --layout "$root/samples/layouts/dp2-zero1.jsonc" --trace "$tmp/dp.db" > "$tmp/dp.log"
"$cli" run --layout "$root/samples/layouts/dp4-zero3.jsonc" --trace "$tmp/dp.db" >> "$tmp/dp.log"
tail -n 1 "$tmp/dp.log"

echo "== real dp4 runs of small without and with topk:0.01 gradient compression"
for compression in none topk:0.01; do
  "$cli" run --dp 4 --model small --steps 20 --grad-compression "$compression" \
    --name "dp4 small $compression" --trace "$tmp/compress.db" >> "$tmp/compress.log"
done
tail -n 1 "$tmp/compress.log"

echo "== real pipeline runs: pp4 x dp2 1f1b, the same with gpipe, pp4 interleaved"
for schedule in 1f1b gpipe; do
  "$cli" run --pp 4 --dp 2 --model small --micro-batches 8 --micro-batch-size 2 --steps 6 \
    --schedule "$schedule" --name "pp4-dp2-$schedule small" --trace "$tmp/pipeline.db" >> "$tmp/pp.log"
done
"$cli" run --layout "$root/samples/layouts/pp4-interleaved.jsonc" --steps 6 \
  --trace "$tmp/pipeline.db" >> "$tmp/pp.log"
"$cli" run --layout "$root/samples/layouts/pp4-zb.jsonc" --steps 6 \
  --trace "$tmp/pipeline.db" >> "$tmp/pp.log"
tail -n 1 "$tmp/pp.log"

echo "== a real 3D run: dp2 x tp2 x pp2, ZeRO 1"
"$cli" run --layout "$root/samples/layouts/dp2-tp2-pp2-zero1.jsonc" --steps 6 \
  --trace "$tmp/3d.db" > "$tmp/3d.log"
tail -n 1 "$tmp/3d.log"

echo "== a real dp2 x pp2 run of small, m 2 (the advice: stragglers, too few micro-batches)"
"$cli" run --dp 2 --pp 2 --model small --micro-batches 2 --steps 6 --trace "$tmp/advice.db" \
  > "$tmp/advice.log"
tail -n 1 "$tmp/advice.log"

echo "== a real pp4 1f1b run on 2 cores, calibrated (planner, prediction, ideal-hardware replay)"
"$cli" run --pp 4 --model small --micro-batches 8 --steps 4 --schedule 1f1b \
  --trace "$tmp/pp4.db" > "$tmp/pp4.log"
"$cli" calibrate --trace "$tmp/pp4.db" > "$tmp/calibrate.log"
tail -n 1 "$tmp/calibrate.log"

echo "== a simulated run (64 ranks do not fit here)"
"$cli" simulate --model gpt2-124m --schedule 1f1b --pp 8 --dp 8 --micro-batches 16 --steps 60 \
  --trace "$tmp/big.db"

shot() { "$gui" "$@" 2> >(grep -v -e XDG_RUNTIME -e propagateSizeHints -e '#hatch' >&2); }
echo "== screenshots"
shot "$tmp/tiny.db" --screenshot "$out/main-window-train-tiny.png" --size 1500x860
shot "$tmp/tiny.db" --screenshot "$out/timeline-train-tiny-step.png" --screenshot-part timeline \
  --step 3 --select-span --size 1500x700
shot "$tmp/pipeline.db" --run 1 --screenshot "$out/main-window-1f1b.png" --size 1500x900
# A 1280 x 720 screen less its panel and the title bar.
shot "$tmp/pipeline.db" --run 1 --screenshot "$out/main-window-1280x720.png" --size 1280x650
shot "$tmp/pipeline.db" --run 1 --screenshot "$out/timeline-1f1b-step.png" \
  --screenshot-part timeline --step 2 --select-span --size 1500x760
shot "$tmp/pipeline.db" --run 2 --screenshot "$out/timeline-gpipe-step.png" \
  --screenshot-part timeline --step 2 --size 1500x760
shot "$tmp/pipeline.db" --run 3 --screenshot "$out/timeline-interleaved-step.png" \
  --screenshot-part timeline --step 2 --zoom 3 --size 1500x560
shot "$tmp/pipeline.db" --run 4 --screenshot "$out/timeline-zb-h1-step.png" \
  --screenshot-part timeline --step 2 --size 1500x560
shot "$tmp/3d.db" --run 1 --screenshot "$out/timeline-3d-step.png" \
  --screenshot-part timeline --step 3 --select-span --size 1500x900
shot "$tmp/big.db" --screenshot "$out/timeline-64-ranks-overview.png" --screenshot-part timeline \
  --size 1500x900
shot "$tmp/big.db" --screenshot "$out/timeline-not-indexed-yet.png" --screenshot-part timeline \
  --indexed-events 140000 --size 1500x600
shot "$tmp/tiny.db" --screenshot "$out/layout-editor-problem.png" --screenshot-part layout \
  --edit tp=3 --edit pp=2 --edit micro_batches=4 --size 1500x900
shot "$tmp/pipeline.db" --run 1 --screenshot "$out/charts-1f1b.png" --screenshot-part charts \
  --size 1500x900
shot "$tmp/advice.db" --screenshot "$out/charts-advice.png" --screenshot-part charts \
  --size 1500x900
shot "$tmp/dp.db" --run 1 --screenshot "$out/charts-dp2-zero1.png" --screenshot-part charts \
  --size 1500x900
shot "$tmp/compress.db" --run 2 --compare 1,2 --screenshot-part charts \
  --screenshot "$out/charts-compare-grad-compression.png" --size 1500x900
shot "$tmp/dp.db" --run 1 --screenshot "$out/metrics-dp2-zero1.png" --screenshot-part metrics \
  --size 1500x700
shot "$tmp/dp.db" --screenshot "$out/compare-dp2-zero1-vs-dp4-zero3.png" --compare 1,2 --step 5 \
  --size 1500x900
shot "$tmp/pp4.db" --screenshot "$out/planner.png" --screenshot-part planner --plan-world 4 \
  --plan-memory 0.04 --size 1800x900
shot "$tmp/pp4.db" --screenshot "$out/planner-gpu-cluster.png" --screenshot-part cluster-planner \
  --size 1500x800
shot "$tmp/pp4.db" --screenshot "$out/layout-editor-prediction.png" --screenshot-part layout \
  --edit micro_batches=16 --size 1500x900
shot "$tmp/pp4.db" --screenshot "$out/timeline-ideal-replay.png" --screenshot-part timeline \
  --ideal-replay --size 1500x700
shot "$tmp/pipeline.db" --run 1 --palette dark --screenshot "$out/main-window-1f1b-dark.png" \
  --step 2 --select-span --mark-rank 3 --size 1500x900
shot "$tmp/pipeline.db" --run 1 --palette dark --screenshot "$out/charts-1f1b-dark.png" \
  --screenshot-part charts --size 1500x900
# The teaching lab (docs/teaching.md): each pipeline run's layout simulated
# beside the run; 1f1b also stepped to its 24th op and with m = 32.
teach() { shot "$tmp/pipeline.db" --run "$1" --screenshot "$out/teaching-$2.png" \
  --screenshot-part teaching --size 1500x1000 "${@:3}"; }
teach 2 gpipe
teach 1 1f1b
teach 1 1f1b-step --lab-steps 24
teach 3 interleaved
teach 4 zb-h1
teach 1 1f1b-m32 --edit micro_batches=32
ls -1 "$out"/*.png
