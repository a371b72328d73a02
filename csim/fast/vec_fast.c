/* vec_fast: see vec_fast.h. */
#include "fast/vec_fast.h"

#include <stdbool.h>
#include <string.h>
#include <xmmintrin.h>

#include "util/bits.h"

#define MXCSR_DAZ 0x0040u
#define MXCSR_FTZ 0x8000u
#define MXCSR_RC 0x6000u
#define NAN32 0x7FC00000u
#define NAN16 0x7FC0u

static bool is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
/* a subnormal reads as the zero of its sign */
static uint32_t daz(uint32_t u) { return (u & 0x7F800000u) ? u : u & 0x80000000u; }
static uint32_t canon(uint32_t u) { return is_nan(u) ? NAN32 : u; }

/* The host's add and multiply under FTZ/DAZ are the spec's; any NaN becomes canonical. */
static uint32_t add(uint32_t a, uint32_t b) { return canon(bits_of_float(bits_to_float(a) + bits_to_float(b))); }
static uint32_t mul(uint32_t a, uint32_t b) { return canon(bits_of_float(bits_to_float(a) * bits_to_float(b))); }

static uint32_t max(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return NAN32;
  a = daz(a), b = daz(b);
  if ((a & 0x7FFFFFFFu) == 0 && (b & 0x7FFFFFFFu) == 0) return a & b; /* -0 only when both are */
  return bits_to_float(a) >= bits_to_float(b) ? a : b;
}

static uint16_t to_bf16(uint32_t u) {
  if (is_nan(u)) return NAN16;
  u = daz(u);
  const uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u); /* RNE; a carry may reach Inf */
  return (uint16_t)(rounded >> 16);
}

static uint32_t from_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  return is_nan(u) ? NAN32 : daz(u);
}

static uint32_t vexp(uint32_t x) {
  if (is_nan(x)) return NAN32;
  if (((x >> 23) & 0xFFu) >= 134) return (x >> 31) ? 0 : 0x7F800000u;
  const uint32_t t = add(mul(x, 0x3FB8AA3Bu), 0x4B400000u);
  const int32_t k = (int32_t)(t & 0x7FFFFFu) - (1 << 22);
  const uint32_t kf = add(t, 0xCB400000u); /* t - 1.5 * 2^23 */
  const uint32_t r = add(add(x, mul(kf, 0x3F317200u) ^ 0x80000000u), mul(kf, 0x35BFBE8Eu) ^ 0x80000000u);
  static const uint32_t c[8] = {0x3F800000u, 0x3F800000u, 0x3F000000u, 0x3E2AAAABu,
                                0x3D2AAAABu, 0x3C088889u, 0x3AB60B61u, 0x39500D01u};
  uint32_t p = c[7];
  for (int i = 6; i >= 0; i--) p = add(mul(p, r), c[i]);
  const int32_t e = (int32_t)((p >> 23) & 0xFFu) + k;
  if (e >= 255) return 0x7F800000u;
  if (e <= 0) return 0;
  return (p & 0x807FFFFFu) | (uint32_t)e << 23;
}

static uint32_t vrecip(uint32_t x) {
  if (is_nan(x)) return NAN32;
  const uint32_t sign = x & 0x80000000u, ex = (x >> 23) & 0xFFu;
  if (ex == 0xFF) return sign;                /* 1/Inf */
  if (ex == 0) return sign | 0x7F800000u;     /* 1/0, subnormals read as zero */
  const uint32_t m = (x & 0x7FFFFFu) | 0x3F800000u;
  uint32_t y = add(0x3FB4B4B5u, mul(0xBEF0F0F1u, m));
  for (int i = 0; i < 3; i++) {
    const uint32_t e = add(0x3F800000u, mul(m, y) ^ 0x80000000u);
    y = add(y, mul(y, e));
  }
  const int32_t ey = (int32_t)((y >> 23) & 0xFFu) - ((int32_t)ex - 127);
  if (ey <= 0) return sign;
  return sign | (y & 0x7FFFFFu) | (uint32_t)ey << 23;
}

/* 1/sqrt(x): the integer estimate 0x5F3759DF - (x >> 1), then three steps y += y (1 - x y^2) / 2 */
static uint32_t vrsqrt(uint32_t x) {
  if (is_nan(x)) return NAN32;
  if (!(x & 0x7F800000u)) return (x & 0x80000000u) | 0x7F800000u; /* +-0 and subnormals: +-Inf */
  if (x >> 31) return NAN32;
  if (x == 0x7F800000u) return 0;
  uint32_t y = 0x5F3759DFu - (x >> 1);
  for (int i = 0; i < 3; i++) {
    const uint32_t r = add(0x3F800000u, mul(mul(x, y), y) ^ 0x80000000u);
    y = add(y, mul(y, mul(r, 0x3F000000u)));
  }
  return y;
}

/* erf(x) on |x| with x's sign: x + x q0(x^2) below 1 (x scaled by 2^24 below 2^-20), 1 - q(|x| - c)
 * on [1, 2) (c = 1.5) and [2, 4) (c = 3), 1 from 4 */
static uint32_t verf(uint32_t x) {
  static const uint32_t q0[7] = {0x3E0375D4u, 0xBEC0939Fu, 0x3DE7168Cu, 0xBCDBFD9Cu, 0x3BAA0B1Bu, 0xBA5235A0u,
                                 0x38A54ED6u};
  static const uint32_t q[2][11] = {{0x3D0AD554u, 0xBDF391B9u, 0x3E36AD4Bu, 0xBE0E150Fu, 0x3D36AD68u, 0x3C73A4D6u,
                                     0xBC9E55D4u, 0x3B9A0C38u, 0x3B1BCC06u, 0xBAC9E7A2u, 0x382578B8u},
                                    {0x37B9509Du, 0xB911E8A9u, 0x39DAFF28u, 0xBA4F6791u, 0x3A88FAEAu, 0xBA83B224u,
                                     0x3A40AD10u, 0xB9DB1B24u, 0x3913FA4Fu, 0x376D303Au, 0xB7B98885u}};
  if (is_nan(x)) return NAN32;
  const uint32_t s = x & 0x80000000u, a = x & 0x7FFFFFFFu;
  if (a < 0x00800000u) return s;
  if (a >= 0x40800000u) return s | 0x3F800000u;
  if (a < 0x35800000u) { /* below 2^-20: x + x q0(0), on x scaled by 2^24 and back */
    const uint32_t u = mul(a, 0x4B800000u);
    return s | mul(add(u, mul(u, q0[0])), 0x33800000u);
  }
  if (a < 0x3F800000u) {
    const uint32_t z = mul(a, a);
    uint32_t p = q0[6];
    for (int i = 5; i >= 0; i--) p = add(mul(p, z), q0[i]);
    return s | add(a, mul(a, p));
  }
  const unsigned hi = a >= 0x40000000u;
  const uint32_t t = add(a, hi ? 0xC0400000u : 0xBFC00000u);
  uint32_t p = q[hi][10];
  for (int i = 9; i >= 0; i--) p = add(mul(p, t), q[hi][i]);
  const uint32_t r = add(0x3F800000u, p ^ 0x80000000u);
  return s | (r > 0x3F800000u ? 0x3F800000u : r);
}

static uint32_t lane_op(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t s) {
  switch (op) {
    case ISA_VEC_ADD: return add(a, b);
    case ISA_VEC_SUB: return add(a, b ^ 0x80000000u);
    case ISA_VEC_MUL: return mul(a, b);
    case ISA_VEC_MAX: return max(a, b);
    case ISA_VEC_RELU: return max(a, 0);
    case ISA_VEC_SCALE: return mul(a, s);
    case ISA_VEC_COPY: return a;
    case ISA_VEC_RELU_GRAD: /* b where a is above +0: a positive normal number or +Inf */
      return !is_nan(a) && !(a >> 31) && (a & 0x7F800000u) ? b : 0;
    case ISA_VEC_AXPY: return add(a, mul(s, b));
    case ISA_VEC_EXP: return vexp(a);
    case ISA_VEC_RECIP: return vrecip(a);
    case ISA_VEC_RSQRT: return vrsqrt(a);
    case ISA_VEC_ERF: return verf(a);
    default: return 0;
  }
}

static void line_op(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t s, uint32_t *out) {
  switch (op) {
    case ISA_VEC_TO_BF16:
      for (unsigned l = 0; l < lanes; l++)
        out[l] = l < lanes / 2 ? (uint32_t)to_bf16(a[2 * l]) | (uint32_t)to_bf16(a[2 * l + 1]) << 16 : 0;
      return;
    case ISA_VEC_TO_FP32:
      for (unsigned l = 0; l < lanes; l++) out[l] = from_bf16((uint16_t)(a[l / 2] >> (16 * (l % 2))));
      return;
    case ISA_VEC_SUM_LANES:
    case ISA_VEC_MAX_LANES: { /* the pairwise tree, lane 0 to every lane */
      uint32_t t[4096];
      memcpy(t, a, lanes * sizeof *t);
      for (unsigned step = 1; step < lanes; step *= 2)
        for (unsigned i = 0; i + step < lanes; i += 2 * step)
          t[i] = op == ISA_VEC_SUM_LANES ? add(t[i], t[i + step]) : max(t[i], t[i + step]);
      for (unsigned l = 0; l < lanes; l++) out[l] = t[0];
      return;
    }
    default:
      for (unsigned l = 0; l < lanes; l++) out[l] = lane_op(op, a[l], b ? b[l] : 0, s);
  }
}

void vec_fast_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                   uint32_t *out) {
  if (op == ISA_VEC_SUM_LINES || op == ISA_VEC_MAX_LINES) {
    for (unsigned l = 0; l < lanes; l++) out[l] = op == ISA_VEC_SUM_LINES ? add(b[l], a[l]) : max(b[l], a[l]);
    return;
  }
  line_op(op, lanes, a, b, scalar, out);
}

unsigned vec_fast_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                        uint32_t scalar, uint32_t *out) {
  return vec_fast_lines_b(op, lanes, rows, a, b, false, scalar, out);
}

unsigned vec_fast_lines_b(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                          bool b_repeat, uint32_t scalar, uint32_t *out) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~MXCSR_RC) | MXCSR_DAZ | MXCSR_FTZ);
  unsigned written = rows;
  if (op == ISA_VEC_SUM_LINES || op == ISA_VEC_MAX_LINES) { /* lines folded in order */
    for (unsigned l = 0; l < lanes; l++) {
      uint32_t acc = a[l];
      for (unsigned r = 1; r < rows; r++)
        acc = op == ISA_VEC_SUM_LINES ? add(acc, a[(size_t)r * lanes + l]) : max(acc, a[(size_t)r * lanes + l]);
      out[l] = acc;
    }
    written = 1;
  } else {
    for (unsigned r = 0; r < rows; r++)
      line_op(op, lanes, a + (size_t)r * lanes, b ? b + (b_repeat ? 0 : (size_t)r * lanes) : NULL, scalar,
              out + (size_t)r * lanes);
  }
  _mm_setcsr(saved);
  return written;
}
