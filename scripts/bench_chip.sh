#!/usr/bin/env bash
# Chip benchmarks (part of `make bench`): the firmware GEMM from HBM on 128x128 (M=K=N=1024,
# HBM at 957 bytes/cycle = 900 GB/s at 940 MHz), and a sweep of HBM bandwidth showing where
# the GEMM turns memory-bound (CSV and a roofline-style PNG). usage: scripts/bench_chip.sh OUTDIR
set -euo pipefail
out=$1/chip
mkdir -p "$out"
tpusim=build/tpusim
field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }

echo "== chip GEMM through HBM (tpusim gemm --level chip)" >&2
{
  printf '%-9s %-16s %9s %10s %10s %8s\n' chip "M x K x N" "HBM B/cyc" cycles "MXU-alone" util
  for spec in "16x16 256 256 256 64" "128x128 1024 1024 1024 957"; do
    set -- $spec
    j=$("$tpusim" gemm --mxu "$1" --m "$2" --k "$3" --n "$4" --hbm-bw "$5" --hbm-latency 100 --json)
    echo "$j" >>"$out/gemm.jsonl"
    printf '%-9s %-16s %9s %10s %10s %7.2f%%\n' "$1" "$2x$3x$4" "$5" "$(field cycles <<<"$j")" \
      "$(field mxu_contract_cycles <<<"$j")" "$(awk -v u="$(field utilization <<<"$j")" 'BEGIN { print 100 * u }')"
  done
} | tee "$out/gemm.txt"

echo "== HBM bandwidth sweep, 16x16 chip, M=K=N=256 (latency 100)" >&2
csv="$out/hbm_sweep.csv"
echo "hbm_bytes_per_cycle,cycles,utilization,hbm_bytes,macs" >"$csv"
for bw in 1 2 4 8 16 32 64 128 256; do
  j=$("$tpusim" gemm --mxu 16x16 --m 256 --k 256 --n 256 --hbm-bw "$bw" --hbm-latency 100 --json)
  echo "$bw,$(field cycles <<<"$j"),$(field utilization <<<"$j"),$(field hbm_bytes <<<"$j"),16777216" >>"$csv"
done
column -t -s, "$csv"
/usr/bin/python3 scripts/plot_roofline.py "$csv" "$out/hbm_roofline.png" 256 \
  "16x16 chip, GEMM 256x256x256 from HBM (latency 100 cycles)"
echo "bench: wrote $csv and $out/hbm_roofline.png" >&2

# (the host time per simulated cycle of a chip, each model: scripts/bench_scale.sh)
