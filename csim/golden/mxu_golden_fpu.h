/*
 * mxu_golden_fpu: the MXU's GEMM (docs/numerics.md, "Accumulation order in the MXU") on the
 * host's FPU, for checking at host speed. The same order as mxu_golden (the soft-float
 * reference of references), with the documented rules on the host's binary32 arithmetic:
 * bf16 inputs widened exactly, subnormal inputs read as zero, every product and sum that
 * lands below 2^-126 flushed to zero with its sign (the vector kernels by the MXCSR's FTZ and
 * DAZ, which here is the same rule: docs/numerics.md), every NaN made the canonical
 * 0x7FC00000. A bf16 product is exact in binary32 (8-bit significands), and host addition
 * is IEEE RNE; so each step equals the soft-float one bit for bit, which tests/
 * test_mxu_golden.c holds on random sets with specials, for each kernel. Independent of csim/fast/: it shares
 * no code with the fast models it checks (scripts/check_layers.py).
 *
 * Needs binary32 arithmetic without excess precision or contraction: SSE on x86-64 (C11's
 * FLT_EVAL_METHOD 0) and -ffp-contract=off (GCC's default with -std=c11).
 */
#ifndef GOLDEN_MXU_GOLDEN_FPU_H
#define GOLDEN_MXU_GOLDEN_FPU_H

#include <stddef.h>
#include <stdint.h>

/* As mxu_golden_gemm: C = A x B on an MXU of `rows` rows; a M x K, b K x N bf16, out M x N
 * fp32 bits, row-major. Four rows of A at a time, 16 columns on AVX2 (where the host has it)
 * or 8 on SSE2; MXU_GOLDEN_FPU_LANES=4 or 1 in the environment picks the SSE2 or the scalar
 * kernel (the tests run each). From 2^24 MACs on, the rows are split over the host's
 * processors (at most 16 threads; each row's order is unchanged, so the bits are). Aborts
 * when out of memory (B widened, a few rows of N and K floats a thread). */
void mxu_golden_fpu_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                         uint32_t *out);

#endif
