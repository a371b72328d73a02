#!/usr/bin/env bash
# Benchmarks: runs each benchmark, writes its raw results under the given folder and prints
# a short table. Figures are medians of repeated runs; see docs/benchmarks.md.
# usage: scripts/bench.sh OUTDIR
set -euo pipefail
out=$1
mkdir -p "$out"
tpusim=build/tpusim

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== arithmetic units: simulation speed (tpusim dot, 1,000,000 products, 5 runs)" >&2
: >"$out/arith_speed.jsonl"
for run in 1 2 3 4 5; do
  "$tpusim" dot --n 1000000 --seed "$run" --json >>"$out/arith_speed.jsonl"
done
speed=$(sed -nE 's/.*"sim_cycles_per_s":([0-9.e+]+).*/\1/p' "$out/arith_speed.jsonl" | median)
printf '%-44s %12.0f cycles/s (median of 5)\n' "arith_top (3 units, 1 op/unit/cycle)" "$speed" | tee "$out/summary.txt"
