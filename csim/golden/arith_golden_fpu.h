/*
 * arith_golden_fpu: arith_golden's fp32 add and multiply on the host's FPU, for golden checks at
 * host speed (vec_golden, coll_golden, line_sum_golden, and the flush helpers mxu_golden_fpu
 * uses). Bit for bit arith_golden's results for every input: the documented rules applied
 * around IEEE binary32/binary64 host arithmetic (subnormal inputs read as zero, results below
 * 2^-126 flushed to the zero of their sign, every NaN the canonical 0x7FC00000), which tests/
 * test_arith_golden.c holds on random sets with specials. Independent of csim/fast/
 * (scripts/check_layers.py).
 *
 * Needs binary32 arithmetic without excess precision or contraction (SSE on x86-64: C11's
 * FLT_EVAL_METHOD 0; -ffp-contract=off, GCC's default with -std=c11) and the default rounding,
 * to nearest even. The host's own FTZ/DAZ flags do not change any result.
 */
#ifndef GOLDEN_ARITH_GOLDEN_FPU_H
#define GOLDEN_ARITH_GOLDEN_FPU_H

#include <stdint.h>

#include "util/bits.h"

/* A value below 2^-126 (a subnormal, or a zero) becomes the zero of its sign: flush to zero on
 * results, denormals are zero on inputs. Infinities and NaNs pass. */
static inline float arith_golden_fpu_flush(float f) {
  const uint32_t u = bits_of_float(f);
  return (u & 0x7F800000u) ? f : bits_to_float(u & 0x80000000u);
}

/* fp32 bits as a host float, a subnormal read as zero. */
static inline float arith_golden_fpu_in(uint32_t x) { return arith_golden_fpu_flush(bits_to_float(x)); }

/* Every NaN is the canonical one; anything else is as it is. */
static inline uint32_t arith_golden_fpu_canonical(float f) {
  const uint32_t u = bits_of_float(f);
  return (u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) ? 0x7FC00000u : u;
}

/* As arith_golden_fp32_add: a + b, round to nearest even. */
uint32_t arith_golden_fpu_fp32_add(uint32_t a, uint32_t b);

/* As arith_golden_fp32_mul: a x b rounded to 24 bits as if the exponent range were unbounded,
 * then flushed to a signed zero below 2^-126. */
uint32_t arith_golden_fpu_fp32_mul(uint32_t a, uint32_t b);

#endif
