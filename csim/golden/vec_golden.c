/* vec_golden: see vec_golden.h. */
#include "golden/vec_golden.h"

#include <stddef.h>

#include "golden/arith_golden.h"
#include "golden/arith_golden_fpu.h"

/* The fp32 add and multiply the operations are written against: the host FPU's
 * (arith_golden_fpu, the default) or the soft float's (arith_golden, the reference of
 * references). One composition for both, so they differ in nothing but those two operations,
 * which tests/test_vec_golden.c holds equal bit for bit. */
typedef struct {
  uint32_t (*add)(uint32_t a, uint32_t b);
  uint32_t (*mul)(uint32_t a, uint32_t b);
} fp32_arith_t;
static const fp32_arith_t host_fpu = {arith_golden_fpu_fp32_add, arith_golden_fpu_fp32_mul};
static const fp32_arith_t soft_float = {arith_golden_fp32_add, arith_golden_fp32_mul};

/* a > +0: positive, not zero, not subnormal (read as zero), not NaN (docs/numerics.md). */
static bool positive(uint32_t a) {
  const uint32_t exp = a >> 23 & 0xFF, man = a & 0x7FFFFF;
  return !(a >> 31) && exp != 0 && !(exp == 0xFF && man != 0);
}

/* e^x and 1/x as docs/numerics.md defines them: fp32 adds and multiplies (RNE, flushing)
 * in a fixed order, then an exact scaling by a power of two. */
enum {
  F_ONE = 0x3F800000u, F_INF = 0x7F800000u, F_NAN = 0x7FC00000u, F_SIGN = 0x80000000u,
  EXP_LOG2E = 0x3FB8AA3Bu,     /* log2(e) */
  EXP_ROUNDER = 0x4B400000u,   /* 1.5 * 2^23: adding it rounds to an integer, kept in the low bits */
  EXP_LN2_HI = 0x3F317200u,    /* ln 2 = LN2_HI + LN2_LO (Cody and Waite) */
  EXP_LN2_LO = 0x35BFBE8Eu,
  RECIP_A = 0x3FB4B4B5u,       /* 24/17 */
  RECIP_B = 0xBEF0F0F1u,       /* -8/17: y0 = 24/17 - 8/17 m, within 1/17 of 1/m on [1, 2] */
};
static const uint32_t exp_coef[8] = {0x3F800000u, 0x3F800000u, 0x3F000000u, 0x3E2AAAABu,  /* 1/i!, i = 0..7 */
                                     0x3D2AAAABu, 0x3C088889u, 0x3AB60B61u, 0x39500D01u};

static uint32_t golden_exp(const fp32_arith_t *ar, uint32_t x) {
  const uint32_t e = x >> 23 & 0xFF;
  if (e == 0xFF && (x & 0x7FFFFF)) return F_NAN;
  if (e >= 127 + 7) return x & F_SIGN ? 0 : F_INF;  /* |x| >= 128, infinities too */
  const uint32_t t = ar->add(ar->mul(x, EXP_LOG2E), EXP_ROUNDER);
  const int k = (int)(t & 0x7FFFFF) - 0x400000;  /* round(x log2 e) */
  const uint32_t kf = ar->add(t, EXP_ROUNDER | F_SIGN);
  const uint32_t r = ar->add(ar->add(x, ar->mul(kf, EXP_LN2_HI | F_SIGN)), ar->mul(kf, EXP_LN2_LO | F_SIGN));
  uint32_t p = exp_coef[7];
  for (int i = 6; i >= 0; i--) p = ar->add(ar->mul(p, r), exp_coef[i]);
  const int biased = (int)(p >> 23 & 0xFF) + k;
  if (biased >= 255) return F_INF;
  if (biased <= 0) return 0;
  return (p & 0x7FFFFF) | (uint32_t)biased << 23;
}

static uint32_t golden_recip(const fp32_arith_t *ar, uint32_t x) {
  const uint32_t sign = x & F_SIGN, e = x >> 23 & 0xFF, man = x & 0x7FFFFF;
  if (e == 0xFF) return man ? F_NAN : sign;  /* 1/NaN, 1/Inf = 0 */
  if (e == 0) return sign | F_INF;           /* zero and subnormals (read as zero) */
  const uint32_t m = F_ONE | man;            /* the significand, in [1, 2) */
  uint32_t y = ar->add(RECIP_A, ar->mul(RECIP_B, m));
  for (int i = 0; i < 3; i++) {
    const uint32_t err = ar->add(F_ONE, ar->mul(m, y) ^ F_SIGN);
    y = ar->add(y, ar->mul(y, err));
  }
  const int biased = (int)(y >> 23 & 0xFF) - ((int)e - 127);
  if (biased <= 0) return sign;  /* below 2^-126: flushed */
  return sign | (uint32_t)biased << 23 | (y & 0x7FFFFF);
}

/* 1/sqrt(x) and erf(x) as docs/numerics.md defines them ("Reciprocal square root", "Error
 * function"). */
enum {
  F_HALF = 0x3F000000u,
  RSQRT_MAGIC = 0x5F3759DFu,   /* y0 = MAGIC - (x >> 1) as integers: within 3.5% of 1/sqrt(x) */
  ERF_TINY = 0x35800000u,      /* 2^-20: below it erf(x) = x + x q0(0) to within 2^-41 */
  ERF_UP = 0x4B800000u, ERF_DOWN = 0x33800000u,  /* 2^24, 2^-24: x scaled up so x q0(0) stays normal */
  ERF_TWO = 0x40000000u, ERF_FOUR = 0x40800000u,
  ERF_C1 = 0x3FC00000u, ERF_C2 = 0x40400000u,  /* the centres of [1, 2) and [2, 4): 1.5, 3 */
};
/* erf(x) = x + x q0(x^2) on [2^-20, 1); erfc(c + t) = q(t) on [1, 2) (c 1.5) and [2, 4) (c 3) */
static const uint32_t erf_q0[7] = {0x3E0375D4u, 0xBEC0939Fu, 0x3DE7168Cu, 0xBCDBFD9Cu,
                                   0x3BAA0B1Bu, 0xBA5235A0u, 0x38A54ED6u};
static const uint32_t erf_q[2][11] = {
    {0x3D0AD554u, 0xBDF391B9u, 0x3E36AD4Bu, 0xBE0E150Fu, 0x3D36AD68u, 0x3C73A4D6u, 0xBC9E55D4u, 0x3B9A0C38u,
     0x3B1BCC06u, 0xBAC9E7A2u, 0x382578B8u},
    {0x37B9509Du, 0xB911E8A9u, 0x39DAFF28u, 0xBA4F6791u, 0x3A88FAEAu, 0xBA83B224u, 0x3A40AD10u, 0xB9DB1B24u,
     0x3913FA4Fu, 0x376D303Au, 0xB7B98885u}};

static uint32_t golden_rsqrt(const fp32_arith_t *ar, uint32_t x) {
  const uint32_t sign = x & F_SIGN, e = x >> 23 & 0xFF, man = x & 0x7FFFFF;
  if (e == 0xFF && man) return F_NAN;
  if (e == 0) return sign | F_INF;  /* 1/sqrt(+-0) = +-Inf (IEEE 754's rSqrt); subnormals read as zero */
  if (sign) return F_NAN;           /* negative, -Inf included */
  if (e == 0xFF) return 0;          /* 1/sqrt(+Inf) */
  uint32_t y = RSQRT_MAGIC - (x >> 1);
  for (int i = 0; i < 3; i++) {  /* y += y (1 - x y^2) / 2 */
    const uint32_t r = ar->add(F_ONE, ar->mul(ar->mul(x, y), y) ^ F_SIGN);
    y = ar->add(y, ar->mul(y, ar->mul(r, F_HALF)));
  }
  return y;
}

static uint32_t horner(const fp32_arith_t *ar, const uint32_t *c, int n, uint32_t t) {
  uint32_t p = c[n - 1];
  for (int i = n - 2; i >= 0; i--) p = ar->add(ar->mul(p, t), c[i]);
  return p;
}

static uint32_t golden_erf(const fp32_arith_t *ar, uint32_t x) {
  const uint32_t sign = x & F_SIGN, a = x & ~F_SIGN;
  if (a > F_INF) return F_NAN;
  if ((a >> 23) == 0) return sign;         /* +-0, subnormals (read as zero) */
  if (a >= ERF_FOUR) return sign | F_ONE;  /* 1 - erf(4) < 2^-25; Inf too */
  uint32_t r;
  if (a < ERF_TINY) {
    const uint32_t s = ar->mul(a, ERF_UP);  /* exact, and so is the scaling back (the result is normal) */
    r = ar->mul(ar->add(s, ar->mul(s, erf_q0[0])), ERF_DOWN);
  } else if (a < F_ONE) {
    r = ar->add(a, ar->mul(a, horner(ar, erf_q0, 7, ar->mul(a, a))));
  } else {
    const int hi = a >= ERF_TWO;
    const uint32_t t = ar->add(a, (hi ? ERF_C2 : ERF_C1) | F_SIGN);  /* exact (Sterbenz) */
    r = ar->add(F_ONE, horner(ar, erf_q[hi], 11, t) ^ F_SIGN);
    if (r > F_ONE) r = F_ONE;                                         /* at most 1 */
  }
  return sign | r;
}

static uint32_t lane_op(const fp32_arith_t *ar, isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar) {
  switch (op) {
    case ISA_VEC_ADD: return ar->add(a, b);
    case ISA_VEC_SUB: return ar->add(a, b ^ 0x80000000u);
    case ISA_VEC_MUL: return ar->mul(a, b);
    case ISA_VEC_MAX: return arith_golden_fp32_max(a, b);
    case ISA_VEC_RELU: return arith_golden_fp32_max(a, 0);
    case ISA_VEC_SCALE: return ar->mul(a, scalar);
    case ISA_VEC_COPY: return a;
    case ISA_VEC_RELU_GRAD: return positive(a) ? b : 0;
    case ISA_VEC_AXPY: return ar->add(a, ar->mul(scalar, b));
    case ISA_VEC_EXP: return golden_exp(ar, a);
    case ISA_VEC_RECIP: return golden_recip(ar, a);
    case ISA_VEC_RSQRT: return golden_rsqrt(ar, a);
    case ISA_VEC_ERF: return golden_erf(ar, a);
    default: return 0;  /* the conversions and reductions are not lane-wise: vec_golden_line(s) */
  }
}

static void line_op(const fp32_arith_t *ar, isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b,
                    uint32_t scalar, uint32_t *out) {
  if (op == ISA_VEC_SUM_LANES || op == ISA_VEC_MAX_LANES) {
    /* the pairwise tree of docs/numerics.md, in place over a copy */
    uint32_t t[VEC_GOLDEN_MAX_LANES];
    for (unsigned l = 0; l < lanes; l++) t[l] = a[l];
    for (unsigned step = 1; step < lanes; step *= 2)
      for (unsigned i = 0; i + step < lanes; i += 2 * step)
        t[i] = op == ISA_VEC_SUM_LANES ? ar->add(t[i], t[i + step]) : arith_golden_fp32_max(t[i], t[i + step]);
    for (unsigned l = 0; l < lanes; l++) out[l] = t[0];
    return;
  }
  for (unsigned l = 0; l < lanes; l++) {
    if (op == ISA_VEC_TO_BF16)
      out[l] = l < lanes / 2 ? (uint32_t)arith_golden_fp32_to_bf16(a[2 * l]) |
                                   (uint32_t)arith_golden_fp32_to_bf16(a[2 * l + 1]) << 16
                             : 0;
    else if (op == ISA_VEC_TO_FP32)
      out[l] = arith_golden_bf16_to_fp32((uint16_t)(a[l / 2] >> (16 * (l % 2))));
    else
      out[l] = lane_op(ar, op, a[l], b[l], scalar);
  }
}

/* b_stride: lanes (b's lines follow a's), or 0 (b_repeat: one line of b for every row) */
static unsigned lines_op(const fp32_arith_t *ar, isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a,
                         const uint32_t *b, size_t b_stride, uint32_t scalar, uint32_t *out) {
  if (op == ISA_VEC_SUM_LINES || op == ISA_VEC_MAX_LINES) {
    for (unsigned l = 0; l < lanes; l++) {
      uint32_t acc = a[l];  /* the first line as it is, then each next one in line order */
      for (unsigned r = 1; r < rows; r++)
        acc = op == ISA_VEC_SUM_LINES ? ar->add(acc, a[(size_t)r * lanes + l])
                                      : arith_golden_fp32_max(acc, a[(size_t)r * lanes + l]);
      out[l] = acc;
    }
    return 1;
  }
  for (unsigned r = 0; r < rows; r++)
    line_op(ar, op, lanes, a + (size_t)r * lanes, b ? b + r * b_stride : a, scalar, out + (size_t)r * lanes);
  return rows;
}

uint32_t vec_golden_lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar) {
  return lane_op(&host_fpu, op, a, b, scalar);
}
void vec_golden_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                     uint32_t *out) {
  line_op(&host_fpu, op, lanes, a, b, scalar, out);
}
unsigned vec_golden_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                          uint32_t scalar, uint32_t *out) {
  return lines_op(&host_fpu, op, lanes, rows, a, b, lanes, scalar, out);
}
unsigned vec_golden_lines_repeat_b(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a,
                                   const uint32_t *b_line, uint32_t scalar, uint32_t *out) {
  return lines_op(&host_fpu, op, lanes, rows, a, b_line, 0, scalar, out);
}

unsigned vec_golden_exact_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                                uint32_t scalar, uint32_t *out) {
  return lines_op(&soft_float, op, lanes, rows, a, b, lanes, scalar, out);
}
