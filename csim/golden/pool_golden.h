/*
 * pool_golden: the golden model of the pooling kernels (fw/pool.h), written from the order of
 * arithmetic docs/models.md ("Pooling kernels") defines, not from the firmware. Tensors are
 * logical NCHW arrays of bf16 bit patterns (uint16_t), the way ONNX sees them: no border, no
 * channel padding, no VMEM blocks. Arithmetic on arith_golden's soft float: bf16 widened to
 * fp32 (subnormals to zero), max or fp32 adds in window order, the fp32 product with the
 * reciprocal of the count, RNE to bf16.
 */
#ifndef GOLDEN_POOL_GOLDEN_H
#define GOLDEN_POOL_GOLDEN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  uint32_t kh, kw, sh, sw;
  uint32_t pad_top, pad_left, pad_bottom, pad_right;
  bool count_include_pad;
} pool_golden_window_t;

/* The output size of one dimension (ONNX, ceil_mode 0), 0 when no window fits. */
uint32_t pool_golden_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t pad_lo, uint32_t pad_hi);

/* in: n x c x h x w; out: n x c x oh x ow (pool_golden_out_size). 0, or -1 when the window is
 * not one the kernels take (a zero kernel or stride, a pad not below its kernel side, no
 * output). */
int pool_golden_max(const pool_golden_window_t *win, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                    const uint16_t *in, uint16_t *out);
int pool_golden_avg(const pool_golden_window_t *win, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                    const uint16_t *in, uint16_t *out);
/* out: n x c, the mean of each channel's h x w pixels. */
void pool_golden_global_avg(uint32_t n, uint32_t c, uint32_t h, uint32_t w, const uint16_t *in, uint16_t *out);

/* 1/count rounded to the nearest fp32 (ties to even), by long division: fp32 bits. */
uint32_t pool_golden_recip(uint64_t count);

#endif
