#!/usr/bin/env bash
# The SystemC path's overhead (docs/systemc.md, "Overhead"): the same GEMM on one chip and the same
# 2x2 all-reduce, run by the C path (build/tpusim gemm, build/tpusim collective) and by the SystemC
# example over TLM (build/tpusim_sc --only gemm|collective), on the RTL and on the fast model. Runs
# each pair REPS times (default 7), alternating, and prints the medians of the process wall times
# and their ratio, the same for CPU time (user + system: less disturbed by other work on the
# machine), and each pair's cycles (which must be equal; the script fails if not).
# usage: scripts/bench_systemc.sh OUTDIR [REPS]
set -euo pipefail
out=$1
reps=${2:-7}
mkdir -p "$out"
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# "wall cpu" seconds of one run (bash's time keyword); its stdout kept for cycles()
measure() {
  local TIMEFORMAT='%R %U %S' t
  t=$({ time "$@" >"$out/last.txt" 2>/dev/null; } 2>&1)
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' <<<"$t"
}
cycles() { awk '/^  cycles/ { print $2; exit }' "$out/last.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

gemm="--mxu 16x16 --m 256 --k 256 --n 256 --seed 1"
coll="--mxu 16x16 --bytes 1048576 --seed 1"
printf '%-34s %5s %8s %8s %6s %8s %8s %6s %8s\n' workload model "C wall" "SC wall" ratio "C cpu" "SC cpu" ratio \
  cycles | tee "$out/systemc.txt"
for model in rtl fast; do
  for w in gemm collective; do
    : >"$out/c.txt"
    : >"$out/sc.txt"
    for _ in $(seq "$reps"); do
      if [ "$w" = gemm ]; then
        measure build/tpusim gemm $gemm --model "$model" >>"$out/c.txt"; c1=$(cycles)
        measure build/tpusim_sc --only gemm $gemm --model "$model" >>"$out/sc.txt"; c2=$(cycles)
      else
        measure build/tpusim collective --pod 2x2 --op allreduce $coll --model "$model" >>"$out/c.txt"; c1=$(cycles)
        measure build/tpusim_sc --only collective --pod 2x2 $coll --model "$model" >>"$out/sc.txt"; c2=$(cycles)
      fi
      [ "$c1" = "$c2" ] || { echo "bench_systemc: $w ($model): C path $c1 cycles, SystemC $c2" >&2; exit 1; }
    done
    cw=$(cut -d' ' -f1 "$out/c.txt" | median) sw=$(cut -d' ' -f1 "$out/sc.txt" | median)
    cc=$(cut -d' ' -f2 "$out/c.txt" | median) sc=$(cut -d' ' -f2 "$out/sc.txt" | median)
    label="GEMM 256x256x256, 16x16 MXU"
    [ "$w" = collective ] && label="all-reduce 1 MiB/chip, 2x2, 16x16"
    printf '%-34s %5s %8.3f %8.3f %5sx %8.3f %8.3f %5sx %8s\n' "$label" "$model" "$cw" "$sw" "$(ratio "$sw" "$cw")" \
      "$cc" "$sc" "$(ratio "$sc" "$cc")" "$c1" | tee -a "$out/systemc.txt"
  done
done
rm -f "$out/last.txt" "$out/c.txt" "$out/sc.txt"
