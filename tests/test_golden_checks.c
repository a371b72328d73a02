/*
 * The checkers the CLI and the RTL tests share (csim/golden): they must catch what they are
 * there to catch. A flipped bit in any chip's collective result, a sum outside the float64
 * bound, a reduce-scatter value on a line the chip owns (and only those), a GEMM element;
 * and the vector unit's conversions lay lines out as docs/isa.md says.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/coll_golden.h"
#include "golden/gemm_golden.h"
#include "golden/vec_golden.h"
#include "util/rng.h"

TestSuite(golden_checks, .timeout = 60);

static const fw_slice_t slice_3x2 = {0, 0, 3, 2, 3, 2};

/* Inputs and the golden outputs of a collective on the 3x2 slice, 4 lanes, `elems` a chip. */
static void golden_run(const fw_coll_args_t *a, uint64_t elems, uint32_t *in, uint32_t *out) {
  const unsigned chips = 6, lanes = 4;
  rng_t r;
  rng_seed(&r, 5);
  for (uint64_t i = 0; i < chips * elems; i++) in[i] = 0x3F800000u | (uint32_t)(rng_next(&r) & 0x7FFFFF);
  fw_coll_args_t ga = *a;
  ga.lines = (uint32_t)((elems + lanes - 1) / lanes);
  uint32_t *pin = calloc(chips * ga.lines * lanes, 4), *pout = calloc(chips * ga.lines * lanes, 4);
  for (unsigned c = 0; c < chips; c++) memcpy(pin + c * ga.lines * lanes, in + c * elems, elems * 4);
  coll_golden(&slice_3x2, &ga, lanes, pin, pout);
  for (unsigned c = 0; c < chips; c++) memcpy(out + c * elems, pout + c * ga.lines * lanes, elems * 4);
  free(pin), free(pout);
}

Test(golden_checks, collective_checker_catches_one_flipped_bit) {
  const uint64_t elems = 37;
  uint32_t in[6 * 37], out[6 * 37];
  const fw_coll_op_t ops[] = {FW_COLL_ALLREDUCE, FW_COLL_ALL_GATHER, FW_COLL_BROADCAST};
  for (unsigned o = 0; o < 3; o++) {
    fw_coll_args_t a = {ops[o], FW_COLL_RING, 0, 0, 1, 4, false};
    golden_run(&a, elems, in, out);
    coll_check_t c;
    cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
    cr_assert_eq(c.mismatches, 0, "op %d: the golden output checks clean", ops[o]);
    cr_assert_eq(c.checked, 6 * elems);
    out[4 * elems + 17] ^= 1;  /* chip 4, value 17 */
    cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
    cr_assert_eq(c.mismatches, 1);
    cr_assert(c.first_chip == 4 && c.first_value == 17, "found chip %u value %llu", c.first_chip,
              (unsigned long long)c.first_value);
  }
}

Test(golden_checks, sums_outside_the_float64_bound_are_counted) {
  const uint64_t elems = 8;
  uint32_t in[6 * 8], out[6 * 8];
  fw_coll_args_t a = {FW_COLL_ALLREDUCE, FW_COLL_RING, 0, 0, 1, 0, false};
  golden_run(&a, elems, in, out);
  coll_check_t c;
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.bound_violations, 0);
  cr_assert_gt(c.max_rel_error, 0, "six sums of values in [1, 2) round");
  cr_assert_leq(c.max_rel_error, c.bound);
  out[3] += 1 << 10;  /* 2^10 ulps off: far outside (n-1)u */
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.bound_violations, 1);
  cr_assert_eq(c.mismatches, 1);
}

Test(golden_checks, reduce_scatter_checks_only_the_owned_lines) {
  const uint64_t elems = 4 * 12;  /* 12 lines: 3 X segments of 4, each 2 Y segments of 2 */
  uint32_t in[6 * 48], out[6 * 48];
  fw_coll_args_t a = {FW_COLL_REDUCE_SCATTER, FW_COLL_RING, 0, 0, 1, 0, false};
  golden_run(&a, elems, in, out);
  coll_check_t c;
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.mismatches, 0);
  cr_assert_eq(c.checked, elems, "each line is owned by one chip");
  cr_assert_eq(coll_golden_owner(&slice_3x2, 12, 0), 0);
  cr_assert_eq(coll_golden_owner(&slice_3x2, 12, 2), 3, "the second Y segment of X segment 0: chip (0, 1)");
  cr_assert_eq(coll_golden_owner(&slice_3x2, 12, 11), 5);
  out[0 * elems + 4 * 4] ^= 1;  /* chip 0, line 4: owned by chip 1, not checked */
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.mismatches, 0);
  out[1 * elems + 4 * 4] ^= 1;  /* chip 1, line 4: its own */
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.mismatches, 1);
}

Test(golden_checks, all_to_all_checker_swaps_blocks) {
  const uint64_t elems = 12;  /* 6 chips, blocks of 2 */
  uint32_t in[6 * 12], out[6 * 12];
  for (unsigned i = 0; i < 6 * 12; i++) in[i] = i;
  for (unsigned i = 0; i < 6; i++)
    for (unsigned j = 0; j < 6; j++) memcpy(out + i * 12 + j * 2, in + j * 12 + i * 2, 8);
  fw_coll_args_t a = {FW_COLL_ALL_TO_ALL, FW_COLL_RING, 0, 0, 1, 0, false};
  coll_check_t c;
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.mismatches, 0);
  memcpy(out, in, 8);  /* chip 0 keeps its own block 0: right; now break block 1 */
  out[2] = in[2];
  cr_assert_eq(coll_golden_check(&slice_3x2, &a, 4, elems, in, out, &c), 0);
  cr_assert_eq(c.mismatches, 1);
  cr_assert_eq(c.first_value, 2);
}

Test(golden_checks, gemm_checker_finds_the_first_difference) {
  uint16_t a[3 * 5], b[5 * 2];
  rng_t r;
  rng_seed(&r, 9);
  for (int i = 0; i < 15; i++) a[i] = rng_bf16(&r, -2, 2);
  for (int i = 0; i < 10; i++) b[i] = rng_bf16(&r, -2, 2);
  uint32_t c[6];
  gemm_golden(4, 3, 5, 2, a, b, true, true, c);
  for (int i = 0; i < 6; i++) cr_assert_eq(c[i] >> 16, 0, "bf16 results in the low half");
  golden_diff_t d;
  cr_assert_eq(gemm_golden_check(4, 3, 5, 2, a, b, true, true, c, &d), 0);
  cr_assert_eq(d.mismatches, 0);
  c[4] ^= 0x10;
  cr_assert_eq(gemm_golden_check(4, 3, 5, 2, a, b, true, true, c, &d), 0);
  cr_assert(d.mismatches == 1 && d.first == 4 && d.got == (d.want ^ 0x10));
}

Test(golden_checks, vector_conversions_lay_out_lines_as_documented) {
  /* TO_BF16: fp32 lanes 2l, 2l+1 -> bf16 halves of lane l; the high half of the line zero */
  const uint32_t a[4] = {0x3F800000u, 0x40000000u, 0xC0400000u, 0x3F808000u};  /* 1, 2, -3, 1.00390625 */
  uint32_t out[4];
  vec_golden_line(ISA_VEC_TO_BF16, 4, a, a, 0, out);
  cr_assert_eq(out[0], 0x40003F80u);
  cr_assert_eq(out[1], 0x3F80C040u, "1.00390625 is a tie: RNE rounds to even, 1.0");
  cr_assert(out[2] == 0 && out[3] == 0);
  /* TO_FP32: bf16 lane l of the low half -> fp32 lane l */
  uint32_t back[4];
  vec_golden_line(ISA_VEC_TO_FP32, 4, out, out, 0, back);
  cr_assert(back[0] == 0x3F800000u && back[1] == 0x40000000u && back[2] == 0xC0400000u && back[3] == 0x3F800000u);
  cr_assert_eq(vec_golden_lane(ISA_VEC_SUB, 0x40000000u, 0x3F800000u, 0), 0x3F800000u, "2 - 1");
  cr_assert_eq(vec_golden_lane(ISA_VEC_RELU, 0x80000000u, 0, 0), 0, "relu(-0) = +0");
  cr_assert_eq(vec_golden_lane(ISA_VEC_SCALE, 0x40000000u, 0, 0x40400000u), 0x40C00000u, "2 * 3");
}

/* The training operations, by hand (docs/numerics.md, "Vector unit operations"). */
Test(golden_checks, training_vector_ops_by_hand) {
  const uint32_t one = 0x3F800000u, two = 0x40000000u, three = 0x40400000u, nan = 0x7FC00000u, big = 0x4B800000u;
  /* ReLU's mask: b where a > +0; zeros, subnormals, negatives and NaN give +0 */
  cr_assert_eq(vec_golden_lane(ISA_VEC_RELU_GRAD, one, 0xC0490FDBu, 0), 0xC0490FDBu, "b passes where a > 0");
  cr_assert_eq(vec_golden_lane(ISA_VEC_RELU_GRAD, 0x7F800000u, three, 0), three, "+Inf > 0");
  static const uint32_t not_positive[] = {0, 0x80000000u, 0x00000001u, 0xBF800000u, nan, 0x7F800001u};
  for (unsigned i = 0; i < 6; i++)
    cr_assert_eq(vec_golden_lane(ISA_VEC_RELU_GRAD, not_positive[i], three, 0), 0, "a = 0x%08x", not_positive[i]);
  /* a + scalar * b, rounded twice: 1 + 3 * 2 = 7; and 2^24 + 1 * 1 stays 2^24 (tie to even) */
  cr_assert_eq(vec_golden_lane(ISA_VEC_AXPY, one, two, three), 0x40E00000u, "1 + 3 * 2");
  cr_assert_eq(vec_golden_lane(ISA_VEC_AXPY, big, one, one), big, "2^24 + 1");
  /* the lane tree: (2^24 + 1) + (1 + 1) = 2^24 + 2, where a running sum would stay 2^24 */
  uint32_t a[4] = {big, one, one, one}, out[4];
  vec_golden_line(ISA_VEC_SUM_LANES, 4, a, a, 0, out);
  for (unsigned l = 0; l < 4; l++) cr_assert_eq(out[l], 0x4B800001u, "lane %u: 0x%08x", l, out[l]);
  uint32_t m[4] = {one, 0xC2C80000u, three, two};
  vec_golden_line(ISA_VEC_MAX_LANES, 4, m, m, 0, out);
  for (unsigned l = 0; l < 4; l++) cr_assert_eq(out[l], three, "max lane %u", l);
  /* across lines, in line order: ((2^24 + 1) + 1) + 1 = 2^24 */
  uint32_t lines[4] = {big, one, one, one}, sum[4] = {0};
  cr_assert_eq(vec_golden_lines(ISA_VEC_SUM_LINES, 1, 4, lines, lines, 0, sum), 1);
  cr_assert_eq(sum[0], big, "0x%08x", sum[0]);
  cr_assert_eq(vec_golden_lines(ISA_VEC_MAX_LINES, 1, 4, lines, lines, 0, sum), 1);
  cr_assert_eq(sum[0], big);
  cr_assert_eq(vec_golden_lines(ISA_VEC_ADD, 1, 4, lines, lines, 0, sum), 4);
}

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* |got - exact| in units of the last place of exact as an fp32 (normal range). */
static double ulp_error(uint32_t got, double exact) {
  int e;
  frexp(exact, &e);
  return fabs((double)bits_to_float(got) - exact) / ldexp(1.0, e - 24);
}

/* EXP and RECIP (docs/numerics.md): the stated error bounds against float64, and the
 * special values. The bounds are measured maxima rounded up: exp 1.20 ulp over every 61st
 * fp32 pattern with a normal result, recip 1.143 ulp over every significand. */
Test(golden_checks, exp_and_recip_are_within_their_bounds) {
  double worst = 0;
  unsigned long n = 0;
  for (uint64_t u = 0; u < 0x100000000ull; u += 4093) {
    const uint32_t x = (uint32_t)u;
    const float fx = bits_to_float(x);
    if (isnan(fx) || (x >> 23 & 0xFF) == 0) continue;
    const double want = exp((double)fx);
    const uint32_t got = vec_golden_lane(ISA_VEC_EXP, x, 0, 0);
    if (want >= 0x1p128) {
      cr_assert_eq(got, 0x7F800000u, "exp(%a) overflows to +Inf, not 0x%08x", (double)fx, got);
    } else if (want < 0x1p-126) {
      /* the result is below the normal range: flushed to +0, or the smallest normals */
      cr_assert(got == 0 || (got >> 23) == 1, "exp(%a) = 0x%08x", (double)fx, got);
    } else {
      const double err = ulp_error(got, want);
      worst = err > worst ? err : worst, n++;
      cr_assert_leq(err, 1.25, "exp(%a) = %a, %.3f ulp from %a", (double)fx, (double)bits_to_float(got), err, want);
    }
  }
  cr_assert_gt(n, 500000, "%lu inputs with a normal result", n);
  cr_log_info("exp: %lu inputs, worst %.3f ulp", n, worst);
  worst = 0;
  for (uint32_t man = 0; man < (1u << 23); man++) {
    const uint32_t x = 0x3F800000u | man;  /* every significand; other exponents scale exactly */
    const double err = ulp_error(vec_golden_lane(ISA_VEC_RECIP, x, 0, 0), 1.0 / (double)bits_to_float(x));
    worst = err > worst ? err : worst;
    cr_assert_leq(err, 1.15, "1/%a: %.3f ulp", (double)bits_to_float(x), err);
  }
  cr_log_info("recip: every significand, worst %.3f ulp", worst);
  /* scaling by the exponent is exact: 1/(3 * 2^e) = (1/3) * 2^-e */
  const uint32_t third = vec_golden_lane(ISA_VEC_RECIP, 0x40400000u, 0, 0);
  for (int e = -120; e <= 120; e += 10) {
    const uint32_t x = (uint32_t)(128 + e) << 23 | 0x400000u, want = third - ((uint32_t)e << 23);
    cr_assert_eq(vec_golden_lane(ISA_VEC_RECIP, x, 0, 0), want, "1/(3 * 2^%d)", e);
  }
  /* special values */
  static const uint32_t cases[][3] = {
      /* op, input, result */
      {ISA_VEC_EXP, 0x00000000u, 0x3F800000u},  {ISA_VEC_EXP, 0x80000000u, 0x3F800000u},
      {ISA_VEC_EXP, 0x00000001u, 0x3F800000u},  {ISA_VEC_EXP, 0x7F800000u, 0x7F800000u},
      {ISA_VEC_EXP, 0xFF800000u, 0x00000000u},  {ISA_VEC_EXP, 0x7FC00000u, 0x7FC00000u},
      {ISA_VEC_EXP, 0x42C80000u, 0x7F800000u},  {ISA_VEC_EXP, 0xC2C80000u, 0x00000000u},
      {ISA_VEC_RECIP, 0x00000000u, 0x7F800000u}, {ISA_VEC_RECIP, 0x80000000u, 0xFF800000u},
      {ISA_VEC_RECIP, 0x00000001u, 0x7F800000u}, {ISA_VEC_RECIP, 0x7F800000u, 0x00000000u},
      {ISA_VEC_RECIP, 0xFF800000u, 0x80000000u}, {ISA_VEC_RECIP, 0xFFC00001u, 0x7FC00000u},
      {ISA_VEC_RECIP, 0x40000000u, 0x3F000000u}, {ISA_VEC_RECIP, 0xC0800000u, 0xBE800000u},
      {ISA_VEC_RECIP, 0x7F000000u, 0x00000000u},  /* 1/2^127 is below 2^-126: flushed */
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_assert_eq(vec_golden_lane((isa_vec_op_t)cases[i][0], cases[i][1], 0, 0), cases[i][2], "%s(0x%08x)",
                 isa_vec_op_name(cases[i][0]), cases[i][1]);
}

/* coll_golden_check_stream in shares (the MPI ranks' split, docs/scale.md): every share
 * fetches all outputs, checks its own blocks (all-to-all: its own chips), and the shares'
 * counts summed, their largest error and their first mismatch by coll_golden_merge_key give
 * the whole check's verdict. */
typedef struct {
  const uint32_t *in, *out;
  uint64_t elems, fetched;
} share_io_t;

static void share_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const share_io_t *x = ctx;
  memcpy(vals, x->in + chip * x->elems + first, n * sizeof *vals);
}

static int share_output(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  share_io_t *x = ctx;
  memcpy(vals, x->out + chip * x->elems + first, n * sizeof *vals);
  x->fetched += n;
  return 0;
}

static void check_in_shares(const fw_slice_t *s, const fw_coll_args_t *a, uint64_t elems, const uint32_t *in,
                            const uint32_t *out, unsigned shares) {
  share_io_t x = {in, out, elems, 0};
  coll_golden_io_t io = {&x, share_input, share_output, 0, 0};
  coll_check_t whole, part, merged = {0};
  cr_assert_eq(coll_golden_check_stream(s, a, 4, elems, &io, &whole), 0);
  const uint64_t all_fetched = x.fetched;
  uint64_t first = UINT64_MAX;
  for (unsigned k = 0; k < shares; k++) {
    x.fetched = 0;
    io.share = k, io.shares = shares;
    cr_assert_eq(coll_golden_check_stream(s, a, 4, elems, &io, &part), 0);
    cr_assert_eq(x.fetched, all_fetched, "share %u fetched %llu values of %llu", k, (unsigned long long)x.fetched,
                 (unsigned long long)all_fetched);
    merged.checked += part.checked, merged.mismatches += part.mismatches;
    merged.bound_violations += part.bound_violations;
    if (part.max_rel_error > merged.max_rel_error) merged.max_rel_error = part.max_rel_error;
    const uint64_t key = coll_golden_merge_key(a, s->w * s->h, elems, &part);
    if (key < first) first = key, merged.first_chip = part.first_chip, merged.first_value = part.first_value;
    cr_expect_lt(part.checked, whole.checked, "share %u checked everything", k);
  }
  cr_assert_eq(merged.checked, whole.checked);
  cr_assert_eq(merged.mismatches, whole.mismatches);
  cr_assert_eq(merged.bound_violations, whole.bound_violations);
  cr_assert(merged.max_rel_error == whole.max_rel_error, "max error %g, whole %g", merged.max_rel_error,
            whole.max_rel_error);
  cr_assert_eq(first, coll_golden_merge_key(a, s->w * s->h, elems, &whole));
  cr_assert(merged.first_chip == whole.first_chip && merged.first_value == whole.first_value,
            "first mismatch chip %u value %llu, whole chip %u value %llu", merged.first_chip,
            (unsigned long long)merged.first_value, whole.first_chip, (unsigned long long)whole.first_value);
}

Test(golden_checks, checks_in_shares_merge_to_the_whole_check) {
  /* all-to-all on the 3x2 slice: shares by chip */
  const uint64_t elems = 36;
  uint32_t in[6 * 36], out[6 * 36];
  fw_coll_args_t a2a = {FW_COLL_ALL_TO_ALL, FW_COLL_RING, 0, 0, 1, 4, false};
  golden_run(&a2a, elems, in, out);
  out[5 * elems + 3] ^= 1, out[2 * elems + 30] ^= 4; /* the first, in the check's order: chip 2 */
  check_in_shares(&slice_3x2, &a2a, elems, in, out, 2);
  check_in_shares(&slice_3x2, &a2a, elems, in, out, 4);
  /* an all-reduce of 16 chips (16x1) big enough for three blocks: shares by block */
  const fw_slice_t line = {0, 0, 16, 1, 16, 1};
  const uint64_t big = 1200000; /* a block is 1 << 23 values over the chips: 524,288 a chip */
  uint32_t *bin = malloc(16 * big * 4), *bout = malloc(16 * big * 4);
  cr_assert(bin && bout);
  rng_t r;
  rng_seed(&r, 9);
  for (uint64_t i = 0; i < 16 * big; i++) bin[i] = 0x3F800000u | (uint32_t)(rng_next(&r) & 0x7FFFFF);
  fw_coll_args_t ar = {FW_COLL_ALLREDUCE, FW_COLL_RING, 0, 0, 1, 4, false};
  ar.lines = (uint32_t)(big / 4);
  coll_golden(&line, &ar, 4, bin, bout);
  bout[9 * big + 1100000] ^= 1, bout[3 * big + 700000] ^= 2, bout[12 * big + 700000] ^= 2; /* first: chip 3 */
  check_in_shares(&line, &ar, big, bin, bout, 2);
  check_in_shares(&line, &ar, big, bin, bout, 3);
  free(bin), free(bout);
}
