/*
 * Tests of the fast MXU arithmetic (csim/fast/mxu_fast.c) against the golden model
 * (csim/golden/mxu_golden.c), which shares no code with it: more than a million outputs of
 * random GEMMs and every tile shape of the built MXUs through mxu_fast_rows, bit for bit, with
 * operands drawn to hit every special case of docs/numerics.md (signed zeros, subnormals read
 * as zero, Inf, NaNs of every kind, products that overflow or underflow, sums that cancel),
 * padded K tiles, every R of the built MXUs; every vector kernel the host can run (AVX-512F,
 * AVX2, SSE2) gives the same bits; and the host's floating-point mode is left as it was.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xmmintrin.h>

#include "fast/fpmode.h"
#include "fast/mxu_fast.h"
#include "golden/mxu_golden.h"
#include "bf16_operands.h"
#include "test_util.h"
#include "util/rng.h"

TestSuite(mxu_fast, .timeout = 300);

static float widen(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static bool is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

Test(mxu_fast, a_million_gemm_outputs_agree_on_every_bit_with_every_kernel) {
  rng_t r;
  rng_seed(&r, test_seed() * 7919 + 13);
  const mxu_fast_isa_t best = mxu_fast_best_isa();
  uint64_t outputs = 0, cases = 0;
  uint16_t *a = malloc(24 * 300 * 2), *b = malloc(300 * 300 * 2);
  uint32_t *got = malloc(24 * 300 * 4), *want = malloc(24 * 300 * 4);
  while (outputs < 1100000) {
    const gemm_case_t c = random_gemm_case(&r, a, b);
    const unsigned R = c.rows;
    const size_t m = c.m, k = c.k, n = c.n;
    mxu_golden_gemm(R, m, k, n, a, b, want);
    for (int isa = MXU_FAST_SSE2; isa <= (int)best; isa++) {
      mxu_fast_gemm_isa((mxu_fast_isa_t)isa, R, m, k, n, a, b, got);
      for (size_t i = 0; i < m * n; i++)
        cr_assert_eq(got[i], want[i], "case %llu (%s, R=%u, %zux%zux%zu) output %zu: fast 0x%08x, golden 0x%08x",
                     (unsigned long long)cases, mxu_fast_isa_name((mxu_fast_isa_t)isa), R, m, k, n, i, got[i],
                     want[i]);
    }
    outputs += m * n;
    cases++;
  }
  /* mxu_fast_gemm itself runs the best kernel */
  mxu_fast_gemm(8, 3, 20, 5, a, b, got);
  mxu_golden_gemm(8, 3, 20, 5, a, b, want);
  cr_assert_arr_eq(got, want, 15 * sizeof *got);
  free(a), free(b), free(got), free(want);
}

/* One case of mxu_fast_rows (R x C tile, n activation rows of the given kind) with every kernel
 * the host can run, against the golden model's GEMM of the same activations and weights (K = R:
 * one tile, no padding). Activation rows sit a_stride > R apart with NaNs in the gaps, which
 * must not be read; the elements after psum must not be written. A NaN result only has to be a
 * NaN: mxu_fast_rows leaves NaNs as the host makes them and its callers make them canonical
 * (the chip's MXU unit, csim/fast/mxu_unit_fast.c, when the sum reaches the accumulator); every
 * other result must have the golden model's bits. Returns the number of NaN results. */
static size_t check_rows(rng_t *r, unsigned R, unsigned C, size_t n, kind_t kind, unsigned long long id) {
  enum { GUARD = 40 };
  const size_t stride = R + 1 + rng_below(r, 7);
  const mxu_fast_isa_t best = mxu_fast_best_isa();
  uint16_t *a = malloc(n * stride * 2), *ap = malloc(n * R * 2), *b = malloc((size_t)R * C * 2);
  float *w = malloc((size_t)R * C * sizeof *w), *ps = malloc((n * C + GUARD) * sizeof *ps);
  uint32_t *want = malloc(n * C * 4);
  cr_assert(a && ap && b && w && ps && want);
  const kind_t ka = kind == TINY ? TINY : (kind_t)rng_below(r, 3);
  for (size_t i = 0; i < n * stride; i++) a[i] = 0x7FC0; /* the gaps: NaN if read */
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < R; k++) a[i * stride + k] = ap[i * R + k] = operand(r, ka);
  for (size_t i = 0; i < (size_t)R * C; i++) w[i] = widen(b[i] = operand(r, kind));
  mxu_golden_gemm(R, n, R, C, ap, b, want);
  for (int isa = MXU_FAST_SSE2; isa <= (int)best; isa++) {
    const char *name = mxu_fast_isa_name((mxu_fast_isa_t)isa);
    for (size_t i = 0; i < n * C + GUARD; i++) ps[i] = -1.5f;
    const unsigned mode = fast_fpmode_enter();
    if (isa == (int)best)
      mxu_fast_rows(R, C, n, a, stride, w, ps);
    else
      mxu_fast_rows_isa((mxu_fast_isa_t)isa, R, C, n, a, stride, w, ps);
    fast_fpmode_leave(mode);
    for (size_t i = 0; i < n * C; i++) {
      const uint32_t g = bits(ps[i]);
      if (is_nan(want[i]))
        cr_assert(is_nan(g), "case %llu (%s, %ux%u, n=%zu, kind %d) psum %zu: fast 0x%08x, golden NaN", id, name, R, C,
                  n, kind, i, g);
      else
        cr_assert_eq(g, want[i], "case %llu (%s, %ux%u, n=%zu, kind %d) psum %zu: fast 0x%08x, golden 0x%08x", id, name,
                     R, C, n, kind, i, g, want[i]);
    }
    for (size_t i = n * C; i < n * C + GUARD; i++)
      cr_assert_eq(bits(ps[i]), bits(-1.5f), "case %llu (%s, %ux%u, n=%zu): psum written past its end at %zu", id, name,
                   R, C, n, i);
  }
  size_t nans = 0;
  for (size_t i = 0; i < n * C; i++) nans += is_nan(want[i]);
  free(a), free(ap), free(b), free(w), free(ps), free(want);
  return nans;
}

/* Every tile shape of the built MXUs, and ragged ones for the kernels' column tails. */
Test(mxu_fast, rows_agree_on_every_bit_for_every_tile_shape_and_kernel) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 7);
  static const unsigned shapes[][2] = {{4, 4}, {8, 8}, {16, 16}, {32, 32}, {128, 128}, {4, 8}, {8, 4},
                                       {7, 3}, {12, 20}, {33, 37}, {128, 100}};
  static const size_t ns[] = {1, 2, 3, 5, 8, 17, 128};
  uint64_t outputs = 0, nans = 0, cases = 0;
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (unsigned rep = 0; rep < (shapes[sh][0] == 128 ? 1u : 4u) * KINDS; rep++, cases++) {
        nans += check_rows(&r, shapes[sh][0], shapes[sh][1], ns[ni], (kind_t)(rep % KINDS), cases);
        outputs += ns[ni] * shapes[sh][1];
      }
  cr_log_info("%llu cases, %llu outputs, %llu of them NaN", (unsigned long long)cases, (unsigned long long)outputs,
              (unsigned long long)nans);
  /* most outputs must be numbers, or the bits of the sums are hardly tested */
  cr_assert_lt(nans, outputs / 2, "%llu of %llu outputs are NaN", (unsigned long long)nans,
               (unsigned long long)outputs);
}

/* A tile taller than the kernels' stack buffer for widened activations: they use the heap. */
Test(mxu_fast, rows_of_a_tall_tile_agree_on_every_bit) {
  rng_t r;
  rng_seed(&r, test_seed() * 15485863 + 3);
  for (unsigned long long id = 0; id < 8; id++) check_rows(&r, 2100, 21, 1 + id, (kind_t)(id % KINDS), id);
}

Test(mxu_fast, the_host_floating_point_mode_is_restored) {
  const unsigned before = _mm_getcsr();
  const uint16_t a[2] = {0x3F80, 0x4000}, b[2] = {0x3F80, 0x3F80};
  uint32_t out;
  mxu_fast_gemm(4, 1, 2, 1, a, b, &out);
  cr_assert_eq(out, 0x40400000u); /* 1 + 2 */
  cr_assert_eq(_mm_getcsr(), before);
}

Test(mxu_fast, an_empty_k_sums_to_plus_zero) {
  uint32_t out[6], want[6];
  mxu_fast_gemm(4, 2, 0, 3, NULL, NULL, out);
  mxu_golden_gemm(4, 2, 0, 3, NULL, NULL, want);
  cr_assert_arr_eq(out, want, sizeof out);
  cr_assert_eq(out[0], 0u);
}
