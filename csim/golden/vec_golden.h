/*
 * vec_golden: C golden model of the chip's vector unit (docs/isa.md VEC, docs/numerics.md),
 * written from the documentation on top of arith_golden, independently of the RTL
 * (rtl/chip_vec_unit.sv). Values are fp32 bit patterns; a line is `lanes` of them.
 *
 * vec_golden_* do the fp32 adds and multiplies on the host's FPU (arith_golden_fpu), the
 * default for every check; vec_golden_exact_lines runs the same operations in the same order
 * on arith_golden's soft float, the reference of references the host path is tested against
 * (tests/test_vec_golden.c). The results are the same bits for every input.
 */
#ifndef GOLDEN_VEC_GOLDEN_H
#define GOLDEN_VEC_GOLDEN_H

#include <stdint.h>

#include "fw/isa.h"

enum { VEC_GOLDEN_MAX_LANES = 1024 };

/* One lane of a lane-wise operation (ADD, SUB, MUL, MAX, RELU, SCALE, COPY, RELU_GRAD, AXPY, EXP,
 * RECIP, RSQRT, ERF). */
uint32_t vec_golden_lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t scalar);

/* One line of any operation but the line reductions: TO_BF16 packs the lanes' bf16 values
 * into the low half of the line (lanes 2l and 2l+1 in fp32 lane l, the high half zero);
 * TO_FP32 widens bf16 lane l of the low half of a into lane l; SUM_LANES and MAX_LANES put
 * the pairwise tree's result in every lane. At most VEC_GOLDEN_MAX_LANES lanes. */
void vec_golden_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                     uint32_t *out);

/* A whole VEC command over `rows` lines of a (and b): the lines it writes to out, and how
 * many (rows, or 1 for SUM_LINES and MAX_LINES, which fold the lines in line order). */
unsigned vec_golden_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                          uint32_t scalar, uint32_t *out);

/* A VEC command with b_repeat set (a binary operation): b_line, one line, is operand b of every
 * row (a bias or a scale broadcast over the rows). */
unsigned vec_golden_lines_repeat_b(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a,
                                   const uint32_t *b_line, uint32_t scalar, uint32_t *out);

/* vec_golden_lines on the soft float (arith_golden); a lane or a line is a command of one line. */
unsigned vec_golden_exact_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                                uint32_t scalar, uint32_t *out);

#endif
