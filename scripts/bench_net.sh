#!/usr/bin/env bash
# Network benchmarks (part of `make bench`): latency-versus-load sweeps (CSV, PNG), saturation
# throughput, and simulation speed. usage: scripts/bench_net.sh OUTDIR
set -euo pipefail
out=$1/net
mkdir -p "$out"
tpusim=build/tpusim
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== torus latency versus load (tpusim net --sweep, 3000 measured cycles per point)" >&2
{
  printf '%-5s %-10s %4s %6s %12s %14s\n' pod pattern VCs flits "zero-load" "saturation"
  for pod in 4x4 8x8; do
    for pattern in uniform transpose bitcomp tornado; do
      curves=()
      for vcs in 2 4; do
        for flits in 1 4; do
          csv="$out/sweep_${pod}_${pattern}_v${vcs}_f${flits}.csv"
          "$tpusim" net --pod "$pod" --traffic "$pattern" --vcs "$vcs" --packet-flits "$flits" \
            --cycles 3000 --warmup 500 --sweep --sweep-csv "$csv" >/dev/null
          curves+=("$csv=$vcs VCs, $flits-flit packets")
          # saturation: the highest accepted load among points that were not saturated
          sat=$(awk -F, 'NR > 1 && $7 == 0 && $4 < 20 * ($5 + 1) { if ($3 > m) m = $3 } END { printf "%.3f", m }' "$csv")
          zero=$(awk -F, 'NR == 2 { printf "%.1f", $4 }' "$csv")
          printf '%-5s %-10s %4s %6s %12s %14s\n' "$pod" "$pattern" "$vcs" "$flits" "$zero" "$sat"
        done
      done
      /usr/bin/python3 scripts/plot_sweep.py "$out/latency_${pod}_${pattern}.png" "$pod torus, $pattern traffic" "${curves[@]}"
    done
  done
} | tee "$out/saturation.txt"
echo "(zero-load: average latency at 0.05 flits/node/cycle; saturation: highest accepted load, flits/node/cycle, before latency diverges)"

echo "== torus simulation speed (one core, median of 3; 4 VCs, 8-flit buffers, uniform, 1-flit packets)" >&2
{
  printf '%-7s %6s %16s\n' pod load "cycles/s"
  for pod in 8x8 16x16 32x32; do
    for load in 0.05 0.1 0.3; do
      cycles=$([ "$pod" = 32x32 ] && echo 1000 || echo 3000)
      speed=$(for seed in 1 2 3; do
        "$tpusim" net --pod "$pod" --rate "$load" --cycles "$cycles" --warmup 200 --seed "$seed" --json |
          sed -nE 's/.*"sim_cycles_per_s":([0-9.e+]+).*/\1/p'
      done | median)
      printf '%-7s %6s %16.0f\n' "$pod" "$load" "$speed"
    done
  done
} | tee "$out/speed.txt"
