/*
 * Tests of the fast MXU arithmetic (csim/fast/mxu_fast.c) against the golden model
 * (csim/golden/mxu_golden.c), which shares no code with it: more than a million outputs of
 * random GEMMs, bit for bit, with operands drawn to hit every special case of
 * docs/numerics.md (signed zeros, subnormals read as zero, Inf, NaNs of every kind, products
 * that overflow or underflow, sums that cancel), padded K tiles, every R of the built MXUs;
 * and the host's floating-point mode is left as it was.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <xmmintrin.h>

#include "fast/mxu_fast.h"
#include "golden/mxu_golden.h"
#include "test_util.h"
#include "util/rng.h"

TestSuite(mxu_fast_golden, .timeout = 300);

/* A bf16 operand: a quarter special values, the rest normal numbers over the whole exponent
 * range (so products overflow and underflow) or a narrow one (so sums cancel and round); in
 * `tiny` cases every operand is near 2^-63, so products and sums land on both sides of the
 * smallest normal, 2^-126, and results must flush to zero. */
static uint16_t operand(rng_t *r, bool tiny) {
  if (tiny) return (uint16_t)(rng_below(r, 2) << 15 | (60 + rng_below(r, 8)) << 7 | rng_below(r, 128));
  static const uint16_t specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x7FA5,
                                      0x0001, 0x807F, 0x0040, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80};
  const uint64_t pick = rng_below(r, 100);
  if (pick < 25) return specials[rng_below(r, sizeof specials / sizeof specials[0])];
  const uint16_t sign = (uint16_t)(rng_below(r, 2) << 15), frac = (uint16_t)rng_below(r, 128);
  const unsigned exp = pick < 60 ? 1 + (unsigned)rng_below(r, 254) : 120 + (unsigned)rng_below(r, 16);
  return (uint16_t)(sign | exp << 7 | frac);
}

Test(mxu_fast_golden, a_million_outputs_agree_on_every_bit) {
  rng_t r;
  rng_seed(&r, test_seed() * 7919 + 13);
  const unsigned rows[] = {4, 8, 16, 32, 128};
  uint64_t outputs = 0, cases = 0;
  uint16_t *a = malloc(8 * 300 * 2), *b = malloc(300 * 32 * 2);
  uint32_t *got = malloc(8 * 32 * 4), *want = malloc(8 * 32 * 4);
  while (outputs < 1100000) {
    const unsigned R = rows[rng_below(&r, 5)];
    const size_t m = 1 + rng_below(&r, 8), k = 1 + rng_below(&r, R == 128 ? 300 : 3 * R), n = 1 + rng_below(&r, 32);
    const bool tiny = rng_below(&r, 5) == 0;
    for (size_t i = 0; i < m * k; i++) a[i] = operand(&r, tiny);
    for (size_t i = 0; i < k * n; i++) b[i] = operand(&r, tiny);
    /* some cases without specials in B, so that long sums survive to the end */
    if (!tiny && rng_below(&r, 3) == 0)
      for (size_t i = 0; i < k * n; i++) b[i] = (uint16_t)((b[i] & 0x807F) | (120 + rng_below(&r, 16)) << 7);
    mxu_fast_gemm(R, m, k, n, a, b, got);
    mxu_golden_gemm(R, m, k, n, a, b, want);
    for (size_t i = 0; i < m * n; i++)
      cr_assert_eq(got[i], want[i], "case %llu (R=%u, %zux%zux%zu) output %zu: fast 0x%08x, golden 0x%08x",
                   (unsigned long long)cases, R, m, k, n, i, got[i], want[i]);
    outputs += m * n;
    cases++;
  }
  free(a), free(b), free(got), free(want);
}

Test(mxu_fast_golden, the_host_floating_point_mode_is_restored) {
  const unsigned before = _mm_getcsr();
  const uint16_t a[2] = {0x3F80, 0x4000}, b[2] = {0x3F80, 0x3F80};
  uint32_t out;
  mxu_fast_gemm(4, 1, 2, 1, a, b, &out);
  cr_assert_eq(out, 0x40400000u); /* 1 + 2 */
  cr_assert_eq(_mm_getcsr(), before);
}
