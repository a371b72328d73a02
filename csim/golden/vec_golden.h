/*
 * vec_golden: C golden model of the chip's vector unit (docs/isa.md VEC, docs/numerics.md),
 * written from the documentation on top of arith_golden, independently of the RTL
 * (rtl/chip_vec_unit.sv). Values are fp32 bit patterns; a line is `lanes` of them.
 */
#ifndef GOLDEN_VEC_GOLDEN_H
#define GOLDEN_VEC_GOLDEN_H

#include <stdint.h>

#include "fw/isa.h"

/* One lane of a lane-wise operation (ADD, SUB, MUL, MAX, RELU, SCALE, COPY). */
uint32_t vec_golden_lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar);

/* One line of any operation: TO_BF16 packs the lanes' bf16 values into the low half of the
 * line (lanes 2l and 2l+1 in fp32 lane l, the high half zero); TO_FP32 widens bf16 lane l of
 * the low half of a into lane l. */
void vec_golden_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                     uint32_t *out);

#endif
