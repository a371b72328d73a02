/* mxu_golden: see mxu_golden.h. */
#include "golden/mxu_golden.h"

#include <stdlib.h>

#include "golden/arith_golden.h"

void mxu_golden_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                     const uint16_t *b, uint32_t *out) {
  /* Element C[i][j] is, tile t by tile, the column sum s = ((+0 + x0 w0) + x1 w1) + ... over the
   * tile's R rows, then acc = s (t = 0) or acc + s: the systolic column's order. The loops run
   * a row of B at a time (j innermost) so B is read in order; every element's additions are
   * still made in that order. */
  size_t tiles = (k + rows - 1) / rows;
  uint32_t *s = malloc((n ? n : 1) * sizeof *s);
  if (!s) abort();  /* a few KB: the golden model has no other way to fail */
  for (size_t i = 0; i < m; i++) {
    uint32_t *acc = out + i * n;
    for (size_t j = 0; j < n; j++) acc[j] = 0; /* K = 0: the sum of nothing is +0 */
    for (size_t t = 0; t < tiles; t++) {
      for (size_t j = 0; j < n; j++) s[j] = 0; /* +0 enters the top of the column */
      for (size_t r = 0; r < rows; r++) {
        size_t kk = t * rows + r;
        if (kk >= k) { /* rows past K multiply zeros: +0 x +0 is +0, and s + +0 is s but for -0 */
          for (size_t j = 0; j < n; j++) s[j] = arith_golden_fp32_add(s[j], arith_golden_bf16_mul(0, 0));
          continue;
        }
        const uint16_t x = a[i * k + kk];
        const uint16_t *w = b + kk * n;
        for (size_t j = 0; j < n; j++) s[j] = arith_golden_fp32_add(s[j], arith_golden_bf16_mul(x, w[j]));
      }
      for (size_t j = 0; j < n; j++) acc[j] = t == 0 ? s[j] : arith_golden_fp32_add(acc[j], s[j]);
    }
  }
  free(s);
}
