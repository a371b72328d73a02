/*
 * Tests of the arithmetic golden model (csim/golden/arith_golden.c) against the
 * host's IEEE-754 float arithmetic and an independently written reference
 * rounding. Host floats appear only here, always through memcpy bit casts.
 * The host must be in its default mode (round to nearest, no FTZ/DAZ):
 * the host_is_plain_ieee test checks that, since every comparison relies
 * on it. Build without -ffast-math.
 *
 * Bulk checks never assert per case (too slow for 2^32 cases); they tally
 * mismatches and assert once, printing the first mismatch.
 */
#include <criterion/criterion.h>

#include <fenv.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"

#define TIMEOUT_S 300.0
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define POS_INF   0x7F800000u
#define NEG_INF   0xFF800000u
#define NEG_ZERO  0x80000000u
#define CANON     ARITH_FP32_CANON_NAN
#define BF_CANON  ((uint16_t)ARITH_BF16_CANON_NAN)
#define MAX_NORM  0x7F7FFFFFu
#define MIN_NORM  0x00800000u

/* ---- host bit casts --------------------------------------------------- */

static float f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bf16_host(uint16_t h) { return f32((uint32_t)h << 16); }
static uint32_t sign_of(uint32_t u) { return u & NEG_ZERO; }

static bool normal_or_zero(float f)
{
    return isnormal(f) || f == 0.0f;
}

/* ---- spec reference built on the host FPU ----------------------------- */

/* DAZ: the spec reads a subnormal input as a zero of the same sign. */
static float ref_daz(float f)
{
    return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f;
}

/* Spec post-processing of a host result: canonical NaN, FTZ with sign. */
static uint32_t ref_result(float r)
{
    switch (fpclassify(r)) {
    case FP_NAN:
        return CANON;
    case FP_SUBNORMAL:
        return sign_of(bits(r));
    default:
        return bits(r);
    }
}

/* Host addition wrapped in the spec's DAZ/FTZ/NaN rules. Exact for the
 * FTZ part: a host sum of non-subnormals that lands below 2^-126 is exact,
 * so its sign is the sign of the exact sum. */
static uint32_t ref_add(uint32_t a, uint32_t b)
{
    return ref_result(ref_daz(f32(a)) + ref_daz(f32(b)));
}

/*
 * Spec multiply by independent classification. The product of two bf16
 * values has at most 16 significant bits, so it is exact in double and
 * the range rules can be applied to the exact value directly.
 */
static uint32_t ref_mul(uint16_t a, uint16_t b)
{
    float x = bf16_host(a), y = bf16_host(b);
    uint32_t sign = sign_of(((uint32_t)a ^ b) << 16);
    bool x_zero = fpclassify(x) == FP_ZERO || fpclassify(x) == FP_SUBNORMAL;
    bool y_zero = fpclassify(y) == FP_ZERO || fpclassify(y) == FP_SUBNORMAL;

    if (isnan(x) || isnan(y))
        return CANON;
    if (isinf(x) || isinf(y))
        return (x_zero || y_zero) ? CANON : (sign | POS_INF);
    if (x_zero || y_zero)
        return sign;

    double exact = (double)x * (double)y;
    double mag = fabs(exact);
    if (mag >= 0x1p128)
        return sign | POS_INF;
    if (mag < 0x1p-126)
        return sign;
    return bits((float)exact);
}

/* Magnitude of a bf16 pattern as a double; the Inf pattern reads as 2^128,
 * the value one ulp above the largest finite bf16, which is what rounding
 * to nearest compares against. */
static double bf16_magnitude(uint16_t h)
{
    if ((h & 0x7FFFu) == 0x7F80u)
        return 0x1p128;
    return fabs((double)bf16_host(h));
}

/*
 * Reference fp32 -> bf16 by distances, deliberately unlike the model's
 * bit test: take the two bf16 neighbours (truncation and one ulp further
 * from zero), measure both distances in double (exact there) and pick the
 * nearer; on a tie pick the one whose last bit is even.
 */
static uint16_t ref_fp32_to_bf16(uint32_t u)
{
    float f = f32(u);

    switch (fpclassify(f)) {
    case FP_NAN:
        return BF_CANON;
    case FP_SUBNORMAL:
    case FP_ZERO:
        return (uint16_t)(sign_of(u) >> 16);
    case FP_INFINITE:
        return (uint16_t)(u >> 16);
    default:
        break;
    }

    uint16_t toward_zero = (uint16_t)(u >> 16);
    uint16_t away = (uint16_t)(toward_zero + 1u);
    double x = fabs((double)f);
    double below = x - bf16_magnitude(toward_zero);
    double above = bf16_magnitude(away) - x;

    if (below < above)
        return toward_zero;
    if (above < below)
        return away;
    return (toward_zero & 1u) ? away : toward_zero;
}

/* ---- bulk-check tally ------------------------------------------------- */

struct tally {
    uint64_t host_exact; /* compared bit for bit with the raw host result */
    uint64_t spec_rule;  /* compared with the spec rules instead */
    uint64_t failures;
    uint32_t a, b, got, want; /* first failure */
};

static void tally_check(struct tally *t, bool host_case, uint32_t a, uint32_t b,
                        uint32_t got, uint32_t want)
{
    if (host_case)
        t->host_exact++;
    else
        t->spec_rule++;
    if (got == want)
        return;
    if (t->failures == 0) {
        t->a = a;
        t->b = b;
        t->got = got;
        t->want = want;
    }
    t->failures++;
}

static void tally_assert_clean(const struct tally *t, const char *what)
{
    cr_assert_eq(t->failures, 0,
                 "%s: %" PRIu64 " mismatches; first: a=0x%08" PRIx32 " b=0x%08" PRIx32
                 " golden=0x%08" PRIx32 " want=0x%08" PRIx32,
                 what, t->failures, t->a, t->b, t->got, t->want);
}

/* Guards against a generator that silently stops exercising the host path. */
static void tally_assert_host_share(const struct tally *t, const char *what, double min_share)
{
    double total = (double)(t->host_exact + t->spec_rule);
    cr_assert(total > 0 && (double)t->host_exact / total >= min_share,
              "%s: only %" PRIu64 " of %.0f cases compared bit for bit with the host",
              what, t->host_exact, total);
}

/* ---- deterministic PRNG (splitmix64) ---------------------------------- */

struct rng {
    uint64_t state;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t rng_u32(struct rng *r) { return (uint32_t)(rng_next(r) >> 32); }

/* Uniform in [0, n). */
static uint32_t rng_below(struct rng *r, uint32_t n)
{
    return (uint32_t)(((uint64_t)rng_u32(r) * n) >> 32);
}

static uint32_t rng_in(struct rng *r, uint32_t lo, uint32_t hi)
{
    return lo + rng_below(r, hi - lo + 1u);
}

static uint32_t make_fp32(uint32_t sign, uint32_t exp, uint32_t frac)
{
    return (sign << 31) | (exp << 23) | (frac & 0x7FFFFFu);
}

/* Half the time a run of trailing zeros: makes exact ties, exact sums and
 * exact cancellations common instead of 1-in-2^k events. */
static uint32_t random_frac(struct rng *r)
{
    uint32_t frac = rng_u32(r) & 0x7FFFFFu;
    if (rng_below(r, 2))
        frac &= ~((1u << rng_below(r, 24)) - 1u);
    return frac;
}

static uint32_t random_sign(struct rng *r) { return rng_below(r, 2); }

/* ---- fp32_add bulk checking ------------------------------------------- */

static void check_add(struct tally *t, uint32_t a, uint32_t b)
{
    float fa = f32(a), fb = f32(b);
    float sum = fa + fb;
    bool host_case = normal_or_zero(fa) && normal_or_zero(fb) &&
                     (normal_or_zero(sum) || isinf(sum));
    uint32_t want = host_case ? bits(sum) : ref_add(a, b);

    tally_check(t, host_case, a, b, arith_golden_fp32_add(a, b), want);
}

typedef void (*pair_gen)(struct rng *r, uint32_t *a, uint32_t *b);

#define ADD_RANDOM_PAIRS 4000000u /* per distribution; six distributions */

static struct tally run_add_random(pair_gen gen, uint64_t seed)
{
    struct rng r = {seed};
    struct tally t = {0};

    for (uint32_t i = 0; i < ADD_RANDOM_PAIRS; i++) {
        uint32_t a, b;
        gen(&r, &a, &b);
        check_add(&t, a, b);
    }
    return t;
}

static void gen_uniform_bits(struct rng *r, uint32_t *a, uint32_t *b)
{
    *a = rng_u32(r);
    *b = rng_u32(r);
}

/* Exponent difference 0..30: alignment, guard/round/sticky, ties. */
static void gen_near_exponents(struct rng *r, uint32_t *a, uint32_t *b)
{
    uint32_t ea = rng_in(r, 1, 254);
    int eb = (int)ea + (rng_below(r, 2) ? 1 : -1) * (int)rng_below(r, 31);
    if (eb < 1)
        eb = 1;
    if (eb > 254)
        eb = 254;
    *a = make_fp32(random_sign(r), ea, random_frac(r));
    *b = make_fp32(random_sign(r), (uint32_t)eb, random_frac(r));
}

/* Exponent difference 20..60: the small addend is mostly sticky bits. */
static void gen_far_exponents(struct rng *r, uint32_t *a, uint32_t *b)
{
    uint32_t d = rng_in(r, 20, 60);
    uint32_t ea = rng_in(r, d + 1, 254);
    uint32_t x = make_fp32(random_sign(r), ea, random_frac(r));
    uint32_t y = make_fp32(random_sign(r), ea - d, random_frac(r));
    bool swap = rng_below(r, 2);
    *a = swap ? y : x;
    *b = swap ? x : y;
}

/* Opposite signs, magnitudes a few ulps apart: massive cancellation and
 * renormalisation, including exact x + -x. */
static void gen_cancellation(struct rng *r, uint32_t *a, uint32_t *b)
{
    uint32_t mag = make_fp32(0, rng_in(r, 1, 254), random_frac(r));
    uint32_t span = 1u << rng_below(r, 25);
    int64_t other = (int64_t)mag + (int64_t)rng_below(r, 2 * span + 1) - span;
    if (other < 0)
        other = 0;
    if (other > (int64_t)MAX_NORM)
        other = MAX_NORM;
    uint32_t sign = random_sign(r);
    *a = (sign << 31) | mag;
    *b = ((sign ^ 1u) << 31) | (uint32_t)other;
}

/* Near FLT_MAX, mostly the same sign: overflow after rounding. */
static void gen_near_max(struct rng *r, uint32_t *a, uint32_t *b)
{
    uint32_t sign = random_sign(r);
    uint32_t frac_a = rng_below(r, 2) ? 0x7FFFFFu - rng_below(r, 64) : random_frac(r);
    uint32_t frac_b = rng_below(r, 2) ? 0x7FFFFFu - rng_below(r, 64) : random_frac(r);
    uint32_t sign_b = rng_below(r, 5) ? sign : sign ^ 1u;
    *a = make_fp32(sign, rng_in(r, 230, 254), frac_a);
    *b = make_fp32(sign_b, rng_in(r, 230, 254), frac_b);
}

/* Near the smallest normal, with some subnormal and zero operands:
 * results that must flush and inputs that must be read as zero. */
static uint32_t random_tiny(struct rng *r)
{
    uint32_t pick = rng_below(r, 10);
    uint32_t exp = pick == 0 ? 0 : rng_in(r, 1, 24); /* exp 0: subnormal/zero */
    return make_fp32(random_sign(r), exp, pick == 1 ? 0 : random_frac(r));
}

static void gen_near_min(struct rng *r, uint32_t *a, uint32_t *b)
{
    *a = random_tiny(r);
    *b = random_tiny(r);
}

/* ---- host sanity ------------------------------------------------------ */

Test(arith_golden, host_is_plain_ieee, .timeout = TIMEOUT_S)
{
    volatile float min_normal = f32(MIN_NORM);
    volatile float half = 0.5f;
    volatile float sub = f32(0x00400000u);

    cr_assert_eq(fegetround(), FE_TONEAREST, "host is not rounding to nearest");
    cr_assert_eq(bits(min_normal * half), 0x00400000u, "host flushes subnormal results");
    cr_assert_eq(bits(sub + sub), MIN_NORM, "host treats subnormal inputs as zero");
}

/* ---- bf16_mul --------------------------------------------------------- */

/*
 * Whether the float product of two finite bf16 values is normal or zero,
 * decided on the exact double product. Float products that underflow take
 * a slow microcode assist on x86, so the exhaustive loop asks the host for
 * a float product only when it will be normal or zero.
 */
static bool product_normal_or_zero(float x, float y)
{
    double mag = fabs((double)x * (double)y);
    return mag == 0.0 || (mag >= 0x1p-126 && mag < 0x1p128);
}

/*
 * All 2^32 (a, b) pairs. Where both inputs are normal or zero and the
 * host product (exact: bf16 values widened to float multiply exactly) is
 * normal or zero, the golden result must equal the host's bits; all other
 * pairs are checked by ref_mul's independent classification.
 */
Test(arith_golden, mul_exhaustive_vs_host, .timeout = TIMEOUT_S)
{
    struct tally t = {0};

    for (uint32_t a = 0; a <= 0xFFFFu; a++) {
        float x = bf16_host((uint16_t)a);
        bool x_ok = normal_or_zero(x);
        for (uint32_t b = 0; b <= 0xFFFFu; b++) {
            float y = bf16_host((uint16_t)b);
            bool host_case = x_ok && normal_or_zero(y) && product_normal_or_zero(x, y);
            uint32_t want = host_case ? bits(x * y) : ref_mul((uint16_t)a, (uint16_t)b);
            tally_check(&t, host_case, a, b,
                        arith_golden_bf16_mul((uint16_t)a, (uint16_t)b), want);
        }
    }
    tally_assert_clean(&t, "bf16_mul");
    cr_assert_eq(t.host_exact + t.spec_rule, UINT64_C(1) << 32);
    tally_assert_host_share(&t, "bf16_mul", 0.5);
}

struct mul_case {
    uint16_t a, b;
    uint32_t want;
};

/* Checks both operand orders, and cross-checks the table itself against
 * the host wherever the host's result is the spec's result. */
static void check_mul_cases(const struct mul_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t ab = arith_golden_bf16_mul(c[i].a, c[i].b);
        uint32_t ba = arith_golden_bf16_mul(c[i].b, c[i].a);
        cr_expect_eq(ab, c[i].want, "bf16_mul(0x%04x, 0x%04x) = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     c[i].a, c[i].b, ab, c[i].want);
        cr_expect_eq(ba, c[i].want, "bf16_mul(0x%04x, 0x%04x) = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     c[i].b, c[i].a, ba, c[i].want);

        float x = bf16_host(c[i].a), y = bf16_host(c[i].b), prod = x * y;
        if (normal_or_zero(x) && normal_or_zero(y) && normal_or_zero(prod))
            cr_expect_eq(bits(prod), c[i].want, "table entry %zu disagrees with host", i);
    }
}

Test(arith_golden, mul_signed_zeros, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x0000, 0x0000, 0x00000000u}, {0x0000, 0x8000, NEG_ZERO},
        {0x8000, 0x8000, 0x00000000u}, {0x0000, 0xC000, NEG_ZERO},
        {0x8000, 0x7F7F, NEG_ZERO},    {0x8000, 0xBF80, 0x00000000u},
        {0x0000, 0x0080, 0x00000000u},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, mul_infinities, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x7F80, 0x3F80, POS_INF}, {0x7F80, 0xBF80, NEG_INF},
        {0xFF80, 0xFF80, POS_INF}, {0xFF80, 0x7F80, NEG_INF},
        {0x7F80, 0x0080, POS_INF}, {0xFF80, 0x7F7F, NEG_INF},
        /* Inf x 0 is invalid, also when the zero is a flushed subnormal */
        {0x7F80, 0x0000, CANON},   {0x8000, 0xFF80, CANON},
        {0x7F80, 0x0001, CANON},   {0x807F, 0xFF80, CANON},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

static const uint16_t bf16_nans[] = {
    0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FFF, 0xFFFF, 0x7FA5, 0xFFBF, 0x7FC1,
};
static const uint16_t bf16_others[] = {
    0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x0001, 0x807F, 0x7F7F, 0x0080,
};

Test(arith_golden, mul_nan_inputs, .timeout = TIMEOUT_S)
{
    for (size_t i = 0; i < ARRAY_LEN(bf16_nans); i++) {
        uint16_t n = bf16_nans[i];
        for (size_t j = 0; j < ARRAY_LEN(bf16_others); j++) {
            uint16_t o = bf16_others[j];
            cr_expect_eq(arith_golden_bf16_mul(n, o), CANON, "NaN 0x%04x x 0x%04x", n, o);
            cr_expect_eq(arith_golden_bf16_mul(o, n), CANON, "0x%04x x NaN 0x%04x", o, n);
        }
        for (size_t j = 0; j < ARRAY_LEN(bf16_nans); j++)
            cr_expect_eq(arith_golden_bf16_mul(n, bf16_nans[j]), CANON, "NaN x NaN");
    }
}

Test(arith_golden, mul_subnormal_inputs, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x0001, 0x3F80, 0x00000000u}, {0x8040, 0x3F80, NEG_ZERO},
        {0x007F, 0x7F7F, 0x00000000u}, /* host: about 4.0 */
        {0x807F, 0x7F00, NEG_ZERO},    {0x807F, 0xFF00, 0x00000000u},
        {0x0001, 0x8001, NEG_ZERO},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, mul_subnormal_results, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x0080, 0x3F00, 0x00000000u}, /* 2^-126 * 0.5 */
        {0x0080, 0xBF00, NEG_ZERO},
        {0x00FF, 0x3F00, 0x00000000u}, /* just below 2^-126 */
        {0x1F80, 0x2000, 0x00000000u}, /* 2^-64 * 2^-63 = 2^-127 */
        {0x9F80, 0x1F80, NEG_ZERO},    /* -2^-128 */
        {0x2000, 0x2000, MIN_NORM},    /* 2^-126 exactly: normal, kept */
        {0x0100, 0x3F00, MIN_NORM},
        {0x8100, 0x3F00, 0x80800000u},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, mul_overflow, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x7F7F, 0x7F7F, POS_INF},
        {0x7F00, 0x4000, POS_INF},     /* exactly 2^128 */
        {0xFF00, 0x4000, NEG_INF},
        {0x5F80, 0x5F80, POS_INF},     /* 2^64 * 2^64 */
        {0x5F80, 0xE000, NEG_INF},     /* 2^64 * -2^65 */
        {0x5F80, 0x5F00, 0x7F000000u}, /* 2^127: fits */
        {0x7F00, 0x3FFF, 0x7F7F0000u}, /* just below 2^128: fits */
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, mul_extremes, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x7F7F, 0x3F80, 0x7F7F0000u}, /* largest bf16 normal x 1 */
        {0x0080, 0x3F80, MIN_NORM},    /* smallest normal x 1 */
        {0x0080, 0x4000, 0x01000000u},
        {0x0080, 0x7F7F, 0x407F0000u}, /* smallest x largest */
        {0xFF7F, 0x0080, 0xC07F0000u},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

/* Full 16-bit significand products that a bf16 result would have to
 * round (some are exact bf16 ties): the fp32 result keeps every bit. */
Test(arith_golden, mul_products_exact_no_rounding, .timeout = TIMEOUT_S)
{
    static const struct mul_case cases[] = {
        {0x3F81, 0x3F81, 0x3F820200u}, /* (1+2^-7)^2 = 1 + 2^-6 + 2^-14 */
        {0x3FFF, 0x3FFF, 0x407E0100u}, /* (2-2^-7)^2 */
        {0x3FC1, 0x3F81, 0x3FC28200u}, /* 1.5078125 * 1.0078125 */
        {0xC0FF, 0x3FFF, 0xC17E0100u},
    };
    check_mul_cases(cases, ARRAY_LEN(cases));
}

/* ---- fp32_add --------------------------------------------------------- */

struct add_case {
    uint32_t a, b, want;
};

/* Checks both operand orders, and cross-checks the table itself against
 * the host wherever the host's result is the spec's result. */
static void check_add_cases(const struct add_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t ab = arith_golden_fp32_add(c[i].a, c[i].b);
        uint32_t ba = arith_golden_fp32_add(c[i].b, c[i].a);
        cr_expect_eq(ab, c[i].want,
                     "fp32_add(0x%08" PRIx32 ", 0x%08" PRIx32 ") = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     c[i].a, c[i].b, ab, c[i].want);
        cr_expect_eq(ba, c[i].want,
                     "fp32_add(0x%08" PRIx32 ", 0x%08" PRIx32 ") = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     c[i].b, c[i].a, ba, c[i].want);

        float x = f32(c[i].a), y = f32(c[i].b), sum = x + y;
        if (normal_or_zero(x) && normal_or_zero(y) && (normal_or_zero(sum) || isinf(sum)))
            cr_expect_eq(bits(sum), c[i].want, "table entry %zu disagrees with host", i);
    }
}

Test(arith_golden, add_signed_zeros, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {0x00000000u, 0x00000000u, 0x00000000u},
        {0x00000000u, NEG_ZERO, 0x00000000u},
        {NEG_ZERO, NEG_ZERO, NEG_ZERO},
        {0x3F800000u, NEG_ZERO, 0x3F800000u},    /* x + -0 = x */
        {0xBF800000u, 0x00000000u, 0xBF800000u}, /* x + +0 = x */
        {NEG_ZERO, 0xC0490FDBu, 0xC0490FDBu},
        {0x00000000u, MIN_NORM, MIN_NORM},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_infinities, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {POS_INF, POS_INF, POS_INF},   {NEG_INF, NEG_INF, NEG_INF},
        {POS_INF, NEG_INF, CANON},     /* Inf - Inf is invalid */
        {POS_INF, 0x3F800000u, POS_INF}, {0xC2280000u, POS_INF, POS_INF},
        {NEG_INF, MAX_NORM, NEG_INF},  {POS_INF, 0xFF7FFFFFu, POS_INF},
        {POS_INF, NEG_ZERO, POS_INF},  {NEG_INF, 0x00000000u, NEG_INF},
        {POS_INF, 0x80000001u, POS_INF}, /* subnormal operand */
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

static const uint32_t fp32_nans[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu,
    0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC12345u, 0xFFA00000u, 0x7FC00001u,
};
static const uint32_t fp32_others[] = {
    0x00000000u, NEG_ZERO, 0x3F800000u, 0xBF800000u, POS_INF, NEG_INF,
    0x00000001u, 0x807FFFFFu, MAX_NORM, MIN_NORM,
};

Test(arith_golden, add_nan_inputs, .timeout = TIMEOUT_S)
{
    for (size_t i = 0; i < ARRAY_LEN(fp32_nans); i++) {
        uint32_t n = fp32_nans[i];
        for (size_t j = 0; j < ARRAY_LEN(fp32_others); j++) {
            uint32_t o = fp32_others[j];
            cr_expect_eq(arith_golden_fp32_add(n, o), CANON, "NaN 0x%08" PRIx32 " + 0x%08" PRIx32, n, o);
            cr_expect_eq(arith_golden_fp32_add(o, n), CANON, "0x%08" PRIx32 " + NaN 0x%08" PRIx32, o, n);
        }
        for (size_t j = 0; j < ARRAY_LEN(fp32_nans); j++)
            cr_expect_eq(arith_golden_fp32_add(n, fp32_nans[j]), CANON, "NaN + NaN");
    }
}

Test(arith_golden, add_subnormal_inputs, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {0x007FFFFFu, MIN_NORM, MIN_NORM},       /* host: 0x00FFFFFF */
        {0x807FFFFFu, MIN_NORM, MIN_NORM},       /* host: 2^-149 */
        {0x00400000u, 0x00400000u, 0x00000000u}, /* host: 2^-126 */
        {0x80400000u, 0x80400000u, NEG_ZERO},
        {0x00000001u, 0x80000001u, 0x00000000u},
        {0x80000001u, NEG_ZERO, NEG_ZERO},       /* (-0) + (-0) */
        {0x80000001u, 0x00000000u, 0x00000000u}, /* (-0) + (+0) */
        {0x00000001u, 0x3F800000u, 0x3F800000u},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_subnormal_results, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {0x00800001u, 0x80800000u, 0x00000000u}, /* 2^-149 */
        {0x80800001u, 0x00800000u, NEG_ZERO},    /* -2^-149 */
        {0x00C00000u, 0x80800000u, 0x00000000u}, /* 2^-127 */
        {0x01000000u, 0x80C00000u, 0x00000000u}, /* 2^-125 - 1.5 * 2^-126 */
        {0x80FFFFFFu, 0x00800000u, NEG_ZERO},    /* just below -2^-126 */
        {0x01000000u, 0x80800000u, MIN_NORM},    /* exactly 2^-126: kept */
        {0x81000000u, 0x00800000u, 0x80800000u},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_extremes, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {MAX_NORM, 0x3F800000u, MAX_NORM},
        {MAX_NORM, MIN_NORM, MAX_NORM},
        {MAX_NORM, 0xFF7FFFFFu, 0x00000000u},
        {0x7F7FFFFFu, 0xFF7FFFFEu, 0x73800000u}, /* one ulp: 2^104 */
        {MIN_NORM, MIN_NORM, 0x01000000u},
        {MIN_NORM, 0x3F800000u, 0x3F800000u},
        {0x7EFFFFFFu, 0x7EFFFFFFu, MAX_NORM},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_ties_to_even, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        /* 1 + 2^-24: halfway, lower neighbour even -> stays */
        {0x3F800000u, 0x33800000u, 0x3F800000u},
        {0xBF800000u, 0xB3800000u, 0xBF800000u},
        /* (1 + 2^-23) + 2^-24: halfway, lower neighbour odd -> up */
        {0x3F800001u, 0x33800000u, 0x3F800002u},
        {0xBF800001u, 0xB3800000u, 0xBF800002u},
        /* ties reached by subtraction */
        {0x40000001u, 0xB4000000u, 0x40000000u}, /* lower even */
        {0x40000002u, 0xB4000000u, 0x40000002u}, /* lower odd -> up */
        {0x3F800000u, 0xB3000000u, 0x3F800000u}, /* 1 - 2^-25: lower odd -> up */
        /* a sticky bit beyond the half breaks the tie */
        {0x3F800000u, 0x33800001u, 0x3F800001u},
        {0x3F800000u, 0xB3000001u, 0x3F7FFFFFu},
        /* just under half */
        {0x3F800000u, 0x337FFFFFu, 0x3F800000u},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_carry_into_exponent, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {0x3FFFFFFFu, 0x33800000u, 0x40000000u}, /* 1.1..1b * 2 + half ulp, odd -> 2.0 */
        {0x3FFFFFFFu, 0x34000000u, 0x40000000u}, /* + one ulp: exactly 2.0 */
        {0x3F7FFFFFu, 0x33000000u, 0x3F800000u}, /* (1 - 2^-24) + 2^-25 -> 1.0 */
        {0xBFFFFFFFu, 0xB3800000u, 0xC0000000u},
        {0x3FC00000u, 0x3FC00000u, 0x40400000u}, /* 1.5 + 1.5: carry out of add */
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_overflow, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {MAX_NORM, MAX_NORM, POS_INF},
        {0xFF7FFFFFu, 0xFF7FFFFFu, NEG_INF},
        {MAX_NORM, 0x73000000u, POS_INF},        /* half ulp, odd -> rounds to 2^128 */
        {0xFF7FFFFFu, 0xF3000000u, NEG_INF},
        {MAX_NORM, 0x72FFFFFFu, MAX_NORM},       /* just under half ulp */
        {0x7F7FFFFEu, 0x73000000u, 0x7F7FFFFEu}, /* half ulp, even -> stays */
        {0x7F000000u, 0x7F000000u, POS_INF},     /* 2^127 + 2^127 */
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_exact_cancellation, .timeout = TIMEOUT_S)
{
    static const struct add_case cases[] = {
        {0x3F800000u, 0xBF800000u, 0x00000000u},
        {0xC0490FDBu, 0x40490FDBu, 0x00000000u},
        {MAX_NORM, 0xFF7FFFFFu, 0x00000000u},
        {MIN_NORM, 0x80800000u, 0x00000000u},
        /* near-cancellation: long renormalisation, exact */
        {0x3F800001u, 0xBF800000u, 0x34000000u},
        {0x40000000u, 0xBFFFFFFFu, 0x34000000u},
        {0xC0000000u, 0x3FFFFFFFu, 0xB4000000u},
    };
    check_add_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, add_random_uniform_bits, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_uniform_bits, 1);
    tally_assert_clean(&t, "uniform bits");
    tally_assert_host_share(&t, "uniform bits", 0.9);
}

Test(arith_golden, add_random_near_exponents, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_near_exponents, 2);
    tally_assert_clean(&t, "near exponents");
    tally_assert_host_share(&t, "near exponents", 0.9);
}

Test(arith_golden, add_random_far_exponents, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_far_exponents, 3);
    tally_assert_clean(&t, "far exponents");
    tally_assert_host_share(&t, "far exponents", 0.9);
}

Test(arith_golden, add_random_cancellation, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_cancellation, 4);
    tally_assert_clean(&t, "cancellation");
    tally_assert_host_share(&t, "cancellation", 0.8);
}

Test(arith_golden, add_random_near_max, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_near_max, 5);
    tally_assert_clean(&t, "near FLT_MAX");
    tally_assert_host_share(&t, "near FLT_MAX", 0.9);
}

Test(arith_golden, add_random_near_min_normal, .timeout = TIMEOUT_S)
{
    struct tally t = run_add_random(gen_near_min, 6);
    tally_assert_clean(&t, "near min normal");
    tally_assert_host_share(&t, "near min normal", 0.5);
    cr_assert_gt(t.spec_rule, 100000, "too few flush cases exercised");
}

/*
 * Coverage of the random near-exponent stream: it must actually produce
 * exact ties resolved both ways and overflows, else the bulk comparison
 * above would prove little about rounding. Ties are found with exact
 * double sums (exact for exponent differences up to 28).
 */
Test(arith_golden, add_random_covers_ties_both_ways, .timeout = TIMEOUT_S)
{
    struct rng r = {2};
    uint64_t ties_up = 0, ties_down = 0;

    for (uint32_t i = 0; i < ADD_RANDOM_PAIRS; i++) {
        uint32_t a, b;
        gen_near_exponents(&r, &a, &b);
        int d = abs((int)((a >> 23) & 0xFF) - (int)((b >> 23) & 0xFF));
        float sum = f32(a) + f32(b);
        if (d > 28 || fpclassify(sum) != FP_NORMAL)
            continue;
        double exact = (double)f32(a) + (double)f32(b);
        if ((double)sum == exact)
            continue;
        float other = nextafterf(sum, exact > (double)sum ? INFINITY : -INFINITY);
        if ((double)sum + (double)other != 2.0 * exact)
            continue;
        if (fabs((double)sum) > fabs(exact))
            ties_up++;
        else
            ties_down++;
    }
    cr_assert_gt(ties_up, 1000);
    cr_assert_gt(ties_down, 1000);
}

/* ---- fp32_to_bf16 ----------------------------------------------------- */

/* All 2^32 inputs against the distance-based reference rounding. */
Test(arith_golden, to_bf16_exhaustive_vs_reference, .timeout = TIMEOUT_S)
{
    struct tally t = {0};
    uint32_t u = 0;

    do {
        uint16_t want = ref_fp32_to_bf16(u);
        /* every case counts as a spec-rule check: the host has no bf16 */
        tally_check(&t, false, u, 0, arith_golden_fp32_to_bf16(u), want);
    } while (++u != 0);
    tally_assert_clean(&t, "fp32_to_bf16");
    cr_assert_eq(t.spec_rule, UINT64_C(1) << 32);
}

struct cvt_case {
    uint32_t in;
    uint16_t want;
};

static void check_cvt_cases(const struct cvt_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t got = arith_golden_fp32_to_bf16(c[i].in);
        cr_expect_eq(got, c[i].want, "fp32_to_bf16(0x%08" PRIx32 ") = 0x%04x, want 0x%04x",
                     c[i].in, got, c[i].want);
    }
}

Test(arith_golden, to_bf16_specials, .timeout = TIMEOUT_S)
{
    static const struct cvt_case cases[] = {
        {0x00000000u, 0x0000}, {NEG_ZERO, 0x8000},
        {POS_INF, 0x7F80},     {NEG_INF, 0xFF80},
        {0x7FC00000u, BF_CANON}, {0xFFC00000u, BF_CANON},
        {0x7F800001u, BF_CANON}, /* truncation would look like Inf */
        {0xFF800001u, BF_CANON}, {0x7FFFFFFFu, BF_CANON},
        {0xFFFFFFFFu, BF_CANON}, {0x7FA00000u, BF_CANON},
        {0x00000001u, 0x0000}, {0x807FFFFFu, 0x8000},
        {0x007FFFFFu, 0x0000}, /* RNE would give 0x0080: flushed first */
        {0x00400000u, 0x0000},
    };
    check_cvt_cases(cases, ARRAY_LEN(cases));
}

Test(arith_golden, to_bf16_rounding, .timeout = TIMEOUT_S)
{
    static const struct cvt_case cases[] = {
        {0x3F808000u, 0x3F80}, {0xBF808000u, 0xBF80}, /* tie, lower even */
        {0x3F818000u, 0x3F82}, {0xBF818000u, 0xBF82}, /* tie, lower odd -> up */
        {0x3F808001u, 0x3F81}, {0x3F807FFFu, 0x3F80}, /* off tie */
        {0x3FFF8000u, 0x4000}, {0x3FFFFFFFu, 0x4000}, /* carry into exponent */
        {0x3F7FFFFFu, 0x3F80},
        {0x7F7FFFFFu, 0x7F80}, {0xFF7FFFFFu, 0xFF80}, /* overflow to Inf */
        {0x7F7F8000u, 0x7F80}, /* tie, odd -> Inf */
        {0x7F7E8000u, 0x7F7E}, {0x7F7F7FFFu, 0x7F7F},
        {MIN_NORM, 0x0080},    {0x00808000u, 0x0080}, {0x00818000u, 0x0082},
        {0x3F800000u, 0x3F80},
    };
    check_cvt_cases(cases, ARRAY_LEN(cases));
}

/* ---- bf16_to_fp32 ----------------------------------------------------- */

Test(arith_golden, to_fp32_exhaustive_and_round_trip, .timeout = TIMEOUT_S)
{
    struct tally t = {0};
    uint32_t round_trips = 0;

    for (uint32_t h = 0; h <= 0xFFFFu; h++) {
        float f = bf16_host((uint16_t)h);
        bool host_case = !isnan(f) && fpclassify(f) != FP_SUBNORMAL;
        uint32_t want = host_case ? bits(f) : ref_result(f);
        uint32_t got = arith_golden_bf16_to_fp32((uint16_t)h);
        tally_check(&t, host_case, h, 0, got, want);

        if (host_case) {
            uint16_t back = arith_golden_fp32_to_bf16(got);
            cr_expect_eq(back, h, "round trip of 0x%04" PRIx32 " gave 0x%04x", h, back);
            round_trips++;
        }
    }
    tally_assert_clean(&t, "bf16_to_fp32");
    /* all but 254 subnormals and 254 NaNs */
    cr_assert_eq(round_trips, 65536u - 254u - 254u);
}

Test(arith_golden, to_fp32_specials, .timeout = TIMEOUT_S)
{
    static const struct {
        uint16_t in;
        uint32_t want;
    } cases[] = {
        {0x0000, 0x00000000u}, {0x8000, NEG_ZERO},
        {0x0001, 0x00000000u}, {0x807F, NEG_ZERO},
        {0x7F80, POS_INF},     {0xFF80, NEG_INF},
        {0x7FC0, CANON},       {0xFFC0, CANON}, {0x7F81, CANON}, {0xFFFF, CANON},
        {0x3F80, 0x3F800000u}, {0x0080, MIN_NORM}, {0x7F7F, 0x7F7F0000u},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        uint32_t got = arith_golden_bf16_to_fp32(cases[i].in);
        cr_expect_eq(got, cases[i].want, "bf16_to_fp32(0x%04x) = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     cases[i].in, got, cases[i].want);
    }
}

/* ---- mac -------------------------------------------------------------- */

Test(arith_golden, mac_directed, .timeout = TIMEOUT_S)
{
    static const struct {
        uint32_t psum;
        uint16_t a, w;
        uint32_t want;
    } cases[] = {
        {0x00000000u, 0x3F80, 0x3F80, 0x3F800000u}, /* 0 + 1*1 */
        {0x3F800000u, 0x4000, 0x4040, 0x40E00000u}, /* 1 + 2*3 = 7 */
        {0xC0E00000u, 0x4000, 0x4060, 0x00000000u}, /* -7 + 2*3.5: exact cancellation */
        {0x3F800000u, 0x3F81, 0x3F81, 0x40010100u}, /* 1 + (1+2^-7)^2, exact */
        {0x4B800000u, 0x3F80, 0x3F80, 0x4B800000u}, /* 2^24 + 1: tie, stays even */
        {0x3F800000u, 0x7FC0, 0x3F80, CANON},
        {0x7FC00000u, 0x3F80, 0x3F80, CANON},
        {POS_INF, 0x7F80, 0xBF80, CANON},           /* Inf + -Inf */
        {0x3F800000u, 0x7F80, 0x0000, CANON},       /* Inf x 0 */
        {NEG_ZERO, 0x0000, 0x3F80, 0x00000000u},    /* -0 + +0 */
        {NEG_ZERO, 0x8000, 0x3F80, NEG_ZERO},       /* -0 + -0 */
        {MIN_NORM, 0x0080, 0x3F00, MIN_NORM},       /* product flushed */
        {0x00C00000u, 0xBF80, 0x0080, 0x00000000u}, /* sum flushed */
        {0x7F7FFFFFu, 0x7F00, 0x3F80, POS_INF},     /* overflow */
        {0x00400000u, 0x3F80, 0x3F80, 0x3F800000u}, /* subnormal psum */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        uint32_t got = arith_golden_mac(cases[i].psum, cases[i].a, cases[i].w);
        cr_expect_eq(got, cases[i].want,
                     "mac(0x%08" PRIx32 ", 0x%04x, 0x%04x) = 0x%08" PRIx32 ", want 0x%08" PRIx32,
                     cases[i].psum, cases[i].a, cases[i].w, got, cases[i].want);
    }
}

static uint16_t random_bf16_normal(struct rng *r, uint32_t exp_lo, uint32_t exp_hi)
{
    return (uint16_t)(make_fp32(random_sign(r), rng_in(r, exp_lo, exp_hi), rng_u32(r)) >> 16);
}

/* Moderate ranges where the host's (float)psum + (float)a * (float)w stays
 * normal and is the spec result; plus uniform bits against the spec rules. */
Test(arith_golden, mac_random_vs_host, .timeout = TIMEOUT_S)
{
    struct rng r = {7};
    struct tally t = {0};

    for (uint32_t i = 0; i < 4000000u; i++) {
        bool wild = i % 8 == 0;
        uint32_t psum = wild ? rng_u32(&r) : make_fp32(random_sign(&r), rng_in(&r, 100, 150), random_frac(&r));
        uint16_t a = wild ? (uint16_t)rng_u32(&r) : random_bf16_normal(&r, 110, 144);
        uint16_t w = wild ? (uint16_t)rng_u32(&r) : random_bf16_normal(&r, 110, 144);

        float fp = f32(psum), fa = bf16_host(a), fw = bf16_host(w);
        float prod = fa * fw;
        float sum = fp + prod;
        bool host_case = normal_or_zero(fp) && normal_or_zero(fa) && normal_or_zero(fw) &&
                         normal_or_zero(prod) && normal_or_zero(sum);
        uint32_t want = host_case ? bits(sum) : ref_add(psum, ref_mul(a, w));
        tally_check(&t, host_case, psum, ((uint32_t)a << 16) | w, arith_golden_mac(psum, a, w), want);
    }
    tally_assert_clean(&t, "mac");
    tally_assert_host_share(&t, "mac", 0.8);
}

/* ---- fp32 multiply and max (the vector unit's operations) ------------------- */

static float mul_bits_to_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t mul_float_to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

Test(arith_golden, fp32_mul_matches_host_where_normal, .timeout = 300)
{
    uint64_t state = 0x243F6A8885A308D3ull, compared = 0;
    for (int i = 0; i < 8000000; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        uint32_t a = (uint32_t)state, b = (uint32_t)(state >> 32);
        if (i & 1) { /* keep products in range half of the time */
            a = (a & 0x807FFFFFu) | (uint32_t)(96 + (state >> 8) % 64) << 23;
            b = (b & 0x807FFFFFu) | (uint32_t)(96 + (state >> 20) % 64) << 23;
        }
        unsigned ea = (a >> 23) & 0xFF, eb = (b >> 23) & 0xFF;
        if (ea == 0 || ea == 255 || eb == 0 || eb == 255) continue;
        uint32_t host = mul_float_to_bits(mul_bits_to_float(a) * mul_bits_to_float(b));
        unsigned eh = (host >> 23) & 0xFF;
        if (eh <= 1) continue; /* near or below 2^-126 the host rounds at subnormal precision */
        cr_assert_eq(arith_golden_fp32_mul(a, b), host, "0x%08x * 0x%08x: golden 0x%08x host 0x%08x", a, b,
                     arith_golden_fp32_mul(a, b), host);
        compared++;
    }
    cr_assert_gt(compared, 3000000);
}

Test(arith_golden, fp32_mul_special_classes)
{
    cr_assert_eq(arith_golden_fp32_mul(0x7F800000u, 0x00000000u), ARITH_FP32_CANON_NAN, "Inf x 0");
    cr_assert_eq(arith_golden_fp32_mul(0x7F800000u, 0x00000001u), ARITH_FP32_CANON_NAN, "Inf x subnormal");
    cr_assert_eq(arith_golden_fp32_mul(0xFF800000u, 0x3F800000u), 0xFF800000u, "-Inf x 1");
    cr_assert_eq(arith_golden_fp32_mul(0x80000000u, 0x3F800000u), 0x80000000u, "-0 x 1");
    cr_assert_eq(arith_golden_fp32_mul(0x00400000u, 0xBF800000u), 0x80000000u, "subnormal x -1 flushes to -0");
    cr_assert_eq(arith_golden_fp32_mul(0x7F7FFFFFu, 0x40000000u), 0x7F800000u, "overflow to Inf");
    cr_assert_eq(arith_golden_fp32_mul(0x00800000u, 0x3F000000u), 0x00000000u, "result below 2^-126 flushes");
    cr_assert_eq(arith_golden_fp32_mul(0xFFC12345u, 0x3F800000u), ARITH_FP32_CANON_NAN, "NaN");
    /* tie: (1 + 2^-23)(1 + 2^-1) = 1.5 + 1.5 * 2^-23: the dropped bits are exactly half */
    cr_assert_eq(arith_golden_fp32_mul(0x3F800001u, 0x3FC00000u),
                 mul_float_to_bits(mul_bits_to_float(0x3F800001u) * 1.5f), "tie to even");
    cr_assert_eq(arith_golden_fp32_mul(0x3FFFFFFFu, 0x3FFFFFFFu),
                 mul_float_to_bits(mul_bits_to_float(0x3FFFFFFFu) * mul_bits_to_float(0x3FFFFFFFu)),
                 "rounding carry");
}

Test(arith_golden, fp32_max_special_classes_and_order)
{
    cr_assert_eq(arith_golden_fp32_max(0x00000000u, 0x80000000u), 0x00000000u, "max(+0, -0)");
    cr_assert_eq(arith_golden_fp32_max(0x80000000u, 0x00000000u), 0x00000000u, "max(-0, +0)");
    cr_assert_eq(arith_golden_fp32_max(0x80000000u, 0x80000000u), 0x80000000u, "max(-0, -0)");
    cr_assert_eq(arith_golden_fp32_max(0xBF800000u, 0x80000000u), 0x80000000u, "max(-1, -0)");
    cr_assert_eq(arith_golden_fp32_max(0x7FC00001u, 0x3F800000u), ARITH_FP32_CANON_NAN);
    cr_assert_eq(arith_golden_fp32_max(0x00000001u, 0x80000000u), 0x00000000u, "subnormal reads as +0");
    cr_assert_eq(arith_golden_fp32_max(0xFF800000u, 0xFF7FFFFFu), 0xFF7FFFFFu);
    uint64_t state = 99;
    for (int i = 0; i < 1000000; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        uint32_t a = (uint32_t)state, b = (uint32_t)(state >> 32);
        unsigned ea = (a >> 23) & 0xFF, eb = (b >> 23) & 0xFF;
        if (ea == 0 || ea == 255 || eb == 0 || eb == 255) continue;
        float fa = mul_bits_to_float(a), fb = mul_bits_to_float(b);
        cr_assert_eq(arith_golden_fp32_max(a, b), fa >= fb ? a : b);
    }
}
