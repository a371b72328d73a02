/*
 * arith_golden: C golden model of the TPU's three arithmetic operations;
 * written independently of the RTL; every RTL result is checked bit-exact
 * against it.
 *
 * The three operations are the bf16 x bf16 multiply (exact, fp32 result),
 * the fp32 + fp32 add (round to nearest, ties to even) and the fp32 -> bf16
 * narrowing (round to nearest, ties to even). The model uses integer bit
 * manipulation only, so it cannot be influenced by the host FPU, its
 * rounding mode or its flush-to-zero flags.
 *
 * Values are raw bit patterns: an fp32 is a uint32_t, a bf16 is a uint16_t
 * holding the upper 16 bits of an fp32.
 *
 * Numerics shared by every operation (the project's spec):
 *   - subnormal inputs are read as a zero of the same sign (DAZ);
 *   - subnormal results become a zero with the sign of the exact result (FTZ);
 *   - any NaN input, and the invalid operations Inf x 0 and Inf + -Inf,
 *     give the canonical quiet NaN below; a NaN input wins over every
 *     other rule.
 */
#ifndef ARITH_GOLDEN_H
#define ARITH_GOLDEN_H

#include <stdint.h>

#define ARITH_FP32_CANON_NAN 0x7FC00000u
#define ARITH_BF16_CANON_NAN 0x7FC0u

/* bf16 x bf16 -> exact product in fp32 format (8-bit x 8-bit significands
 * fit in fp32's 24 bits, so there is never any rounding). */
uint32_t arith_golden_bf16_mul(uint16_t a, uint16_t b);

/* fp32 + fp32, round to nearest, ties to even. */
uint32_t arith_golden_fp32_add(uint32_t a, uint32_t b);

/* fp32 -> bf16, round to nearest, ties to even (may carry up to Inf). */
uint16_t arith_golden_fp32_to_bf16(uint32_t a);

/* bf16 -> fp32 widening; exact apart from DAZ and NaN canonicalisation. */
uint32_t arith_golden_bf16_to_fp32(uint16_t a);

/* fp32 x fp32, round to nearest even; the product is rounded to 24 bits as if the
 * exponent range were unbounded, then flushed to a signed zero below 2^-126. */
uint32_t arith_golden_fp32_mul(uint32_t a, uint32_t b);
/* max(a, b); max(+0, -0) = +0; any NaN gives the canonical NaN; subnormals read as zero. */
uint32_t arith_golden_fp32_max(uint32_t a, uint32_t b);

/* One systolic PE step: fp32_add(psum, bf16_mul(a, w)). */
uint32_t arith_golden_mac(uint32_t psum, uint16_t a, uint16_t w);

/* A bf16 dot product as one serial chain of PE steps from +0: a[0]*b[0] first. */
uint32_t arith_golden_dot(const uint16_t *a, const uint16_t *b, uint64_t n);

#endif /* ARITH_GOLDEN_H */
