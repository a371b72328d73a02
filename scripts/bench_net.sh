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

echo "== the fast router against the RTL router (tpusim net --model rtl|fast; docs/scale.md)" >&2
# 32x32 torus, uniform traffic, 4 VCs x 8 flits, 1-flit packets; the same cycles and warm-up for
# both models (at 0.3 the pod saturates, so the run includes the long drain of its backlog). The
# RTL runs once, the fast router three times (median); the two must report the same results.
# BookSim2 on this machine: 173 cycles/s at 32x32 and 0.05 (docs/benchmarks.md).
booksim=173
{
  printf '%-6s %7s %9s %14s %14s %8s %12s\n' load cycles simulated "RTL cycles/s" "fast cycles/s" ratio "x BookSim2"
  for spec in "0.05 20000 1000" "0.3 1000 200"; do
    set -- $spec
    args="--pod 32x32 --rate $1 --cycles $2 --warmup $3 --seed 1 --json"
    r=$("$tpusim" net $args --model rtl 2>/dev/null)
    echo "$r" >"$out/fast_router_rtl_$1.json"
    : >"$out/fast_router_fast_$1.jsonl"
    for run in 1 2 3; do "$tpusim" net $args --model fast 2>/dev/null >>"$out/fast_router_fast_$1.jsonl"; done
    # the results (everything but the model's name and host time) must be the RTL's
    strip() { sed -E 's/"model":"[a-z]+",//; s/,"sim_seconds":[^,}]*//; s/,"sim_cycles_per_s":[^,}]*//'; }
    if [ "$(strip <<<"$r")" != "$(head -1 "$out/fast_router_fast_$1.jsonl" | strip)" ]; then
      echo "bench: fast and RTL routers report different results at load $1" >&2
      exit 1
    fi
    rtl=$(sed -nE 's/.*"sim_cycles_per_s":([0-9.e+]+).*/\1/p' <<<"$r")
    fast=$(sed -nE 's/.*"sim_cycles_per_s":([0-9.e+]+).*/\1/p' "$out/fast_router_fast_$1.jsonl" | median)
    cycles=$(sed -nE 's/.*"cycles":([0-9]+).*/\1/p' <<<"$r")
    printf '%-6s %7s %9s %14.0f %14.0f %7.1fx %11.1fx\n' "$1" "$2" "$cycles" "$rtl" "$fast" \
      "$(awk -v a="$fast" -v b="$rtl" 'BEGIN { print a / b }')" "$(awk -v a="$fast" -v b="$booksim" 'BEGIN { print a / b }')"
  done
} | tee "$out/fast_router.txt"
echo "(cycles: measured cycles; simulated: all the run's cycles, drain included; x BookSim2: fast cycles/s over BookSim2's $booksim at 32x32, 0.05)"
