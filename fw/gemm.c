/* gemm: see gemm.h and docs/gemm.md. */
#include "fw/gemm.h"

#include <stdbool.h>
#include <stdio.h>

/* Weight tiles are small and needed every tile: NW buffers let their loads run that many
 * tiles ahead and hide HBM latency. Activation panels and output blocks are double-buffered. */
#define NW 4
/* The last output block is stored and written back in this many pieces (at most the
 * compute queue's four pending release fences). */
#define LAST_PIECES 4
enum {
  SEM_W_READY = FW_SEMS_GEMM, SEM_W_FREE = SEM_W_READY + NW, SEM_OUT_READY = SEM_W_FREE + NW,
  SEM_OUT_FREE = SEM_OUT_READY + 1, SEM_A_READY = SEM_OUT_FREE + 2, SEM_A_FREE = SEM_A_READY + 2
};

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t round4(uint32_t x) { return (x + 3) & ~3u; }

/* Row-block height for K panels of kp tiles. VMEM: NW weight tiles (NW R lines), two
 * activation panels (2 kp Mt lines) and two output blocks (2 Mt lines). Accumulator: two
 * column tiles when a panel spans all of K (outputs finish one column tile at a time),
 * else every column tile of two row blocks. */
static uint32_t block_rows_for(const chip_geometry_t *chip, uint32_t m, uint32_t kts, uint32_t nts, uint32_t kp) {
  uint32_t nw = NW * chip->rows;
  uint32_t by_vmem = chip->vmem_lines > nw ? (chip->vmem_lines - nw) / (2 * kp + 2) : 0;
  uint32_t by_acc = kp == kts ? chip->acc_depth / 2 : chip->acc_depth / (2 * nts);
  return min_u32(m, min_u32(by_vmem, by_acc));
}

/* K tiles per panel: all of K when a row block can still be at least min(M, R) rows high
 * (every output block then finishes on its own and write-backs spread evenly), else the
 * largest panel that allows it, else one K tile. */
static uint32_t choose_panel(const chip_geometry_t *chip, uint32_t m, uint32_t kts, uint32_t nts) {
  uint32_t want = min_u32(m, chip->rows);
  for (uint32_t kp = kts; kp > 1; kp--)
    if (block_rows_for(chip, m, kts, nts, kp) >= want) return kp;
  return 1;
}

uint32_t fw_gemm_panel_tiles(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n) {
  return choose_panel(chip, m, ceil_div(k, chip->rows), ceil_div(n, chip->cols));
}

uint32_t fw_gemm_block_rows(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n, uint32_t kp) {
  uint32_t kts = ceil_div(k, chip->rows), nts = ceil_div(n, chip->cols);
  if (kp == 0) kp = choose_panel(chip, m, kts, nts);
  uint32_t mt = block_rows_for(chip, m, kts, nts, kp);
  return mt ? ceil_div(m, ceil_div(m, mt)) : 0;  /* balanced: blocks differ by at most a row */
}

typedef struct {
  uint32_t r, mt, mcs, kts, nts, kp, kps;
  uint64_t tiles;
} plan_t;

/* Tile t in loop order (row block mc, K panel p, column tile nt, K tile in the panel kk),
 * kk fastest. */
typedef struct {
  uint32_t mc, p, nt, kk, kt;
  uint32_t kpn;     /* K tiles in this panel */
  uint32_t ablock;  /* activation panel index: mc * kps + p */
  uint32_t oblock;  /* output block index: mc * nts + nt */
  uint32_t i;       /* index of the tile in its panel: nt * kpn + kk */
} tile_t;

static uint32_t panel_tiles(const plan_t *pl, uint32_t p) { return min_u32(pl->kp, pl->kts - p * pl->kp); }

static tile_t tile_of(const plan_t *pl, uint64_t t) {
  tile_t tl;
  uint64_t per_block = (uint64_t)pl->kts * pl->nts;
  tl.mc = (uint32_t)(t / per_block);
  uint32_t in_block = (uint32_t)(t % per_block);
  tl.p = in_block / (pl->kp * pl->nts);
  tl.kpn = panel_tiles(pl, tl.p);
  tl.i = in_block - tl.p * pl->kp * pl->nts;
  tl.nt = tl.i / tl.kpn;
  tl.kk = tl.i % tl.kpn;
  tl.kt = tl.p * pl->kp + tl.kk;
  tl.ablock = tl.mc * pl->kps + tl.p;
  tl.oblock = tl.mc * pl->nts + tl.nt;
  return tl;
}

/* A panel is loaded in pieces, each adding 1 to its buffer's ready semaphore: every K tile
 * of it (a sub-block of Mt lines) in `per_sub` row chunks, sub-blocks in order. */
static uint32_t panel_rows(const plan_t *pl, const fw_gemm_args_t *g, uint32_t mc) {
  return min_u32(pl->mt, g->m - mc * pl->mt);
}

/* DMA of piece `piece` (sub-block piece / per_sub, chunk piece % per_sub) of the panel
 * that tile `tl` starts, waiting for its buffer to be free before the first piece. */
static void load_panel_piece(fw_prog_t *dq, const fw_gemm_args_t *g, const plan_t *pl, const tile_t *tl,
                             const uint32_t a_line[2], uint32_t per_sub, uint32_t piece) {
  const uint32_t R = pl->r, mt = pl->mt;
  uint32_t rows = panel_rows(pl, g, tl->mc), chunk = ceil_div(rows, per_sub);
  uint32_t kk = piece / per_sub, lo = (piece % per_sub) * chunk;
  if (lo >= rows) return;
  uint32_t n = min_u32(chunk, rows - lo), kt = tl->p * pl->kp + kk, krows = min_u32(R, g->k - kt * R);
  if (piece == 0 && tl->ablock >= 2) fw_sem_wait(dq, SEM_A_FREE + tl->ablock % 2, 1);
  fw_dma_hbm_to_vmem(dq, SEM_A_READY + tl->ablock % 2, 1, g->a + 2 * ((tl->mc * mt + lo) * g->lda + kt * R),
                     2 * g->lda, a_line[tl->ablock % 2] + kk * mt + lo, n, round4(2 * krows));
}

/* Non-empty chunks per sub-block when a panel of `rows` rows is cut in `per_sub`. */
static uint32_t chunks(uint32_t rows, uint32_t per_sub) { return ceil_div(rows, ceil_div(rows, per_sub)); }

/* The GEMM as planned for one chip: the tiling and where its buffers live in VMEM. */
typedef struct {
  const fw_gemm_args_t *g;
  plan_t pl;
  uint32_t w_line[NW], a_line[2], o_line[2];
  uint32_t per_sub;  /* chunks per sub-block: one piece per column tile's worth */
  uint32_t ldc;      /* bf16 output pitch */
  bool one_panel;    /* one K panel spans all of K */
} gemm_t;

static uint32_t rows_of(const gemm_t *x, const tile_t *tl) { return panel_rows(&x->pl, x->g, tl->mc); }

/* The first accumulator row of a tile's output block: two column tiles alternating with one
 * panel over K, else every column tile of two row blocks alternating. */
static uint32_t acc_of(const gemm_t *x, const tile_t *tl) {
  const plan_t *pl = &x->pl;
  return x->one_panel ? (tl->oblock % 2) * pl->mt : ((tl->mc % 2) * pl->nts + tl->nt) * pl->mt;
}

/* The tile finishes its output block (the last K tile): its rows are stored. */
static bool stores(const gemm_t *x, const tile_t *tl) { return tl->kt == x->pl.kts - 1; }

/* The last tile that reads its activation panel. */
static bool last_use_of_a(const gemm_t *x, const tile_t *tl) { return tl->i == tl->kpn * x->pl.nts - 1; }

/* Checks the shape against the chip and plans it; -1 with a message when it cannot run. */
static int plan_gemm(const chip_geometry_t *chip, const fw_gemm_args_t *g, gemm_t *x, char *err, size_t errlen) {
  const uint32_t R = chip->rows;
  if (g->m == 0 || g->k == 0 || g->n == 0) {
    snprintf(err, errlen, "matrix sizes must be at least 1 (M=%u K=%u N=%u)", g->m, g->k, g->n);
    return -1;
  }
  if (g->lda < g->k || g->ldb < (g->b_transposed ? g->k : g->n) || (g->lda & 1) || (g->ldb & 1)) {
    snprintf(err, errlen, "row pitches must be even and at least K and %s", g->b_transposed ? "K (B^T)" : "N");
    return -1;
  }
  if (g->b_transposed && chip->rows != chip->cols) {
    snprintf(err, errlen, "a transposed B needs a square MXU, not %ux%u", chip->rows, chip->cols);
    return -1;
  }
  plan_t *pl = &x->pl;
  x->g = g;
  pl->r = R;
  pl->kts = ceil_div(g->k, R);
  pl->nts = ceil_div(g->n, chip->cols);
  if (g->k_panel > pl->kts) {
    snprintf(err, errlen, "a K panel of %u tiles is more than K has (%u)", g->k_panel, pl->kts);
    return -1;
  }
  pl->kp = g->k_panel ? g->k_panel : choose_panel(chip, g->m, pl->kts, pl->nts);
  pl->kps = ceil_div(pl->kts, pl->kp);
  pl->mt = fw_gemm_block_rows(chip, g->m, g->k, g->n, pl->kp);
  if (pl->mt == 0) {
    snprintf(err, errlen, "N = %u with K panels of %u tiles leaves no room for even one row per block "
             "(VMEM %u lines, accumulator %u rows)", g->n, pl->kp, chip->vmem_lines, chip->acc_depth);
    return -1;
  }
  pl->mcs = ceil_div(g->m, pl->mt);
  pl->tiles = (uint64_t)pl->mcs * pl->kts * pl->nts;
  if (pl->tiles * 3 > chip->queue_depth) { /* each tile takes at least 3 compute commands */
    snprintf(err, errlen, "the GEMM has %llu tiles and needs at least 3 commands per queue per tile; a queue "
             "holds %u commands", (unsigned long long)pl->tiles, chip->queue_depth);
    return -1;
  }
  const uint32_t mt = pl->mt;
  for (uint32_t i = 0; i < NW; i++) x->w_line[i] = i * R;
  x->a_line[0] = NW * R, x->a_line[1] = NW * R + pl->kp * mt;
  x->o_line[0] = NW * R + 2 * pl->kp * mt, x->o_line[1] = NW * R + 2 * pl->kp * mt + mt;
  x->per_sub = pl->nts;
  x->ldc = (g->n + 1) & ~1u;
  x->one_panel = pl->kp == pl->kts;
  return 0;
}

/* DMA queue: writes back rows [lo, lo + n) of the output block of tile b, signalling `sem`. */
static void write_back(fw_prog_t *dq, const gemm_t *x, const chip_geometry_t *chip, const tile_t *b, uint32_t lo,
                       uint32_t n, unsigned sem) {
  const fw_gemm_args_t *g = x->g;
  const uint32_t C = chip->cols, mt = x->pl.mt, cols_out = min_u32(C, g->n - b->nt * C);
  if (g->bf16_out) /* bf16 rows: pitch n rounded up to even, bytes rounded up to 4 */
    fw_dma_vmem_to_hbm(dq, sem, 1, x->o_line[b->oblock % 2] + lo, g->c + 2 * ((b->mc * mt + lo) * x->ldc + b->nt * C),
                       2 * x->ldc, n, round4(2 * cols_out));
  else
    fw_dma_vmem_to_hbm(dq, sem, 1, x->o_line[b->oblock % 2] + lo, g->c + 4 * ((b->mc * mt + lo) * g->n + b->nt * C),
                       4 * g->n, n, 4 * cols_out);
}

/* ---- DMA queue. Iteration t loads tile t's weights, then its share of the next panel's
 * pieces (so that panel arrives spread over the current panel's tiles, ahead of its first
 * tile), then writes back the output block stored at tile t - wb_delay. The first panel is
 * loaded one sub-block per iteration, ahead of the tile that first needs it. Output blocks
 * finish every `spacing` tiles at most. The write-back of the block stored at tile s waits
 * until iteration s + wb_delay, when its store is done (DMA runs up to NW-1 tiles ahead of
 * the MXU, a store ends about two tiles after its matmul starts), so the wait for it never
 * holds up later weight tiles; the buffer is needed again 2 spacing tiles after s. */
static void dma_program(fw_prog_t *dq, const gemm_t *x, const chip_geometry_t *chip) {
  const fw_gemm_args_t *g = x->g;
  const plan_t *pl = &x->pl;
  const uint32_t R = chip->rows, C = chip->cols;
  const uint32_t spacing = panel_tiles(pl, pl->kps - 1);
  const uint32_t wb_delay = spacing == 1 ? 2 : min_u32(NW + 1, spacing + 1);
  for (uint64_t t = 0; t < pl->tiles + wb_delay; t++) {
    if (t >= NW && t < pl->tiles) fw_sem_wait(dq, SEM_W_FREE + t % NW, 1);
    if (t < pl->tiles) {
      tile_t tl = tile_of(pl, t);
      uint32_t krows = min_u32(R, g->k - tl.kt * R), cols = min_u32(C, g->n - tl.nt * C);
      if (g->b_transposed) {
        /* line j is weight column j: B^T's row nt C + j, its K elements from kt R (the DMA
         * zero-fills past them); columns beyond N are zero lines */
        if (cols < C) fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, g->zero, 0, x->w_line[t % NW] + cols, C - cols, 4 * C);
        fw_dma_hbm_to_vmem(dq, SEM_W_READY + t % NW, 1, g->b + 2 * (tl.nt * C * g->ldb + tl.kt * R), 2 * g->ldb,
                           x->w_line[t % NW], cols, round4(2 * krows));
      } else {
        if (krows < R) /* weight rows beyond K are zero: stride 0 repeats the zero line */
          fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, g->zero, 0, x->w_line[t % NW] + krows, R - krows, 4 * C);
        fw_dma_hbm_to_vmem(dq, SEM_W_READY + t % NW, 1, g->b + 2 * (tl.kt * R * g->ldb + tl.nt * C), 2 * g->ldb,
                           x->w_line[t % NW], krows, round4(2 * cols));
      }
      if (tl.ablock == 0 && tl.nt == 0) /* first panel: sub-block kk after the weights it meets */
        for (uint32_t q = 0; q < x->per_sub; q++)
          load_panel_piece(dq, g, pl, &tl, x->a_line, x->per_sub, tl.kk * x->per_sub + q);
      uint64_t next_start = t - tl.i + (uint64_t)tl.kpn * pl->nts; /* first tile of the next panel */
      if (next_start < pl->tiles) {
        tile_t next = tile_of(pl, next_start);
        uint64_t pieces = (uint64_t)next.kpn * x->per_sub, here = (uint64_t)tl.kpn * pl->nts;
        for (uint64_t q = tl.i * pieces / here; q < (tl.i + 1) * pieces / here; q++)
          load_panel_piece(dq, g, pl, &next, x->a_line, x->per_sub, (uint32_t)q);
      }
    }
    /* after this tile's weights, so a long write-back never delays them */
    if (t >= wb_delay) {
      tile_t b = tile_of(pl, t - wb_delay);
      if (!stores(x, &b)) continue;
      uint32_t rows = rows_of(x, &b), step = t - wb_delay + 1 == pl->tiles ? ceil_div(rows, LAST_PIECES) : rows;
      for (uint32_t lo = 0; lo < rows; lo += step) {
        uint32_t n = min_u32(step, rows - lo);
        fw_sem_wait(dq, SEM_OUT_READY, 1);
        write_back(dq, x, chip, &b, lo, n, lo + n == rows ? SEM_OUT_FREE + b.oblock % 2 : ISA_SEM_NONE);
      }
    }
  }
  /* Leave every semaphore at zero for the next kernel: take the signals nobody waited for
   * (the last weight and activation buffer releases, the last two output writes). */
  fw_fence(dq);
  for (uint64_t j = pl->tiles >= NW ? pl->tiles - NW : 0; j + 1 < pl->tiles; j++)
    fw_sem_wait(dq, SEM_W_FREE + j % NW, 1);
  const uint64_t ablocks = (uint64_t)pl->mcs * pl->kps, oblocks = (uint64_t)pl->mcs * pl->nts;
  if (ablocks >= 2) fw_sem_wait(dq, SEM_A_FREE + (ablocks - 2) % 2, 1);
  for (uint64_t o = oblocks >= 2 ? oblocks - 2 : 0; o < oblocks; o++) fw_sem_wait(dq, SEM_OUT_FREE + o % 2, 1);
  fw_halt(dq);
}

/* Compute queue: stores the output block of tile tl (the last tile's in pieces, each
 * released at once, so its write-back overlaps its store; the others are released after the
 * next tile's weight load), with the epilogue in place on the stored rows. */
static void store_block(fw_prog_t *cq, const gemm_t *x, const tile_t *tl, bool last) {
  const fw_gemm_args_t *g = x->g;
  if (tl->oblock >= 2) fw_sem_wait(cq, SEM_OUT_FREE + tl->oblock % 2, 1);
  const uint32_t rows = rows_of(x, tl), step = last ? ceil_div(rows, LAST_PIECES) : rows;
  for (uint32_t lo = 0; lo < rows; lo += step) {
    uint32_t n = min_u32(step, rows - lo), line = x->o_line[tl->oblock % 2] + lo;
    fw_mxu_store(cq, acc_of(x, tl) + lo, n, line);
    /* the epilogue runs in place on the stored rows, in program order after the store */
    if (g->relu) fw_vec(cq, ISA_VEC_RELU, line, line, line, n, 0);
    if (g->bf16_out) fw_vec(cq, ISA_VEC_TO_BF16, line, line, line, n, 0);
    if (last) fw_sem_signal(cq, SEM_OUT_READY, 1);
  }
}

/* ---- compute queue. Tile t: load its weights (the MXU overlaps them with tile t-1's
 * rows), release tile t-1's buffers, multiply, store a finished output block. */
static void compute_program(fw_prog_t *cq, const gemm_t *x) {
  const plan_t *pl = &x->pl;
  const uint32_t mt = pl->mt;
  for (uint64_t t = 0; t < pl->tiles; t++) {
    tile_t tl = tile_of(pl, t);
    fw_sem_wait(cq, SEM_W_READY + t % NW, 1);
    /* Sub-block kk of a panel is waited for before its first use (DMA completions are in
     * order). The first pass over the first panel, where the MXU waits for the DMA, goes
     * chunk by chunk instead, so the MXU streams each chunk as it lands. */
    const bool by_chunk = tl.ablock == 0 && tl.nt == 0;
    if (tl.nt == 0 && !by_chunk) fw_sem_wait(cq, SEM_A_READY + tl.ablock % 2, chunks(rows_of(x, &tl), x->per_sub));
    if (x->g->b_transposed) fw_mxu_load_transposed(cq, x->w_line[t % NW]);
    else fw_mxu_load(cq, x->w_line[t % NW]);
    if (t >= 1) {
      tile_t prev = tile_of(pl, t - 1);
      fw_sem_signal(cq, SEM_W_FREE + (t - 1) % NW, 1);
      if (last_use_of_a(x, &prev)) fw_sem_signal(cq, SEM_A_FREE + prev.ablock % 2, 1);
      if (stores(x, &prev)) fw_sem_signal(cq, SEM_OUT_READY, 1);
    }
    if (by_chunk) {
      uint32_t rows = rows_of(x, &tl), chunk = ceil_div(rows, x->per_sub);
      for (uint32_t lo = 0; lo < rows; lo += chunk) {
        fw_sem_wait(cq, SEM_A_READY, 1);
        fw_mxu_matmul(cq, x->a_line[0] + tl.kk * mt + lo, min_u32(chunk, rows - lo), acc_of(x, &tl) + lo, tl.kt > 0);
      }
    } else {
      fw_mxu_matmul(cq, x->a_line[tl.ablock % 2] + tl.kk * mt, rows_of(x, &tl), acc_of(x, &tl), tl.kt > 0);
    }
    if (stores(x, &tl)) store_block(cq, x, &tl, t + 1 == pl->tiles);
  }
  fw_halt(cq);
}

int fw_gemm(const chip_geometry_t *chip, const fw_gemm_args_t *g, fw_prog_t *cq, fw_prog_t *dq, char *err,
            size_t errlen) {
  gemm_t x;
  if (plan_gemm(chip, g, &x, err, errlen)) return -1;
  const size_t cq0 = cq->count, dq0 = dq->count;
  dma_program(dq, &x, chip);
  compute_program(cq, &x);
  if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) {
    snprintf(err, errlen, "out of memory building the GEMM programs");
    return -1;
  }
  if (cq->count > chip->queue_depth || dq->count > chip->queue_depth) {
    snprintf(err, errlen, "the GEMM needs %zu compute and %zu DMA commands; a queue holds %u",
             cq->count - cq0, dq->count - dq0, chip->queue_depth);
    return -1;
  }
  return 0;
}
