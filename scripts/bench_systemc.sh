#!/usr/bin/env bash
# The SystemC path's overhead (docs/systemc.md, "Overhead"): the same GEMM on one chip and the same
# 2x2 all-reduce, run by the C path (build/tpusim gemm, build/tpusim collective) and by the SystemC
# example over TLM (build/tpusim_sc --only gemm|collective), on the RTL and on the fast model. Runs
# each pair REPS times (default 5), alternating, and prints the medians of the process wall times
# and their ratio, and each pair's cycles (which must be equal). Results are also in OUTDIR.
# usage: scripts/bench_systemc.sh OUTDIR [REPS]
set -euo pipefail
out=$1
reps=${2:-5}
mkdir -p "$out"
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
wall() { local t0 t1; t0=$(date +%s.%N); "$@" >"$out/last.txt" 2>/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'; }
cycles() { awk '/^  cycles/ { print $2; exit }' "$out/last.txt"; }

gemm="--mxu 16x16 --m 256 --k 256 --n 256 --seed 1"
coll="--mxu 16x16 --bytes 1048576 --seed 1"
printf '%-34s %6s %10s %10s %7s %9s\n' workload model "C s" "SystemC s" ratio cycles | tee "$out/systemc.txt"
for model in rtl fast; do
  for w in gemm collective; do
    : >"$out/c.txt"
    : >"$out/sc.txt"
    for _ in $(seq "$reps"); do
      if [ "$w" = gemm ]; then
        wall build/tpusim gemm $gemm --model "$model" >>"$out/c.txt"; c1=$(cycles)
        wall build/tpusim_sc --only gemm $gemm --model "$model" >>"$out/sc.txt"; c2=$(cycles)
      else
        wall build/tpusim collective --pod 2x2 --op allreduce $coll --model "$model" >>"$out/c.txt"; c1=$(cycles)
        wall build/tpusim_sc --only collective --pod 2x2 $coll --model "$model" >>"$out/sc.txt"; c2=$(cycles)
      fi
      [ "$c1" = "$c2" ] || { echo "bench_systemc: $w ($model): C path $c1 cycles, SystemC $c2" >&2; exit 1; }
    done
    c=$(median <"$out/c.txt")
    s=$(median <"$out/sc.txt")
    label="GEMM 256x256x256, 16x16 MXU"
    [ "$w" = collective ] && label="all-reduce 1 MiB/chip, 2x2, 16x16"
    printf '%-34s %6s %10.3f %10.3f %6.2fx %9s\n' "$label" "$model" "$c" "$s" "$(awk -v a="$s" -v b="$c" 'BEGIN { print a / b }')" "$c1" |
      tee -a "$out/systemc.txt"
  done
done
rm -f "$out/last.txt" "$out/c.txt" "$out/sc.txt"
