/*
 * conv: the convolution kernel of the model compiler (docs/models.md, "Convolution as a GEMM"):
 * a 2-D convolution (any kernel size, stride and padding, groups 1) over an activation in the
 * layout of fw/act.h, run as the firmware GEMM whose A rows are the input's im2col rows, made on
 * the chip by strided DMAs from the input's pixels (fw_gemm_window_t), with the epilogue fused
 * in (bias, a residual add, ReLU, the round to bf16) and the result written as the output's
 * pixels. A fully connected layer is the same kernel over a 1 x 1 image.
 */
#ifndef FW_CONV_H
#define FW_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/gemm.h"

typedef struct {
  fw_gemm_window_t win;  /* the tensors and the window; win.m0: the first output pixel to make */
  uint32_t pixels;       /* output pixels to make from win.m0 (a part of the layer; 0: to the end) */
  uint32_t weights;      /* HBM: B, K x Cout bf16 (fw_conv_k rows in fw_conv_weight_row order), pitch Cout rounded up to even */
  uint32_t zero;         /* HBM: at least a line of zero bytes */
  bool has_bias;         /* bias: Cout fp32 at `bias`, zero-padded to whole lines of C lanes */
  uint32_t bias;
  bool relu;
} fw_conv_args_t;

/* K of the layer's GEMM: kh kernel rows of fw_conv_segment each. */
static inline uint32_t fw_conv_k(uint32_t rows, uint32_t kh, uint32_t kw, uint32_t cp) {
  return kh * fw_conv_segment(rows, kw, cp);
}

/* Appends the layer (its part) to the programs of every core of the chip (compute[c], dma[c]:
 * the output pixels split over the cores as fw_gemm_cores splits rows). 0, or -1 with a message
 * (shapes that disagree, a border that does not cover the padding, what does not fit the chip). */
int fw_conv2d(const chip_geometry_t *chip, const fw_conv_args_t *a, fw_prog_t *compute, fw_prog_t *dma, char *err,
              size_t errlen);

#endif
