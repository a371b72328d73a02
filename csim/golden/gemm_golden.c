/* gemm_golden: see gemm_golden.h. */
#include "golden/gemm_golden.h"

#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/mxu_golden_fpu.h"
#include "golden/vec_golden.h"

void gemm_golden(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, bool relu,
                 bool bf16_out, uint32_t *out) {
  mxu_golden_fpu_gemm(rows, m, k, n, a, b, out);
  for (size_t i = 0; i < m * n; i++) {
    if (relu) out[i] = vec_golden_lane(ISA_VEC_RELU, out[i], 0, 0);
    if (bf16_out) out[i] = arith_golden_fp32_to_bf16(out[i]);
  }
}

int gemm_golden_check_rows(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                           bool relu, bool bf16_out, const uint32_t *got, const size_t *which, size_t count,
                           golden_diff_t *d) {
  for (size_t r = 0; r < count; r++)
    if (which[r] >= m) return -1;
  uint32_t *want = malloc((n > 0 ? n : 1) * sizeof *want);
  if (!want) return -1;
  memset(d, 0, sizeof *d);
  for (size_t r = 0; r < count; r++) {
    const size_t i = which[r];
    gemm_golden(rows, 1, k, n, a + i * k, b, relu, bf16_out, want);
    golden_diff_t row;
    golden_compare(got + i * n, want, n, &row);
    if (row.mismatches && d->mismatches == 0) d->first = i * n + row.first, d->got = row.got, d->want = row.want;
    d->mismatches += row.mismatches;
  }
  free(want);
  return 0;
}

void golden_compare(const uint32_t *got, const uint32_t *want, size_t n, golden_diff_t *d) {
  memset(d, 0, sizeof *d);
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i] && d->mismatches++ == 0) {
      d->first = i;
      d->got = got[i];
      d->want = want[i];
    }
}

int gemm_golden_check(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, bool relu,
                      bool bf16_out, const uint32_t *got, golden_diff_t *d) {
  uint32_t *want = malloc((m * n > 0 ? m * n : 1) * sizeof *want);
  if (!want) return -1;
  gemm_golden(rows, m, k, n, a, b, relu, bf16_out, want);
  golden_compare(got, want, m * n, d);
  free(want);
  return 0;
}
