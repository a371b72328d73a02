#!/usr/bin/env bash
# Pod-scale benchmarks (part of `make bench`; docs/scale.md): each mode side by side, speed and
# memory. The fast chip against the RTL on a firmware GEMM from HBM (same cycles, same bits,
# ratio of simulated cycles/s in one run); the host cost of a chip per cycle on each model,
# idle chips among busy ones included; a collective on an 8x8 pod on each model; a 16x16 pod's
# all-reduce on one and two threads (identical reports, the speed-up); and the
# pod-scale runs on the fast model: a 4 MiB torus2d all-reduce on every chip of a POD (default
# 32x32) pod of 128x128 chips, then a data-parallel step on it (a 1024^3 GEMM per chip and the
# 4 MiB all-reduce of the products), with wall time and peak memory.
# The 32x32 step holds every chip's A and product and the GEMM's VMEM at once: about 16 GB
# (STEP_POD=16x16 for a smaller machine: about 4 GB).
# usage: [POD=32x32] [STEP_POD=POD] scripts/bench_scale.sh OUTDIR
set -euo pipefail
out=$1/scale
mkdir -p "$out"
tpusim=build/tpusim
pod=${POD:-32x32}
step_pod=${STEP_POD:-$pod}
field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== the chip's fast model against the RTL: firmware GEMM from HBM (tpusim gemm --model rtl|fast)" >&2
{
  printf '%-9s %-16s %9s %14s %14s %9s\n' chip "M x K x N" cycles "RTL cycles/s" "fast cycles/s" ratio
  for spec in "16x16 256 256 256" "128x128 1024 1024 1024"; do
    set -- $spec
    r=$("$tpusim" gemm --mxu "$1" --m "$2" --k "$3" --n "$4" --json 2>/dev/null)
    echo "$r" >"$out/gemm_rtl_$1.json"
    : >"$out/gemm_fast_$1.jsonl"
    for run in 1 2 3; do
      "$tpusim" gemm --mxu "$1" --m "$2" --k "$3" --n "$4" --model fast --json 2>/dev/null >>"$out/gemm_fast_$1.jsonl"
    done
    f=$(field sim_cycles_per_s <"$out/gemm_fast_$1.jsonl" | median)
    for k in cycles hbm_bytes dma_busy_cycles mxu_busy_cycles; do
      [ "$(field "$k" <<<"$r")" = "$(field "$k" <"$out/gemm_fast_$1.jsonl" | head -1)" ] ||
        { echo "bench: the fast chip's $k differs from the RTL's" >&2; exit 1; }
    done
    grep -q '"bit_exact":true' "$out/gemm_fast_$1.jsonl" || { echo "bench: the fast chip's GEMM is not bit-exact" >&2; exit 1; }
    printf '%-9s %-16s %9s %14.0f %14.0f %8.0fx\n' "$1" "$2x$3x$4" "$(field cycles <<<"$r")" \
      "$(field sim_cycles_per_s <<<"$r")" "$f" "$(awk -v a="$f" -v b="$(field sim_cycles_per_s <<<"$r")" 'BEGIN { print a / b }')"
  done
} | tee "$out/gemm.txt"

echo "== host time per simulated cycle of a chip, each model (tpusim chip)" >&2
for size in 16x16 128x128; do
  for model in rtl fast; do
    "$tpusim" chip --mxu "$size" --model "$model" $([ "$size" = 128x128 ] && echo "--cycles 20000") | tee -a "$out/chip_cost.txt"
  done
done

echo "== a collective on an 8x8 pod of 16x16 chips, each model (tpusim collective, 64 KiB all-reduce)" >&2
{
  printf '%-6s %9s %10s %12s %10s\n' model cycles seconds "cycles/s" "RSS MB"
  for model in rtl fast check; do
    j=$("$tpusim" collective --pod 8x8 --mxu 16x16 --op allreduce --bytes 65536 --algo torus2d --model "$model" --json 2>/dev/null)
    echo "$j" >"$out/collective_8x8_$model.json"
    grep -q '"correct":true' <<<"$j" || { echo "bench: the $model collective is not correct" >&2; exit 1; }
    printf '%-6s %9s %10.2f %12.0f %10.0f\n' "$model" "$(field cycles <<<"$j")" "$(field sim_seconds <<<"$j")" \
      "$(awk -v c="$(field cycles <<<"$j")" -v s="$(field sim_seconds <<<"$j")" 'BEGIN { print c / s }')" \
      "$(field peak_rss_MB <<<"$j")"
  done
} | tee "$out/collective_8x8.txt"

echo "== threads and ranks: a 1 MiB all-reduce on a 16x16 pod of 16x16 chips, 1 and 2 threads, 2 MPI ranks (median of 3)" >&2
{
  printf '%-8s %9s %12s %9s\n' run cycles "seconds" speedup
  strip() { sed -E 's/,"sim_seconds":[^,}]*//; s/,"peak_rss_MB":[^,}]*//'; }
  base=""
  for t in 1 2 mpi2; do
    : >"$out/threads_$t.jsonl"
    for run in 1 2 3; do
      if [ "$t" = mpi2 ]; then # two Open MPI ranks (as root here: mpirun needs to be told)
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 "$tpusim" collective \
          --pod 16x16 --mxu 16x16 --op allreduce --algo torus2d --bytes 1048576 --model fast --json 2>/dev/null \
          >>"$out/threads_$t.jsonl"
      else
        "$tpusim" collective --pod 16x16 --mxu 16x16 --op allreduce --algo torus2d --bytes 1048576 --model fast \
          --threads "$t" --json 2>/dev/null >>"$out/threads_$t.jsonl"
      fi
    done
    j=$(head -1 "$out/threads_$t.jsonl")
    grep -q '"correct":true' <<<"$j" || { echo "bench: the all-reduce on $t threads is not correct" >&2; exit 1; }
    [ -z "$base" ] && base=$(strip <<<"$j")
    [ "$(strip <<<"$j")" = "$base" ] || { echo "bench: $t threads report differently from one" >&2; exit 1; }
    secs=$(field sim_seconds <"$out/threads_$t.jsonl" | median)
    [ "$t" = 1 ] && one=$secs
    printf '%-8s %9s %12.2f %8.2fx\n' "$t" "$(field cycles <<<"$j")" "$secs" "$(awk -v a="$one" -v b="$secs" 'BEGIN { print a / b }')"
  done
} | tee "$out/threads.txt"

echo "== pod scale: 4 MiB torus2d all-reduce on every chip of a $pod pod of 128x128 chips (fast model)" >&2
/usr/bin/time -f '%e %M' -o "$out/allreduce_time" "$tpusim" collective --pod "$pod" --mxu 128x128 --op allreduce \
  --bytes 4194304 --algo torus2d --model fast --json >"$out/allreduce_$pod.json"
read -r secs kb <"$out/allreduce_time"
j=$(cat "$out/allreduce_$pod.json")
grep -q '"correct":true' <<<"$j" || { echo "bench: the all-reduce is not correct" >&2; exit 1; }
printf '%s pod, 4 MiB all-reduce: %s cycles, busbw %.2f GB/s, correct on every bit; %.0f s wall, %.0f MB peak RSS\n' \
  "$pod" "$(field cycles <<<"$j")" "$(field busbw_GBps <<<"$j")" "$secs" "$((kb / 1024))" | tee "$out/allreduce.txt"

echo "== pod scale: a data-parallel step on a $step_pod pod of 128x128 chips (1024^3 GEMM per chip, 4 MiB all-reduce)" >&2
/usr/bin/time -f '%e %M' -o "$out/step_time" "$tpusim" step --pod "$step_pod" --mxu 128x128 --m 1024 --k 1024 --n 1024 \
  --algo torus2d --model fast --json >"$out/step_$step_pod.json"
read -r secs kb <"$out/step_time"
j=$(cat "$out/step_$step_pod.json")
grep -q '"correct":true' <<<"$j" || { echo "bench: the step is not correct" >&2; exit 1; }
printf '%s pod step: GEMM %s cycles (MXU %.1f%%), all-reduce %s cycles, correct on every bit; %.0f s wall, %.0f MB peak RSS\n' \
  "$step_pod" "$(field gemm_cycles <<<"$j")" "$(awk -v u="$(field mxu_utilization <<<"$j")" 'BEGIN { print 100 * u }')" \
  "$(field allreduce_cycles <<<"$j")" "$secs" "$((kb / 1024))" | tee "$out/step.txt"
