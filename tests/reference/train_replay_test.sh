#!/usr/bin/env bash
# What an outside tool needs to replay a step (docs/engine.md):
# - `train --steps 0 --save F` writes the initial state: resuming from it
#   prints the same losses as a fresh run;
# - `--dump-batch S F` writes step S's batch (M x B x T tokens, targets the
#   tokens shifted by one), the same from a fresh run and a resumed one;
# - `--save-grads F` writes the last step's gradients with its loss.
# Usage: train_replay_test.sh CLI WORK_DIR
set -euo pipefail
cli=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
flags=(--model tiny --batch-size 2 --micro-batches 3 --total-steps 4 --warmup 1 --seed 7)
losses() { grep '^step ' | sed 's/.*| loss \([0-9.]*\) |.*/\1/'; }
"$cli" train "${flags[@]}" --steps 4 --dump-batch 2 fresh.json | losses >fresh.txt
"$cli" train "${flags[@]}" --steps 0 --save init.st >/dev/null
"$cli" train --load init.st --steps 4 --dump-batch 2 resumed.json --save-grads g.st |
  losses >resumed.txt
[ "$(wc -l <fresh.txt)" -eq 4 ] || { echo "expected 4 steps:"; cat fresh.txt; exit 1; }
diff fresh.txt resumed.txt || { echo "resuming from --steps 0 changed the losses"; exit 1; }
cmp fresh.json resumed.json || { echo "the dumped batch depends on how the run started"; exit 1; }
python3 - "$(tail -1 resumed.txt)" <<'PY'
import json, struct, sys
b = json.load(open("fresh.json"))
assert b["step"] == 2 and b["micro_batches"] == 3 and b["batch_size"] == 2 and b["seq_len"] == 32, b
assert len(b["tokens"]) == 3 and all(len(m) == 2 and all(len(r) == 32 for r in m) for m in b["tokens"])
for m, mt in zip(b["tokens"], b["targets"]):
    for row, target in zip(m, mt):
        assert row[1:] == target[:-1], "targets are not the tokens shifted by one"
assert b["tokens"][0] != b["tokens"][1], "micro-batches repeat"
with open("g.st", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
meta = header["__metadata__"]
assert meta["step"] == "3", meta
assert abs(float(meta["loss"]) - float(sys.argv[1])) < 1e-4, (meta["loss"], sys.argv[1])
assert "h.0.attn.qkv.weight" in header and header["h.0.attn.qkv.weight"]["shape"] == [96, 32]
print("replay files ok")
PY
