/*
 * vec_fast: the chip's vector unit (rtl/chip_vec_unit.sv) at host speed with the same bits
 * (issue 13; docs/scale.md): every VEC operation of docs/isa.md computed with the host FPU in
 * round-to-nearest with flush-to-zero and denormals-are-zero (x86 MXCSR FTZ, DAZ), which is
 * the spec's subnormal rule (docs/numerics.md); NaN results and inputs handled as the spec
 * says, EXP, RECIP, RSQRT and ERF as their documented fp32 sequences. Shares no code with the golden model
 * (csim/golden/vec_golden.c) that checks it.
 */
#ifndef FAST_VEC_FAST_H
#define FAST_VEC_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/isa.h"

/* A whole VEC command over `rows` lines of `lanes` fp32 bit patterns (b read by binary
 * operations, scalar by SCALE and AXPY): the lines written to out, and how many (rows, or 1
 * for SUM_LINES and MAX_LINES). The host's floating-point mode is set and restored. */
unsigned vec_fast_lines(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                        uint32_t scalar, uint32_t *out);

/* vec_fast_lines with the command's b_repeat: set, b is one line, operand b of every row. */
unsigned vec_fast_lines_b(isa_vec_op_t op, unsigned lanes, unsigned rows, const uint32_t *a, const uint32_t *b,
                          bool b_repeat, uint32_t scalar, uint32_t *out);

/* One line as the vector unit makes it in the line's cycle (csim/fast/vec_unit_fast.c), with
 * the host's mode already set (fast/fpmode.h): an operation that writes a line per line read
 * (b and scalar where it reads them); or, for SUM_LINES and MAX_LINES, the fold so far `b`
 * combined with the next line `a` (the first line is taken as it is, without this call). */
void vec_fast_line(isa_vec_op_t op, unsigned lanes, const uint32_t *a, const uint32_t *b, uint32_t scalar,
                   uint32_t *out);

#endif
