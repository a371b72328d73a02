/*
 * gemm: the firmware GEMM kernel. C = A x B with A (M x K bf16), B (K x N bf16) and C
 * (M x N fp32) in HBM, on one chip, as a compute program and a DMA program synchronised by
 * semaphores (docs/isa.md), tiled with double-buffered VMEM tiles so that DMA overlaps the
 * MXU. It uses semaphores 0..14 and leaves them all at zero. Tiling and synchronisation
 * are described in docs/gemm.md.
 */
#ifndef FW_GEMM_H
#define FW_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/act.h"
#include "fw/hal.h"

/* A GEMM whose rows are pixels (docs/models.md, "Convolution as a GEMM"): A's row r is the im2col
 * row of output pixel m0 + r of a convolution over `in` (bordered NHWC, fw/act.h), made on the
 * chip by strided DMAs straight from the input's pixels, one per output-row segment and K tile;
 * C's row r is that pixel of `out` (bf16). K is laid out by kernel rows: kernel row i holds the
 * kw * Cp input values of its window (pixel after pixel, Cp channels each) at K index i * seg,
 * seg = kw * Cp rounded up to the MXU's rows R, zero between; B must be laid out the same way
 * (fw_conv_weight_row). in's border must cover the padding: bh >= pt, pb; bw >= pl, pr. */
typedef struct {
  fw_act_t in, out;
  fw_act_t res;          /* has_res: added to the result before ReLU (out's shape, its own border) */
  bool has_res;
  uint32_t kh, kw, sh, sw, pt, pl;
  uint32_t m0;           /* output pixel of A's row 0 (a part of the conv: cores, or a split) */
} fw_gemm_window_t;

/* The K length of a kernel row's window, padded to R: seg above. */
static inline uint32_t fw_conv_segment(uint32_t rows, uint32_t kw, uint32_t cp) {
  return (kw * cp + rows - 1) / rows * rows;
}
/* B's row for input channel c at kernel position (i, j). */
static inline uint32_t fw_conv_weight_row(uint32_t rows, uint32_t kw, uint32_t cp, uint32_t i, uint32_t j, uint32_t c) {
  return i * fw_conv_segment(rows, kw, cp) + j * cp + c;
}

/* The DMAs that make output pixels [p0, p0 + n)'s im2col rows of K tile kt (of an MXU of `rows`
 * rows) in VMEM lines from `line`: one strided DMA per run of pixels in an output row, the last
 * adding 1 to `sem` (docs/models.md, "Convolution as a GEMM"; its timing contract there). */
void fw_im2col_dma(fw_prog_t *dq, const fw_gemm_window_t *w, uint32_t rows, uint32_t kt, uint32_t p0, uint32_t n,
                   uint32_t line, unsigned sem);

typedef struct {
  uint32_t a, b, c;      /* HBM byte addresses */
  uint32_t zero;         /* HBM address of at least 4 * cols zero bytes */
  uint32_t m, k, n;
  uint32_t lda, ldb;     /* row pitch of A and B in elements, even (of A^T and B^T when transposed) */
  bool relu;             /* apply ReLU to C on the way out (vector unit) */
  bool bf16_out;         /* write C as bf16 (RNE), row pitch n rounded up to even; else fp32, pitch n */
  uint32_t k_panel;      /* K tiles per activation panel; 0 chooses (docs/gemm.md) */
  bool b_transposed;     /* HBM at b holds B^T (N x K, row pitch ldb >= K): each weight tile is
                            read from B^T's rows and loaded transposed, in the same cycles */
  bool a_transposed;     /* HBM at a holds A^T (K x M, row pitch lda >= M): the activation panels'
                            lines are made by transposing DMAs from A^T's rows (square MXUs;
                            docs/gemm.md, "A transposed"); the same bits as from A */
  const fw_gemm_window_t *window; /* non-NULL: a convolution (above); A, lda and c unused, bf16_out */
  bool has_bias;         /* add bias[column] (fp32, HBM at `bias`, a C-lane line per column tile) */
  uint32_t bias;
} fw_gemm_args_t;

/* Appends the GEMM to a compute program and a DMA program (each ends with HALT).
 * Returns 0, or -1 with a message when the shape cannot run on this chip. */
int fw_gemm(const chip_geometry_t *chip, const fw_gemm_args_t *g, fw_prog_t *compute, fw_prog_t *dma,
            char *err, size_t errlen);

/* Core c's rows [*lo, *hi) of an M-row GEMM split over `cores` (fw_gemm_cores' split), and
 * the most rows any core takes: the share that sets a multi-core GEMM's time. */
void fw_gemm_core_rows(uint32_t m, uint32_t cores, uint32_t c, uint32_t *lo, uint32_t *hi);
uint32_t fw_gemm_max_core_rows(uint32_t m, uint32_t cores);

/* The GEMM over every core of the chip (docs/gemm.md, "Cores"): core c multiplies rows
 * [b_c, b_{c+1}) of A into the same rows of C, b_c = c M / cores rounded down to even (the
 * cores' VMEMs are their own; they share B and the HBM port). Appends core c's programs to
 * compute[c] and dma[c] (a core without rows gets HALTs). One core: fw_gemm. 0, or -1 with a
 * message. */
int fw_gemm_cores(const chip_geometry_t *chip, const fw_gemm_args_t *g, fw_prog_t *compute, fw_prog_t *dma, char *err,
                  size_t errlen);

/* The K tiles per panel the kernel chooses for this shape on this chip, A in HBM (with A^T it
 * keeps two more VMEM lines, which can change the choice when VMEM is what limits it). */
uint32_t fw_gemm_panel_tiles(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n);

/* The row-block height it uses with panels of kp K tiles (0: the chosen panel), A in HBM
 * (with A^T it can be lower: docs/gemm.md, "A transposed"); 0 when not even one row fits VMEM
 * and the accumulator. */
uint32_t fw_gemm_block_rows(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n, uint32_t kp);

#endif
