#!/usr/bin/env bash
# run_samples_test.sh CLI SAMPLES_DIR WORKDIR: every sample layout runs for
# two steps through `run` with a trace, prints its memory table, and the
# trace says finished.
set -u
cli="$1"
samples="$2"
dir="$3"
mkdir -p "$dir"
status=0
for f in "$samples"/*.json*; do
  name=$(basename "$f")
  db="$dir/$name.db"
  rm -f "$db" "$db-wal" "$db-shm"
  if ! "$cli" run --layout "$f" --steps 2 --trace "$db" >"$dir/$name.out" 2>&1; then
    echo "FAIL: $name"; tail -20 "$dir/$name.out"; status=1; continue
  fi
  if ! grep -q '^memory per rank' "$dir/$name.out"; then
    echo "FAIL: $name: no memory report"; status=1; continue
  fi
  if ! "$cli" info "$db" | grep -q '\[finished\]'; then
    echo "FAIL: $name: the trace's run is not finished"; status=1; continue
  fi
  echo "ok: $name ($(grep -c '^step' "$dir/$name.out") steps)"
done
exit $status
