/*
 * bf16_operands: bf16 (and fp32) operands drawn to hit every special case of docs/numerics.md
 * (signed zeros, subnormals read as zero, Inf, NaNs of every kind, products that overflow or
 * underflow, sums that cancel), shared by the suites that hold one arithmetic to another
 * (test_mxu_fast, test_vec_fast: the fast models; test_mxu_golden, test_vec_golden: the
 * host-FPU golden paths).
 */
#ifndef BF16_OPERANDS_H
#define BF16_OPERANDS_H

#include <stdint.h>

#include "util/rng.h"

/* How a matrix's operands are drawn:
 *   MIXED  -- a quarter special values, the rest normal numbers over the whole exponent range
 *             (so products overflow and underflow) or a narrow one (so sums cancel and round);
 *   SPARSE -- one in a hundred special, one in twenty-five over the whole range, the rest
 *             narrow: long sums mostly survive to the end, with the odd NaN or Inf in them;
 *   NARROW -- no specials, exponents near 1: every sum runs to the end, rounding at each add;
 *   TINY   -- every operand near 2^-63, so products and sums land on both sides of the
 *             smallest normal, 2^-126, and results must flush to zero. */
typedef enum { MIXED, SPARSE, NARROW, TINY, KINDS } kind_t;

static inline uint16_t operand(rng_t *r, kind_t kind) {
  if (kind == TINY) return (uint16_t)(rng_below(r, 2) << 15 | (60 + rng_below(r, 8)) << 7 | rng_below(r, 128));
  static const uint16_t specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x7FA5,
                                      0x0001, 0x807F, 0x0040, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80};
  const uint64_t pick = rng_below(r, 1000);
  const uint64_t special = kind == MIXED ? 250 : kind == SPARSE ? 10 : 0, wide = kind == MIXED ? 600 : 50;
  if (pick < special) return specials[rng_below(r, sizeof specials / sizeof specials[0])];
  const uint16_t sign = (uint16_t)(rng_below(r, 2) << 15), frac = (uint16_t)rng_below(r, 128);
  const unsigned exp = pick < wide && kind != NARROW ? 1 + (unsigned)rng_below(r, 254) : 120 + (unsigned)rng_below(r, 16);
  return (uint16_t)(sign | exp << 7 | frac);
}

/* An fp32 lane value: a fifth special (signed zeros, Inf, NaNs of both signs and several
 * payloads, subnormals, the extremes, EXP's range limits, ERF's piece edges), the rest normal numbers anywhere,
 * near 1 (sums that cancel), near the smallest normal, near EXP's range limit 128, or near the
 * top (RECIP flushing, products overflowing). */
static inline uint32_t fp32_operand(rng_t *r) {
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                      0x7F800001u, 0xFFFFFFFFu, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u,
                                      0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x43000000u, 0xC3000000u,
                                      0x42FFFFFFu, 0xC2FFFFFFu, 0x7E800000u, 0x7F000000u, 0x00400000u, 0x3F7FFFFFu,
                                      /* ERF's piece edges (2^-20, 1, 2, 4) from both sides, RSQRT's 4 */
                                      0x35800000u, 0xB57FFFFFu, 0x3FFFFFFFu, 0xC0000000u, 0x407FFFFFu, 0xC0800000u,
                                      0x40800000u};
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

/* A random GEMM case for the million-output tests, drawn in this order: R of the built MXUs;
 * M x K and K x N, mostly small, one case in 16 wide and tall enough for several row blocks
 * and column bands, K padded to tiles; one case in 5 TINY throughout, else each matrix of a
 * kind of its own. a holds up to 24 x 300, b up to 300 x 300 operands. */
typedef struct {
  unsigned rows;
  size_t m, k, n;
} gemm_case_t;

static inline gemm_case_t random_gemm_case(rng_t *r, uint16_t *a, uint16_t *b) {
  static const unsigned rows[] = {4, 8, 16, 32, 128};
  gemm_case_t c;
  c.rows = rows[rng_below(r, 5)];
  const int big = rng_below(r, 16) == 0;
  c.m = 1 + rng_below(r, big ? 24 : 8);
  c.k = 1 + rng_below(r, c.rows == 128 ? 300 : 3 * c.rows);
  c.n = 1 + rng_below(r, big ? 300 : 32);
  const int tiny = rng_below(r, 5) == 0;
  const kind_t ka = tiny ? TINY : (kind_t)rng_below(r, 3);
  const kind_t kb = tiny ? TINY : (kind_t)rng_below(r, 3);
  for (size_t i = 0; i < c.m * c.k; i++) a[i] = operand(r, ka);
  for (size_t i = 0; i < c.k * c.n; i++) b[i] = operand(r, kb);
  return c;
}

#endif
