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

/* Rows of A done together: each weight row read from memory serves all of them. */
#define ROW_BLOCK 4

/* One tile's column sums for up to ROW_BLOCK output rows: s[i][j] = sum over r of
 * a[i][r] * w[r][j], from +0, r in order; the products are exact, each add rounds once.
 * Nothing contracts the multiply and add into an FMA: ISO C mode (-std=c11) keeps GCC's
 * -ffp-contract off, and the x86-64 baseline has no FMA instruction. */
static void tile_rows(size_t rows_here, size_t kr, size_t n, const float *const a[ROW_BLOCK], const float *w,
                      float *const s[ROW_BLOCK]) {
  for (size_t i = 0; i < rows_here; i++)
    for (size_t j = 0; j < n; j++) s[i][j] = 0.0f;
  for (size_t r = 0; r < kr; r++) {
    const float *wr = w + r * n;
    if (rows_here == ROW_BLOCK) {
      const float x0 = a[0][r], x1 = a[1][r], x2 = a[2][r], x3 = a[3][r];
      float *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3];
      for (size_t j = 0; j < n; j++) {
        const float wj = wr[j];
        s0[j] += x0 * wj;
        s1[j] += x1 * wj;
        s2[j] += x2 * wj;
        s3[j] += x3 * wj;
      }
    } else {
      for (size_t i = 0; i < rows_here; i++) {
        const float x = a[i][r];
        for (size_t j = 0; j < n; j++) s[i][j] += x * wr[j];
      }
    }
  }
}

void mxu_fast_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, uint32_t *out) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~MXCSR_RC) | MXCSR_DAZ | MXCSR_FTZ);
  /* widened copies: B once, A a block of rows at a time */
  float *bw = malloc((k * n + 1) * sizeof *bw), *aw = malloc((ROW_BLOCK * k + 1) * sizeof *aw);
  float *acc = malloc((ROW_BLOCK * n + 1) * sizeof *acc), *sum = malloc((ROW_BLOCK * n + 1) * sizeof *sum);
  if (!bw || !aw || !acc || !sum) abort(); /* a model without memory cannot go on */
  for (size_t i = 0; i < k * n; i++) bw[i] = widen(b[i]);
  for (size_t i0 = 0; i0 < m; i0 += ROW_BLOCK) {
    const size_t nr = m - i0 < ROW_BLOCK ? m - i0 : ROW_BLOCK;
    const float *ar[ROW_BLOCK];
    float *sr[ROW_BLOCK];
    for (size_t i = 0; i < nr; i++) {
      for (size_t kk = 0; kk < k; kk++) aw[i * k + kk] = widen(a[(i0 + i) * k + kk]);
      sr[i] = sum + i * n;
    }
    /* padded rows of the last tile add +0 x +0 = +0: s + 0 changes only a -0 sum, to +0 */
    for (size_t t0 = 0; t0 < k; t0 += rows) {
      const size_t kr = k - t0 < rows ? k - t0 : rows;
      for (size_t i = 0; i < nr; i++) ar[i] = aw + i * k + t0;
      tile_rows(nr, kr, n, ar, bw + t0 * n, sr);
      for (size_t i = 0; i < nr; i++) {
        float *s = sr[i], *c = acc + i * n;
        if (kr < rows)
          for (size_t j = 0; j < n; j++) s[j] += 0.0f;
        if (t0 == 0)
          memcpy(c, s, n * sizeof *c);
        else
          for (size_t j = 0; j < n; j++) c[j] += s[j];
      }
    }
    for (size_t i = 0; i < nr; i++)
      for (size_t j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, &acc[i * n + j], sizeof u);
        out[(i0 + i) * n + j] = (u & 0x7FFFFFFFu) > 0x7F800000u ? CANONICAL_NAN : u;
      }
  }
  free(bw), free(aw), free(acc), free(sum);
  _mm_setcsr(saved);
}

void mxu_fast_rows(unsigned rows, unsigned cols, size_t n, const uint16_t *a, size_t a_stride, const float *w,
                   float *psum) {
  for (size_t i = 0; i < n; i++) {
    const uint16_t *ai = a + i * a_stride;
    float *s = psum + i * cols;
    for (unsigned c = 0; c < cols; c++) s[c] = 0.0f;
    for (unsigned r = 0; r < rows; r++) {
      const float x = widen(ai[r]);
      const float *wr = w + (size_t)r * cols;
      for (unsigned c = 0; c < cols; c++) s[c] += x * wr[c];
    }
  }
}

/* The pipeline registers the contract counts: command intake, loader start, input skew
 * entry, de-skew exit, accumulator write (docs/mxu.md). */
#define MXU_FAST_PIPELINE 5

void mxu_fast_run(unsigned rows, unsigned cols, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                  uint32_t *out, mxu_fast_stats_t *st) {
  mxu_fast_gemm(rows, m, k, n, a, b, out);
  const uint64_t R = rows, C = cols, M = m;
  const uint64_t F = ((k + R - 1) / R) * ((n + C - 1) / C);
  st->tiles = F;
  st->cycles = R + (F - 1) * (M > R ? M : R) + M + (R + C - 2) + MXU_FAST_PIPELINE;
  st->compute = F * M;
  st->weight_load = F * R;
  st->weight_stall = (R - 1) + (F - 1) * (R > M ? R - M : 0);
  st->input_stall = 0;
  st->idle = 0;
  st->readout_cycles = ((n + C - 1) / C) * M;
}
