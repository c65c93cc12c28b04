#!/usr/bin/env bash
# `run --save`: a parallel layout's checkpoint is the model the single
# process saves after the same steps on the same global batch
# (checkpoint_agreement: the parallel agreement criterion on parameters and
# AdamW moments, equal metadata), for dp 2 x ZeRO-3 (sharded parameters and
# moments) and tp 2 x pp 2 (slices and stages). The checker can fail: the
# single process trained on other data (same settings) disagrees.
# Usage: parallel_checkpoint_test.sh CLI CHECKER WORK_DIR
set -euo pipefail
cli=$1
checker=$2
dir=$3
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
common=(--model tiny --seed 7 --lr 0.003 --steps 2)
# Global batch: 2 micro-batches of 2 sequences per step in every run.
"$cli" run "${common[@]}" --dp 2 --zero 3 --micro-batches 1 --micro-batch-size 2 \
  --save dp2z3.st >dp2z3.log 2>&1 || { cat dp2z3.log; exit 1; }
"$cli" run "${common[@]}" --tp 2 --pp 2 --micro-batches 2 --micro-batch-size 2 \
  --save tp2pp2.st >tp2pp2.log 2>&1 || { cat tp2pp2.log; exit 1; }
grep -q "saved checkpoint at step 2 to $dir/tp2pp2.st" tp2pp2.log || { cat tp2pp2.log; exit 1; }
single=(train "${common[@]}" --total-steps 2 --warmup 0 --micro-batches 2 --batch-size 2)
"$cli" "${single[@]}" --save single.st >/dev/null
"$checker" dp2z3.st single.st
"$checker" tp2pp2.st single.st
for i in $(seq 200); do echo "other text, line $i, for the negative check"; done >other.txt
"$cli" "${single[@]}" --data other.txt --save other.st >/dev/null
if "$checker" other.st single.st; then
  echo "error: a run on other data passed the checkpoint agreement"
  exit 1
fi
echo "parallel checkpoints agree with the single process"
