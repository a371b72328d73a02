/*
 * The host-FPU golden path of the vector unit and the collectives (csim/golden/arith_golden_fpu.c
 * and vec_golden's default path) against the soft float (arith_golden, vec_golden_exact_lines),
 * the reference of references: the fp32 add and multiply on millions of random pairs and on the
 * cases where host arithmetic and the spec part (subnormal rounding below 2^-126, NaN
 * payloads and signs, signed zeros, RNE ties, overflow), also under the host's FTZ/DAZ modes;
 * then every VEC operation on more than a million lanes each, bit for bit, for 4, 16 and 128
 * lanes and line reductions of 1 to 9 lines.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "bf16_operands.h"
#include "golden/arith_golden.h"
#include "golden/arith_golden_fpu.h"
#include "golden/vec_golden.h"
#include "test_util.h"
#include "util/rng.h"

TestSuite(vec_golden, .timeout = 300);

enum { PAIRS = 4000000 };

/* fp32_operand's values, plus NaNs and subnormals of any payload and sign */
static uint32_t lane_value(rng_t *r) {
  switch (rng_below(r, 16)) {
    case 0: return (uint32_t)rng_below(r, 2) << 31 | 0x7F800000u | (1 + (uint32_t)rng_below(r, 0x7FFFFF));
    case 1: return (uint32_t)rng_below(r, 2) << 31 | (uint32_t)rng_below(r, 0x800000);
    default: return fp32_operand(r);
  }
}

/* A pair: independent operands, or b near a's magnitude (sums that cancel, round and tie: a
 * shift of d places ties one time in 2^d), or a product near 2^-126 (for a below 1: exponents
 * summing to 127 or 128). */
static void pair(rng_t *r, uint32_t *a, uint32_t *b) {
  *a = lane_value(r), *b = lane_value(r);
  const uint32_t ea = *a >> 23 & 0xFF;
  const uint64_t how = rng_below(r, 8);
  if (ea == 0 || ea == 0xFF || how >= 4) return;
  if (how < 3) {
    const uint32_t d = (uint32_t)rng_below(r, 26), eb = ea > d ? ea - d : 1;
    *b = (uint32_t)rng_below(r, 2) << 31 | eb << 23 | (uint32_t)rng_below(r, 1u << 23);
  } else {
    const uint32_t eb = 127 + (uint32_t)rng_below(r, 2) - (ea < 127 ? ea : 126);
    *b = (uint32_t)rng_below(r, 2) << 31 | eb << 23 | (uint32_t)rng_below(r, 1u << 23);
  }
}

typedef uint32_t (*fp32_op_t)(uint32_t, uint32_t);

static void expect_same(fp32_op_t host, fp32_op_t soft, const char *what, uint32_t a, uint32_t b) {
  cr_assert_eq(host(a, b), soft(a, b), "%s 0x%08x, 0x%08x: host FPU 0x%08x, soft float 0x%08x", what, a, b, host(a, b),
               soft(a, b));
}

/* PAIRS random pairs, both orders; counts the results that are specials, so the draw is seen
 * to reach them. */
static void random_pairs(fp32_op_t host, fp32_op_t soft, const char *what, uint64_t seed) {
  rng_t r;
  rng_seed(&r, seed);
  uint64_t nan = 0, inf = 0, zero = 0, min_normal = 0;
  for (unsigned i = 0; i < PAIRS; i++) {
    uint32_t a, b;
    pair(&r, &a, &b);
    const uint32_t got = host(a, b), got_swapped = host(b, a);
    if (got != soft(a, b)) expect_same(host, soft, what, a, b);
    if (got_swapped != soft(b, a)) expect_same(host, soft, what, b, a);
    nan += got == ARITH_FP32_CANON_NAN, inf += (got & 0x7FFFFFFFu) == 0x7F800000u;
    zero += (got & 0x7FFFFFFFu) == 0, min_normal += (got & 0x7FFFFFFFu) == 0x00800000u;
  }
  cr_assert_gt(nan, PAIRS / 100, "%s: %llu NaN results", what, (unsigned long long)nan);
  cr_assert_gt(inf, PAIRS / 100, "%s: %llu Inf results", what, (unsigned long long)inf);
  cr_assert_gt(zero, PAIRS / 100, "%s: %llu zero results", what, (unsigned long long)zero);
  cr_assert_gt(min_normal, 10, "%s: %llu results of 2^-126", what, (unsigned long long)min_normal);
}

Test(vec_golden, fp32_add_random_pairs_with_specials) {
  random_pairs(arith_golden_fpu_fp32_add, arith_golden_fp32_add, "add", test_seed() * 7919 + 1);
}

Test(vec_golden, fp32_mul_random_pairs_with_specials) {
  random_pairs(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul", test_seed() * 7919 + 2);
}

/* The fast models run under the host's FTZ and DAZ modes (csim/fast/fpmode.h); the host path
 * gives the same bits with them on (each test is a process of its own, so the mode stays here). */
Test(vec_golden, the_hosts_ftz_and_daz_modes_change_nothing) {
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6), rounding to nearest kept */
  cr_assert_eq(_mm_getcsr() & 0xE040u, 0x8040u);
  random_pairs(arith_golden_fpu_fp32_add, arith_golden_fp32_add, "add under FTZ/DAZ", test_seed() * 7919 + 4);
  random_pairs(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul under FTZ/DAZ", test_seed() * 7919 + 5);
  expect_same(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul under FTZ/DAZ", 0x3F7FFFFFu, 0x00800000u);
  expect_same(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul under FTZ/DAZ", 0x1F842108u, 0x20780000u);
#else
  cr_skip_test("no SSE control register on this host");
#endif
}

Test(vec_golden, fp32_add_directed) {
  static const uint32_t cases[][2] = {
      {0x00000000u, 0x80000000u}, {0x80000000u, 0x80000000u}, {0x80000000u, 0x00000000u}, /* signed zeros */
      {0x00000001u, 0x80000000u}, {0x807FFFFFu, 0x80000001u}, {0x00400000u, 0x3F800000u}, /* DAZ */
      {0x00800000u, 0x80800001u}, {0x80C00000u, 0x00800000u}, {0x01000000u, 0x80FFFFFFu}, /* FTZ, signed */
      {0x3F800000u, 0xBF800000u}, {0x7F7FFFFFu, 0xFF7FFFFFu},                             /* cancellation is +0 */
      {0x3F800000u, 0x33800000u}, {0x3F800001u, 0x33800000u}, {0x4B000001u, 0x3F000000u}, /* RNE ties */
      {0x7F7FFFFFu, 0x73800000u}, {0x7F7FFFFFu, 0x73000000u}, {0x7F000000u, 0x7F000000u}, /* overflow */
      {0x7F800000u, 0xFF800000u}, {0xFF800000u, 0x7F800000u}, {0x7F800000u, 0x7F800000u}, /* Inf */
      {0x7F800001u, 0x3F800000u}, {0xFFC00000u, 0x7F800000u}, {0x7FA5A5A5u, 0xFFFFFFFFu}, /* NaN payloads */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    expect_same(arith_golden_fpu_fp32_add, arith_golden_fp32_add, "add", cases[i][0], cases[i][1]);
    expect_same(arith_golden_fpu_fp32_add, arith_golden_fp32_add, "add", cases[i][1], cases[i][0]);
  }
}

Test(vec_golden, fp32_mul_directed) {
  static const uint32_t cases[][2] = {
      /* (1 - 2^-24) x 2^-126: the host rounds to 2^-126 on the subnormal grid, the spec rounds to
       * 24 bits first (2^-126 - 2^-150) and flushes */
      {0x3F7FFFFFu, 0x00800000u}, {0xBF7FFFFFu, 0x00800000u},
      /* (2^25 - 1) 2^22 x 2^-173 = 2^-126 - 2^-151: the spec's tie, to the even 2^-126 */
      {0x1F842108u, 0x20780000u}, {0x9F842108u, 0x20780000u},
      {0x00800000u, 0x3F000000u}, {0x00800000u, 0x3F800000u}, {0x00FFFFFFu, 0x3F000000u}, /* below 2^-126 */
      {0x00400000u, 0xBF800000u}, {0x7F800000u, 0x00000001u}, {0x7F800000u, 0x80000000u}, /* DAZ, Inf x 0 */
      {0x80000000u, 0x3F800000u}, {0x80000000u, 0xBF800000u}, {0x00000000u, 0xFF7FFFFFu}, /* signed zeros */
      {0x7F7FFFFFu, 0x40000000u}, {0x7F7FFFFFu, 0x3F800001u}, {0xFF7FFFFFu, 0x3F800000u}, /* overflow */
      {0x3F800001u, 0x3FC00000u}, {0x3FFFFFFFu, 0x3FFFFFFFu}, {0x3F800001u, 0x3F800001u}, /* ties, carries */
      {0x7F800001u, 0x00000000u}, {0xFFC00001u, 0x3F800000u}, {0x7FA5A5A5u, 0x7F800000u}, /* NaN payloads */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    expect_same(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul", cases[i][0], cases[i][1]);
    expect_same(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul", cases[i][1], cases[i][0]);
  }
  cr_assert_eq(arith_golden_fp32_mul(0x3F7FFFFFu, 0x00800000u), 0, "the spec flushes 2^-126 - 2^-150");
  cr_assert_eq(arith_golden_fp32_mul(0x1F842108u, 0x20780000u), 0x00800000u, "the spec's tie goes to 2^-126");
}

/* Products of significands A x B in [2^47 - 2^23, 2^47 - 2^22 + 2^21] at 2^-173: around the
 * spec's tie at 2^-126 - 2^-151, where the host's subnormal rounding and the spec's part ways
 * one time in two. */
Test(vec_golden, fp32_mul_at_the_smallest_normal) {
  rng_t r;
  rng_seed(&r, test_seed() * 7919 + 3);
  uint64_t up = 0, flushed = 0;
  for (unsigned i = 0; i < 1000000; i++) {
    const uint64_t A = (1u << 23) + rng_below(&r, 1u << 23);
    const uint64_t target = (UINT64_C(1) << 47) - (UINT64_C(1) << 23) + rng_below(&r, (1u << 22) + (1u << 21));
    const uint64_t B = (target + A - 1) / A;
    if (B >= 1u << 24) continue;
    const uint32_t ea = 1 + (uint32_t)rng_below(&r, 126), eb = 127 - ea, sign = (uint32_t)rng_below(&r, 4);
    const uint32_t a = (sign & 1) << 31 | ea << 23 | (uint32_t)(A - (1u << 23));
    const uint32_t b = (sign >> 1) << 31 | eb << 23 | (uint32_t)(B - (1u << 23));
    const uint32_t want = arith_golden_fp32_mul(a, b);
    if (arith_golden_fpu_fp32_mul(a, b) != want)
      expect_same(arith_golden_fpu_fp32_mul, arith_golden_fp32_mul, "mul", a, b);
    up += (want & 0x7FFFFFFFu) == 0x00800000u, flushed += (want & 0x7FFFFFFFu) == 0;
  }
  cr_assert_gt(up, 100000);
  cr_assert_gt(flushed, 100000);
}

Test(vec_golden, every_operation_host_fpu_equals_soft_float) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 7);
  enum { MAX = 9 * 128 };
  const unsigned lane_counts[] = {4, 16, 128};
  uint32_t *a = malloc(MAX * 4), *b = malloc(MAX * 4), *got = malloc(MAX * 4), *want = malloc(MAX * 4);
  cr_assert(a && b && got && want);
  /* every operation the ISA has (fw/isa.def), over a million lanes each */
  for (unsigned code = 0; code < ISA_NUM_VEC_OPS; code++) {
    const isa_vec_op_t op = (isa_vec_op_t)code;
    for (uint64_t checked = 0; checked < 1000000;) {
      const unsigned lanes = lane_counts[rng_below(&r, 3)], rows = 1 + (unsigned)rng_below(&r, 9);
      for (unsigned i = 0; i < rows * lanes; i++) pair(&r, &a[i], &b[i]);
      const uint32_t scalar = lane_value(&r);
      const unsigned n = vec_golden_lines(op, lanes, rows, a, b, scalar, got);
      const unsigned w = vec_golden_exact_lines(op, lanes, rows, a, b, scalar, want);
      cr_assert_eq(n, w, "%s: %u lines written, soft float %u", isa_vec_op_name(op), n, w);
      for (unsigned i = 0; i < n * lanes; i++)
        if (got[i] != want[i])
          cr_assert_fail("%s, %u lanes, %u rows, lane %u: a 0x%08x b 0x%08x scalar 0x%08x: host FPU 0x%08x, "
                         "soft float 0x%08x", isa_vec_op_name(op), lanes, rows, i, a[i], b[i], scalar, got[i], want[i]);
      /* a reduction's result stands for all its inputs */
      checked += (uint64_t)(isa_vec_reduces_lines(op) ? rows : n) * lanes;
    }
  }
  free(a), free(b), free(got), free(want);
}

static double as_double(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* |got - exact| in units of the last place of exact as an fp32 (normal range). */
static double ulp_error(uint32_t got, double exact) {
  int e;
  frexp(exact, &e);
  return fabs(as_double(got) - exact) / ldexp(1.0, e - 24);
}

/* RSQRT (docs/numerics.md, "Reciprocal square root"): within 1.25 ulp of 1/sqrt(x) in float64
 * over every input in [1, 4) (2^24 of them: every significand with either exponent parity; a
 * factor 4 scales every step exactly, checked on every exponent), and every class of input. */
Test(vec_golden, rsqrt_is_within_its_bound_and_defines_every_class) {
  double worst = 0;
  for (uint32_t x = 0x3F800000u; x < 0x40800000u; x++) {
    const double err = ulp_error(vec_golden_lane(ISA_VEC_RSQRT, x, 0, 0), 1.0 / sqrt(as_double(x)));
    worst = err > worst ? err : worst;
    if (err > 1.25) cr_assert_fail("rsqrt(%a): %.3f ulp", as_double(x), err);
  }
  cr_log_info("rsqrt: every input in [1, 4), worst %.4f ulp", worst);
  cr_assert_gt(worst, 1.0, "the bound is the measured worst rounded up: %.4f", worst);
  for (uint32_t e = 1; e < 255; e++) {
    const uint32_t m = (uint32_t)(e * 40503u) & 0x7FFFFFu;
    const uint32_t x = e << 23 | m, base = (127 + (e % 2 == 0)) << 23 | m;  /* x = base * 4^k */
    const int k = ((int)e - (int)(base >> 23)) / 2;
    const uint32_t want = vec_golden_lane(ISA_VEC_RSQRT, base, 0, 0) - (uint32_t)(k * (1 << 23));
    cr_assert_eq(vec_golden_lane(ISA_VEC_RSQRT, x, 0, 0), want, "rsqrt(0x%08x) is rsqrt(0x%08x) / 2^%d", x, base, k);
  }
  static const uint32_t cases[][2] = {
      {0x00000000u, 0x7F800000u}, {0x80000000u, 0xFF800000u}, {0x00000001u, 0x7F800000u}, /* zeros, subnormals */
      {0x807FFFFFu, 0xFF800000u}, {0x7F800000u, 0x00000000u}, {0xFF800000u, 0x7FC00000u}, /* +-Inf */
      {0xBF800000u, 0x7FC00000u}, {0x80800000u, 0x7FC00000u}, {0x7FC00000u, 0x7FC00000u}, /* negatives, NaNs */
      {0xFFA5A5A5u, 0x7FC00000u}, {0x3F800000u, 0x3F800000u}, {0x40800000u, 0x3F000000u}, /* 1, 4 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_assert_eq(vec_golden_lane(ISA_VEC_RSQRT, cases[i][0], 0, 0), cases[i][1], "rsqrt(0x%08x) = 0x%08x, not 0x%08x",
                 cases[i][0], vec_golden_lane(ISA_VEC_RSQRT, cases[i][0], 0, 0), cases[i][1]);
  /* the extremes stay normal: 1/sqrt(2^-126) = 2^63, 1/sqrt(max) just above 2^-64 */
  cr_assert_eq(vec_golden_lane(ISA_VEC_RSQRT, 0x00800000u, 0, 0), 0x5F000000u);
  cr_assert_leq(ulp_error(vec_golden_lane(ISA_VEC_RSQRT, 0x7F7FFFFFu, 0, 0), 1.0 / sqrt(as_double(0x7F7FFFFFu))), 1.25);
}

/* ERF (docs/numerics.md, "Error function"): within 1.5 ulp and 1e-7 of float64's erf on every
 * 61st fp32 pattern of [2^-126, 4) (17.6 million; the bounds are the worst measured over every
 * pattern there, 1.39 ulp and 8.3e-8, rounded up), odd exactly, at most 1, 1 from 4 on, and
 * every class of input. */
Test(vec_golden, erf_is_within_its_bound_odd_and_saturating) {
  double worst = 0, worst_abs = 0;
  uint64_t n = 0;
  for (uint64_t u = 0x00800000u; u < 0x40800000u; u += 61, n++) {
    const uint32_t x = (uint32_t)u, got = vec_golden_lane(ISA_VEC_ERF, x, 0, 0);
    const double want = erf(as_double(x)), err = ulp_error(got, want), abs_err = fabs(as_double(got) - want);
    worst = err > worst ? err : worst, worst_abs = abs_err > worst_abs ? abs_err : worst_abs;
    if (err > 1.5 || abs_err > 1e-7 || got > 0x3F800000u)
      cr_assert_fail("erf(%a) = %a: %.3f ulp, %.3g", as_double(x), as_double(got), err, abs_err);
    if (vec_golden_lane(ISA_VEC_ERF, x | 0x80000000u, 0, 0) != (got | 0x80000000u))
      cr_assert_fail("erf(-x) != -erf(x) at x = %a", as_double(x));
  }
  cr_log_info("erf: %llu inputs, worst %.4f ulp, %.3g absolute", (unsigned long long)n, worst, worst_abs);
  cr_assert_gt(worst, 1.0, "the bound is the measured worst rounded up: %.4f", worst);
  static const uint32_t cases[][2] = {
      {0x00000000u, 0x00000000u}, {0x80000000u, 0x80000000u}, {0x00000001u, 0x00000000u}, /* zeros, subnormals */
      {0x807FFFFFu, 0x80000000u}, {0x7F800000u, 0x3F800000u}, {0xFF800000u, 0xBF800000u}, /* +-Inf */
      {0x7FC00000u, 0x7FC00000u}, {0xFFA5A5A5u, 0x7FC00000u}, {0x7F800001u, 0x7FC00000u}, /* NaNs */
      {0x40800000u, 0x3F800000u}, {0xC0800000u, 0xBF800000u}, {0x7F7FFFFFu, 0x3F800000u}, /* 4 on: +-1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_assert_eq(vec_golden_lane(ISA_VEC_ERF, cases[i][0], 0, 0), cases[i][1], "erf(0x%08x) = 0x%08x, not 0x%08x",
                 cases[i][0], vec_golden_lane(ISA_VEC_ERF, cases[i][0], 0, 0), cases[i][1]);
  /* below 2^-20 (x scaled up by 2^24 and back) no product flushes: the smallest normal too */
  for (uint32_t x = 0x00800000u; x < 0x35800000u; x += 0x00100001u)
    cr_assert_leq(ulp_error(vec_golden_lane(ISA_VEC_ERF, x, 0, 0), erf(as_double(x))), 0.75, "erf(%a)", as_double(x));
}
