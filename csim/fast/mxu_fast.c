/* mxu_fast: see mxu_fast.h. */
#include "fast/mxu_fast.h"

#include <stdlib.h>
#include <string.h>
#include <xmmintrin.h>

#define MXCSR_DAZ 0x0040u  /* denormal inputs read as zero */
#define MXCSR_FTZ 0x8000u  /* denormal results flushed to zero (with their sign) */
#define MXCSR_RC 0x6000u   /* rounding control: 00 is round to nearest, ties to even */
#define CANONICAL_NAN 0x7FC00000u

static float widen(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* One tile's column sums for one output row: s[j] = sum over r of a[r] * w[r][j], from +0,
 * r in order; the products are exact, each add rounds once. Nothing contracts the multiply
 * and add into an FMA: ISO C mode (-std=c11) keeps GCC's -ffp-contract off, and the x86-64
 * baseline has no FMA instruction. */
static void tile_row(size_t kr, size_t n, const float *a, const float *w, float *s) {
  for (size_t j = 0; j < n; j++) s[j] = 0.0f;
  for (size_t r = 0; r < kr; r++) {
    const float x = a[r];
    const float *wr = w + r * n;
    for (size_t j = 0; j < n; j++) s[j] += x * wr[j];
  }
}

void mxu_fast_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, uint32_t *out) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~MXCSR_RC) | MXCSR_DAZ | MXCSR_FTZ);
  /* widened copies: the rows of B once, each row of A as it is used */
  float *bw = malloc((k * n + 1) * sizeof *bw), *aw = malloc((k + 1) * sizeof *aw);
  float *acc = malloc((n + 1) * sizeof *acc), *s = malloc((n + 1) * sizeof *s);
  if (!bw || !aw || !acc || !s) abort(); /* a model without memory cannot go on */
  for (size_t i = 0; i < k * n; i++) bw[i] = widen(b[i]);
  for (size_t i = 0; i < m; i++) {
    for (size_t kk = 0; kk < k; kk++) aw[kk] = widen(a[i * k + kk]);
    /* padded rows of the last tile add +0 x +0 = +0: s + 0 changes only a -0 sum, to +0 */
    for (size_t t0 = 0; t0 < k; t0 += rows) {
      const size_t kr = k - t0 < rows ? k - t0 : rows;
      tile_row(kr, n, aw + t0, bw + t0 * n, s);
      if (kr < rows)
        for (size_t j = 0; j < n; j++) s[j] += 0.0f;
      if (t0 == 0)
        memcpy(acc, s, n * sizeof *acc);
      else
        for (size_t j = 0; j < n; j++) acc[j] += s[j];
    }
    for (size_t j = 0; j < n; j++) {
      uint32_t u;
      memcpy(&u, &acc[j], sizeof u);
      out[i * n + j] = (u & 0x7FFFFFFFu) > 0x7F800000u ? CANONICAL_NAN : u;
    }
  }
  free(bw), free(aw), free(acc), free(s);
  _mm_setcsr(saved);
}
