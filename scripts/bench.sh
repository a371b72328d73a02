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

json_field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }

echo "== MXU utilisation (tpusim gemm, data offered every cycle)" >&2
{
  printf '%-9s %-16s %9s %9s %9s %8s\n' mxu "M x K x N" cycles contract ideal util
  for spec in "16x16 16 16 16" "16x16 1 256 256" "16x16 64 64 64" "16x16 256 256 256" "16x16 100 300 70" \
              "128x128 128 128 128" "128x128 64 512 512" "128x128 256 256 256" "128x128 1024 1024 1024"; do
    set -- $spec
    j=$("$tpusim" gemm --level mxu --mxu "$1" --m "$2" --k "$3" --n "$4" --json)
    echo "$j" >>"$out/mxu_util.jsonl"
    printf '%-9s %-16s %9s %9s %9.0f %7.2f%%\n' "$1" "$2x$3x$4" "$(json_field cycles <<<"$j")" \
      "$(json_field contract_cycles <<<"$j")" "$(json_field ideal_cycles <<<"$j")" \
      "$(awk -v u="$(json_field utilization <<<"$j")" 'BEGIN { print 100 * u }')"
  done
} | tee "$out/mxu_util.txt" | tee -a "$out/summary.txt"

echo "== A x B^T: B kept transposed, tiles loaded transposed (tpusim gemm --transposed-b), against A x B" >&2
{
  printf '%-9s %-7s %-16s %9s %9s %8s %10s\n' mxu level "M x K x N" plain "B^T" util "of plain"
  for spec in "mxu 16x16 256 256 256" "mxu 128x128 1024 1024 1024" "chip 16x16 256 256 256"; do
    set -- $spec
    p=$("$tpusim" gemm --level "$1" --mxu "$2" --m "$3" --k "$4" --n "$5" --json)
    t=$("$tpusim" gemm --level "$1" --mxu "$2" --m "$3" --k "$4" --n "$5" --transposed-b --json)
    echo "$t" >>"$out/transposed_b.jsonl"
    printf '%-9s %-7s %-16s %9s %9s %7.2f%% %9.2f%%\n' "$2" "$1" "$3x$4x$5" "$(json_field cycles <<<"$p")" \
      "$(json_field cycles <<<"$t")" "$(awk -v u="$(json_field utilization <<<"$t")" 'BEGIN { print 100 * u }')" \
      "$(awk -v a="$(json_field utilization <<<"$t")" -v b="$(json_field utilization <<<"$p")" 'BEGIN { print 100 * a / b }')"
  done
} | tee "$out/transposed_b.txt" | tee -a "$out/summary.txt"

echo "== A^T x B: A kept transposed, lines made by transposing DMAs (tpusim gemm --transposed-a), against A x B" >&2
{
  printf '%-9s %-16s %9s %9s %8s %10s\n' mxu "M x K x N" plain "A^T" util "of plain"
  for spec in "16x16 256 256 256" "16x16 512 512 512" "128x128 1024 1024 1024"; do
    set -- $spec
    p=$("$tpusim" gemm --mxu "$1" --m "$2" --k "$3" --n "$4" --json)
    t=$("$tpusim" gemm --mxu "$1" --m "$2" --k "$3" --n "$4" --transposed-a --json)
    echo "$t" >>"$out/transposed_a.jsonl"
    printf '%-9s %-16s %9s %9s %7.2f%% %9.2f%%\n' "$1" "$2x$3x$4" "$(json_field cycles <<<"$p")" \
      "$(json_field cycles <<<"$t")" "$(awk -v u="$(json_field utilization <<<"$t")" 'BEGIN { print 100 * u }')" \
      "$(awk -v a="$(json_field utilization <<<"$t")" -v b="$(json_field utilization <<<"$p")" 'BEGIN { print 100 * a / b }')"
  done
} | tee "$out/transposed_a.txt" | tee -a "$out/summary.txt"

echo "== the MXU's fast model against the RTL (tpusim gemm --level mxu --model rtl|fast; docs/scale.md)" >&2
{
  printf '%-9s %-16s %10s %14s %14s %9s\n' mxu "M x K x N" cycles "RTL cycles/s" "fast cycles/s" ratio
  for spec in "16x16 256 256 256" "128x128 1024 1024 1024"; do
    set -- $spec
    r=$("$tpusim" gemm --level mxu --mxu "$1" --m "$2" --k "$3" --n "$4" --json 2>/dev/null)
    : >"$out/fast_mxu_$1.jsonl"
    for run in 1 2 3; do
      "$tpusim" gemm --level mxu --mxu "$1" --m "$2" --k "$3" --n "$4" --model fast --json 2>/dev/null >>"$out/fast_mxu_$1.jsonl"
    done
    f=$(json_field sim_cycles_per_s <"$out/fast_mxu_$1.jsonl" | median)
    [ "$(json_field cycles <<<"$r")" = "$(json_field cycles <"$out/fast_mxu_$1.jsonl" | head -1)" ] || { echo "bench: fast and RTL cycles differ" >&2; exit 1; }
    printf '%-9s %-16s %10s %14.0f %14.0f %8.0fx\n' "$1" "$2x$3x$4" "$(json_field cycles <<<"$r")" \
      "$(json_field sim_cycles_per_s <<<"$r")" "$f" "$(awk -v a="$f" -v b="$(json_field sim_cycles_per_s <<<"$r")" 'BEGIN { print a / b }')"
  done
} | tee "$out/fast_mxu.txt" | tee -a "$out/summary.txt"

scripts/bench_mxu_fast.sh "$out" | tee -a "$out/summary.txt"

echo "== MXU simulation speed (median of 3 runs; one core)" >&2
{
  printf '%-9s %-16s %14s %14s\n' mxu "M x K x N" "cycles/s" "MACs/s"
  for spec in "8x8 128 256 256" "16x16 256 256 256" "32x32 256 256 256" "128x128 256 512 512"; do
    set -- $spec
    : >"$out/speed_$1.jsonl"
    for run in 1 2 3; do "$tpusim" gemm --level mxu --mxu "$1" --m "$2" --k "$3" --n "$4" --seed "$run" --json >>"$out/speed_$1.jsonl"; done
    printf '%-9s %-16s %14.0f %14.3g\n' "$1" "$2x$3x$4" "$(json_field sim_cycles_per_s <"$out/speed_$1.jsonl" | median)" \
      "$(json_field macs_per_s <"$out/speed_$1.jsonl" | median)"
  done
} | tee "$out/mxu_speed.txt" | tee -a "$out/summary.txt"

echo "== MXU build time and peak memory (verilate + compile one model, no ccache)" >&2
{
  printf '%-9s %10s %14s %12s\n' mxu "seconds" "peak MB" "C++ KB"
  for size in 8x8 16x16 32x32 128x128; do
    r=${size%x*} c=${size#*x} dir=$(mktemp -d)
    /usr/bin/time -f '%e %M' -o "$dir/time" bash -c "
      verilator --cc --trace-fst --x-assign unique --x-initial unique -O3 --timescale 1ns/1ns -Wall -y rtl \
        -GRows=$r -GCols=$c -GAccDepth=4096 --Mdir $dir --prefix Vmxu --top-module mxu_top rtl/lint.vlt rtl/arith_pkg.sv rtl/mxu_top.sv &&
      CCACHE_DISABLE=1 MAKEFLAGS= make -s -C $dir -f Vmxu.mk Vmxu__ALL.a OPT_FAST=-O2 OPT_SLOW=-O1 >/dev/null"
    kb=$(cat "$dir"/*.cpp | wc -c)
    read -r secs mem <"$dir/time"
    printf '%-9s %10s %14.0f %12.0f\n' "$size" "$secs" "$((mem / 1024))" "$((kb / 1024))"
    rm -rf "$dir"
  done
} | tee "$out/mxu_build.txt" | tee -a "$out/summary.txt"
echo "bench: results in $out/" >&2

scripts/bench_net.sh "$out" | tee -a "$out/summary.txt"

scripts/bench_chip.sh "$out" | tee -a "$out/summary.txt"
scripts/bench_scale.sh "$out" | tee -a "$out/summary.txt"

scripts/bench_collective.sh "$out" | tee -a "$out/summary.txt"
scripts/bench_train.sh "$out" | tee -a "$out/summary.txt"
scripts/bench_profile.sh "$out" | tee -a "$out/summary.txt"
echo "== the SystemC path's overhead (scripts/bench_systemc.sh)" >&2
scripts/bench_systemc.sh "$out" | tee -a "$out/summary.txt"
