#!/usr/bin/env bash
# Measured pipeline bubbles of the four schedules on one layout, against
# their formulas: runs the layout with gpipe, 1f1b, interleaved (2 chunks per
# stage) and zb-h1, ROUNDS times each, interleaved (a b c d a b c d), traced,
# and prints each stage's bubble from `report` and the mean step time.
#
#   scripts/bench-bubbles.sh [LAYOUT] [ROUNDS]
#     LAYOUT  default samples/layouts/pp2-balanced.jsonc
#     ROUNDS  default 2
# Needs build/cli/bubblescope-cli (./scripts/build.sh; BUILD_DIR=... to change).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${BUILD_DIR:-$root/build}/cli/bubblescope-cli
layout=${1:-$root/samples/layouts/pp2-balanced.jsonc}
rounds=${2:-2}
[[ -x $cli ]] || { echo "bench-bubbles: $cli is not built (./scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
schedules=(gpipe 1f1b interleaved zb-h1)
for ((r = 1; r <= rounds; ++r)); do
  for s in "${schedules[@]}"; do
    extra=()
    [[ $s == interleaved ]] && extra=(--chunks 2)
    echo "run $r/$rounds: $s" >&2
    "$cli" run --layout "$layout" --schedule "$s" "${extra[@]}" --name "$s $r" \
      --trace "$tmp/$s-$r.db" >"$tmp/$s-$r.log" 2>&1 \
      || { echo "bench-bubbles: the $s run failed:" >&2; tail -5 "$tmp/$s-$r.log" >&2; exit 1; }
  done
done
printf '%-12s %-6s %-24s %-9s %s\n' schedule stage "bubble measured (runs)" formula "step ms (runs)"
for s in "${schedules[@]}"; do
  declare -A measured=() formula=()
  steps=""
  for ((r = 1; r <= rounds; ++r)); do
    "$cli" report "$tmp/$s-$r.db" >"$tmp/$s-$r.txt"
    steps+="$(awk '/^step time/ {printf "%.0f ", $3}' "$tmp/$s-$r.txt")"
    # The "Pipeline stages" table: stage, ranks, measured %, formula %, text.
    while read -r stage value f; do
      measured[$stage]+="$value "
      formula[$stage]=$f
    done < <(awk '/^Pipeline stages/ {on = 1; next} on && /^$/ {on = 0}
                  on && $1 ~ /^[0-9]+$/ {print $1, $3, $4}' "$tmp/$s-$r.txt")
  done
  for stage in $(printf '%s\n' "${!measured[@]}" | sort -n); do
    printf '%-12s %-6s %-24s %-9s %s\n' "$s" "$stage" "${measured[$stage]}" "${formula[$stage]}" \
      "$steps"
  done
  unset measured formula
done
