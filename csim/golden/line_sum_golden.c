/* line_sum_golden: see line_sum_golden.h. */
#include "golden/line_sum_golden.h"

#include <stdlib.h>

#include "golden/arith_golden.h"

int line_sum_golden(unsigned lanes, uint32_t rows, uint32_t chunk_lines, const uint32_t *in, uint32_t *out) {
  uint32_t *v = malloc((chunk_lines < rows ? chunk_lines : rows) * sizeof *v);
  if (!v) return -1;
  for (unsigned l = 0; l < lanes; l++) {
    uint32_t result = 0;
    for (uint32_t c0 = 0; c0 < rows; c0 += chunk_lines) {
      /* lane l of the chunk's lines, summed as a tree: v[i] += v[i + ceil(n/2)] for i < floor(n/2) */
      uint32_t n = rows - c0 < chunk_lines ? rows - c0 : chunk_lines;
      for (uint32_t i = 0; i < n; i++) v[i] = in[(uint64_t)(c0 + i) * lanes + l];
      while (n > 1) {
        uint32_t upper = (n + 1) / 2;
        for (uint32_t i = 0; i < n / 2; i++) v[i] = arith_golden_fp32_add(v[i], v[i + upper]);
        n = upper;
      }
      result = c0 == 0 ? v[0] : arith_golden_fp32_add(result, v[0]);
    }
    out[l] = result;
  }
  free(v);
  return 0;
}
