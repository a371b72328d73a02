/* conv: see conv.h and docs/models.md. */
#include "fw/conv.h"

#include <stdio.h>

int fw_conv2d(const chip_geometry_t *chip, const fw_conv_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
              size_t errlen) {
  const fw_act_t *out = &a->win.out;
  const uint64_t all = (uint64_t)out->n * out->h * out->w;
  if (a->win.m0 >= all || (uint64_t)a->win.m0 + a->pixels > all) {
    snprintf(err, errlen, "output pixels %u (+%u) are past the layer's %llu", a->win.m0, a->pixels,
             (unsigned long long)all);
    return -1;
  }
  const uint32_t k = fw_conv_k(chip->rows, a->win.kh, a->win.kw, fw_act_cp(&a->win.in));
  fw_gemm_args_t g = {.b = a->weights, .zero = a->zero, .m = a->pixels ? a->pixels : (uint32_t)(all - a->win.m0),
                      .k = k, .n = out->c, .lda = k + (k & 1), .ldb = (out->c + 1) & ~1u, .relu = a->relu,
                      .bf16_out = true, .window = &a->win, .has_bias = a->has_bias, .bias = a->bias};
  return fw_gemm_cores(chip, &g, cq, dq, err, errlen);
}
