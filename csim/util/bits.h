/*
 * bits: reading and writing bit fields of up to 64 bits at any offset in arrays of
 * little-endian 32-bit words, the layout of Verilator's wide ports (flit buses); and the
 * host values of fp32/bf16 bit patterns.
 */
#ifndef BITS_H
#define BITS_H

#include <stdint.h>
#include <string.h>

/* The value of fp32 / bf16 bit patterns on the host (for printing and references). */
static inline double bits_fp32_value(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline double bits_bf16_value(uint16_t h) { return bits_fp32_value((uint32_t)h << 16); }

/* An fp32 bit pattern as a float, and a float's bit pattern (exact both ways). */
static inline float bits_to_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint32_t bits_of_float(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

static inline uint64_t bits_get(const uint32_t *w, unsigned off, unsigned n) {
  uint64_t v = 0;
  for (unsigned got = 0; got < n;) {
    unsigned word = (off + got) / 32, bit = (off + got) % 32;
    unsigned take = 32 - bit < n - got ? 32 - bit : n - got;
    uint64_t chunk = (w[word] >> bit) & (take == 32 ? 0xFFFFFFFFu : ((1u << take) - 1));
    v |= chunk << got;
    got += take;
  }
  return v;
}

static inline void bits_put(uint32_t *w, unsigned off, unsigned n, uint64_t v) {
  for (unsigned done = 0; done < n;) {
    unsigned word = (off + done) / 32, bit = (off + done) % 32;
    unsigned take = 32 - bit < n - done ? 32 - bit : n - done;
    uint32_t mask = (take == 32 ? 0xFFFFFFFFu : ((1u << take) - 1)) << bit;
    w[word] = (w[word] & ~mask) | ((uint32_t)(v >> done) << bit & mask);
    done += take;
  }
}

/* Copies n bits (any length) from src at src_off to dst at dst_off. */
static inline void bits_copy(uint32_t *dst, unsigned dst_off, const uint32_t *src, unsigned src_off, unsigned n) {
  for (unsigned i = 0; i < n; i += 64) {
    unsigned k = n - i < 64 ? n - i : 64;
    bits_put(dst, dst_off + i, k, bits_get(src, src_off + i, k));
  }
}

#endif
