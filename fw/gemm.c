/* gemm: see gemm.h and docs/gemm.md. */
#include "gemm.h"

#include <stdbool.h>
#include <stdio.h>

enum { SEM_READY0 = 0, SEM_FREE0 = 2, SEM_OUT_READY = 4, SEM_OUT_FREE0 = 5 };

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t round4(uint32_t x) { return (x + 3) & ~3u; }

uint32_t fw_gemm_block_rows(const fw_chip_t *chip, uint32_t m) {
  /* VMEM: 2 weight tiles (2R lines) + 2 activation blocks + 2 output blocks (4 Mt lines);
   * accumulator: 2 blocks (2 Mt rows). */
  uint32_t by_vmem = chip->vmem_lines > 2 * chip->rows ? (chip->vmem_lines - 2 * chip->rows) / 4 : 0;
  return min_u32(m, min_u32(by_vmem, chip->acc_depth / 2));
}

typedef struct {
  uint32_t mc, nt, kt, block;
} tile_t;

int fw_gemm(const fw_chip_t *chip, const fw_gemm_args_t *g, fw_prog_t *cq, fw_prog_t *dq, char *err,
            size_t errlen) {
  const uint32_t R = chip->rows, C = chip->cols;
  if (g->m == 0 || g->k == 0 || g->n == 0) {
    snprintf(err, errlen, "matrix sizes must be at least 1 (M=%u K=%u N=%u)", g->m, g->k, g->n);
    return -1;
  }
  if (g->lda < g->k || g->ldb < g->n || (g->lda & 1) || (g->ldb & 1)) {
    snprintf(err, errlen, "row pitches must be even and at least K and N");
    return -1;
  }
  const uint32_t mt = fw_gemm_block_rows(chip, g->m);
  if (mt == 0) {
    snprintf(err, errlen, "the chip's VMEM or accumulator is too small for any block");
    return -1;
  }
  const uint32_t mcs = ceil_div(g->m, mt), nts = ceil_div(g->n, C), kts = ceil_div(g->k, R);
  const uint64_t tiles = (uint64_t)mcs * nts * kts;
  /* commands: compute <= 7 per tile + 3, DMA <= 6 per tile + 6 */
  if (7 * tiles + 3 + cq->count > chip->queue_depth || 6 * tiles + 6 + dq->count > chip->queue_depth) {
    snprintf(err, errlen, "the GEMM needs about %llu commands per queue; a queue holds %u",
             (unsigned long long)(7 * tiles + 3), chip->queue_depth);
    return -1;
  }
  const uint32_t w_line[2] = {0, R};
  const uint32_t a_line[2] = {2 * R, 2 * R + mt};
  const uint32_t o_line[2] = {2 * R + 2 * mt, 2 * R + 3 * mt};

#define TILE(t) ((tile_t){(uint32_t)((t) / ((uint64_t)nts * kts)), (uint32_t)(((t) / kts) % nts), \
                          (uint32_t)((t) % kts), (uint32_t)((t) / kts)})
#define BLOCK_END(t) (TILE(t).kt == kts - 1)
#define BLOCK_ROWS(tl) min_u32(mt, g->m - (tl).mc * mt)

  /* ---- DMA queue: loads for tile t, and the write-back of a finished block. */
  for (uint64_t t = 0; t <= tiles + 1; t++) {
    if (t >= 2 && t < tiles) fw_sem_wait(dq, SEM_FREE0 + t % 2, 1);
    if (t >= 2 && BLOCK_END(t - 2)) {
      tile_t b = TILE(t - 2);
      uint32_t cols = min_u32(C, g->n - b.nt * C);
      fw_sem_wait(dq, SEM_OUT_READY, 1);
      fw_dma_vmem_to_hbm(dq, SEM_OUT_FREE0 + b.block % 2, 1, o_line[b.block % 2],
                         g->c + 4 * (b.mc * mt * g->n + b.nt * C), 4 * g->n, BLOCK_ROWS(b), 4 * cols);
    }
    if (t >= tiles) continue;
    tile_t tl = TILE(t);
    uint32_t krows = min_u32(R, g->k - tl.kt * R), cols = min_u32(C, g->n - tl.nt * C);
    fw_dma_hbm_to_vmem(dq, FW_SEM_NONE, 0, g->b + 2 * (tl.kt * R * g->ldb + tl.nt * C), 2 * g->ldb,
                       w_line[t % 2], krows, round4(2 * cols));
    if (krows < R) /* zero the weight rows beyond K: stride 0 repeats the zero line */
      fw_dma_hbm_to_vmem(dq, FW_SEM_NONE, 0, g->zero, 0, w_line[t % 2] + krows, R - krows, 4 * C);
    fw_dma_hbm_to_vmem(dq, SEM_READY0 + t % 2, 1, g->a + 2 * (tl.mc * mt * g->lda + tl.kt * R), 2 * g->lda,
                       a_line[t % 2], BLOCK_ROWS(tl), round4(2 * krows));
  }
  fw_fence(dq);
  fw_halt(dq);

  /* ---- compute queue: per tile, load its weights (overlapping the previous tile's rows),
   * release the previous tile's buffers, multiply, and store a finished block. */
  for (uint64_t t = 0; t < tiles; t++) {
    tile_t tl = TILE(t);
    fw_sem_wait(cq, SEM_READY0 + t % 2, 1);
    fw_mxu_load(cq, w_line[t % 2]);
    if (t >= 1) {
      fw_sem_signal(cq, SEM_FREE0 + (t - 1) % 2, 1);
      if (BLOCK_END(t - 1)) fw_sem_signal(cq, SEM_OUT_READY, 1);
    }
    fw_mxu_matmul(cq, a_line[t % 2], BLOCK_ROWS(tl), (tl.block % 2) * mt, tl.kt > 0);
    if (BLOCK_END(t)) {
      if (tl.block >= 2) fw_sem_wait(cq, SEM_OUT_FREE0 + tl.block % 2, 1);
      fw_mxu_store(cq, (tl.block % 2) * mt, BLOCK_ROWS(tl), o_line[tl.block % 2]);
    }
  }
  fw_sem_signal(cq, SEM_OUT_READY, 1);
  fw_halt(cq);
#undef TILE
#undef BLOCK_END
#undef BLOCK_ROWS
  if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) {
    snprintf(err, errlen, "out of memory building the GEMM programs");
    return -1;
  }
  return 0;
}
