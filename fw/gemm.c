/* gemm: see gemm.h and docs/gemm.md. */
#include "fw/gemm.h"

#include <stdbool.h>
#include <stdio.h>

#include "fw/fw_util.h"

/* Weight tiles are small and needed every tile: NW buffers let their loads run that many
 * tiles ahead and hide HBM latency. Activation panels and output blocks are double-buffered. */
#define NW 4
/* The last output block is stored and written back in this many pieces (at most the
 * compute queue's four pending release fences). */
#define LAST_PIECES 4
/* With A^T in HBM, the first pass over the first panel runs up to this many column tiles
 * side by side, so that each sub-block the transposing DMAs make is used that many times
 * while the next one loads (docs/gemm.md, "A transposed"); fewer when the programs would
 * not fit the queues. */
#define LEAD_MAX 16
/* ... and its transposing DMAs go in twos: each run of them waits for the transfers before
 * it to land first. */
#define T_BATCH 2
/* With one panel over K and at most this many column tiles, the first pass takes them all
 * (leaving one would leave too few to hide the transposing DMAs at any HBM latency), and
 * their blocks are stored as they finish; with more, all but one at most, and the blocks
 * are stored two tiles apart (stored_block). */
#define LEAD_ALL 3
enum {
  SEM_W_READY = FW_SEMS_GEMM, SEM_W_FREE = SEM_W_READY + NW, SEM_OUT_READY = SEM_W_FREE + NW,
  SEM_OUT_FREE = SEM_OUT_READY + 1, SEM_A_READY = SEM_OUT_FREE + 2, SEM_A_FREE = SEM_A_READY + 2,
  /* the epilogue's operands (docs/models.md): the bias lines loaded, a residual block loaded, its
   * buffer free again; only a GEMM with a bias or a residual uses them (fw/hal.h's map) */
  SEM_BIAS_READY = SEM_A_FREE + 2, SEM_RES_READY = SEM_BIAS_READY + 1, SEM_RES_FREE = SEM_RES_READY + 1
};

static uint32_t round4(uint32_t x) { return (x + 3) & ~3u; }

/* Several MXUs (docs/gemm.md, "Several MXUs"): the kernel works in column groups, one column
 * tile per MXU side by side; nts below counts groups. Each MXU has its own accumulator, so the
 * accumulator's layout is the same in every MXU. */
static uint32_t mxus_of(const chip_geometry_t *chip) { return isa_geometry_mxus(chip); }
static uint32_t groups_of(const chip_geometry_t *chip, uint32_t n) { return fw_ceil_div(fw_ceil_div(n, chip->cols), mxus_of(chip)); }

/* VMEM the epilogue's operands take besides the tiles: the bias lines (one per column tile) and
 * two residual blocks (2 X Mt lines, like the output blocks). */
typedef struct {
  uint32_t fixed, per_row;
} extra_t;

static extra_t extra_of(const chip_geometry_t *chip, const fw_gemm_args_t *g) {
  extra_t e = {0, 0};
  if (g->has_bias) e.fixed = fw_ceil_div(g->n, chip->cols);
  if (g->window && g->window->has_res) e.per_row = 2 * mxus_of(chip);
  return e;
}

/* Row-block height for K panels of kp tiles. VMEM: NW weight tiles per MXU (NW X R lines),
 * two activation panels (2 kp Mt lines, each `spare` more) and two output blocks (2 X Mt
 * lines), X the MXUs, and the epilogue's `ex`. Accumulator: two column groups when a panel
 * spans all of K (outputs finish one group at a time), else every column group of two row
 * blocks. */
static uint32_t block_rows_for(const chip_geometry_t *chip, uint32_t m, uint32_t kts, uint32_t nts, uint32_t kp,
                               uint32_t spare, extra_t ex) {
  const uint32_t mx = mxus_of(chip);
  uint32_t fixed = NW * mx * chip->rows + 2 * spare + ex.fixed;
  uint32_t by_vmem = chip->vmem_lines > fixed ? (chip->vmem_lines - fixed) / (2 * kp + 2 * mx + ex.per_row) : 0;
  uint32_t by_acc = kp == kts ? chip->acc_depth / 2 : chip->acc_depth / (2 * nts);
  return fw_min_u32(m, fw_min_u32(by_vmem, by_acc));
}

/* K tiles per panel: all of K when a row block can still be at least min(M, R) rows high
 * (every output block then finishes on its own and write-backs spread evenly), else the
 * largest panel that allows it, else one K tile. */
static uint32_t choose_panel(const chip_geometry_t *chip, uint32_t m, uint32_t kts, uint32_t nts, uint32_t spare,
                             extra_t ex) {
  uint32_t want = fw_min_u32(m, chip->rows);
  for (uint32_t kp = kts; kp > 1; kp--)
    if (block_rows_for(chip, m, kts, nts, kp, spare, ex) >= want) return kp;
  return 1;
}

static uint32_t balanced_rows(const chip_geometry_t *chip, uint32_t m, uint32_t kts, uint32_t nts, uint32_t kp,
                              uint32_t spare, extra_t ex, uint32_t cap) {
  uint32_t mt = fw_min_u32(cap, block_rows_for(chip, m, kts, nts, kp, spare, ex));
  return mt ? fw_ceil_div(m, fw_ceil_div(m, mt)) : 0;  /* balanced: blocks differ by at most a row */
}

uint32_t fw_gemm_panel_tiles(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n) {
  return choose_panel(chip, m, fw_ceil_div(k, chip->rows), groups_of(chip, n), 0, (extra_t){0, 0});
}

uint32_t fw_gemm_block_rows(const chip_geometry_t *chip, uint32_t m, uint32_t k, uint32_t n, uint32_t kp) {
  uint32_t kts = fw_ceil_div(k, chip->rows), nts = groups_of(chip, n);
  const extra_t none = {0, 0};
  return balanced_rows(chip, m, kts, nts, kp ? kp : choose_panel(chip, m, kts, nts, 0, none), 0, none, UINT32_MAX);
}

typedef struct {
  uint32_t r, mt, mcs, kts, nts, kp, kps;
  uint32_t mx, ncts;  /* MXUs, column tiles (nts is column groups: ncts over mx, rounded up) */
  uint32_t lead;  /* column tiles side by side in the first pass over the first panel (1: none) */
  uint32_t pro;   /* of them, how many multiply sub-block 0 chunk by chunk in turn (1: none) */
  uint64_t tiles;
} plan_t;

/* Tile t in loop order (row block mc, K panel p, column tile nt, K tile in the panel kk),
 * kk fastest; except that the first pass over the first panel takes its first `lead`
 * column tiles side by side (kk, then nt < lead), so that each sub-block is used lead
 * times as soon as it has landed. */
typedef struct {
  uint32_t mc, p, nt, kk, kt;
  uint32_t kpn;     /* K tiles in this panel */
  uint32_t ablock;  /* activation panel index: mc * kps + p */
  uint32_t oblock;  /* output block index: mc * nts + nt */
  uint32_t i;       /* index of the tile in its panel: nt * kpn + kk */
} tile_t;

static uint32_t panel_tiles(const plan_t *pl, uint32_t p) { return fw_min_u32(pl->kp, pl->kts - p * pl->kp); }

static tile_t tile_of(const plan_t *pl, uint64_t t) {
  tile_t tl;
  uint64_t per_block = (uint64_t)pl->kts * pl->nts;
  tl.mc = (uint32_t)(t / per_block);
  uint32_t in_block = (uint32_t)(t % per_block);
  tl.p = in_block / (pl->kp * pl->nts);
  tl.kpn = panel_tiles(pl, tl.p);
  tl.i = in_block - tl.p * pl->kp * pl->nts;
  const uint32_t lead = tl.mc == 0 && tl.p == 0 ? pl->lead : 1;
  if (tl.i < lead * tl.kpn) {
    tl.kk = tl.i / lead;
    tl.nt = tl.i % lead;
  } else {
    tl.nt = lead + (tl.i - lead * tl.kpn) / tl.kpn;
    tl.kk = (tl.i - lead * tl.kpn) % tl.kpn;
  }
  tl.kt = tl.p * pl->kp + tl.kk;
  tl.ablock = tl.mc * pl->kps + tl.p;
  tl.oblock = tl.mc * pl->nts + tl.nt;
  return tl;
}

/* MXUs at work in column group nt: one per column tile of it (the last group may have fewer). */
static uint32_t active(const plan_t *pl, uint32_t nt) { return fw_min_u32(pl->mx, pl->ncts - nt * pl->mx); }

/* The GEMM as planned for one chip: the tiling and where its buffers live in VMEM (MXU u's
 * weight tile at w_line[i] + u R, its output rows at o_line[b] + u Mt). */
typedef struct {
  const fw_gemm_args_t *g;
  plan_t pl;
  uint32_t w_line[NW], a_line[2], o_line[2];
  uint32_t r_line[2], bias_line;  /* the residual blocks (as o_line), the bias lines (a column tile's each) */
  uint32_t per_sub;  /* pieces per sub-block: one per column tile's worth (A^T: per transposing DMA) */
  uint32_t ldc;      /* bf16 output pitch */
  bool one_panel;    /* one K panel spans all of K */
} gemm_t;

/* A panel is loaded in pieces, each adding 1 to its buffer's ready semaphore: every K tile
 * of it (a sub-block of Mt lines) in `per_sub` row chunks, sub-blocks in order. */
static uint32_t rows_of(const gemm_t *x, const tile_t *tl) { return fw_min_u32(x->pl.mt, x->g->m - tl->mc * x->pl.mt); }

/* Rows per chunk of a sub-block of `rows` rows. A transposing DMA writes an even number of
 * lines (its bytes are a multiple of 4), so its chunks are even: only a sub-block's last
 * chunk can write a line past it, into the sub-block's unused rows, the next sub-block
 * (loaded after it) or the spare line after the panel buffer. */
static uint32_t chunk_rows(const gemm_t *x, uint32_t rows) {
  uint32_t chunk = fw_ceil_div(rows, x->per_sub);
  return x->g->a_transposed ? (chunk + 1) & ~1u : chunk;
}

/* Non-empty chunks per sub-block of `rows` rows: the pieces that signal its buffer. */
static uint32_t chunks(const gemm_t *x, uint32_t rows) { return fw_ceil_div(rows, chunk_rows(x, rows)); }

/* ---- a GEMM whose rows are pixels (fw_gemm_window_t). Its rows are cut where an output row
 * ends: each run of pixels in one row is one strided DMA. */
typedef struct {
  uint32_t img, oh, ow, n;
} pix_run_t;

/* The run of output pixels from pixel p, at most n, that stays in one output row. */
static pix_run_t pixel_run(const fw_gemm_window_t *w, uint32_t p, uint32_t n) {
  const uint32_t per_img = w->out.h * w->out.w;
  pix_run_t r = {p / per_img, p % per_img / w->out.w, p % w->out.w, 0};
  r.n = fw_min_u32(n, w->out.w - r.ow);
  return r;
}

/* Output pixels [p0, p0 + n) <-> VMEM lines from `line`: pixel (oh, ow)'s row is pixel
 * (oh sh + dh, ow sw + dw) of tensor t, from byte `off` of it, `bytes` of it; to HBM or from.
 * The last DMA adds 1 to `sem` (DMAs complete in order). */
typedef struct {
  const fw_act_t *t;
  int64_t dh, dw;
  uint32_t sh, sw, off, bytes;
} pix_map_t;

static void window_dma(fw_prog_t *dq, const fw_gemm_window_t *w, const pix_map_t *m, bool to_hbm, uint32_t p0,
                       uint32_t n, uint32_t line, unsigned sem) {
  const uint32_t stride = (uint32_t)(m->sw * fw_act_pixel_bytes(m->t));
  for (uint32_t done = 0; done < n;) {
    const pix_run_t run = pixel_run(w, p0 + done, n - done);
    const uint32_t addr = (uint32_t)(fw_act_pixel_addr(m->t, run.img, (int64_t)run.oh * m->sh + m->dh,
                                                       (int64_t)run.ow * m->sw + m->dw) + m->off);
    const unsigned s = done + run.n == n ? sem : ISA_SEM_NONE;
    if (to_hbm) fw_dma_vmem_to_hbm(dq, s, 1, line + done, addr, stride, run.n, m->bytes);
    else fw_dma_hbm_to_vmem(dq, s, 1, addr, stride, line + done, run.n, m->bytes);
    done += run.n;
  }
}

/* The im2col rows of K tile kt: kernel row i = kt / (seg / R), from element (kt mod seg/R) R of
 * the row's window. */
static pix_map_t im2col_map(const fw_gemm_window_t *w, uint32_t R, uint32_t kt) {
  const uint32_t cp = fw_act_cp(&w->in), tps = fw_conv_segment(R, w->kw, cp) / R, i = kt / tps, t = kt % tps;
  return (pix_map_t){&w->in, (int64_t)i - w->pt, -(int64_t)w->pl, w->sh, w->sw, 2 * t * R,
                     round4(2 * fw_min_u32(R, w->kw * cp - t * R))};
}

/* Column tile ct of output pixels in `out` or the residual (C bf16 lanes from channel ct C). */
static pix_map_t column_map(const fw_act_t *t, uint32_t C, uint32_t ct, uint32_t n_cols) {
  return (pix_map_t){t, 0, 0, 1, 1, 2 * ct * C, round4(2 * fw_min_u32(C, n_cols - ct * C))};
}

void fw_im2col_dma(fw_prog_t *dq, const fw_gemm_window_t *w, uint32_t rows, uint32_t kt, uint32_t p0, uint32_t n,
                   uint32_t line, unsigned sem) {
  const pix_map_t m = im2col_map(w, rows, kt);
  window_dma(dq, w, &m, false, p0, n, line, sem);
}

/* DMA of piece `piece` (sub-block piece / per_sub, chunk piece % per_sub) of the panel
 * that tile `tl` starts, waiting for its buffer to be free before the first piece. */
static void load_panel_piece(fw_prog_t *dq, const gemm_t *x, const tile_t *tl, uint32_t piece) {
  const fw_gemm_args_t *g = x->g;
  const plan_t *pl = &x->pl;
  const uint32_t R = pl->r, mt = pl->mt, buf = tl->ablock % 2;
  uint32_t rows = rows_of(x, tl), chunk = chunk_rows(x, rows);
  uint32_t kk = piece / x->per_sub, lo = (piece % x->per_sub) * chunk;
  if (lo >= rows) return;
  uint32_t n = fw_min_u32(chunk, rows - lo), kt = tl->p * pl->kp + kk, krows = fw_min_u32(R, g->k - kt * R);
  uint32_t line = x->a_line[buf] + kk * mt + lo;
  if (piece == 0 && tl->ablock >= 2) fw_sem_wait(dq, SEM_A_FREE + buf, 1);
  if (g->window) {
    fw_im2col_dma(dq, g->window, R, kt, g->window->m0 + tl->mc * mt + lo, n, line, SEM_A_READY + buf);
  } else if (g->a_transposed) /* line m of the chunk: element mc Mt + lo + m of A^T's rows kt R .., zero past K */
    fw_dma_hbm_to_vmem_transposed(dq, SEM_A_READY + buf, 1, g->a + 2 * (kt * R * g->lda + tl->mc * mt + lo),
                                  2 * g->lda, line, krows, round4(2 * n));
  else
    fw_dma_hbm_to_vmem(dq, SEM_A_READY + buf, 1, g->a + 2 * ((tl->mc * mt + lo) * g->lda + kt * R), 2 * g->lda, line,
                       n, round4(2 * krows));
}

/* The first accumulator row of a tile's output block: with one panel over K, lead + 1
 * column tiles in turn (two when lead is 1: the first pass's lead blocks, then the next
 * one while they are stored); else every column tile of two row blocks alternating. */
static uint32_t acc_of(const gemm_t *x, const tile_t *tl) {
  const plan_t *pl = &x->pl;
  if (!x->one_panel) return ((tl->mc % 2) * pl->nts + tl->nt) * pl->mt;
  return (tl->oblock % (pl->lead + 1)) * pl->mt;
}

/* The output block stored at tile t, if any. A block is stored at its last K tile; but with
 * one panel over K, the lead blocks of the first pass finish in consecutive tiles, so they
 * are stored two tiles apart (block j at s0 + 2 j, s0 the tile block 0 finishes), which
 * keeps their write-backs from piling up behind each other. Blocks are stored in order. */
static bool stored_block(const gemm_t *x, uint64_t t, tile_t *b) {
  const plan_t *pl = &x->pl;
  *b = tile_of(pl, t);
  if (x->one_panel && pl->lead > 1 && pl->lead < pl->nts) {
    const uint64_t s0 = (uint64_t)pl->lead * (pl->kp - 1);
    if (t >= s0 && t < s0 + 2 * pl->lead) {
      if ((t - s0) % 2 == 0) {
        *b = tile_of(pl, s0 + (t - s0) / 2);
        return true;
      }
      if (b->oblock < pl->lead) return false;
    }
  }
  return b->kt == pl->kts - 1;
}

/* The last tile that reads its activation panel. */
static bool last_use_of_a(const gemm_t *x, const tile_t *tl) { return tl->i == tl->kpn * x->pl.nts - 1; }

/* A windowed GEMM's shapes agree with each other, and the input's border covers the windows. */
static int check_window(const chip_geometry_t *chip, const fw_gemm_args_t *g, char *err, size_t errlen) {
  const fw_gemm_window_t *w = g->window;
  const fw_act_t *in = &w->in, *out = &w->out;
  if (g->a_transposed || g->b_transposed) {
    snprintf(err, errlen, "a convolution's GEMM takes neither operand transposed");
    return -1;
  }
  if (w->kh == 0 || w->kw == 0 || w->sh == 0 || w->sw == 0 || in->n != out->n || out->c != g->n ||
      g->k != w->kh * fw_conv_segment(chip->rows, w->kw, fw_act_cp(in))) {
    snprintf(err, errlen, "convolution shapes disagree (kernel %ux%u stride %ux%u, %u -> %u images, "
             "%u output channels for N = %u, K = %u)", w->kh, w->kw, w->sh, w->sw, in->n, out->n, out->c, g->n, g->k);
    return -1;
  }
  /* the first window starts at -pt, -pl; the last ends at (O - 1) s - p + k - 1 */
  const int64_t last_h = (int64_t)(out->h - 1) * w->sh - w->pt + w->kh - 1;
  const int64_t last_w = (int64_t)(out->w - 1) * w->sw - w->pl + w->kw - 1;
  if (w->pt > in->bh || w->pl > in->bw || last_h >= (int64_t)in->h + in->bh || last_w >= (int64_t)in->w + in->bw) {
    snprintf(err, errlen, "the input's border (%u rows, %u columns) does not cover the convolution's windows",
             in->bh, in->bw);
    return -1;
  }
  if ((uint64_t)w->m0 + g->m > (uint64_t)out->n * out->h * out->w) {
    snprintf(err, errlen, "pixels %u .. %u are past the output's %u", w->m0, w->m0 + g->m - 1,
             out->n * out->h * out->w);
    return -1;
  }
  if (w->has_res && (w->res.n != out->n || w->res.c != out->c || w->res.h != out->h || w->res.w != out->w)) {
    snprintf(err, errlen, "the residual's shape is not the output's");
    return -1;
  }
  return 0;
}

/* Checks the shape against the chip and plans it, with at most lead_max column tiles side by
 * side in the first pass (A^T); -1 with a message when it cannot run. */
static int plan_gemm(const chip_geometry_t *chip, const fw_gemm_args_t *g, uint32_t lead_max, gemm_t *x, char *err,
                     size_t errlen) {
  const uint32_t R = chip->rows;
  if (g->m == 0 || g->k == 0 || g->n == 0) {
    snprintf(err, errlen, "matrix sizes must be at least 1 (M=%u K=%u N=%u)", g->m, g->k, g->n);
    return -1;
  }
  if (g->lda < (g->a_transposed ? g->m : g->k) || g->ldb < (g->b_transposed ? g->k : g->n) || (g->lda & 1) ||
      (g->ldb & 1)) {
    snprintf(err, errlen, "row pitches must be even and at least %s and %s", g->a_transposed ? "M (A^T)" : "K",
             g->b_transposed ? "K (B^T)" : "N");
    return -1;
  }
  if ((g->a_transposed || g->b_transposed) && chip->rows != chip->cols) {
    snprintf(err, errlen, "a transposed %s needs a square MXU, not %ux%u", g->a_transposed ? "A" : "B", chip->rows,
             chip->cols);
    return -1;
  }
  if (g->window && check_window(chip, g, err, errlen)) return -1;
  plan_t *pl = &x->pl;
  x->g = g;
  pl->r = R;
  pl->kts = fw_ceil_div(g->k, R);
  pl->mx = mxus_of(chip);
  pl->ncts = fw_ceil_div(g->n, chip->cols);
  pl->nts = fw_ceil_div(pl->ncts, pl->mx);
  if (g->k_panel > pl->kts) {
    snprintf(err, errlen, "a K panel of %u tiles is more than K has (%u)", g->k_panel, pl->kts);
    return -1;
  }
  const uint32_t spare = g->a_transposed ? 1 : 0;  /* a line after each panel buffer (chunk_rows) */
  const extra_t ex = extra_of(chip, g);
  pl->kp = g->k_panel ? g->k_panel : choose_panel(chip, g->m, pl->kts, pl->nts, spare, ex);
  pl->kps = fw_ceil_div(pl->kts, pl->kp);
  x->one_panel = pl->kp == pl->kts;
  /* A^T: the first pass over the first panel, which follows the transposing DMAs, takes
   * `lead` column tiles side by side. With one panel over K the accumulator then holds lead + 1
   * blocks, which caps the row blocks; and unless lead is all of them (LEAD_ALL), the lead
   * blocks' stores, two tiles apart (stored_block), must be done before the next block
   * finishes, and before the end. */
  pl->lead = 1;
  if (g->a_transposed) {
    pl->lead = fw_min_u32(pl->nts, lead_max);
    if (x->one_panel && pl->nts > LEAD_ALL) pl->lead = fw_min_u32(pl->lead, fw_min_u32(pl->kp, pl->nts - 1));
    if (pl->lead == 0) pl->lead = 1;
  }
  const uint32_t acc_cap = x->one_panel && pl->lead > 1 ? chip->acc_depth / (pl->lead + 1) : UINT32_MAX;
  pl->mt = balanced_rows(chip, g->m, pl->kts, pl->nts, pl->kp, spare, ex, acc_cap);
  if (pl->mt == 0) {
    snprintf(err, errlen, "N = %u with K panels of %u tiles leaves no room for even one row per block "
             "(VMEM %u lines, accumulator %u rows)", g->n, pl->kp, chip->vmem_lines, chip->acc_depth);
    return -1;
  }
  pl->mcs = fw_ceil_div(g->m, pl->mt);
  pl->tiles = (uint64_t)pl->mcs * pl->kts * pl->nts;
  const uint32_t per_tile = 2 * pl->mx + 1; /* a tile's compute commands: a load and a matmul per MXU, a wait */
  if (pl->tiles * per_tile > chip->queue_depth) {
    snprintf(err, errlen, "the GEMM has %llu tiles and needs at least %u commands per queue per tile; a queue "
             "holds %u commands", (unsigned long long)pl->tiles, per_tile, chip->queue_depth);
    return -1;
  }
  const uint32_t mt = pl->mt;
  for (uint32_t i = 0; i < NW; i++) x->w_line[i] = i * pl->mx * R;
  x->a_line[0] = NW * pl->mx * R, x->a_line[1] = x->a_line[0] + pl->kp * mt + spare;
  x->o_line[0] = x->a_line[1] + pl->kp * mt + spare, x->o_line[1] = x->o_line[0] + pl->mx * mt;
  x->r_line[0] = x->r_line[1] = x->bias_line = x->o_line[1] + pl->mx * mt;
  if (ex.per_row) x->r_line[1] = x->r_line[0] + pl->mx * mt, x->bias_line = x->r_line[1] + pl->mx * mt;
  /* A transposing DMA is slow to start (it waits for the queue to drain, then for its HBM
   * rows), so A^T comes in as few as can be: 2C rows of the panel each. */
  x->per_sub = g->a_transposed ? fw_ceil_div(mt, 2 * chip->cols) : pl->nts;
  x->ldc = (g->n + 1) & ~1u;
  /* While sub-block 0 comes in, the MXU has nothing else to do: the first tiles take each
   * of its chunks in turn (their weights stay in VMEM, one buffer left for the DMA to fill).
   * Worth it when the sub-block takes several DMAs and the panel several K tiles. */
  pl->pro = g->a_transposed && x->per_sub >= 2 && panel_tiles(pl, 0) >= 2 ? fw_min_u32(pl->lead, NW - 1) : 1;
  return 0;
}

/* DMA queue: writes back rows [lo, lo + n) of the output block of tile b, a column tile per
 * MXU, the last signalling `sem`. */
static void write_back(fw_prog_t *dq, const gemm_t *x, const chip_geometry_t *chip, const tile_t *b, uint32_t lo,
                       uint32_t n, unsigned sem) {
  const fw_gemm_args_t *g = x->g;
  const uint32_t C = chip->cols, mt = x->pl.mt, act = active(&x->pl, b->nt);
  for (uint32_t u = 0; u < act; u++) {
    const uint32_t ct = b->nt * x->pl.mx + u, cols_out = fw_min_u32(C, g->n - ct * C);
    const uint32_t line = x->o_line[b->oblock % 2] + u * mt + lo;
    const unsigned s = u + 1 == act ? sem : ISA_SEM_NONE;
    if (g->window) {
      const pix_map_t m = column_map(&g->window->out, C, ct, g->n);
      window_dma(dq, g->window, &m, true, g->window->m0 + b->mc * mt + lo, n, line, s);
    } else if (g->bf16_out) /* bf16 rows: pitch n rounded up to even, bytes rounded up to 4 */
      fw_dma_vmem_to_hbm(dq, s, 1, line, g->c + 2 * ((b->mc * mt + lo) * x->ldc + ct * C), 2 * x->ldc, n,
                         round4(2 * cols_out));
    else
      fw_dma_vmem_to_hbm(dq, s, 1, line, g->c + 4 * ((b->mc * mt + lo) * g->n + ct * C), 4 * g->n, n, 4 * cols_out);
  }
}

/* DMA queue: the residual rows of output block b (a column tile per MXU), into its buffer once
 * the epilogue two blocks before has read it; the last signals SEM_RES_READY. */
static void load_residual(fw_prog_t *dq, const gemm_t *x, const chip_geometry_t *chip, const tile_t *b) {
  const fw_gemm_window_t *w = x->g->window;
  const uint32_t mt = x->pl.mt, act = active(&x->pl, b->nt);
  if (b->oblock >= 2) fw_sem_wait(dq, SEM_RES_FREE + b->oblock % 2, 1);
  for (uint32_t u = 0; u < act; u++) {
    const pix_map_t m = column_map(&w->res, chip->cols, b->nt * x->pl.mx + u, x->g->n);
    window_dma(dq, w, &m, false, w->m0 + b->mc * mt, rows_of(x, b), x->r_line[b->oblock % 2] + u * mt,
               u + 1 == act ? SEM_RES_READY : ISA_SEM_NONE);
  }
}

/* Of n pieces spread evenly over `over` tiles, how many are loaded by the end of the first
 * i; with A^T in multiples of T_BATCH but for the last. */
static uint64_t spread(uint64_t i, uint64_t n, uint64_t over, uint64_t batch) {
  return i >= over ? n : i * n / over / batch * batch;
}

/* A^T: the pieces of the first panel loaded by the end of first-pass tile i (-1: none).
 * Sub-block 0 at the pro-th tile, after the weights of the tiles that take it chunk by
 * chunk; then sub-block kk + 1 spread over the lead tiles that use sub-block kk, so that it
 * has landed when they are done (shares of earlier tiles come with sub-block 0). */
static uint32_t first_pass_due(const gemm_t *x, int64_t i) {
  const plan_t *pl = &x->pl;
  const uint32_t subs = panel_tiles(pl, 0), per = x->per_sub;
  if (i + 1 < (int64_t)pl->pro) return 0;
  const uint32_t kk = (uint32_t)i / pl->lead, j = (uint32_t)i % pl->lead;
  return fw_min_u32(subs * per, (kk + 1) * per + (uint32_t)spread(j + 1, per, pl->lead, T_BATCH));
}

/* The pieces [lo, hi) of the next panel (its first tile: next) that iteration t loads: they
 * are spread evenly over the current panel's tiles. With A^T not over its first NW: the
 * first piece waits for the buffer, which the compute queue releases after the store that
 * ends the panel before; a wait that early would hold up the weights behind it, and the
 * transposing DMAs cannot catch up as quickly as plain ones. */
static bool next_panel_share(const gemm_t *x, uint64_t t, const tile_t *tl, tile_t *next, uint64_t *lo, uint64_t *hi) {
  const plan_t *pl = &x->pl;
  const uint64_t next_start = t - tl->i + (uint64_t)tl->kpn * pl->nts; /* first tile of the next panel */
  if (next_start >= pl->tiles) return false;
  *next = tile_of(pl, next_start);
  const uint64_t pieces = (uint64_t)next->kpn * x->per_sub, here = (uint64_t)tl->kpn * pl->nts;
  const uint64_t skip = x->g->a_transposed ? fw_min_u32(NW, (uint32_t)here - 1) : 0;
  if (tl->i < skip) return false;
  *lo = spread(tl->i - skip, pieces, here - skip, 1);
  *hi = spread(tl->i + 1 - skip, pieces, here - skip, 1);
  return *lo < *hi;
}

/* DMA queue, iteration t: its share of the activation panels. The first panel is loaded one
 * sub-block per first-pass tile, ahead of the tile that first needs it; the next panel in
 * pieces spread evenly over the current panel's tiles. */
static void panel_pieces(fw_prog_t *dq, const gemm_t *x, uint64_t t, const tile_t *tl) {
  const plan_t *pl = &x->pl;
  if (tl->ablock == 0 && !x->g->a_transposed && tl->nt == 0) /* sub-block kk after the weights it meets */
    for (uint32_t q = 0; q < x->per_sub; q++) load_panel_piece(dq, x, tl, tl->kk * x->per_sub + q);
  if (tl->ablock == 0 && x->g->a_transposed && tl->i < pl->lead * tl->kpn)
    for (uint32_t q = first_pass_due(x, (int64_t)tl->i - 1); q < first_pass_due(x, tl->i); q++)
      load_panel_piece(dq, x, tl, q);
  tile_t next;
  uint64_t lo, hi;
  if (next_panel_share(x, t, tl, &next, &lo, &hi))
    for (uint64_t q = lo; q < hi; q++) load_panel_piece(dq, x, &next, (uint32_t)q);
}

/* ---- DMA queue. Iteration t loads tile t's weights, then its share of the next panel's
 * pieces (so that panel arrives spread over the current panel's tiles, ahead of its first
 * tile), then writes back the output block stored at tile t - wb_delay. The first panel is
 * loaded one sub-block per iteration, ahead of the tile that first needs it. Output blocks
 * finish every `spacing` tiles at most. The write-back of the block stored at tile s waits
 * until iteration s + wb_delay, when its store is done (DMA runs up to NW-1 tiles ahead of
 * the MXU, a store ends about two tiles after its matmul starts), so the wait for it never
 * holds up later weight tiles; the buffer is needed again 2 spacing tiles after s (A^T's
 * first-pass blocks, stored two tiles apart: 4 tiles after s, still after the write-back). */
static void dma_program(fw_prog_t *dq, const gemm_t *x, const chip_geometry_t *chip) {
  const fw_gemm_args_t *g = x->g;
  const plan_t *pl = &x->pl;
  const uint32_t R = chip->rows, C = chip->cols;
  const uint32_t spacing = panel_tiles(pl, pl->kps - 1);
  const uint32_t wb_delay = spacing == 1 ? 2 : fw_min_u32(NW + 1, spacing + 1);
  const bool res = g->window && g->window->has_res;
  if (g->has_bias) /* the bias lines, once: a line of C fp32 lanes per column tile */
    fw_dma_hbm_to_vmem(dq, SEM_BIAS_READY, 1, g->bias, 4 * C, x->bias_line, pl->ncts, 4 * C);
  for (uint64_t t = 0; t < pl->tiles + wb_delay; t++) {
    if (t >= NW && t < pl->tiles) fw_sem_wait(dq, SEM_W_FREE + t % NW, 1);
    if (t < pl->tiles) {
      tile_t tl = tile_of(pl, t);
      for (uint32_t u = 0; u < active(pl, tl.nt); u++) { /* a weight tile per MXU, each signalling once */
        const uint32_t ct = tl.nt * pl->mx + u, w_line = x->w_line[t % NW] + u * R;
        uint32_t krows = fw_min_u32(R, g->k - tl.kt * R), cols = fw_min_u32(C, g->n - ct * C);
        if (g->b_transposed) {
          /* line j is weight column j: B^T's row ct C + j, its K elements from kt R (the DMA
           * zero-fills past them); columns beyond N are zero lines */
          if (cols < C) fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, g->zero, 0, w_line + cols, C - cols, 4 * C);
          fw_dma_hbm_to_vmem(dq, SEM_W_READY + t % NW, 1, g->b + 2 * (ct * C * g->ldb + tl.kt * R), 2 * g->ldb,
                             w_line, cols, round4(2 * krows));
        } else {
          if (krows < R) /* weight rows beyond K are zero: stride 0 repeats the zero line */
            fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, g->zero, 0, w_line + krows, R - krows, 4 * C);
          fw_dma_hbm_to_vmem(dq, SEM_W_READY + t % NW, 1, g->b + 2 * (tl.kt * R * g->ldb + ct * C), 2 * g->ldb,
                             w_line, krows, round4(2 * cols));
        }
      }
      panel_pieces(dq, x, t, &tl);
      tile_t b;
      if (res && stored_block(x, t, &b)) load_residual(dq, x, chip, &b);
    }
    /* after this tile's weights, so a long write-back never delays them */
    if (t >= wb_delay) {
      tile_t b;
      if (!stored_block(x, t - wb_delay, &b)) continue;
      uint32_t rows = rows_of(x, &b), step = t - wb_delay + 1 == pl->tiles ? fw_ceil_div(rows, LAST_PIECES) : rows;
      for (uint32_t lo = 0; lo < rows; lo += step) {
        uint32_t n = fw_min_u32(step, rows - lo);
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
  for (uint64_t o = oblocks >= 2 ? oblocks - 2 : 0; o < oblocks; o++) {
    fw_sem_wait(dq, SEM_OUT_FREE + o % 2, 1);
    if (res) fw_sem_wait(dq, SEM_RES_FREE + o % 2, 1);
  }
  fw_halt(dq);
}

/* Compute queue: stores the output block of tile tl (the last tile's in pieces, each
 * released at once, so its write-back overlaps its store; the others are released after the
 * next tile's weight load), with the epilogue in place on the stored rows. */
static void store_block(fw_prog_t *cq, const gemm_t *x, const tile_t *tl, bool last) {
  const fw_gemm_args_t *g = x->g;
  const bool res = g->window && g->window->has_res;
  if (tl->oblock >= 2) fw_sem_wait(cq, SEM_OUT_FREE + tl->oblock % 2, 1);
  if (g->has_bias && tl->oblock == 0) fw_sem_wait(cq, SEM_BIAS_READY, 1);
  if (res) fw_sem_wait(cq, SEM_RES_READY, 1);
  const uint32_t rows = rows_of(x, tl), step = last ? fw_ceil_div(rows, LAST_PIECES) : rows, act = active(&x->pl, tl->nt);
  for (uint32_t lo = 0; lo < rows; lo += step) {
    uint32_t n = fw_min_u32(step, rows - lo), line = x->o_line[tl->oblock % 2] + lo;
    for (uint32_t u = 0; u < act; u++) { /* every MXU's rows first: a VEC waits for the stores before it */
      fw_mxu_select(cq, u);
      fw_mxu_store(cq, acc_of(x, tl) + lo, n, line + u * x->pl.mt);
    }
    /* the epilogue runs in place on the stored rows, in program order after the stores */
    for (uint32_t u = 0; u < act; u++) {
      const uint32_t l = line + u * x->pl.mt, ct = tl->nt * x->pl.mx + u;
      if (g->has_bias) fw_vec_bcast(cq, ISA_VEC_ADD, l, x->bias_line + ct, l, n, 0); /* one line for every row */
      if (res) { /* the residual's bf16 rows widened in place, then added */
        const uint32_t r = x->r_line[tl->oblock % 2] + u * x->pl.mt + lo;
        fw_vec(cq, ISA_VEC_TO_FP32, r, r, r, n, 0);
        fw_vec(cq, ISA_VEC_ADD, l, r, l, n, 0);
      }
      if (g->relu) fw_vec(cq, ISA_VEC_RELU, l, l, l, n, 0);
      if (g->bf16_out || g->window) fw_vec(cq, ISA_VEC_TO_BF16, l, l, l, n, 0);
    }
    if (last) fw_sem_signal(cq, SEM_OUT_READY, 1);
  }
  if (res) fw_sem_signal(cq, SEM_RES_FREE + tl->oblock % 2, 1);
}

/* ---- compute queue. Tile t: load its weights (the MXU overlaps them with tile t-1's
 * rows), release tile t-1's buffers, multiply, store a finished output block. */
static void load_weights(fw_prog_t *cq, const gemm_t *x, uint64_t t, const tile_t *tl) {
  for (uint32_t u = 0; u < active(&x->pl, tl->nt); u++) {
    fw_mxu_select(cq, u);
    if (x->g->b_transposed) fw_mxu_load_transposed(cq, x->w_line[t % NW] + u * x->pl.r);
    else fw_mxu_load(cq, x->w_line[t % NW] + u * x->pl.r);
  }
}

/* Every MXU of tile tl's column group multiplies the same activation rows into its own
 * accumulator. */
static void matmul(fw_prog_t *cq, const gemm_t *x, const tile_t *tl, uint32_t line, uint32_t rows, uint32_t acc,
                   bool accumulate) {
  for (uint32_t u = 0; u < active(&x->pl, tl->nt); u++) {
    fw_mxu_select(cq, u);
    fw_mxu_matmul(cq, line, rows, acc, accumulate);
  }
}

/* A^T: the first pro tiles (sub-block 0 against column tiles 0 .. pro-1) chunk by chunk in
 * turn, each chunk as it lands; their weights stay in VMEM, and the buffers of all but the
 * last are released at the end (the last one's by the next tile, as usual). */
static void first_sub_block(fw_prog_t *cq, const gemm_t *x) {
  const plan_t *pl = &x->pl;
  for (uint32_t j = 0; j < pl->pro; j++) fw_sem_wait(cq, SEM_W_READY + j, active(pl, tile_of(pl, j).nt));
  const tile_t first = tile_of(pl, 0);
  const uint32_t rows = rows_of(x, &first), chunk = chunk_rows(x, rows);
  for (uint32_t lo = 0; lo < rows; lo += chunk) {
    fw_sem_wait(cq, SEM_A_READY, 1);
    for (uint32_t j = 0; j < pl->pro; j++) {
      tile_t tl = tile_of(pl, j);
      load_weights(cq, x, j, &tl);
      matmul(cq, x, &tl, x->a_line[0] + lo, fw_min_u32(chunk, rows - lo), acc_of(x, &tl) + lo, false);
    }
  }
  for (uint32_t j = 0; j + 1 < pl->pro; j++) fw_sem_signal(cq, SEM_W_FREE + j, 1);
}

/* The first tile past the first pass over the first panel (the fill): the tiles that wait
 * for its sub-blocks as the DMA brings them in (with A^T, the lead column tiles). */
static uint64_t fill_tiles(const plan_t *pl) {
  uint64_t t = 0;
  while (t < pl->tiles) {
    const tile_t tl = tile_of(pl, t);
    if (tl.ablock != 0 || tl.i >= pl->lead * tl.kpn) break;
    t++;
  }
  return t;
}

/* The kernel's phases for the profile (docs/profiling.md, "Kernel phases"): "fill" until the
 * first panel's first pass is done, "steady state" for the tiles after it, "drain" from the
 * last block's store (its epilogue and write-back) on. A program that is already marked (a
 * kernel embedding the GEMM) keeps its own phases. */
static void compute_program(fw_prog_t *cq, const gemm_t *x) {
  const plan_t *pl = &x->pl;
  const uint32_t mt = pl->mt;
  const bool mark = cq->nmarks == 0;
  const uint64_t steady = fill_tiles(pl);
  if (mark) fw_prog_mark(cq, "fill");
  if (pl->pro > 1) first_sub_block(cq, x);
  for (uint64_t t = pl->pro > 1 ? pl->pro : 0; t < pl->tiles; t++) {
    tile_t tl = tile_of(pl, t);
    if (mark && t == steady) fw_prog_mark(cq, "steady state");
    fw_sem_wait(cq, SEM_W_READY + t % NW, active(pl, tl.nt));
    /* Sub-block kk of a panel is waited for before its first use (DMA completions are in
     * order). The first pass over the first panel, where the MXU waits for the DMA, goes
     * chunk by chunk instead, so the MXU streams each chunk as it lands; with A^T only
     * sub-block 0 (the others are loaded a sub-block ahead, and its chunks are small). */
    const bool by_chunk = tl.ablock == 0 && tl.nt == 0 && (!x->g->a_transposed || tl.kk == 0);
    if (tl.nt == 0 && !by_chunk) fw_sem_wait(cq, SEM_A_READY + tl.ablock % 2, chunks(x, rows_of(x, &tl)));
    load_weights(cq, x, t, &tl);
    if (t >= 1) {
      tile_t prev = tile_of(pl, t - 1);
      fw_sem_signal(cq, SEM_W_FREE + (t - 1) % NW, 1);
      if (last_use_of_a(x, &prev)) fw_sem_signal(cq, SEM_A_FREE + prev.ablock % 2, 1);
      tile_t stored;
      if (stored_block(x, t - 1, &stored)) fw_sem_signal(cq, SEM_OUT_READY, 1);
    }
    if (by_chunk) {
      uint32_t rows = rows_of(x, &tl), chunk = chunk_rows(x, rows);
      for (uint32_t lo = 0; lo < rows; lo += chunk) {
        fw_sem_wait(cq, SEM_A_READY, 1);
        matmul(cq, x, &tl, x->a_line[0] + tl.kk * mt + lo, fw_min_u32(chunk, rows - lo), acc_of(x, &tl) + lo, tl.kt > 0);
      }
    } else {
      matmul(cq, x, &tl, x->a_line[tl.ablock % 2] + tl.kk * mt, rows_of(x, &tl), acc_of(x, &tl), tl.kt > 0);
    }
    tile_t block;
    if (mark && t + 1 == pl->tiles) fw_prog_mark(cq, "drain");
    if (stored_block(x, t, &block)) store_block(cq, x, &block, t + 1 == pl->tiles);
  }
  fw_mxu_select(cq, 0);  /* what the program's next kernel expects */
  fw_halt(cq);
}

void fw_gemm_core_rows(uint32_t m, uint32_t cores, uint32_t c, uint32_t *lo, uint32_t *hi) {
  /* rows split at even boundaries: an even first row keeps A^T's column offset 4-byte aligned */
  *lo = c == 0 ? 0 : fw_min_u32(m, (uint32_t)((uint64_t)m * c / cores) & ~1u);
  *hi = c + 1 == cores ? m : fw_min_u32(m, (uint32_t)((uint64_t)m * (c + 1) / cores) & ~1u);
}

uint32_t fw_gemm_max_core_rows(uint32_t m, uint32_t cores) {
  uint32_t most = 0;
  for (uint32_t c = 0; c < cores; c++) {
    uint32_t lo, hi;
    fw_gemm_core_rows(m, cores, c, &lo, &hi);
    if (hi - lo > most) most = hi - lo;
  }
  return most;
}

int fw_gemm_cores(const chip_geometry_t *chip, const fw_gemm_args_t *g, fw_prog_t *cq, fw_prog_t *dq, char *err,
                  size_t errlen) {
  const uint32_t cores = isa_geometry_cores(chip);
  for (uint32_t c = 0; c < cores; c++) {
    uint32_t lo, hi;
    fw_gemm_core_rows(g->m, cores, c, &lo, &hi);
    if (lo == hi) {
      fw_halt(&cq[c]);
      fw_halt(&dq[c]);
      continue;
    }
    fw_gemm_args_t part = *g;
    fw_gemm_window_t w;
    if (g->window) w = *g->window, w.m0 += lo, part.window = &w;
    part.m = hi - lo;
    part.a = g->a + (g->a_transposed ? 2 * lo : 2 * lo * g->lda);
    part.c = g->c + (g->bf16_out ? 2 * lo * ((g->n + 1) & ~1u) : 4 * lo * g->n);
    if (fw_gemm(chip, &part, &cq[c], &dq[c], err, errlen)) return -1;
  }
  return 0;
}

int fw_gemm(const chip_geometry_t *chip, const fw_gemm_args_t *g, fw_prog_t *cq, fw_prog_t *dq, char *err,
            size_t errlen) {
  const size_t cq0 = cq->count, dq0 = dq->count;
  const unsigned marks0 = cq->nmarks;
  /* A^T: the widest first pass whose programs fit the queues (a wider one caps the row
   * blocks, so it has more tiles); otherwise there is one plan */
  for (uint32_t lead_max = g->a_transposed ? LEAD_MAX : 1;; lead_max /= 2) {
    gemm_t x;
    int rc = plan_gemm(chip, g, lead_max, &x, err, errlen);
    if (rc == 0) {
      dma_program(dq, &x, chip);
      compute_program(cq, &x);
      if (fw_programs_fit(chip, cq, dq, "the GEMM", "", err, errlen) == 0) return 0;
      if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) return -1;
      cq->count = cq0, dq->count = dq0;  /* drop them: the next try, or the caller's program as it was */
      cq->nmarks = marks0;
    }
    if (lead_max <= 1) return -1;
  }
}
