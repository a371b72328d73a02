/*
 * mxu_fast: the MXU's GEMM at host speed with the same bits (issue 13, part 5; docs/scale.md).
 * It mirrors the arithmetic of rtl/mxu_pe.sv and rtl/mxu_datapath.sv -- each product exact,
 * the column sum down the array from +0 within a K tile, the tiles accumulated in order
 * (docs/numerics.md) -- but computes with the host FPU: bf16 x bf16 is exact in fp32, the adds
 * are IEEE fp32 round-to-nearest, and the host runs with flush-to-zero and denormals-are-zero
 * (x86 MXCSR FTZ and DAZ), which is the spec's subnormal rule; NaN results are made the
 * canonical NaN at the end (any NaN stays a NaN through the sums). The inner loop runs along
 * N, so each output keeps its own order and the compiler can vectorise across outputs.
 * Shares no code with the golden model (csim/golden/mxu_golden.c) that checks it.
 */
#ifndef FAST_MXU_FAST_H
#define FAST_MXU_FAST_H

#include <stddef.h>
#include <stdint.h>

/* A: M x K bf16, B: K x N bf16, out: M x N fp32 bit patterns; all row-major; `rows` is the
 * MXU's R (the K tile). The host's floating-point mode is set for the call and restored. */
void mxu_fast_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, uint32_t *out);

#endif
