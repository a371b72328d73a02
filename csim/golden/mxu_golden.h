/*
 * mxu_golden: C golden model of the MXU's GEMM, bit-exact with the RTL by following the
 * accumulation order of docs/numerics.md (independent of the RTL; uses arith_golden).
 *
 * On an MXU with R rows, K is cut into tiles of R (the last one zero-padded). For each
 * output (m, n) and each K tile t, the tile sum runs down the array column:
 *     s = +0;  for r in 0..R-1:  s = add(s, mul(A[m][tR + r], B[tR + r][n]))
 * (padded terms are +0 x +0), and tiles accumulate in order:
 *     C[m][n] = s_0;  for t in 1..: C[m][n] = add(C[m][n], s_t)
 * The number of columns does not change any value, only which pass computes it.
 */
#ifndef MXU_GOLDEN_H
#define MXU_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

/* A: M x K bf16, B: K x N bf16, out: M x N fp32 bit patterns; all row-major. */
void mxu_golden_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                     const uint16_t *b, uint32_t *out);

#endif
