/*
 * Golden model of the TPU arithmetic; see arith_golden.h for the numerics.
 * Integer bit manipulation only: no host floating point anywhere, so the
 * result never depends on the host FPU's rounding mode or FTZ/DAZ flags.
 */
#include "golden/arith_golden.h"

#include <stdbool.h>

#define FP32_SIGN_MASK  0x80000000u
#define FP32_MAG_MASK   0x7FFFFFFFu
#define FP32_FRAC_MASK  0x007FFFFFu
#define FP32_HIDDEN_BIT 0x00800000u
#define FP32_INF        0x7F800000u
#define FP32_FRAC_BITS  23
#define FP32_EXP_MAX    255 /* biased exponent of Inf/NaN */

#define BF16_FRAC_BITS  7
#define BF16_HIDDEN_BIT 0x80u

/*
 * Extra low-order bits kept while aligning the smaller addend. Together
 * with a sticky bit this is far more than the guard/round/sticky minimum,
 * and it keeps the alignment exact for any shift of up to 32 places.
 */
#define ADD_EXTRA_BITS  32

/* ---- fp32 field access ------------------------------------------------ */

static uint32_t fp32_sign(uint32_t x) { return x & FP32_SIGN_MASK; }
static int fp32_exp(uint32_t x) { return (int)((x >> FP32_FRAC_BITS) & 0xFFu); }
static uint32_t fp32_frac(uint32_t x) { return x & FP32_FRAC_MASK; }

static bool fp32_is_nan(uint32_t x)
{
    return fp32_exp(x) == FP32_EXP_MAX && fp32_frac(x) != 0;
}

static bool fp32_is_inf(uint32_t x) { return (x & FP32_MAG_MASK) == FP32_INF; }
static bool fp32_is_zero(uint32_t x) { return (x & FP32_MAG_MASK) == 0; }

/* DAZ: a subnormal input reads as a zero of the same sign. */
static uint32_t fp32_flush_input(uint32_t x)
{
    return fp32_exp(x) == 0 ? fp32_sign(x) : x;
}

/* Significand with the hidden bit made explicit (only for normals). */
static uint32_t fp32_significand(uint32_t x)
{
    return FP32_HIDDEN_BIT | fp32_frac(x);
}

/*
 * Pack a finite nonzero result given its biased exponent and its 24-bit
 * normalised (already rounded) significand. Out-of-range exponents become
 * Inf (overflow) or a signed zero (FTZ); the sign is always kept.
 */
static uint32_t fp32_pack(uint32_t sign, int exp, uint32_t significand)
{
    if (exp >= FP32_EXP_MAX)
        return sign | FP32_INF;
    if (exp <= 0)
        return sign;
    return sign | ((uint32_t)exp << FP32_FRAC_BITS) | (significand & FP32_FRAC_MASK);
}

/* ---- widening / narrowing -------------------------------------------- */

uint32_t arith_golden_bf16_to_fp32(uint16_t a)
{
    uint32_t x = (uint32_t)a << 16;

    if (fp32_is_nan(x))
        return ARITH_FP32_CANON_NAN;
    return fp32_flush_input(x);
}

uint16_t arith_golden_fp32_to_bf16(uint32_t a)
{
    if (fp32_is_nan(a))
        return ARITH_BF16_CANON_NAN;
    a = fp32_flush_input(a);

    uint32_t kept = a >> 16;
    uint32_t dropped = a & 0xFFFFu;

    /* RNE on the dropped half. The increment may carry into the exponent
     * and on up to the Inf encoding, which is exactly the RNE result. Inf
     * itself has nothing dropped, and NaNs were handled above, so kept
     * never passes 0xFF80 / 0x7F80. */
    if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u)))
        kept++;
    return (uint16_t)kept;
}

/* ---- multiply --------------------------------------------------------- */

/* 8-bit significand of a normal number that came from a bf16. */
static uint32_t bf16_significand(uint32_t widened)
{
    return BF16_HIDDEN_BIT | (fp32_frac(widened) >> (FP32_FRAC_BITS - BF16_FRAC_BITS));
}

/*
 * Product of two normal bf16 values (already widened). The 16-bit product
 * of the significands is placed into the 24-bit fp32 significand by a left
 * shift only, so no rounding ever happens; only range limits apply.
 */
static uint32_t mul_normals(uint32_t x, uint32_t y, uint32_t sign)
{
    uint32_t prod = bf16_significand(x) * bf16_significand(y); /* [2^14, 2^16) */
    int exp = fp32_exp(x) + fp32_exp(y) - 127;

    if (prod & 0x8000u) {
        /* product of significands is in [2, 4): one more exponent step */
        exp++;
        return fp32_pack(sign, exp, prod << 8);
    }
    return fp32_pack(sign, exp, prod << 9);
}

uint32_t arith_golden_bf16_mul(uint16_t a, uint16_t b)
{
    /* Widening applies DAZ and turns any NaN into the canonical NaN. */
    uint32_t x = arith_golden_bf16_to_fp32(a);
    uint32_t y = arith_golden_bf16_to_fp32(b);
    /* Sign from the raw inputs, so a flushed subnormal still contributes. */
    uint32_t sign = ((uint32_t)(a ^ b) << 16) & FP32_SIGN_MASK;

    if (fp32_is_nan(x) || fp32_is_nan(y))
        return ARITH_FP32_CANON_NAN;
    if (fp32_is_inf(x) || fp32_is_inf(y)) {
        if (fp32_is_zero(x) || fp32_is_zero(y))
            return ARITH_FP32_CANON_NAN; /* Inf x 0 is invalid */
        return sign | FP32_INF;
    }
    if (fp32_is_zero(x) || fp32_is_zero(y))
        return sign;
    return mul_normals(x, y, sign);
}

/* ---- add -------------------------------------------------------------- */

/* Index of the most significant set bit; v must be nonzero. */
static int msb_index64(uint64_t v)
{
    int idx = 0;

    for (int step = 32; step > 0; step >>= 1) {
        if (v >> step) {
            v >>= step;
            idx += step;
        }
    }
    return idx;
}

/*
 * Right shift that ORs every bit shifted out into bit 0 ("sticky"), so the
 * rounding step can still tell "exactly half" from "just over/under half".
 */
static uint64_t shift_right_sticky(uint64_t v, int n)
{
    if (n == 0)
        return v;
    if (n >= 64)
        return v != 0;
    uint64_t lost = v & ((UINT64_C(1) << n) - 1);
    return (v >> n) | (lost != 0);
}

/*
 * Round a nonzero magnitude to a 24-bit significand, ties to even.
 * *exp is the biased exponent the value would have if its most significant
 * bit sat at position `top`; it is adjusted for normalisation and for a
 * rounding carry.
 */
static uint32_t round_to_significand(uint64_t mag, int top, int *exp)
{
    int msb = msb_index64(mag);

    *exp += msb - top;
    if (msb <= FP32_FRAC_BITS)
        return (uint32_t)(mag << (FP32_FRAC_BITS - msb)); /* exact */

    int shift = msb - FP32_FRAC_BITS;
    uint64_t kept = mag >> shift;
    uint64_t rest = mag & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);

    if (rest > half || (rest == half && (kept & 1u)))
        kept++;
    if (kept >> (FP32_FRAC_BITS + 1)) {
        /* 1.11..1 rounded up to 10.00..0: renormalise */
        kept >>= 1;
        (*exp)++;
    }
    return (uint32_t)kept;
}

/* Sum of two normal numbers. */
static uint32_t add_normals(uint32_t a, uint32_t b)
{
    /* Order by magnitude: the aligned difference is then never negative
     * and the result takes the sign of the larger operand. */
    uint32_t big = a, small = b;
    if ((b & FP32_MAG_MASK) > (a & FP32_MAG_MASK)) {
        big = b;
        small = a;
    }

    int exp = fp32_exp(big);
    uint64_t mbig = (uint64_t)fp32_significand(big) << ADD_EXTRA_BITS;
    uint64_t msmall = shift_right_sticky(
        (uint64_t)fp32_significand(small) << ADD_EXTRA_BITS, exp - fp32_exp(small));
    bool subtract = fp32_sign(a) != fp32_sign(b);
    uint64_t mag = subtract ? mbig - msmall : mbig + msmall;

    if (mag == 0)
        return 0; /* exact cancellation is +0 under round to nearest */

    /* No special subnormal path: a sum below 2^-126 of two normals is an
     * exact multiple of 2^-149, so it is never rounded, and fp32_pack
     * flushes it to a zero that keeps its sign. */
    uint32_t significand = round_to_significand(mag, FP32_FRAC_BITS + ADD_EXTRA_BITS, &exp);
    return fp32_pack(fp32_sign(big), exp, significand);
}

/* At least one operand is Inf, none is NaN. */
static uint32_t add_infinities(uint32_t a, uint32_t b)
{
    if (fp32_is_inf(a) && fp32_is_inf(b) && fp32_sign(a) != fp32_sign(b))
        return ARITH_FP32_CANON_NAN; /* Inf + -Inf is invalid */
    return fp32_is_inf(a) ? a : b;
}

uint32_t arith_golden_fp32_add(uint32_t a, uint32_t b)
{
    if (fp32_is_nan(a) || fp32_is_nan(b))
        return ARITH_FP32_CANON_NAN;
    a = fp32_flush_input(a);
    b = fp32_flush_input(b);

    if (fp32_is_inf(a) || fp32_is_inf(b))
        return add_infinities(a, b);
    if (fp32_is_zero(a) && fp32_is_zero(b))
        return fp32_sign(a) & fp32_sign(b); /* -0 only for (-0) + (-0) */
    if (fp32_is_zero(a))
        return b;
    if (fp32_is_zero(b))
        return a;
    return add_normals(a, b);
}

/* ---- multiply-accumulate --------------------------------------------- */

uint32_t arith_golden_mac(uint32_t psum, uint16_t a, uint16_t w)
{
    return arith_golden_fp32_add(psum, arith_golden_bf16_mul(a, w));
}

/* ---- multiply and max (vector unit) ----------------------------------- */

uint32_t arith_golden_fp32_mul(uint32_t a, uint32_t b)
{
    if (fp32_is_nan(a) || fp32_is_nan(b))
        return ARITH_FP32_CANON_NAN;
    uint32_t sign = fp32_sign(a) ^ fp32_sign(b);
    a = fp32_flush_input(a);
    b = fp32_flush_input(b);
    if (fp32_is_inf(a) || fp32_is_inf(b))
        return (fp32_is_zero(a) || fp32_is_zero(b)) ? ARITH_FP32_CANON_NAN : (sign | FP32_INF);
    if (fp32_is_zero(a) || fp32_is_zero(b))
        return sign;
    /* 24 x 24 bits; a product of 1.0 x 1.0 has its top bit at position 46. */
    uint64_t prod = (uint64_t)fp32_significand(a) * fp32_significand(b);
    int exp = fp32_exp(a) + fp32_exp(b) - 127;
    uint32_t significand = round_to_significand(prod, 2 * FP32_FRAC_BITS, &exp);
    return fp32_pack(sign, exp, significand);
}

uint32_t arith_golden_fp32_max(uint32_t a, uint32_t b)
{
    if (fp32_is_nan(a) || fp32_is_nan(b))
        return ARITH_FP32_CANON_NAN;
    a = fp32_flush_input(a);
    b = fp32_flush_input(b);
    if (fp32_is_zero(a) && fp32_is_zero(b))
        return fp32_sign(a) ? b : a; /* +0 wins */
    /* Map to a signed integer order: negative values count down from zero. */
    int64_t ka = fp32_sign(a) ? -(int64_t)(a & FP32_MAG_MASK) : (int64_t)(a & FP32_MAG_MASK);
    int64_t kb = fp32_sign(b) ? -(int64_t)(b & FP32_MAG_MASK) : (int64_t)(b & FP32_MAG_MASK);
    return ka >= kb ? a : b;
}

uint32_t arith_golden_dot(const uint16_t *a, const uint16_t *b, uint64_t n)
{
    uint32_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum = arith_golden_mac(sum, a[i], b[i]);
    return sum;
}
