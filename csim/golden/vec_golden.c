/* vec_golden: see vec_golden.h. */
#include "golden/vec_golden.h"

#include <stddef.h>

#include "golden/arith_golden.h"

/* a > +0: positive, not zero, not subnormal (read as zero), not NaN (docs/numerics.md). */
static bool positive(uint32_t a) {
  const uint32_t exp = a >> 23 & 0xFF, man = a & 0x7FFFFF;
  return !(a >> 31) && exp != 0 && !(exp == 0xFF && man != 0);
}

uint32_t vec_golden_lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar) {
  switch (op) {
    case ISA_VEC_ADD: return arith_golden_fp32_add(a, b);
    case ISA_VEC_SUB: return arith_golden_fp32_add(a, b ^ 0x80000000u);
    case ISA_VEC_MUL: return arith_golden_fp32_mul(a, b);
    case ISA_VEC_MAX: return arith_golden_fp32_max(a, b);
    case ISA_VEC_RELU: return arith_golden_fp32_max(a, 0);
    case ISA_VEC_SCALE: return arith_golden_fp32_mul(a, scalar);
    case ISA_VEC_COPY: return a;
    case ISA_VEC_RELU_GRAD: return positive(a) ? b : 0;
    case ISA_VEC_AXPY: return arith_golden_fp32_add(a, arith_golden_fp32_mul(scalar, b));
    default: return 0;  /* the conversions and reductions are not lane-wise: vec_golden_line(s) */
  }
}

void vec_golden_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                     uint32_t *out) {
  if (op == ISA_VEC_SUM_LANES || op == ISA_VEC_MAX_LANES) {
    /* the pairwise tree of docs/numerics.md, in place over a copy */
    uint32_t t[VEC_GOLDEN_MAX_LANES];
    for (unsigned l = 0; l < lanes; l++) t[l] = a[l];
    for (unsigned step = 1; step < lanes; step *= 2)
      for (unsigned i = 0; i + step < lanes; i += 2 * step)
        t[i] = op == ISA_VEC_SUM_LANES ? arith_golden_fp32_add(t[i], t[i + step])
                                       : arith_golden_fp32_max(t[i], t[i + step]);
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
      out[l] = vec_golden_lane(op, a[l], b[l], scalar);
  }
}

unsigned vec_golden_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                          uint32_t scalar, uint32_t *out) {
  if (op == ISA_VEC_SUM_LINES || op == ISA_VEC_MAX_LINES) {
    for (unsigned l = 0; l < lanes; l++) {
      uint32_t acc = a[l];  /* the first line as it is, then each next one in line order */
      for (unsigned r = 1; r < rows; r++)
        acc = op == ISA_VEC_SUM_LINES ? arith_golden_fp32_add(acc, a[(size_t)r * lanes + l])
                                      : arith_golden_fp32_max(acc, a[(size_t)r * lanes + l]);
      out[l] = acc;
    }
    return 1;
  }
  for (unsigned r = 0; r < rows; r++)
    vec_golden_line(op, lanes, a + (size_t)r * lanes, b + (size_t)r * lanes, scalar, out + (size_t)r * lanes);
  return rows;
}
