/* pool_golden: see pool_golden.h. */
#include "golden/pool_golden.h"

#include <stddef.h>

#include "golden/arith_golden.h"

uint32_t pool_golden_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t pad_lo, uint32_t pad_hi) {
  const uint64_t padded = (uint64_t)in + pad_lo + pad_hi;
  if (k == 0 || s == 0 || padded < k) return 0;
  const uint64_t n = (padded - k) / s + 1;
  return n > UINT32_MAX ? 0 : (uint32_t)n;
}

uint32_t pool_golden_recip(uint64_t count) {
  if (count == 1) return 0x3F800000u;
  /* binary digits of 1/count after the point, one a step: the first 1 sets the exponent, 24
   * digits from it the significand, then a guard digit and whether anything is left */
  uint64_t rem = 1;
  int pos = 0;
  do {
    rem *= 2, pos++;
  } while (rem < count);
  const int first = pos; /* 1/count in [2^-first, 2^-first+1) */
  uint32_t sig = 0;
  for (int i = 0; i < 24; i++) {
    if (i) rem *= 2;
    const uint32_t digit = rem >= count;
    if (digit) rem -= count;
    sig = sig << 1 | digit;
  }
  rem *= 2;
  const uint32_t guard = rem >= count;
  if (guard) rem -= count;
  int e = -first;
  if (guard && (rem != 0 || (sig & 1))) sig++;
  if (sig == 1u << 24) sig >>= 1, e++;
  return (uint32_t)(127 + e) << 23 | (sig & 0x7FFFFFu);
}

static int window_ok(const pool_golden_window_t *p, uint32_t h, uint32_t w, uint32_t *oh, uint32_t *ow) {
  if (!p->kh || !p->kw || !p->sh || !p->sw) return -1;
  if (p->pad_top >= p->kh || p->pad_bottom >= p->kh || p->pad_left >= p->kw || p->pad_right >= p->kw) return -1;
  *oh = pool_golden_out_size(h, p->kh, p->sh, p->pad_top, p->pad_bottom);
  *ow = pool_golden_out_size(w, p->kw, p->sw, p->pad_left, p->pad_right);
  return *oh && *ow ? 0 : -1;
}

/* Every output pixel: the taps (i, j) in row-major order whose pixel is inside the image; the
 * first is the fp32 value, each later one folded in with max or an fp32 add. */
static int pool(const pool_golden_window_t *p, bool avg, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                const uint16_t *in, uint16_t *out) {
  uint32_t oh, ow;
  if (window_ok(p, h, w, &oh, &ow)) return -1;
  for (uint64_t plane = 0; plane < (uint64_t)n * c; plane++) {
    const uint16_t *src = in + plane * h * w;
    uint16_t *dst = out + plane * oh * ow;
    for (uint32_t y = 0; y < oh; y++)
      for (uint32_t x = 0; x < ow; x++) {
        uint32_t acc = 0, taps = 0;
        for (uint32_t i = 0; i < p->kh; i++)
          for (uint32_t j = 0; j < p->kw; j++) {
            const int64_t iy = (int64_t)y * p->sh - p->pad_top + i, ix = (int64_t)x * p->sw - p->pad_left + j;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue; /* padding: never read */
            const uint32_t v = arith_golden_bf16_to_fp32(src[iy * w + ix]);
            acc = taps++ == 0 ? v : avg ? arith_golden_fp32_add(acc, v) : arith_golden_fp32_max(acc, v);
          }
        if (avg)
          acc = arith_golden_fp32_mul(acc, pool_golden_recip(p->count_include_pad ? (uint64_t)p->kh * p->kw : taps));
        dst[(size_t)y * ow + x] = arith_golden_fp32_to_bf16(acc);
      }
  }
  return 0;
}

int pool_golden_max(const pool_golden_window_t *win, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                    const uint16_t *in, uint16_t *out) {
  return pool(win, false, n, c, h, w, in, out);
}

int pool_golden_avg(const pool_golden_window_t *win, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                    const uint16_t *in, uint16_t *out) {
  return pool(win, true, n, c, h, w, in, out);
}

void pool_golden_global_avg(uint32_t n, uint32_t c, uint32_t h, uint32_t w, const uint16_t *in, uint16_t *out) {
  const uint32_t scale = pool_golden_recip((uint64_t)h * w);
  for (uint64_t plane = 0; plane < (uint64_t)n * c; plane++) {
    const uint16_t *src = in + plane * h * w;
    uint32_t acc = arith_golden_bf16_to_fp32(src[0]);
    for (uint64_t k = 1; k < (uint64_t)h * w; k++) acc = arith_golden_fp32_add(acc, arith_golden_bf16_to_fp32(src[k]));
    out[plane] = arith_golden_fp32_to_bf16(arith_golden_fp32_mul(acc, scale));
  }
}
