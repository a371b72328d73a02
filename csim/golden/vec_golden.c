/* vec_golden: see vec_golden.h. */
#include "golden/vec_golden.h"

#include "golden/arith_golden.h"

uint32_t vec_golden_lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar) {
  switch (op) {
    case ISA_VEC_ADD: return arith_golden_fp32_add(a, b);
    case ISA_VEC_SUB: return arith_golden_fp32_add(a, b ^ 0x80000000u);
    case ISA_VEC_MUL: return arith_golden_fp32_mul(a, b);
    case ISA_VEC_MAX: return arith_golden_fp32_max(a, b);
    case ISA_VEC_RELU: return arith_golden_fp32_max(a, 0);
    case ISA_VEC_SCALE: return arith_golden_fp32_mul(a, scalar);
    case ISA_VEC_COPY: return a;
    default: return 0;  /* the conversions are not lane-wise: vec_golden_line */
  }
}

void vec_golden_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                     uint32_t *out) {
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
