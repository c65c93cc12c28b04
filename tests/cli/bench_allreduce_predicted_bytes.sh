#!/bin/sh
# bench allreduce: the planner's cost model (planning/grad_reduction_cost.h)
# predicts exactly the bus bytes the engine's reductions put on the wire, for
# every compression at 2 ranks, in one bucket (tiny) and in buckets of 8192
# elements (which cut PowerSGD's matrices, and no matrix of tiny larger than
# that fits one), and hierarchical over 2 nodes of 2.
# Usage: bench_allreduce_predicted_bytes.sh BUBBLESCOPE_CLI
cli=$1
check() {
  out=$("$cli" bench allreduce --model tiny --iterations 1 "$@") || { echo "bench failed: $*"; exit 1; }
  sent=$(printf '%s\n' "$out" | sed -n 's/^bytes_sent_per_iteration: //p')
  predicted=$(printf '%s\n' "$out" | sed -n 's/^predicted_bytes_sent_per_iteration: //p')
  if [ -z "$sent" ] || [ "$sent" != "$predicted" ]; then
    echo "FAIL $*: sent '$sent', predicted '$predicted'"
    exit 1
  fi
  echo "ok $*: $sent bytes"
}
for c in none fp16 bf16 int8 topk:0.05 powersgd:2; do
  check --ranks 2 --compression "$c"
done
for c in int8 topk:0.1 powersgd:2; do
  check --ranks 2 --bucket-mb 0.03125 --compression "$c"
done
check --ranks 4 --compression topk:0.05
check --ranks 4 --algorithm hierarchical --ranks-per-node 2
echo "predicted bytes equal sent bytes"
