/*
 * conv_golden: the golden result of a convolution lowered to the MXU as the model kernels do it
 * (fw/gemm.h's windowed GEMM; docs/models.md, "Convolution as a GEMM"): each output pixel's
 * im2col row in the documented K order (kernel row by kernel row, each row's kw x Cp window
 * padded with zeros to a multiple of the MXU's rows R), multiplied in the MXU's accumulation
 * order (mxu_golden_fpu), then the epilogue the vector unit applies in this order: + bias,
 * + the residual widened from bf16, ReLU, the round to bf16. Plain NCHW arrays of bf16 bits in
 * and out; it knows the layout's rules, not the firmware's code (scripts/check_layers.py).
 */
#ifndef GOLDEN_CONV_GOLDEN_H
#define GOLDEN_CONV_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  unsigned n, c, h, w;                 /* input, NCHW */
  unsigned cout, kh, kw, sh, sw;
  unsigned pt, pl, pb, pr;             /* padding: top, left, bottom, right */
  bool has_bias, has_res, relu;
} conv_golden_args_t;

/* The output's height and width (ONNX, floor). */
unsigned conv_golden_out_h(const conv_golden_args_t *a);
unsigned conv_golden_out_w(const conv_golden_args_t *a);

/* y[n][cout][oh][ow] (bf16 bits) of x[n][c][h][w] and w[cout][c][kh][kw] (bf16 bits), bias[cout]
 * (fp32 bits) and res (y's shape, bf16 bits) when the args say, on an MXU of `rows` rows. 0, or
 * -1 when out of memory. */
int conv_golden(unsigned rows, const conv_golden_args_t *a, const uint16_t *x, const uint16_t *w,
                const uint32_t *bias, const uint16_t *res, uint16_t *y);

#endif
