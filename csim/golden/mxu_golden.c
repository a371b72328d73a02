/* mxu_golden: see mxu_golden.h. */
#include "golden/mxu_golden.h"

#include "golden/arith_golden.h"

void mxu_golden_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                     const uint16_t *b, uint32_t *out) {
  size_t tiles = (k + rows - 1) / rows;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      uint32_t acc = 0;
      for (size_t t = 0; t < tiles; t++) {
        uint32_t s = 0; /* +0 enters the top of the column */
        for (size_t r = 0; r < rows; r++) {
          size_t kk = t * rows + r;
          uint16_t x = kk < k ? a[i * k + kk] : 0;
          uint16_t w = kk < k ? b[kk * n + j] : 0;
          s = arith_golden_fp32_add(s, arith_golden_bf16_mul(x, w));
        }
        acc = t == 0 ? s : arith_golden_fp32_add(acc, s);
      }
      out[i * n + j] = acc;
    }
  }
}
