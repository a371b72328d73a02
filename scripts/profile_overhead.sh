#!/usr/bin/env bash
# The host-time cost of --profile (docs/profiling.md, "Overhead"): runs a command N times
# (default 5) without a profile, with --op-profile and with --profile FILE, and prints the
# fastest user+system time of each, the overheads, and the trace's size per chip and million
# cycles. The fastest of several runs is the figure least disturbed by other work on a
# shared machine.
# usage: scripts/profile_overhead.sh [-n N] TPUSIM COMMAND ARGS...
set -euo pipefail
runs=5
if [ "${1:-}" = -n ]; then runs=$2; shift 2; fi
tpusim=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
best() { # best CPU seconds of $runs runs of "$@"
  local b=
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%U %S" -o "$out/t" "$@" >"$out/stdout" 2>/dev/null
    local t
    t=$(awk '{ printf "%.3f", $1 + $2 }' "$out/t")
    if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
  done
  echo "$b"
}
base=$(best "$tpusim" "$@" --quiet)
op=$(best "$tpusim" "$@" --quiet --op-profile)
tr=$(best "$tpusim" "$@" --quiet --profile "$out/trace.json" --json)
chips=$(sed -nE 's/.*"profile":\{"chips":([0-9]+).*/\1/p' "$out/stdout")
cycles=$(sed -nE 's/.*"total_cycles":([0-9]+).*/\1/p' "$out/stdout")
bytes=$(stat -c %s "$out/trace.json")
echo "command: tpusim $*"
echo "cpu seconds (best of $runs): none $base, --op-profile $op, --profile $tr"
awk -v b="$base" -v o="$op" -v t="$tr" 'BEGIN { printf "overhead: --op-profile %+.1f%%, --profile %+.1f%%\n", 100 * (o / b - 1), 100 * (t / b - 1) }'
awk -v s="$bytes" -v c="$chips" -v y="$cycles" 'BEGIN { printf "trace: %.1f MB for %d chips over %d cycles: %.2f MB per chip per million cycles\n", s / 1e6, c, y, s / 1e6 / c / (y / 1e6) }'
