/* gemm: see gemm.h and docs/gemm.md. */
#include "gemm.h"

#include <stdbool.h>
#include <stdio.h>

/* Weight tiles are small and needed every tile: NW buffers let their loads run that many
 * tiles ahead and hide HBM latency. Activation and output blocks are double-buffered. */
#define NW 4
enum {
  SEM_W_READY = 0, SEM_W_FREE = SEM_W_READY + NW, SEM_OUT_READY = SEM_W_FREE + NW,
  SEM_OUT_FREE = SEM_OUT_READY + 1, SEM_A_READY = SEM_OUT_FREE + 2, SEM_A_FREE = SEM_A_READY + 2
};

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t round4(uint32_t x) { return (x + 3) & ~3u; }

uint32_t fw_gemm_block_rows(const fw_chip_t *chip, uint32_t m, uint32_t n) {
  /* VMEM: NW weight tiles (NW R lines) + 2 activation blocks + 2 output blocks (4 Mt lines);
   * accumulator: every column tile of 2 row blocks (2 * ceil(N/C) * Mt rows). */
  uint32_t by_vmem = chip->vmem_lines > NW * chip->rows ? (chip->vmem_lines - NW * chip->rows) / 4 : 0;
  uint32_t by_acc = chip->acc_depth / (2 * ceil_div(n, chip->cols));
  return min_u32(m, min_u32(by_vmem, by_acc));
}

/* Tile t in loop order (row block mc, K tile kt, column tile nt), nt fastest. */
typedef struct {
  uint32_t mc, kt, nt;
  uint32_t ablock;  /* activation block index: mc * kts + kt */
  uint32_t oblock;  /* output block index: mc * nts + nt */
} tile_t;

typedef struct {
  uint32_t r, mt, mcs, kts, nts;
  uint64_t tiles;
} plan_t;

static tile_t tile_of(const plan_t *pl, uint64_t t) {
  tile_t tl;
  tl.nt = (uint32_t)(t % pl->nts);
  tl.kt = (uint32_t)((t / pl->nts) % pl->kts);
  tl.mc = (uint32_t)(t / ((uint64_t)pl->nts * pl->kts));
  tl.ablock = tl.mc * pl->kts + tl.kt;
  tl.oblock = tl.mc * pl->nts + tl.nt;
  return tl;
}

/* The activation block a tile starts is loaded in `pieces` parts, one per column tile of
 * the block before it (so the transfer spreads over that block's tiles and never holds up
 * a weight tile), each adding 1 to the block's ready semaphore. */
typedef struct {
  uint32_t rows, piece_rows, pieces;
} apieces_t;

static apieces_t ablock_pieces(const plan_t *pl, const fw_gemm_args_t *g, const tile_t *tl, uint32_t parts) {
  apieces_t a;
  a.rows = min_u32(pl->mt, g->m - tl->mc * pl->mt);
  a.piece_rows = ceil_div(a.rows, parts);
  a.pieces = ceil_div(a.rows, a.piece_rows);
  return a;
}

/* DMA of piece `piece` of the activation block that tile `tl` starts (waiting for its
 * buffer to be free before the first piece). */
static void load_ablock_piece(fw_prog_t *dq, const fw_gemm_args_t *g, const plan_t *pl, const tile_t *tl,
                              const uint32_t a_line[2], uint32_t parts, uint32_t piece) {
  const uint32_t R = pl->r, mt = pl->mt;
  apieces_t ap = ablock_pieces(pl, g, tl, parts);
  uint32_t lo = piece * ap.piece_rows;
  if (lo >= ap.rows) return;
  uint32_t rows = min_u32(ap.piece_rows, ap.rows - lo), krows = min_u32(R, g->k - tl->kt * R);
  if (piece == 0 && tl->ablock >= 2) fw_sem_wait(dq, SEM_A_FREE + tl->ablock % 2, 1);
  fw_dma_hbm_to_vmem(dq, SEM_A_READY + tl->ablock % 2, 1,
                     g->a + 2 * ((tl->mc * mt + lo) * g->lda + tl->kt * R), 2 * g->lda,
                     a_line[tl->ablock % 2] + lo, rows, round4(2 * krows));
}

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
  plan_t pl;
  pl.r = R;
  pl.mt = fw_gemm_block_rows(chip, g->m, g->n);
  if (pl.mt == 0) {
    snprintf(err, errlen, "N = %u needs %u accumulator rows per row even at one row per block; the chip has %u",
             g->n, 2 * ceil_div(g->n, C), chip->acc_depth);
    return -1;
  }
  pl.mcs = ceil_div(g->m, pl.mt);
  pl.kts = ceil_div(g->k, R);
  pl.nts = ceil_div(g->n, C);
  pl.tiles = (uint64_t)pl.mcs * pl.kts * pl.nts;
  /* commands per tile: compute <= 11, DMA <= 8; plus a few */
  if (11 * pl.tiles + 4 + cq->count > chip->queue_depth || 8 * pl.tiles + 8 + dq->count > chip->queue_depth) {
    snprintf(err, errlen, "the GEMM needs up to %llu commands per queue; a queue holds %u",
             (unsigned long long)(11 * pl.tiles + 4), chip->queue_depth);
    return -1;
  }
  const uint32_t mt = pl.mt;
  const uint32_t ldc = (g->n + 1) & ~1u; /* bf16 output pitch */
  uint32_t w_line[NW];
  for (uint32_t i = 0; i < NW; i++) w_line[i] = i * R;
  const uint32_t a_line[2] = {NW * R, NW * R + mt};
  const uint32_t o_line[2] = {NW * R + 2 * mt, NW * R + 3 * mt};
#define ROWS(tl) min_u32(mt, g->m - (tl).mc * mt)
#define ACC(tl) ((((tl).mc % 2) * pl.nts + (tl).nt) * mt)
#define STORES(tl) ((tl).kt == pl.kts - 1)
#define LAST_USE_OF_A(tl) ((tl).nt == pl.nts - 1)

  /* ---- DMA queue. Iteration t loads tile t's weights, then piece nt of the next
   * activation block (so that block arrives spread over the current block's tiles, ahead
   * of its first tile), then writes back the output block stored at tile t-2. */
  for (uint64_t t = 0; t <= pl.tiles + 1; t++) {
    if (t >= NW && t < pl.tiles) fw_sem_wait(dq, SEM_W_FREE + t % NW, 1);
    if (t < pl.tiles) {
      tile_t tl = tile_of(&pl, t);
      uint32_t krows = min_u32(R, g->k - tl.kt * R);
      if (t == 0) load_ablock_piece(dq, g, &pl, &tl, a_line, 1, 0);
      uint32_t cols = min_u32(C, g->n - tl.nt * C);
      if (krows < R) /* weight rows beyond K are zero: stride 0 repeats the zero line */
        fw_dma_hbm_to_vmem(dq, FW_SEM_NONE, 0, g->zero, 0, w_line[t % NW] + krows, R - krows, 4 * C);
      fw_dma_hbm_to_vmem(dq, SEM_W_READY + t % NW, 1, g->b + 2 * (tl.kt * R * g->ldb + tl.nt * C), 2 * g->ldb,
                         w_line[t % NW], krows, round4(2 * cols));
      uint64_t next_block_start = t - tl.nt + pl.nts;  /* first tile of the next activation block */
      if (next_block_start < pl.tiles) {
        tile_t next = tile_of(&pl, next_block_start);
        load_ablock_piece(dq, g, &pl, &next, a_line, pl.nts, tl.nt);
      }
    }
    /* after this tile's weights, so a long write-back never delays them */
    if (t >= 2 && STORES(tile_of(&pl, t - 2))) {
      tile_t b = tile_of(&pl, t - 2);
      uint32_t cols_out = min_u32(C, g->n - b.nt * C);
      fw_sem_wait(dq, SEM_OUT_READY, 1);
      if (g->bf16_out) /* bf16 rows: pitch n rounded up to even, bytes rounded up to 4 */
        fw_dma_vmem_to_hbm(dq, SEM_OUT_FREE + b.oblock % 2, 1, o_line[b.oblock % 2],
                           g->c + 2 * (b.mc * mt * ldc + b.nt * C), 2 * ldc, ROWS(b), round4(2 * cols_out));
      else
        fw_dma_vmem_to_hbm(dq, SEM_OUT_FREE + b.oblock % 2, 1, o_line[b.oblock % 2],
                           g->c + 4 * (b.mc * mt * g->n + b.nt * C), 4 * g->n, ROWS(b), 4 * cols_out);
    }
  }
  /* Leave every semaphore at zero for the next kernel: take the signals nobody waited for
   * (the last weight and activation buffer releases, the last two output writes). */
  fw_fence(dq);
  for (uint64_t j = pl.tiles >= NW ? pl.tiles - NW : 0; j + 1 < pl.tiles; j++)
    fw_sem_wait(dq, SEM_W_FREE + j % NW, 1);
  const uint64_t ablocks = (uint64_t)pl.mcs * pl.kts, oblocks = (uint64_t)pl.mcs * pl.nts;
  if (ablocks >= 2) fw_sem_wait(dq, SEM_A_FREE + (ablocks - 2) % 2, 1);
  for (uint64_t o = oblocks >= 2 ? oblocks - 2 : 0; o < oblocks; o++) fw_sem_wait(dq, SEM_OUT_FREE + o % 2, 1);
  fw_halt(dq);

  /* ---- compute queue. Tile t: load its weights (the MXU overlaps them with tile t-1's
   * rows), release tile t-1's buffers, multiply, store a finished output block. */
  for (uint64_t t = 0; t < pl.tiles; t++) {
    tile_t tl = tile_of(&pl, t);
    fw_sem_wait(cq, SEM_W_READY + t % NW, 1);
    if (tl.nt == 0) /* the first block came in one piece, the others in one per column tile */
      fw_sem_wait(cq, SEM_A_READY + tl.ablock % 2, ablock_pieces(&pl, g, &tl, t == 0 ? 1 : pl.nts).pieces);
    fw_mxu_load(cq, w_line[t % NW]);
    if (t >= 1) {
      tile_t prev = tile_of(&pl, t - 1);
      fw_sem_signal(cq, SEM_W_FREE + (t - 1) % NW, 1);
      if (LAST_USE_OF_A(prev)) fw_sem_signal(cq, SEM_A_FREE + prev.ablock % 2, 1);
      if (STORES(prev)) fw_sem_signal(cq, SEM_OUT_READY, 1);
    }
    fw_mxu_matmul(cq, a_line[tl.ablock % 2], ROWS(tl), ACC(tl), tl.kt > 0);
    if (STORES(tl)) {
      if (tl.oblock >= 2) fw_sem_wait(cq, SEM_OUT_FREE + tl.oblock % 2, 1);
      fw_mxu_store(cq, ACC(tl), ROWS(tl), o_line[tl.oblock % 2]);
      /* the epilogue runs in place on the stored block, in program order after the store */
      if (g->relu) fw_vec(cq, FW_VEC_RELU, o_line[tl.oblock % 2], o_line[tl.oblock % 2], o_line[tl.oblock % 2], ROWS(tl), 0);
      if (g->bf16_out)
        fw_vec(cq, FW_VEC_TO_BF16, o_line[tl.oblock % 2], o_line[tl.oblock % 2], o_line[tl.oblock % 2], ROWS(tl), 0);
    }
  }
  fw_sem_signal(cq, SEM_OUT_READY, 1);
  fw_halt(cq);
#undef ROWS
#undef ACC
#undef STORES
#undef LAST_USE_OF_A
  if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) {
    snprintf(err, errlen, "out of memory building the GEMM programs");
    return -1;
  }
  return 0;
}
