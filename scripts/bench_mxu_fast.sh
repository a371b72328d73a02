#!/usr/bin/env bash
# The fast MXU arithmetic (part of `make bench`; docs/scale.md, "Fast MXU arithmetic"):
#   - mxu_fast_rows at 128x128 in G multiply-adds/s for n = 1, 8, 128 and 1024 activation rows,
#     with each vector kernel the host can run (the first line's, the best, is what the models use);
#   - the host time of the MXU-alone GEMM (tpusim gemm --level mxu --model fast, 128x128,
#     M = K = N = 1024; each run also checks against the golden model, which takes ~30 s);
#   - that the compiled arithmetic has no fused multiply-add (vfmadd) in it.
# Figures are medians of repeated runs (the machine may be shared).
# usage: scripts/bench_mxu_fast.sh OUTDIR   (after make build/tpusim)
set -euo pipefail
out=$1/mxu_fast
mkdir -p "$out"
tpusim=build/tpusim
obj=build/obj/csim/fast/mxu_fast.o
field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

fmas=$(objdump -d "$obj" | grep -c vfmadd || true)
[ "$fmas" = 0 ] || { echo "bench: $obj has $fmas fused multiply-adds; the MXU's sums must round after each add" >&2; exit 1; }

cat >"$out/bench_rows.c" <<'EOF'
/* mxu_fast_rows at R x C = 128 x 128: G multiply-adds/s per kernel and n (median of 7 samples
 * of at least 20 ms each); operands are normal numbers near 1, weights widened bf16. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fast/fpmode.h"
#include "fast/mxu_fast.h"

#define R 128
#define C 128
#define SAMPLES 7

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(void) {
  static const size_t ns[] = {1, 8, 128, 1024};
  static uint16_t a[1024 * R];
  static float w[R * C], psum[1024 * C];
  uint64_t x = 88172645463325252u;
  for (size_t i = 0; i < 1024 * R + R * C; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const uint16_t h = (uint16_t)((x & 0x807F) | (120 + (x >> 32) % 16) << 7);
    if (i < 1024 * R) {
      a[i] = h;
    } else {
      const uint32_t u = (uint32_t)h << 16;
      memcpy(&w[i - 1024 * R], &u, sizeof u);
    }
  }
  const unsigned mode = fast_fpmode_enter();
  printf("%-9s %-8s %5s %10s %10s %10s\n", "kernel", "R x C", "n", "G MAC/s", "us/call", "ns/row");
  for (int isa = (int)mxu_fast_best_isa(); isa >= (int)MXU_FAST_SSE2; isa--) {
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      const size_t n = ns[k];
      double g[SAMPLES];
      for (int s = 0; s < SAMPLES; s++) {
        long calls = 0;
        const double t0 = now();
        double t;
        do {
          for (int q = 0; q < 8; q++) mxu_fast_rows_isa((mxu_fast_isa_t)isa, R, C, n, a, R, w, psum);
          calls += 8;
        } while ((t = now()) - t0 < 0.02);
        g[s] = (double)calls * (double)n * R * C / (t - t0) / 1e9;
      }
      qsort(g, SAMPLES, sizeof g[0], cmp);
      const double med = g[SAMPLES / 2];
      printf("%-9s %-8s %5zu %10.2f %10.3f %10.1f\n", mxu_fast_isa_name((mxu_fast_isa_t)isa), "128x128", n, med,
             (double)n * R * C / med / 1e3, (double)R * C / med);
    }
  }
  fast_fpmode_leave(mode);
  return 0;
}
EOF
gcc -std=c11 -O2 -Wall -Wextra -Werror -Icsim -I. -o "$out/bench_rows" "$out/bench_rows.c" build/libtpusim.a -lm

echo "== fast MXU arithmetic: mxu_fast_rows, one core (median of 7; docs/scale.md)" >&2
"$out/bench_rows" | tee "$out/rows.txt"

echo "== fast MXU arithmetic: MXU-alone GEMM, tpusim gemm --level mxu --model fast (median of 3)" >&2
: >"$out/gemm.jsonl"
for run in 1 2 3; do
  "$tpusim" gemm --level mxu --mxu 128x128 --m 1024 --k 1024 --n 1024 --model fast --json >>"$out/gemm.jsonl"
done
grep -q '"bit_exact":false' "$out/gemm.jsonl" && { echo "bench: the fast GEMM is not bit-exact" >&2; exit 1; }
secs=$(field sim_seconds <"$out/gemm.jsonl" | median)
macs=$(field macs_per_s <"$out/gemm.jsonl" | median)
printf '%-9s %-16s %10.4f s %10.2f G MAC/s  (bit-exact, no vfmadd in %s)\n' 128x128 1024x1024x1024 "$secs" \
  "$(awk -v m="$macs" 'BEGIN { print m / 1e9 }')" "$obj" | tee "$out/gemm.txt"
