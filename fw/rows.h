/*
 * rows: the row-wise kernels of the model compiler for transformer layers, on the vector unit:
 * Softmax along the last axis (with an optional pre-scale, attention's 1/sqrt(d) fused),
 * LayerNorm (with an optional residual added first) and the element-wise maps (GELU in its erf
 * and tanh forms, Add of a second tensor or of a row vector, Mul and Div by a constant, Relu).
 * docs/models.md, "Row kernels", defines the order of the arithmetic bit for bit
 * (csim/golden/rows_golden.c reproduces it) and docs/timing.md, "Row kernels", the cycles.
 *
 * A matrix [M, K] is an activation of fw/act.h with n = M, c = K, h = w = 1 and no border: row
 * m is Cp = K rounded up to even bf16, ceil(Cp / C) channel blocks of C lanes (C = MXU columns),
 * a VMEM line each. DMA brings a tile of rows into VMEM block by block (the tile's lines block
 * major: block b of row i at line b r + i), TO_FP32 widens them, the vector unit computes in
 * fp32, TO_BF16 rounds, DMA writes the tile back. Lanes past K take no part in a row's
 * reductions: the host puts the masks they need in constant lines (fw_rows_consts) the kernel
 * loads from HBM once a core.
 *
 * The rows are split over the chip's cores as fw_gemm_cores splits rows. Each core streams its
 * rows in tiles through two VMEM slots: DMA loads tile t + 1 while the vector unit computes
 * tile t, and stores tile t while tile t + 1 is computed. Each function appends every core's
 * programs to compute[c] and dma[c], ending with HALT (as fw_conv2d's do); semaphores
 * FW_SEMS_STREAM .. + 3, left at zero; VMEM from line 0. 0, or -1 with a message (a shape that
 * is not a matrix, tensors that disagree or overlap, a constant that is not finite, what does
 * not fit VMEM or the queues).
 */
#ifndef FW_ROWS_H
#define FW_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/act.h"
#include "fw/hal.h"

typedef enum {
  FW_ROWS_SOFTMAX,
  FW_ROWS_LAYERNORM,
  FW_ROWS_GELU_ERF,   /* 0.5 x (1 + erf(x / sqrt 2)) */
  FW_ROWS_GELU_TANH,  /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  FW_ROWS_ADD,        /* x + b, b a tensor of x's shape */
  FW_ROWS_ADD_ROW,    /* x + v, v a row of K fp32 values broadcast over the rows */
  FW_ROWS_MUL,        /* x * constant */
  FW_ROWS_DIV,        /* x * fp32(1 / constant): the reciprocal rounded to fp32 once, on the host */
  FW_ROWS_RELU,
} fw_rows_kind_t;

typedef struct {
  fw_rows_kind_t op;    /* fw_map_rows: which map (GELU_ERF .. RELU) */
  fw_act_t in, out;     /* [M, K] each: n = M, c = K, h = w = 1, no border */
  uint32_t consts;      /* HBM: the fw_rows_consts lines of this kernel and K (4-byte aligned) */
  uint32_t scale;       /* fp32 bits: Softmax's pre-scale (0x3F800000 = none), MUL's or DIV's constant */
  /* LayerNorm */
  uint32_t epsilon;     /* fp32 bits, a positive normal number */
  uint32_t gamma, beta; /* HBM: K fp32 values each, zero-padded to whole lines of C lanes */
  bool has_b;           /* LayerNorm: a residual b added to x first; ADD: must be set */
  fw_act_t b;           /* LayerNorm's residual or ADD's second operand: in's shape */
  uint32_t row;         /* ADD_ROW: HBM, K fp32 values zero-padded to whole lines */
  uint32_t vmem_lines;  /* the VMEM lines from line 0 it may use; 0: all of it */
} fw_rows_args_t;

/* The constant lines (C fp32 lanes each, `chip->cols` lanes) kernel `kind` needs for rows of K
 * values: returns how many, and writes them to lines (lines * C words) when lines is not NULL.
 * Softmax: one line when K is not a multiple of C (+0 in the last block's lanes below K, -Inf
 * past it), else none. LayerNorm: a line of +1.0, then, when K is not a multiple of C, the last
 * block's mask (+1.0 below K, +0 past it). GELU: a line of +1.0. The others: none. */
uint32_t fw_rows_consts(const chip_geometry_t *chip, fw_rows_kind_t kind, uint32_t k, uint32_t *lines);

int fw_softmax_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *compute, fw_prog_t *dma,
                    char *err, size_t errlen);
int fw_layernorm_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *compute, fw_prog_t *dma,
                      char *err, size_t errlen);
int fw_map_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *compute, fw_prog_t *dma, char *err,
                size_t errlen);

/* The tile (rows a core streams at a time) the kernel picks for core `core`, or 0 when the core
 * has no rows or the kernel refuses the arguments (the message in err). */
uint32_t fw_rows_tile(const chip_geometry_t *chip, fw_rows_kind_t kind, const fw_rows_args_t *a, unsigned core,
                      char *err, size_t errlen);

#endif
