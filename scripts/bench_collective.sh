#!/usr/bin/env bash
# Collective benchmarks (part of `make bench`): busbw against message size for each
# collective on 4x4 and 8x8 pods (CSV and a PNG plot), the 2-D torus all-reduce against
# the ring, and the headline figure: the torus2d all-reduce with 4 MiB per chip on 4x4 and
# 8x8 pods of 128x128 chips (target busbw_fraction >= 0.90). usage: scripts/bench_collective.sh OUTDIR
set -euo pipefail
out=$1/collective
mkdir -p "$out"
tpusim=build/tpusim
field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }

echo "== 2-D torus all-reduce, 4 MiB per chip, 128x128 chips (tpusim collective)" >&2
{
  printf '%-5s %-8s %10s %10s %12s %10s %8s\n' pod algo bytes cycles "busbw GB/s" fraction correct
  for spec in "4x4 torus2d" "8x8 torus2d" "4x4 ring"; do
    set -- $spec
    j=$("$tpusim" collective --pod "$1" --mxu 128x128 --op allreduce --algo "$2" --bytes 4194304 --json)
    echo "$j" >>"$out/headline.jsonl"
    printf '%-5s %-8s %10s %10s %12.2f %10.3f %8s\n' "$1" "$2" 4194304 "$(field cycles <<<"$j")" \
      "$(field busbw_GBps <<<"$j")" "$(field busbw_fraction <<<"$j")" \
      "$(sed -nE 's/.*"correct":(true|false).*/\1/p' <<<"$j")"
  done
} | tee "$out/headline.txt"

echo "== busbw against message size, 16x16 chips" >&2
csv="$out/busbw_sweep.csv"
echo "pod,op,algo,bytes,cycles,busbw_GBps,busbw_fraction,correct" >"$csv"
for pod in 4x4 8x8; do
  for op in allreduce broadcast all_to_all reduce_scatter all_gather; do
    algos="ring"
    [ "$op" = allreduce ] && algos="torus2d ring"
    for algo in $algos; do
      algo_opt=(--algo "$algo")  # (a broadcast and an all-to-all run no rings: tpusim refuses --algo for them)
      case "$op" in broadcast | all_to_all) algo_opt=() ;; esac
      for bytes in 4096 16384 65536 262144 1048576; do
        j=$("$tpusim" collective --pod "$pod" --mxu 16x16 --op "$op" "${algo_opt[@]}" --bytes "$bytes" --json)
        echo "$pod,$op,$algo,$bytes,$(field cycles <<<"$j"),$(field busbw_GBps <<<"$j"),$(field busbw_fraction <<<"$j"),$(sed -nE 's/.*"correct":(true|false).*/\1/p' <<<"$j")" >>"$csv"
      done
      echo "  $pod $op $algo done" >&2
    done
  done
done
column -t -s, "$csv"
/usr/bin/python3 scripts/plot_collectives.py "$csv" "$out/busbw_sweep.png"
echo "bench: wrote $csv, $out/busbw_sweep.png and $out/headline.txt" >&2
