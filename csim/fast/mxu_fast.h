/*
 * mxu_fast: the MXU's GEMM at host speed with the same bits (issue 13, part 5; docs/scale.md).
 * It mirrors the arithmetic of rtl/mxu_pe.sv and rtl/mxu_datapath.sv -- each product exact,
 * the column sum down the array from +0 within a K tile, the tiles accumulated in order
 * (docs/numerics.md) -- but computes with the host FPU: bf16 x bf16 is exact in fp32, the adds
 * are IEEE fp32 round-to-nearest (never fused with the multiply), and the host runs with
 * flush-to-zero and denormals-are-zero (x86 MXCSR FTZ and DAZ), which is the spec's subnormal
 * rule; NaN results are made the canonical NaN at the end (any NaN stays a NaN through the
 * sums). Register-blocked vector kernels (AVX-512F, AVX2 or SSE2, whichever is the best the
 * host has) hold a block of outputs in registers and run r = 0, 1, ... inside, so every output
 * keeps its own order and the vectors only run across outputs.
 * Shares no code with the golden model (csim/golden/mxu_golden.c) that checks it.
 */
#ifndef FAST_MXU_FAST_H
#define FAST_MXU_FAST_H

#include <stddef.h>
#include <stdint.h>

/* A: M x K bf16, B: K x N bf16, out: M x N fp32 bit patterns; all row-major; `rows` is the
 * MXU's R (the K tile). The host's floating-point mode is set for the call and restored. */
void mxu_fast_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, uint32_t *out);

/* The column sums of one weight tile for n activation rows, as the array forms them (the
 * chip's MXU unit, csim/fast/mxu_unit_fast.c): psum[i * cols + c] = the sum over r = 0 ..
 * rows - 1 of a_i[r] * w[r * cols + c], from +0 in the order of r, each product exact and
 * each add rounded to fp32. a_i is `rows` bf16 at a + i * a_stride (a_stride >= rows; the
 * gaps are not read); w is the tile widened to fp32. The caller has set the host's mode
 * (fast/fpmode.h). Every bit is the golden model's except a NaN's: a NaN result is some NaN,
 * with the host's sign and payload, and the caller makes it canonical where it lands (the chip
 * makes psum NaNs canonical when they reach the accumulator). At 128 x 128 on one core of the
 * bench machine (AVX-512, docs/scale.md) it runs at about 38 G multiply-adds/s for n >= 8. */
void mxu_fast_rows(unsigned rows, unsigned cols, size_t n, const uint16_t *a, size_t a_stride, const float *w,
                   float *psum);

/* The kernels' instruction sets, lowest first. mxu_fast_rows and mxu_fast_gemm use the best
 * the host has; the _isa variants use the one named, or the best the host has if it lacks that
 * one (tests run every kernel the host can; make bench measures them). Same bits from each. */
typedef enum { MXU_FAST_SSE2, MXU_FAST_AVX2, MXU_FAST_AVX512F } mxu_fast_isa_t;

mxu_fast_isa_t mxu_fast_best_isa(void);
const char *mxu_fast_isa_name(mxu_fast_isa_t isa);
void mxu_fast_rows_isa(mxu_fast_isa_t isa, unsigned rows, unsigned cols, size_t n, const uint16_t *a, size_t a_stride,
                       const float *w, float *psum);
void mxu_fast_gemm_isa(mxu_fast_isa_t isa, unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                       const uint16_t *b, uint32_t *out);

/* The fast model of the MXU alone (rtl/mxu_top.sv) driven as csim/runtime/mxu_driver.c drives
 * it with data offered every cycle: per tile (N tile outer, K tile inner) LOAD_WEIGHTS then
 * MATMUL. Its timing comes from the RTL's structure as docs/mxu.md states it, not from the
 * Verilated model: F = ceil(K/R) ceil(N/C) tiles;
 *   cycles        = R + (F - 1) max(M, R) + M + (R + C - 2) + 5   (the timing contract)
 *   compute       = F M           (an activation row enters per streamed row)
 *   weight_load   = F R           (each load shifts in R rows, padded or not)
 *   weight_stall  = (R - 1) + (F - 1) max(0, R - M)
 *                                 (the first matmul waits for the first load but its last
 *                                  row; each later one for the part of its load that its
 *                                  predecessor's M rows did not cover)
 *   input_stall   = 0, idle = 0   (data every cycle; the window is the GEMM)
 *   readout       = ceil(N/C) M   (the accumulator rows read back one per cycle)
 * tests/test_mxu.c holds these to the RTL's counters on every built size. */
typedef struct {
  uint64_t cycles, readout_cycles, tiles;
  uint64_t compute, weight_load, weight_stall, input_stall, idle;
} mxu_fast_stats_t;

void mxu_fast_run(unsigned rows, unsigned cols, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                  uint32_t *out, mxu_fast_stats_t *st);

#endif
