/* rows_golden: see rows_golden.h and docs/models.md ("Row kernels"). */
#include "golden/rows_golden.h"

#include <stdlib.h>
#include <string.h>

#include "golden/vec_golden.h"

enum { MAXL = VEC_GOLDEN_MAX_LANES };

static const uint32_t ONE = 0x3F800000u, NEG_INF = 0xFF800000u, HALF = 0x3F000000u;
static const uint32_t RSQRT2 = 0x3F3504F3u, TWO_SQRT_2_PI = 0x3FCC422Au, GELU_C = 0x3D372713u;

/* A row's working lines: nb lines of `lanes` fp32 lanes. */
typedef struct {
  unsigned lanes, nb;
  uint32_t k;
} shape_t;

static int shape_of(unsigned lanes, uint32_t m, uint32_t k, shape_t *s) {
  if (!lanes || lanes % 2 || lanes > MAXL || !m || !k) return -1;
  const uint32_t kp = (k + 1) & ~1u;
  s->lanes = lanes, s->k = k, s->nb = (kp + lanes - 1) / lanes;
  return 0;
}

static uint32_t *lines_new(const shape_t *s) { return calloc((size_t)s->nb * s->lanes, 4); }

/* Row `row` of a matrix into lines: bf16 packed into the low half of each line as the DMA puts
 * it (channel 2l in the low 16 bits of word l), then TO_FP32. */
static void load_row(const shape_t *s, const uint16_t *mat, uint32_t row, uint32_t *x) {
  uint32_t packed[MAXL];
  for (unsigned b = 0; b < s->nb; b++) {
    memset(packed, 0, sizeof packed);
    for (unsigned l = 0; l < s->lanes; l++) {
      const uint64_t j = (uint64_t)b * s->lanes + l;
      if (j < s->k) packed[l / 2] |= (uint32_t)mat[(uint64_t)row * s->k + j] << (16 * (l % 2));
    }
    vec_golden_line(ISA_VEC_TO_FP32, s->lanes, packed, packed, 0, x + (size_t)b * s->lanes);
  }
}

/* TO_BF16 of each line, then the row's first k bf16 values out. */
static void store_row(const shape_t *s, const uint32_t *x, uint16_t *mat, uint32_t row) {
  uint32_t packed[MAXL];
  for (unsigned b = 0; b < s->nb; b++) {
    vec_golden_line(ISA_VEC_TO_BF16, s->lanes, x + (size_t)b * s->lanes, x + (size_t)b * s->lanes, 0, packed);
    for (unsigned l = 0; l < s->lanes; l++) {
      const uint64_t j = (uint64_t)b * s->lanes + l;
      if (j < s->k) mat[(uint64_t)row * s->k + j] = (uint16_t)(packed[l / 2] >> (16 * (l % 2)));
    }
  }
}

/* op(a, b) lane by lane over one line (b a line, or a constant line). */
static void line2(isa_vec_op_t op, const shape_t *s, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                  uint32_t *out) {
  vec_golden_line(op, s->lanes, a, b, scalar, out);
}

/* op over every line of the row. */
static void each(isa_vec_op_t op, const shape_t *s, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                 uint32_t *out) {
  for (unsigned i = 0; i < s->nb; i++)
    line2(op, s, a + (size_t)i * s->lanes, b ? b + (size_t)i * s->lanes : a + (size_t)i * s->lanes, scalar,
          out + (size_t)i * s->lanes);
}

/* The row reduction: fold the lines in line order with `fold`, then `across` the lanes. */
static void reduce(const shape_t *s, isa_vec_op_t fold, isa_vec_op_t across, const uint32_t *x, uint32_t *out) {
  uint32_t acc[MAXL];
  memcpy(acc, x, 4 * s->lanes);
  for (unsigned b = 1; b < s->nb; b++) line2(fold, s, acc, x + (size_t)b * s->lanes, 0, acc);
  line2(across, s, acc, acc, 0, out);
}

/* A line of `v` in the lanes of the last block below K and `pad` past it. */
static void mask_line(const shape_t *s, uint32_t v, uint32_t pad, uint32_t *line) {
  const uint32_t tail = s->k - (s->nb - 1) * s->lanes; /* the last block's lanes below K */
  for (unsigned l = 0; l < s->lanes; l++) line[l] = l < tail ? v : pad;
}

static void fill(const shape_t *s, uint32_t v, uint32_t *line) {
  for (unsigned l = 0; l < s->lanes; l++) line[l] = v;
}

int rows_golden_softmax(unsigned lanes, uint32_t m, uint32_t k, uint32_t scale, const uint16_t *in, uint16_t *out) {
  shape_t s;
  if (shape_of(lanes, m, k, &s)) return -1;
  uint32_t *x = lines_new(&s), mask[MAXL], mx[MAXL], sum[MAXL];
  if (!x) return -1;
  mask_line(&s, 0, NEG_INF, mask);
  uint32_t *last = x + (size_t)(s.nb - 1) * lanes;
  for (uint32_t r = 0; r < m; r++) {
    load_row(&s, in, r, x);
    if (scale != ONE) each(ISA_VEC_SCALE, &s, x, NULL, scale, x);
    if (k % lanes) line2(ISA_VEC_ADD, &s, last, mask, 0, last);
    reduce(&s, ISA_VEC_MAX, ISA_VEC_MAX_LANES, x, mx);
    for (unsigned b = 0; b < s.nb; b++) line2(ISA_VEC_SUB, &s, x + (size_t)b * lanes, mx, 0, x + (size_t)b * lanes);
    each(ISA_VEC_EXP, &s, x, NULL, 0, x);
    reduce(&s, ISA_VEC_ADD, ISA_VEC_SUM_LANES, x, sum);
    line2(ISA_VEC_RECIP, &s, sum, sum, 0, sum);
    for (unsigned b = 0; b < s.nb; b++) line2(ISA_VEC_MUL, &s, x + (size_t)b * lanes, sum, 0, x + (size_t)b * lanes);
    store_row(&s, x, out, r);
  }
  free(x);
  return 0;
}

/* fp32(1 / k) for a count k, by long division: k is an integer below 2^32, so the quotient's
 * rounding is decided on integers (round to nearest, ties to even). */
static uint32_t recip_count(uint32_t k) {
  unsigned e = 0; /* 2^e <= k < 2^(e+1) */
  while (e < 31 && (k >> (e + 1))) e++;
  if (!(k & (k - 1))) return (uint32_t)(127 - e) << 23;
  const uint64_t num = 1ull << (24 + e);
  uint64_t q = num / k; /* in [2^23, 2^24) */
  const uint64_t rem = num % k;
  if (2 * rem > k || (2 * rem == k && (q & 1))) q++;
  int ex = -(int)e - 1;
  if (q == 1ull << 24) q >>= 1, ex++;
  return (uint32_t)(127 + ex) << 23 | (uint32_t)(q & 0x7FFFFF);
}

int rows_golden_layernorm(unsigned lanes, uint32_t m, uint32_t k, const uint16_t *in, const uint16_t *res,
                          const uint32_t *gamma, const uint32_t *beta, uint32_t epsilon, uint16_t *out) {
  shape_t s;
  if (shape_of(lanes, m, k, &s)) return -1;
  uint32_t *x = lines_new(&s), *y = lines_new(&s), *g = lines_new(&s), *bt = lines_new(&s), *sq = lines_new(&s);
  uint32_t mask[MAXL], ones[MAXL], mean[MAXL], var[MAXL];
  int rc = -1;
  if (!x || !y || !g || !bt || !sq) goto done;
  memcpy(g, gamma, 4ull * k); /* zero past K, as the host pads them */
  memcpy(bt, beta, 4ull * k);
  mask_line(&s, ONE, 0, mask);
  fill(&s, ONE, ones);
  const uint32_t inv_k = recip_count(k);
  uint32_t *last = x + (size_t)(s.nb - 1) * lanes;
  for (uint32_t r = 0; r < m; r++) {
    load_row(&s, in, r, x);
    if (res) {
      load_row(&s, res, r, y);
      each(ISA_VEC_ADD, &s, x, y, 0, x);
    }
    reduce(&s, ISA_VEC_ADD, ISA_VEC_SUM_LANES, x, mean);
    line2(ISA_VEC_SCALE, &s, mean, mean, inv_k, mean);
    for (unsigned b = 0; b < s.nb; b++) line2(ISA_VEC_SUB, &s, x + (size_t)b * lanes, mean, 0, x + (size_t)b * lanes);
    if (k % lanes) line2(ISA_VEC_MUL, &s, last, mask, 0, last);
    each(ISA_VEC_MUL, &s, x, x, 0, sq);
    reduce(&s, ISA_VEC_ADD, ISA_VEC_SUM_LANES, sq, var);
    line2(ISA_VEC_SCALE, &s, var, var, inv_k, var);
    line2(ISA_VEC_AXPY, &s, var, ones, epsilon, var);
    line2(ISA_VEC_RSQRT, &s, var, var, 0, var);
    for (unsigned b = 0; b < s.nb; b++) {
      uint32_t *xb = x + (size_t)b * lanes;
      line2(ISA_VEC_MUL, &s, xb, var, 0, xb);
      line2(ISA_VEC_MUL, &s, xb, g + (size_t)b * lanes, 0, xb);
    }
    each(ISA_VEC_ADD, &s, x, bt, 0, x);
    store_row(&s, x, out, r);
  }
  rc = 0;
done:
  free(x), free(y), free(g), free(bt), free(sq);
  return rc;
}

/* fp32(1 / c) rounded to nearest even, exactly: the double quotient rounded once more is the
 * correctly rounded fp32 quotient (53 >= 2 x 24 + 2 bits). */
static uint32_t recip_const(uint32_t c) {
  float f, q;
  memcpy(&f, &c, 4);
  q = (float)(1.0 / (double)f);
  uint32_t u;
  memcpy(&u, &q, 4);
  return u;
}

int rows_golden_map(rows_golden_map_t op, unsigned lanes, uint32_t m, uint32_t k, const uint16_t *in,
                    const uint16_t *b, const uint32_t *row, uint32_t c, uint16_t *out) {
  shape_t s;
  if (shape_of(lanes, m, k, &s) || op > ROWS_GOLDEN_RELU) return -1;
  if ((op == ROWS_GOLDEN_ADD && !b) || (op == ROWS_GOLDEN_ADD_ROW && !row)) return -1;
  uint32_t *x = lines_new(&s), *t = lines_new(&s), *v = lines_new(&s), ones[MAXL];
  int rc = -1;
  if (!x || !t || !v) goto done;
  fill(&s, ONE, ones);
  if (row) memcpy(v, row, 4ull * k);
  const uint32_t inv = op == ROWS_GOLDEN_DIV ? recip_const(c) : c;
  for (uint32_t r = 0; r < m; r++) {
    load_row(&s, in, r, x);
    for (unsigned i = 0; i < s.nb; i++) {
      uint32_t *xl = x + (size_t)i * lanes, *tl = t + (size_t)i * lanes;
      switch (op) {
      case ROWS_GOLDEN_GELU_ERF: /* (0.5 x) (1 + erf(x fp32(1/sqrt 2))) */
        line2(ISA_VEC_SCALE, &s, xl, xl, RSQRT2, tl);
        line2(ISA_VEC_ERF, &s, tl, tl, 0, tl);
        line2(ISA_VEC_ADD, &s, tl, ones, 0, tl);
        line2(ISA_VEC_SCALE, &s, xl, xl, HALF, xl);
        line2(ISA_VEC_MUL, &s, xl, tl, 0, xl);
        break;
      case ROWS_GOLDEN_GELU_TANH: /* x - x / (e^(2u) + 1), u = sqrt(2/pi) (x + 0.044715 x^3) */
        line2(ISA_VEC_MUL, &s, xl, xl, 0, tl);
        line2(ISA_VEC_MUL, &s, tl, xl, 0, tl);
        line2(ISA_VEC_AXPY, &s, xl, tl, GELU_C, tl);
        line2(ISA_VEC_SCALE, &s, tl, tl, TWO_SQRT_2_PI, tl);
        line2(ISA_VEC_EXP, &s, tl, tl, 0, tl);
        line2(ISA_VEC_ADD, &s, tl, ones, 0, tl);
        line2(ISA_VEC_RECIP, &s, tl, tl, 0, tl);
        line2(ISA_VEC_MUL, &s, xl, tl, 0, tl);
        line2(ISA_VEC_SUB, &s, xl, tl, 0, xl);
        break;
      case ROWS_GOLDEN_ADD: break; /* below, on the whole row */
      case ROWS_GOLDEN_ADD_ROW: line2(ISA_VEC_ADD, &s, xl, v + (size_t)i * lanes, 0, xl); break;
      case ROWS_GOLDEN_MUL:
      case ROWS_GOLDEN_DIV: line2(ISA_VEC_SCALE, &s, xl, xl, inv, xl); break;
      case ROWS_GOLDEN_RELU: line2(ISA_VEC_RELU, &s, xl, xl, 0, xl); break;
      }
    }
    if (op == ROWS_GOLDEN_ADD) {
      load_row(&s, b, r, t);
      each(ISA_VEC_ADD, &s, x, t, 0, x);
    }
    store_row(&s, x, out, r);
  }
  rc = 0;
done:
  free(x), free(t), free(v);
  return rc;
}
