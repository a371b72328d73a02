/*
 * rows_golden: the golden model of the row kernels (fw/rows.h: Softmax, LayerNorm, GELU, Add,
 * Mul, Div, Relu over the rows of a matrix), written from the orders of arithmetic
 * docs/models.md ("Row kernels") defines, not from the firmware. A matrix is M rows of K bf16
 * bit patterns (uint16_t), row after row, the way ONNX sees it. Each row is cut into lines of
 * `lanes` fp32 lanes (zero past K, as the chip's DMA fills them) and every step is one
 * vec_golden_line or vec_golden_lane operation, so the vector unit's exact EXP, RECIP, RSQRT
 * and ERF are the ones used.
 */
#ifndef GOLDEN_ROWS_GOLDEN_H
#define GOLDEN_ROWS_GOLDEN_H

#include <stdint.h>

typedef enum {
  ROWS_GOLDEN_GELU_ERF,
  ROWS_GOLDEN_GELU_TANH,
  ROWS_GOLDEN_ADD,     /* x + b, b a matrix of x's shape */
  ROWS_GOLDEN_ADD_ROW, /* x + v, v K fp32 values */
  ROWS_GOLDEN_MUL,     /* x * c */
  ROWS_GOLDEN_DIV,     /* x * fp32(1 / c) */
  ROWS_GOLDEN_RELU,
} rows_golden_map_t;

/* Softmax of each row of in (m x k) after the pre-scale (fp32 bits; 1.0 is none) into out.
 * 0, or -1 for a shape the kernels refuse (lanes odd or above VEC_GOLDEN_MAX_LANES, m or k 0). */
int rows_golden_softmax(unsigned lanes, uint32_t m, uint32_t k, uint32_t scale, const uint16_t *in, uint16_t *out);

/* LayerNorm of each row of in (+ res, when res is not NULL, added first): gamma and beta are k
 * fp32 bit patterns each, epsilon fp32 bits. */
int rows_golden_layernorm(unsigned lanes, uint32_t m, uint32_t k, const uint16_t *in, const uint16_t *res,
                          const uint32_t *gamma, const uint32_t *beta, uint32_t epsilon, uint16_t *out);

/* A map: b is the second matrix (ADD), row the k fp32 values (ADD_ROW), c the fp32 constant
 * (MUL, DIV); the others NULL or ignored. */
int rows_golden_map(rows_golden_map_t op, unsigned lanes, uint32_t m, uint32_t k, const uint16_t *in,
                    const uint16_t *b, const uint32_t *row, uint32_t c, uint16_t *out);

#endif
