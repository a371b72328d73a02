#!/usr/bin/env bash
# The host-time cost of --profile (docs/profiling.md, "Figures"): runs a command N times
# (default 5) without a profile, with --op-profile and with --profile FILE, alternating, and
# prints the fastest CPU (user+system) and wall time of each, the overheads, and the trace's
# size per chip and million cycles. The fastest of several runs is the figure least disturbed
# by other work on a shared machine.
# usage: scripts/profile_overhead.sh [-n N] TPUSIM COMMAND ARGS...
set -euo pipefail
runs=5
if [ "${1:-}" = -n ]; then runs=$2; shift 2; fi
tpusim=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# one run of "$@": appends "cpu wall" seconds to $1's file
run() {
  local f=$1
  shift
  /usr/bin/time -f "%U %S %e" -o "$out/t" "$@" >"$out/stdout" 2>/dev/null
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$out/t" >>"$out/$f"
}
for _ in $(seq "$runs"); do # (alternating: a change in the machine's load touches all three)
  run base "$tpusim" "$@" --quiet
  run op "$tpusim" "$@" --quiet --op-profile
  run tr "$tpusim" "$@" --quiet --profile "$out/trace.json" --json
done
best() { sort -n -k"$2" "$out/$1" | head -1 | awk -v c="$2" '{ print $c }'; }
base=$(best base 1) op=$(best op 1) tr=$(best tr 1)
wbase=$(best base 2) wop=$(best op 2) wtr=$(best tr 2)
chips=$(sed -nE 's/.*"profile":\{"chips":([0-9]+).*/\1/p' "$out/stdout")
cycles=$(sed -nE 's/.*"total_cycles":([0-9]+).*/\1/p' "$out/stdout")
bytes=$(stat -c %s "$out/trace.json")
echo "command: tpusim $*"
echo "cpu seconds (best of $runs): none $base, --op-profile $op, --profile $tr"
awk -v b="$base" -v o="$op" -v t="$tr" 'BEGIN { printf "cpu overhead: --op-profile %+.1f%%, --profile %+.1f%%\n", 100 * (o / b - 1), 100 * (t / b - 1) }'
echo "wall seconds (best of $runs): none $wbase, --op-profile $wop, --profile $wtr"
awk -v b="$wbase" -v o="$wop" -v t="$wtr" 'BEGIN { printf "wall overhead: --op-profile %+.1f%%, --profile %+.1f%%\n", 100 * (o / b - 1), 100 * (t / b - 1) }'
awk -v s="$bytes" -v c="$chips" -v y="$cycles" 'BEGIN { printf "trace: %.1f MB for %d chips over %d cycles: %.2f MB per chip per million cycles\n", s / 1e6, c, y, s / 1e6 / c / (y / 1e6) }'
