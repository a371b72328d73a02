/*
 * bf16: the host's rounding of float32 values to bf16 when it writes them into a chip's HBM
 * (weights laid out by the model compiler, the input of a model): the rule of docs/numerics.md,
 * "Rounding to bf16" -- NaN to the canonical 0x7FC0, a subnormal to a zero of its sign, else
 * round to nearest, ties to even (which may carry up to infinity). Header only.
 */
#ifndef UTIL_BF16_H
#define UTIL_BF16_H

#include <stdint.h>
#include <string.h>

static inline uint16_t bf16_of_bits(uint32_t a) {
  if ((a & 0x7F800000u) == 0x7F800000u && (a & 0x7FFFFFu)) return 0x7FC0;
  if ((a & 0x7F800000u) == 0) a &= 0x80000000u;
  uint32_t kept = a >> 16, dropped = a & 0xFFFFu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u))) kept++;
  return (uint16_t)kept;
}

static inline uint16_t bf16_of_float(float f) {
  uint32_t a;
  memcpy(&a, &f, 4);
  return bf16_of_bits(a);
}

static inline float bf16_to_float(uint16_t h) {
  const uint32_t a = (uint32_t)h << 16;
  float f;
  memcpy(&f, &a, 4);
  return f;
}

#endif
