/*
 * Tests of the fast vector unit (csim/fast/vec_fast.c) against the golden model
 * (csim/golden/vec_golden.c), which shares no code with it: every VEC operation on more than a
 * million lanes of random fp32 values, bit for bit, the values drawn to hit every special case
 * of docs/numerics.md (signed zeros, subnormals, Inf, NaNs of every sign and payload, values
 * around the smallest normal and around EXP's and RECIP's range limits), for 4, 16 and 128
 * lanes and line reductions of 1 to 9 lines.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "fast/vec_fast.h"
#include "golden/vec_golden.h"
#include "test_util.h"
#include "util/rng.h"

TestSuite(vec_fast, .timeout = 300);

static uint32_t value(rng_t *r) {
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                      0x7F800001u, 0xFFFFFFFFu, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u,
                                      0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x43000000u, 0xC3000000u,
                                      0x42FFFFFFu, 0xC2FFFFFFu, 0x7E800000u, 0x7F000000u, 0x00400000u, 0x3F7FFFFFu};
  const uint64_t pick = rng_below(r, 100);
  if (pick < 20) return specials[rng_below(r, sizeof specials / sizeof specials[0])];
  const uint32_t sign = (uint32_t)rng_below(r, 2) << 31, frac = (uint32_t)rng_below(r, 1u << 23);
  uint32_t exp;
  if (pick < 50) exp = 1 + (uint32_t)rng_below(r, 254);             /* anywhere */
  else if (pick < 70) exp = 110 + (uint32_t)rng_below(r, 30);       /* near 1: sums that cancel */
  else if (pick < 80) exp = 1 + (uint32_t)rng_below(r, 12);         /* near the smallest normal */
  else if (pick < 90) exp = 126 + (uint32_t)rng_below(r, 10);       /* EXP's range limit, 128 */
  else exp = 240 + (uint32_t)rng_below(r, 15);                      /* RECIP flushing, products overflowing */
  return sign | exp << 23 | frac;
}

Test(vec_fast, every_operation_agrees_on_every_bit) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 1);
  const isa_vec_op_t ops[] = {ISA_VEC_ADD,       ISA_VEC_SUB,       ISA_VEC_MUL,       ISA_VEC_MAX,      ISA_VEC_RELU,
                              ISA_VEC_SCALE,     ISA_VEC_TO_BF16,   ISA_VEC_TO_FP32,   ISA_VEC_COPY,     ISA_VEC_RELU_GRAD,
                              ISA_VEC_AXPY,      ISA_VEC_SUM_LANES, ISA_VEC_MAX_LANES, ISA_VEC_SUM_LINES, ISA_VEC_MAX_LINES,
                              ISA_VEC_EXP,       ISA_VEC_RECIP};
  const unsigned lane_counts[] = {4, 16, 128};
  uint32_t *a = malloc(9 * 128 * 4), *b = malloc(9 * 128 * 4), *got = malloc(9 * 128 * 4), *want = malloc(9 * 128 * 4);
  uint64_t lanes_checked = 0;
  for (unsigned round = 0; lanes_checked < 1200000; round++) {
    const isa_vec_op_t op = ops[round % (sizeof ops / sizeof ops[0])];
    const unsigned lanes = lane_counts[rng_below(&r, 3)], rows = 1 + (unsigned)rng_below(&r, 9);
    for (unsigned i = 0; i < rows * lanes; i++) a[i] = value(&r), b[i] = value(&r);
    const uint32_t scalar = value(&r);
    const unsigned n = vec_fast_lines(op, lanes, rows, a, b, scalar, got);
    const unsigned w = vec_golden_lines(op, lanes, rows, a, b, scalar, want);
    cr_assert_eq(n, w, "op %d: %u lines written, golden %u", op, n, w);
    for (unsigned i = 0; i < n * lanes; i++)
      cr_assert_eq(got[i], want[i], "op %d, %u lanes, %u rows, lane %u: a 0x%08x b 0x%08x scalar 0x%08x: fast 0x%08x, "
                   "golden 0x%08x", op, lanes, rows, i, a[i], b[i], scalar, got[i], want[i]);
    lanes_checked += (uint64_t)n * lanes;
  }
  free(a), free(b), free(got), free(want);
}
