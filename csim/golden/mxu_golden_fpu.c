/* mxu_golden_fpu: see mxu_golden_fpu.h. */
#include "golden/mxu_golden_fpu.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#if FLT_EVAL_METHOD != 0
#error "mxu_golden_fpu needs binary32 arithmetic evaluated in binary32 (FLT_EVAL_METHOD 0)"
#endif

static inline uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* A value below 2^-126 (a subnormal, or a zero) becomes the zero of its sign: flush to zero on
 * results, denormals are zero on inputs. Infinities and NaNs pass. */
static inline float flush(float f) {
  const uint32_t u = bits_of(f);
  return (u & 0x7F800000u) ? f : float_of(u & 0x80000000u);
}

/* bf16 bits widened exactly to binary32, a subnormal read as zero. */
static inline float widen(uint16_t h) { return flush(float_of((uint32_t)h << 16)); }

/* Every NaN is the canonical one; anything else is as it is. */
static inline uint32_t canonical(float f) {
  const uint32_t u = bits_of(f);
  return (u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) ? 0x7FC00000u : u;
}

void mxu_golden_fpu_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                         uint32_t *out) {
  /* mxu_golden's loops and order: tile by tile, the column sum s = ((+0 + x0 w0) + x1 w1) + ...
   * over the tile's R rows (a padded row adds +0 x +0 = +0, which turns a -0 sum into +0),
   * then acc = s (tile 0) or acc + s. NaNs propagate through the host's operations and are
   * made canonical once at the end: a NaN input or Inf x 0 or Inf - Inf anywhere gives the
   * canonical NaN either way. */
  const size_t tiles = (k + rows - 1) / rows;
  float *w = malloc((k * n + 1) * sizeof *w), *s = malloc((n + 1) * sizeof *s);
  float *acc = malloc((n + 1) * sizeof *acc);
  if (!w || !s || !acc) abort();  /* the golden model has no other way to fail */
  for (size_t i = 0; i < k * n; i++) w[i] = widen(b[i]);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) acc[j] = 0.0f; /* K = 0: the sum of nothing is +0 */
    for (size_t t = 0; t < tiles; t++) {
      for (size_t j = 0; j < n; j++) s[j] = 0.0f; /* +0 enters the top of the column */
      for (size_t r = 0; r < rows; r++) {
        const size_t kk = t * rows + r;
        if (kk >= k) {
          for (size_t j = 0; j < n; j++) s[j] = flush(s[j] + 0.0f);
          continue;
        }
        const float x = widen(a[i * k + kk]);
        const float *wr = w + kk * n;
        for (size_t j = 0; j < n; j++) s[j] = flush(s[j] + flush(x * wr[j]));
      }
      for (size_t j = 0; j < n; j++) acc[j] = t == 0 ? s[j] : flush(acc[j] + s[j]);
    }
    for (size_t j = 0; j < n; j++) out[i * n + j] = canonical(acc[j]);
  }
  free(w), free(s), free(acc);
}
