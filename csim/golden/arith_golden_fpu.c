/* arith_golden_fpu: see arith_golden_fpu.h. */
#include "golden/arith_golden_fpu.h"

#include <float.h>
#include <math.h>

#if FLT_EVAL_METHOD != 0
#error "arith_golden_fpu needs binary32 arithmetic evaluated in binary32 (FLT_EVAL_METHOD 0)"
#endif

uint32_t arith_golden_fpu_fp32_add(uint32_t a, uint32_t b) {
  /* A sum of two normals that lands below 2^-126 is a multiple of 2^-149, so the host's
   * subnormal result is exact and flushing it gives arith_golden's signed zero; an exact
   * cancellation is +0 under RNE, (-0) + (-0) is -0, x + 0 is x; Inf - Inf and NaN inputs give
   * some NaN, made canonical. */
  return arith_golden_fpu_canonical(arith_golden_fpu_flush(arith_golden_fpu_in(a) + arith_golden_fpu_in(b)));
}

uint32_t arith_golden_fpu_fp32_mul(uint32_t a, uint32_t b) {
  /* The product of two 24-bit significands is exact in binary64 (48 bits, and fp32's exponent
   * range squared is inside binary64's normal range), with the IEEE sign, Inf x 0 = NaN and
   * NaN propagation. Narrowed once, it is rounded as arith_golden rounds wherever the result
   * is normal or overflows. Below 2^-126 the host would round to the subnormal grid instead;
   * arith_golden rounds to 24 bits first, which reaches 2^-126 from [2^-126 - 2^-151, 2^-126)
   * (the tie goes to the even 2^-126), and flushes everything else to the zero of its sign. */
  const double p = (double)arith_golden_fpu_in(a) * (double)arith_golden_fpu_in(b);
  const double mag = fabs(p);
  if (mag < 0x1p-126) {
    const uint32_t sign = signbit(p) ? 0x80000000u : 0;
    return mag >= 0x1p-126 - 0x1p-151 ? sign | 0x00800000u : sign;
  }
  return arith_golden_fpu_canonical((float)p);
}
