/*
 * act: the activation layout in HBM that the model kernels (conv, pooling, the compiler's
 * element-wise and matrix kernels) read and write (docs/models.md, "Activation layout").
 *
 * A tensor of logical shape [N, C, H, W] (ONNX's NCHW; a matrix [M, K] is N = M, C = K,
 * H = W = 1) is stored as bf16, channels last, with a zero border of bh rows and bw columns
 * round every image: image n, row h in [-bh, H + bh), column w in [-bw, W + bw), channel c in
 * [0, Cp) with Cp = C rounded up to even (so a pixel's bytes are a multiple of 4, as a DMA row
 * must be). The border and the channels past C are zero and stay zero: producers write only
 * the interior. A consumer that pads by p <= the border reads its windows as plain strided
 * rows, with no edge cases: a convolution's im2col rows are made by the chip's DMA engine
 * from these addresses, never by the host.
 *
 * Header only, static inline, so that the firmware and the golden models can both use the
 * arithmetic of addresses without sharing any code that computes values.
 */
#ifndef FW_ACT_H
#define FW_ACT_H

#include <stdint.h>

typedef struct {
  uint32_t addr;        /* HBM byte address of the tensor's first byte (image 0, row -bh, column -bw) */
  uint32_t n, c, h, w;  /* logical NCHW shape */
  uint32_t bh, bw;      /* zero border: rows above and below, columns left and right */
} fw_act_t;

static inline uint32_t fw_act_cp(const fw_act_t *t) { return (t->c + 1) & ~1u; }
static inline uint64_t fw_act_pixel_bytes(const fw_act_t *t) { return 2ull * fw_act_cp(t); }
static inline uint64_t fw_act_row_bytes(const fw_act_t *t) { return (t->w + 2ull * t->bw) * fw_act_pixel_bytes(t); }
static inline uint64_t fw_act_image_bytes(const fw_act_t *t) { return (t->h + 2ull * t->bh) * fw_act_row_bytes(t); }
static inline uint64_t fw_act_bytes(const fw_act_t *t) { return t->n * fw_act_image_bytes(t); }

/* The byte address of channel 0 of pixel (h, w) of image n, h and w logical (from -bh, -bw). */
static inline uint64_t fw_act_pixel_addr(const fw_act_t *t, uint32_t n, int64_t h, int64_t w) {
  return t->addr + n * fw_act_image_bytes(t) + (uint64_t)(h + t->bh) * fw_act_row_bytes(t) +
         (uint64_t)(w + t->bw) * fw_act_pixel_bytes(t);
}

#endif
