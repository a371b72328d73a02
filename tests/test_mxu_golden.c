/*
 * Tests of the MXU golden model (csim/golden/mxu_golden.c) on its own: the documented
 * accumulation order (inside a tile, down the column from +0; across K tiles in order),
 * padding, and closeness to a float64 reference within the fp32 rounding bound; and of its
 * host-FPU twin (csim/golden/mxu_golden_fpu.c), held to it bit for bit on more than a million
 * outputs of random GEMMs with every special case.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/mxu_golden.h"
#include "golden/mxu_golden_fpu.h"
#include "bf16_operands.h"
#include "test_util.h"
#include "util/rng.h"

static uint16_t bf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return (uint16_t)(bits >> 16); /* exact for the bf16-representable values used here */
}

static float f32(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

TestSuite(mxu_golden, .timeout = 60);

Test(mxu_golden, order_inside_a_tile_is_down_the_column) {
  /* 2^24 + 1 - 2^24: the 1 is lost when added to 2^24 first (RNE, tie to even). */
  uint16_t a[4] = {bf(16777216.0f), bf(1.0f), bf(-16777216.0f), bf(0.0f)};
  uint16_t b[4] = {bf(1.0f), bf(1.0f), bf(1.0f), bf(1.0f)};
  uint32_t out;
  mxu_golden_gemm(4, 1, 4, 1, a, b, &out);
  cr_assert_eq(f32(out), 0.0f, "((0 + 2^24) + 1) + -2^24 = 0 in fp32, got %g", f32(out));
  /* With R = 2 the pairs form two tiles: (2^24 + 1) rounds to 2^24, tile 2 is -2^24. */
  mxu_golden_gemm(2, 1, 4, 1, a, b, &out);
  cr_assert_eq(f32(out), 0.0f);
  /* With R = 1, order is the same; with the 1 last, it survives. */
  uint16_t a2[3] = {bf(16777216.0f), bf(-16777216.0f), bf(1.0f)};
  mxu_golden_gemm(4, 1, 3, 1, a2, b, &out);
  cr_assert_eq(f32(out), 1.0f);
}

Test(mxu_golden, tiles_accumulate_in_order) {
  /* Tile sums 2^24, 1, 1: ((2^24 + 1) + 1) = 2^24 (each 1 lost), not 2^24 + 2. */
  uint16_t a[3] = {bf(16777216.0f), bf(1.0f), bf(1.0f)};
  uint16_t b[3] = {bf(1.0f), bf(1.0f), bf(1.0f)};
  uint32_t out;
  mxu_golden_gemm(1, 1, 3, 1, a, b, &out);
  cr_assert_eq(f32(out), 16777216.0f);
  uint16_t a2[3] = {bf(1.0f), bf(1.0f), bf(16777216.0f)};
  mxu_golden_gemm(1, 1, 3, 1, a2, b, &out);
  cr_assert_eq(f32(out), 16777218.0f, "1 + 1 + 2^24 keeps both ones");
}

Test(mxu_golden, negative_zero_products_become_positive_zero) {
  /* Every column starts at +0, so an all -0 product column gives +0. */
  uint16_t a[2] = {0x8000, 0x8000}, b[2] = {bf(1.0f), bf(2.0f)};
  uint32_t out;
  mxu_golden_gemm(2, 1, 2, 1, a, b, &out);
  cr_assert_eq(out, 0x00000000u);
}

Test(mxu_golden, matches_float64_within_rounding_bound) {
  rng_t rng;
  rng_seed(&rng, 7);
  const size_t m = 9, k = 77, n = 11;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4);
  for (size_t i = 0; i < m * k; i++) a[i] = rng_bf16(&rng, -3, 3);
  for (size_t i = 0; i < k * n; i++) b[i] = rng_bf16(&rng, -3, 3);
  mxu_golden_gemm(16, m, k, n, a, b, out);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      double exact = 0, mag = 0;
      for (size_t t = 0; t < k; t++) {
        double p = (double)f32((uint32_t)a[i * k + t] << 16) * f32((uint32_t)b[t * n + j] << 16);
        exact += p;
        mag += fabs(p);
      }
      /* Products are exact; each of the <= k + tiles additions rounds by <= 2^-24 relative. */
      double bound = (k + 8) * ldexp(1.0, -24) * mag * 1.01;
      cr_assert_leq(fabs((double)f32(out[i * n + j]) - exact), bound, "C[%zu][%zu]", i, j);
    }
  }
  free(a), free(b), free(out);
}

Test(mxu_golden, single_element_is_one_product) {
  uint16_t a = bf(3.0f), b = bf(-0.5f);
  uint32_t out;
  mxu_golden_gemm(8, 1, 1, 1, &a, &b, &out);
  cr_assert_eq(out, arith_golden_bf16_mul(a, b));
}

/* The host-FPU golden GEMM against the soft-float one, every bit (NaNs included: both make
 * them canonical), over the shapes and operand kinds the fast MXU is held to: every R built,
 * padded K tiles, products and sums on both sides of 2^-126. */
Test(mxu_golden, the_host_fpu_gemm_equals_the_soft_float_one_on_a_million_outputs, .timeout = 300) {
  rng_t r;
  rng_seed(&r, test_seed() * 6007 + 5);
  uint64_t outputs = 0, cases = 0;
  uint16_t *a = malloc(24 * 300 * 2), *b = malloc(300 * 300 * 2);
  uint32_t *got = malloc(24 * 300 * 4), *want = malloc(24 * 300 * 4);
  cr_assert(a && b && got && want);
  while (outputs < 1100000) {
    const gemm_case_t c = random_gemm_case(&r, a, b);
    const unsigned R = c.rows;
    const size_t m = c.m, k = c.k, n = c.n;
    mxu_golden_gemm(R, m, k, n, a, b, want);
    /* each row step the host FPU path has: AVX2's 8 lanes (the default here), SSE2's 4, scalar */
    static const char *const lanes[] = {"", "4", "1"};
    for (unsigned l = 0; l < 3; l++) {
      setenv("MXU_GOLDEN_FPU_LANES", lanes[l], 1);
      mxu_golden_fpu_gemm(R, m, k, n, a, b, got);
      for (size_t i = 0; i < m * n; i++)
        cr_assert_eq(got[i], want[i], "case %llu (R=%u, %zux%zux%zu, lanes '%s') output %zu: host FPU 0x%08x, soft "
                     "float 0x%08x", (unsigned long long)cases, R, m, k, n, lanes[l], i, got[i], want[i]);
    }
    unsetenv("MXU_GOLDEN_FPU_LANES");
    outputs += m * n;
    cases++;
  }
  free(a), free(b), free(got), free(want);
}

/* A column sum flushed to -0 (1.5 x 2^-126 - 2 x 2^-126 = -2^-127, below 2^-126) in a tile
 * with padded rows: each padded row adds +0 x +0 = +0, which makes it +0. The random sets
 * rarely reach this, so every kernel (8 lanes, 4, scalar) and width is held to it directly. */
Test(mxu_golden, a_padded_tile_turns_a_flushed_negative_zero_positive) {
  enum { K = 2, N = 19 };
  uint16_t a[K] = {0x3FC0, 0xC000}, b[K * N]; /* 1.5, -2; B's rows 2^-126 */
  for (unsigned i = 0; i < K * N; i++) b[i] = 0x0080;
  static const char *const lanes[] = {"", "4", "1"};
  for (unsigned R = 3; R <= 4; R++) {
    uint32_t want[N], got[N];
    mxu_golden_gemm(R, 1, K, N, a, b, want);
    cr_assert_eq(want[0], 0x00000000u, "the soft float: 0x%08x", want[0]);
    for (unsigned l = 0; l < 3; l++) {
      setenv("MXU_GOLDEN_FPU_LANES", lanes[l], 1);
      mxu_golden_fpu_gemm(R, 1, K, N, a, b, got);
      for (unsigned j = 0; j < N; j++) cr_expect_eq(got[j], want[j], "R=%u lanes '%s' column %u: 0x%08x", R, lanes[l], j, got[j]);
    }
  }
  unsetenv("MXU_GOLDEN_FPU_LANES");
}

/* K = 0 and the edge shapes: the sum of nothing is +0 on both paths. */
Test(mxu_golden, the_host_fpu_gemm_handles_empty_and_single_shapes) {
  const uint16_t a[4] = {0x3F80, 0x8000, 0x7F80, 0x0001}, b[4] = {0x0000, 0x8000, 0x4000, 0x7FC1};
  uint32_t got[4] = {1, 1, 1, 1}, want[4] = {2, 2, 2, 2};
  mxu_golden_fpu_gemm(4, 2, 0, 2, a, b, got);
  mxu_golden_gemm(4, 2, 0, 2, a, b, want);
  cr_assert_arr_eq(got, want, sizeof got);
  for (unsigned R = 1; R <= 4; R++) {
    mxu_golden_fpu_gemm(R, 2, 2, 2, a, b, got);
    mxu_golden_gemm(R, 2, 2, 2, a, b, want);
    cr_assert_arr_eq(got, want, sizeof got, "R=%u", R);
  }
}

/* A GEMM big enough to be split over threads (2^24 MACs and more) gives the soft-float bits. */
Test(mxu_golden, the_host_fpu_gemm_on_threads_equals_the_soft_float_one, .timeout = 120) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 3);
  const size_t m = 67, k = 520, n = 600; /* 20.9M MACs; rows split unevenly */
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *got = malloc(m * n * 4), *want = malloc(m * n * 4);
  cr_assert(a && b && got && want);
  for (size_t i = 0; i < m * k; i++) a[i] = operand(&r, SPARSE);
  for (size_t i = 0; i < k * n; i++) b[i] = operand(&r, (kind_t)(i % 3));
  mxu_golden_gemm(128, m, k, n, a, b, want);
  mxu_golden_fpu_gemm(128, m, k, n, a, b, got);
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(got[i], want[i], "output %zu: host FPU 0x%08x, soft float 0x%08x", i, got[i], want[i]);
  free(a), free(b), free(got), free(want);
}
