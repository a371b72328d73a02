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

#include "fw/hal.h"

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
