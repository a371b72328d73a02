/*
 * fpmode: the host floating-point mode every fast model computes in (docs/numerics.md,
 * docs/scale.md): round to nearest with ties to even, flush-to-zero and denormals-are-zero
 * (x86 MXCSR FTZ and DAZ), which is the spec's subnormal rule. fast_fpmode_enter sets it and
 * returns the caller's mode; fast_fpmode_leave puts that back. A model that runs many small
 * operations enters once around them (the mode switch costs more than an add).
 */
#ifndef FAST_FPMODE_H
#define FAST_FPMODE_H

#include <xmmintrin.h>

#define FAST_MXCSR_DAZ 0x0040u /* denormal inputs read as zero */
#define FAST_MXCSR_FTZ 0x8000u /* denormal results flushed to zero (with their sign) */
#define FAST_MXCSR_RC 0x6000u  /* rounding control: 00 is round to nearest, ties to even */

static inline unsigned fast_fpmode_enter(void) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~FAST_MXCSR_RC) | FAST_MXCSR_DAZ | FAST_MXCSR_FTZ);
  return saved;
}

static inline void fast_fpmode_leave(unsigned saved) { _mm_setcsr(saved); }

#endif
