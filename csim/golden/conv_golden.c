/* conv_golden: see conv_golden.h. */
#include "golden/conv_golden.h"

#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/mxu_golden_fpu.h"
#include "golden/vec_golden.h"

/* Output rows multiplied at a time: bounds the im2col matrix of a large layer (ResNet-50's stem
 * at batch 32 has 401,408 rows of 896). Rows are independent, so the bits do not depend on it. */
#define ROWS_PER_PASS 4096u

unsigned conv_golden_out_h(const conv_golden_args_t *a) { return (a->h + a->pt + a->pb - a->kh) / a->sh + 1; }
unsigned conv_golden_out_w(const conv_golden_args_t *a) { return (a->w + a->pl + a->pr - a->kw) / a->sw + 1; }

int conv_golden(unsigned rows, const conv_golden_args_t *a, const uint16_t *x, const uint16_t *w,
                const uint32_t *bias, const uint16_t *res, uint16_t *y) {
  const size_t oh_n = conv_golden_out_h(a), ow_n = conv_golden_out_w(a), pixels = (size_t)a->n * oh_n * ow_n;
  const size_t cp = (a->c + 1) & ~1u, seg = (a->kw * cp + rows - 1) / rows * rows, k = a->kh * seg;
  uint16_t *bm = calloc(k * a->cout, 2), *am = malloc(ROWS_PER_PASS * k * 2);
  uint32_t *acc = malloc((size_t)ROWS_PER_PASS * a->cout * 4);
  if (!bm || !am || !acc) {
    free(bm), free(am), free(acc);
    return -1;
  }
  /* B: row i seg + j Cp + c of column co is w[co][c][i][j]; zero elsewhere */
  for (size_t co = 0; co < a->cout; co++)
    for (size_t c = 0; c < a->c; c++)
      for (size_t i = 0; i < a->kh; i++)
        for (size_t j = 0; j < a->kw; j++)
          bm[(i * seg + j * cp + c) * a->cout + co] = w[((co * a->c + c) * a->kh + i) * a->kw + j];
  for (size_t p0 = 0; p0 < pixels; p0 += ROWS_PER_PASS) {
    const size_t np = pixels - p0 < ROWS_PER_PASS ? pixels - p0 : ROWS_PER_PASS;
    memset(am, 0, np * k * 2);
    for (size_t r = 0; r < np; r++) {
      const size_t p = p0 + r, img = p / (oh_n * ow_n), oh = p / ow_n % oh_n, ow = p % ow_n;
      for (size_t i = 0; i < a->kh; i++)
        for (size_t j = 0; j < a->kw; j++) {
          const long ih = (long)(oh * a->sh + i) - a->pt, iw = (long)(ow * a->sw + j) - a->pl;
          if (ih < 0 || iw < 0 || ih >= (long)a->h || iw >= (long)a->w) continue; /* padding: zero */
          for (size_t c = 0; c < a->c; c++)
            am[r * k + i * seg + j * cp + c] = x[((img * a->c + c) * a->h + (size_t)ih) * a->w + (size_t)iw];
        }
    }
    mxu_golden_fpu_gemm(rows, np, k, a->cout, am, bm, acc);
    for (size_t r = 0; r < np; r++) {
      const size_t p = p0 + r, img = p / (oh_n * ow_n), pix = p % (oh_n * ow_n);
      for (size_t co = 0; co < a->cout; co++) {
        const size_t at = (img * a->cout + co) * oh_n * ow_n + pix;
        uint32_t v = acc[r * a->cout + co];
        if (a->has_bias) v = vec_golden_lane(ISA_VEC_ADD, v, bias[co], 0);
        if (a->has_res) v = vec_golden_lane(ISA_VEC_ADD, v, arith_golden_bf16_to_fp32(res[at]), 0);
        if (a->relu) v = vec_golden_lane(ISA_VEC_RELU, v, 0, 0);
        y[at] = arith_golden_fp32_to_bf16(v);
      }
    }
  }
  free(bm), free(am), free(acc);
  return 0;
}
