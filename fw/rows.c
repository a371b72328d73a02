/* rows: see rows.h, docs/models.md ("Row kernels") and docs/timing.md ("Row kernels"). */
#include "fw/rows.h"

#include <stdio.h>
#include <string.h>

#include "fw/fw_util.h"
#include "fw/gemm.h"

/* Semaphores: a tile landed (DMA -> compute), a tile rounded and ready to store (compute ->
 * DMA), a tile's store landed (DMA -> DMA: its slot may be loaded again), the constants landed. */
enum { SEM_LOADED = FW_SEMS_STREAM, SEM_READY, SEM_STORED, SEM_CONST };

/* The most rows a tile takes: tiles of a quarter of a core's rows keep the unhidden first load
 * and last store short; this cap keeps them short on long matrices too. */
enum { TILE_CAP = 256 };

static const uint32_t F32_ONE = 0x3F800000u, F32_NEG_INF = 0xFF800000u, F32_HALF = 0x3F000000u;
/* GELU's constants rounded to fp32 (RNE): 1/sqrt(2); 2 sqrt(2/pi) (2 x fp32(sqrt(2/pi)), the
 * same bits); 0.044715. */
static const uint32_t F32_RSQRT2 = 0x3F3504F3u, F32_2_SQRT_2_PI = 0x3FCC422Au, F32_GELU_C = 0x3D372713u;

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* 1/x rounded to fp32 (RNE): the quotient in double rounded once more to float is the correctly
 * rounded quotient (double has more than 2 x 24 + 2 bits), for x finite, nonzero and normal. */
static uint32_t recip_f32(uint32_t x) { return f32_bits((float)(1.0 / (double)bits_f32(x))); }

static bool finite_bits(uint32_t u) { return ((u >> 23) & 0xFF) != 0xFF; }
static bool normal_bits(uint32_t u) { return finite_bits(u) && ((u >> 23) & 0xFF) != 0; }

/* ---------------------------------------------------------------- constants */

uint32_t fw_rows_consts(const chip_geometry_t *chip, fw_rows_kind_t kind, uint32_t k, uint32_t *lines) {
  const uint32_t c = chip->cols, tail = k % c; /* lanes of the last block below K (0: a whole block) */
  switch (kind) {
  case FW_ROWS_SOFTMAX:
    if (!tail) return 0;
    if (lines)
      for (uint32_t l = 0; l < c; l++) lines[l] = l < tail ? 0 : F32_NEG_INF;
    return 1;
  case FW_ROWS_LAYERNORM:
    if (lines)
      for (uint32_t l = 0; l < c; l++) {
        lines[l] = F32_ONE;
        if (tail) lines[c + l] = l < tail ? F32_ONE : 0;
      }
    return tail ? 2 : 1;
  case FW_ROWS_GELU_ERF:
  case FW_ROWS_GELU_TANH:
    if (lines)
      for (uint32_t l = 0; l < c; l++) lines[l] = F32_ONE;
    return 1;
  default:
    return 0;
  }
}

/* ---------------------------------------------------------------- the plan */

typedef struct {
  fw_rows_kind_t kind;
  const fw_rows_args_t *a;
  const char *what;
  uint32_t lanes, nb, cp, k;
  bool second;          /* a second tensor streams beside x (LayerNorm's residual, ADD's b) */
  bool pad;             /* K is not a multiple of C: the last block has lanes past K */
  uint32_t nconst;      /* constant lines, at VMEM line 0 */
  uint32_t nvec;        /* fp32 row-vector lines after them (gamma and beta, or ADD_ROW's row) */
  uint32_t per_row;     /* VMEM lines a tile row takes (both slots and the work lines) */
  uint32_t vmem;
  uint32_t scalar;      /* MUL's constant, or DIV's reciprocal */
} plan_t;

static uint32_t block_channels(const plan_t *p, uint32_t b) { return fw_min_u32(p->lanes, p->cp - b * p->lanes); }

static int check_matrix(const plan_t *p, const char *name, const fw_act_t *t, char *err, size_t errlen) {
  if (!t->n || !t->c) {
    snprintf(err, errlen, "%s: %s has a zero dimension (%u rows of %u)", p->what, name, t->n, t->c);
    return -1;
  }
  if (t->h != 1 || t->w != 1 || t->bh || t->bw) {
    snprintf(err, errlen, "%s: %s is not a matrix (h %u, w %u, border %ux%u; a matrix is h = w = 1, no border)",
             p->what, name, t->h, t->w, t->bh, t->bw);
    return -1;
  }
  if (t->addr % 4 || (uint64_t)t->addr + fw_act_bytes(t) > (1ull << 32)) {
    snprintf(err, errlen, "%s: %s (%llu bytes at 0x%x) is not 4-byte aligned or reaches past 32-bit HBM addresses",
             p->what, name, (unsigned long long)fw_act_bytes(t), t->addr);
    return -1;
  }
  return 0;
}

static bool overlap(const fw_act_t *x, const fw_act_t *y) {
  return x->addr < y->addr + fw_act_bytes(y) && y->addr < x->addr + fw_act_bytes(x);
}

static int check_lines(const plan_t *p, const char *name, uint32_t addr, uint32_t nlines, char *err, size_t errlen) {
  if (addr % 4 || (uint64_t)addr + (uint64_t)nlines * 4 * p->lanes > (1ull << 32)) {
    snprintf(err, errlen, "%s: %s (%u lines at 0x%x) is not 4-byte aligned or reaches past 32-bit HBM addresses",
             p->what, name, nlines, addr);
    return -1;
  }
  return 0;
}

static int plan(const chip_geometry_t *chip, fw_rows_kind_t kind, const fw_rows_args_t *a, plan_t *p, char *err,
                size_t errlen) {
  static const char *const names[] = {"Softmax", "LayerNorm", "GELU (erf)", "GELU (tanh)", "Add",
                                      "Add (row vector)", "Mul", "Div", "Relu"};
  memset(p, 0, sizeof *p);
  if ((unsigned)kind > FW_ROWS_RELU) {
    snprintf(err, errlen, "row kernel: unknown kind %d", (int)kind);
    return -1;
  }
  p->kind = kind, p->a = a, p->what = names[kind], p->lanes = chip->cols;
  if (chip->cols % 2) {
    snprintf(err, errlen, "%s: a line of %u bf16 channels is not whole 4-byte words", p->what, chip->cols);
    return -1;
  }
  if (check_matrix(p, "the input", &a->in, err, errlen) || check_matrix(p, "the output", &a->out, err, errlen))
    return -1;
  if (a->out.n != a->in.n || a->out.c != a->in.c) {
    snprintf(err, errlen, "%s: the output is %u rows of %u, the input %u of %u", p->what, a->out.n, a->out.c,
             a->in.n, a->in.c);
    return -1;
  }
  if (overlap(&a->in, &a->out)) {
    snprintf(err, errlen, "%s: the input and the output overlap in HBM", p->what);
    return -1;
  }
  p->k = a->in.c, p->cp = fw_act_cp(&a->in), p->nb = fw_ceil_div(p->cp, p->lanes), p->pad = p->k % p->lanes != 0;
  p->second = kind == FW_ROWS_ADD || (kind == FW_ROWS_LAYERNORM && a->has_b);
  if (kind == FW_ROWS_ADD && !a->has_b) {
    snprintf(err, errlen, "%s: no second operand b (has_b is not set)", p->what);
    return -1;
  }
  if (p->second) {
    const char *bname = kind == FW_ROWS_ADD ? "operand b" : "the residual";
    if (check_matrix(p, bname, &a->b, err, errlen)) return -1;
    if (a->b.n != a->in.n || a->b.c != a->in.c) {
      snprintf(err, errlen, "%s: %s is %u rows of %u, the input %u of %u", p->what, bname, a->b.n, a->b.c, a->in.n,
               a->in.c);
      return -1;
    }
    if (overlap(&a->b, &a->out)) {
      snprintf(err, errlen, "%s: %s and the output overlap in HBM", p->what, bname);
      return -1;
    }
  }
  if (kind == FW_ROWS_SOFTMAX && !normal_bits(a->scale)) {
    snprintf(err, errlen, "%s: the scale 0x%08x is not a finite nonzero normal fp32 number", p->what, a->scale);
    return -1;
  }
  if (kind == FW_ROWS_LAYERNORM && (!normal_bits(a->epsilon) || a->epsilon >> 31)) {
    snprintf(err, errlen, "%s: epsilon 0x%08x is not a positive normal fp32 number", p->what, a->epsilon);
    return -1;
  }
  if (kind == FW_ROWS_MUL && !finite_bits(a->scale)) {
    snprintf(err, errlen, "%s: the constant 0x%08x is not finite", p->what, a->scale);
    return -1;
  }
  p->scalar = a->scale;
  if (kind == FW_ROWS_DIV) {
    const uint32_t r = normal_bits(a->scale) ? recip_f32(a->scale) : 0;
    if (!normal_bits(r)) {
      snprintf(err, errlen, "%s: the divisor 0x%08x has no normal fp32 reciprocal", p->what, a->scale);
      return -1;
    }
    p->scalar = r;
  }
  p->nconst = fw_rows_consts(chip, kind, p->k, NULL);
  if (p->nconst && check_lines(p, "the constants", a->consts, p->nconst, err, errlen)) return -1;
  if (kind == FW_ROWS_LAYERNORM) {
    p->nvec = 2 * p->nb;
    if (check_lines(p, "gamma", a->gamma, p->nb, err, errlen) || check_lines(p, "beta", a->beta, p->nb, err, errlen))
      return -1;
  } else if (kind == FW_ROWS_ADD_ROW) {
    p->nvec = p->nb;
    if (check_lines(p, "the row vector", a->row, p->nb, err, errlen)) return -1;
  }
  /* two slots of x (and of the second tensor), and the work lines */
  const uint32_t nb = p->nb;
  uint32_t work = 0;
  if (kind == FW_ROWS_SOFTMAX) work = 2;                     /* the max, the sum */
  if (kind == FW_ROWS_LAYERNORM) work = nb + 1;              /* the squares, the mean then the variance */
  if (kind == FW_ROWS_GELU_ERF || kind == FW_ROWS_GELU_TANH) work = nb; /* the second operand */
  p->per_row = 2 * nb * (p->second ? 2 : 1) + work;
  p->vmem = a->vmem_lines && a->vmem_lines < chip->vmem_lines ? a->vmem_lines : chip->vmem_lines;
  if ((uint64_t)p->nconst + p->nvec + p->per_row > p->vmem) {
    snprintf(err, errlen, "%s: a row of %u values needs %u VMEM lines (and %u of constants); %u are free", p->what,
             p->k, p->per_row, p->nconst + p->nvec, p->vmem);
    return -1;
  }
  return 0;
}

static uint32_t tile_rows(const plan_t *p, uint32_t rows) {
  const uint32_t fit = (p->vmem - p->nconst - p->nvec) / p->per_row;
  return fw_min_u32(fw_min_u32(fit, TILE_CAP), fw_ceil_div(rows, 4));
}

/* ---------------------------------------------------------------- one core */

typedef struct {
  const plan_t *p;
  uint32_t lo, hi, tile, ntiles;
  uint32_t slot[2], slot_b[2], work; /* VMEM lines: the slots of x, of the second tensor; the work lines */
} core_t;

static uint32_t tile_len(const core_t *k, uint32_t t) { return fw_min_u32(k->tile, k->hi - k->lo - t * k->tile); }

/* DMA queue: tile t of x (and of b) into slot t % 2, block by block; the last DMA signals. */
static void emit_load(fw_prog_t *dq, const core_t *k, uint32_t t) {
  const plan_t *p = k->p;
  const uint32_t r = tile_len(k, t), m0 = k->lo + t * k->tile, rb = 2 * p->cp;
  for (int which = 0; which < (p->second ? 2 : 1); which++) {
    const fw_act_t *src = which ? &p->a->b : &p->a->in;
    const uint32_t base = which ? k->slot_b[t % 2] : k->slot[t % 2];
    for (uint32_t b = 0; b < p->nb; b++) {
      const bool last = b + 1 == p->nb && which + 1 == (p->second ? 2 : 1);
      fw_dma_hbm_to_vmem(dq, last ? SEM_LOADED : ISA_SEM_NONE, 1, src->addr + m0 * rb + 2 * b * p->lanes, rb,
                         base + b * r, r, 2 * block_channels(p, b));
    }
  }
}

static void emit_store(fw_prog_t *dq, const core_t *k, uint32_t t) {
  const plan_t *p = k->p;
  const uint32_t r = tile_len(k, t), m0 = k->lo + t * k->tile, rb = 2 * p->cp;
  for (uint32_t b = 0; b < p->nb; b++)
    fw_dma_vmem_to_hbm(dq, b + 1 == p->nb ? SEM_STORED : ISA_SEM_NONE, 1, k->slot[t % 2] + b * r,
                       p->a->out.addr + m0 * rb + 2 * b * p->lanes, rb, r, 2 * block_channels(p, b));
}

/* Compute queue: dst = the row reduction of the nb blocks at x (r lines each), `fold` (ADD or
 * MAX) over the blocks in block order, then `lanes` (SUM_LANES or MAX_LANES) across the lanes. */
static void emit_reduce(fw_prog_t *cq, const plan_t *p, isa_vec_op_t fold, isa_vec_op_t lanes, uint32_t x, uint32_t r,
                        uint32_t dst) {
  uint32_t src = x;
  if (p->nb > 1) {
    fw_vec(cq, fold, x, x + r, dst, r, 0);
    for (uint32_t b = 2; b < p->nb; b++) fw_vec(cq, fold, dst, x + b * r, dst, r, 0);
    src = dst;
  }
  fw_vec(cq, lanes, src, src, dst, r, 0);
}

/* Compute queue: op(x_b, line y) for each block b: y the same r lines for every block. */
static void emit_per_block(fw_prog_t *cq, const plan_t *p, isa_vec_op_t op, uint32_t x, uint32_t y, uint32_t r) {
  for (uint32_t b = 0; b < p->nb; b++) fw_vec(cq, op, x + b * r, y, x + b * r, r, 0);
}

/* Compute queue: op(x_b, vector line v + b) broadcast over the tile's rows, for each block. */
static void emit_bcast_blocks(fw_prog_t *cq, const plan_t *p, isa_vec_op_t op, uint32_t x, uint32_t v, uint32_t r) {
  for (uint32_t b = 0; b < p->nb; b++) fw_vec_bcast(cq, op, x + b * r, v + b, x + b * r, r, 0);
}

/* The compute of one tile of r rows at x (block major), in the orders of docs/models.md. */
static void emit_tile(fw_prog_t *cq, const core_t *k, uint32_t t) {
  const plan_t *p = k->p;
  const uint32_t r = tile_len(k, t), x = k->slot[t % 2], y = k->slot_b[t % 2], n = p->nb * r, nb = p->nb;
  const uint32_t last = x + (nb - 1) * r, vec = p->nconst, w = k->work;
  fw_vec(cq, ISA_VEC_TO_FP32, x, x, x, n, 0);
  if (p->second) {
    fw_vec(cq, ISA_VEC_TO_FP32, y, y, y, n, 0);
    fw_vec(cq, ISA_VEC_ADD, x, y, x, n, 0);
  }
  switch (p->kind) {
  case FW_ROWS_SOFTMAX: {
    const uint32_t mx = w, sum = w + r;
    if (p->a->scale != F32_ONE) fw_vec(cq, ISA_VEC_SCALE, x, x, x, n, p->a->scale);
    if (p->pad) fw_vec_bcast(cq, ISA_VEC_ADD, last, 0, last, r, 0); /* -Inf past K */
    emit_reduce(cq, p, ISA_VEC_MAX, ISA_VEC_MAX_LANES, x, r, mx);
    emit_per_block(cq, p, ISA_VEC_SUB, x, mx, r);
    fw_vec(cq, ISA_VEC_EXP, x, x, x, n, 0);
    emit_reduce(cq, p, ISA_VEC_ADD, ISA_VEC_SUM_LANES, x, r, sum);
    fw_vec(cq, ISA_VEC_RECIP, sum, sum, sum, r, 0);
    emit_per_block(cq, p, ISA_VEC_MUL, x, sum, r);
    break;
  }
  case FW_ROWS_LAYERNORM: {
    const uint32_t sq = w, s = w + nb * k->tile; /* the squares, then the mean and the variance */
    const uint32_t inv_k = recip_f32(f32_bits((float)p->k));
    emit_reduce(cq, p, ISA_VEC_ADD, ISA_VEC_SUM_LANES, x, r, s);
    fw_vec(cq, ISA_VEC_SCALE, s, s, s, r, inv_k); /* the mean */
    emit_per_block(cq, p, ISA_VEC_SUB, x, s, r);
    if (p->pad) fw_vec_bcast(cq, ISA_VEC_MUL, last, 1, last, r, 0); /* +0 past K */
    fw_vec(cq, ISA_VEC_MUL, x, x, sq, n, 0);
    emit_reduce(cq, p, ISA_VEC_ADD, ISA_VEC_SUM_LANES, sq, r, s);
    fw_vec(cq, ISA_VEC_SCALE, s, s, s, r, inv_k);             /* the variance */
    fw_vec_bcast(cq, ISA_VEC_AXPY, s, 0, s, r, p->a->epsilon); /* + epsilon x 1.0 */
    fw_vec(cq, ISA_VEC_RSQRT, s, s, s, r, 0);
    emit_per_block(cq, p, ISA_VEC_MUL, x, s, r);
    emit_bcast_blocks(cq, p, ISA_VEC_MUL, x, vec, r);      /* gamma */
    emit_bcast_blocks(cq, p, ISA_VEC_ADD, x, vec + nb, r); /* beta */
    break;
  }
  case FW_ROWS_GELU_ERF:
    fw_vec(cq, ISA_VEC_SCALE, x, x, w, n, F32_RSQRT2);
    fw_vec(cq, ISA_VEC_ERF, w, w, w, n, 0);
    fw_vec_bcast(cq, ISA_VEC_ADD, w, 0, w, n, 0); /* 1 + erf */
    fw_vec(cq, ISA_VEC_SCALE, x, x, x, n, F32_HALF);
    fw_vec(cq, ISA_VEC_MUL, x, w, x, n, 0);
    break;
  case FW_ROWS_GELU_TANH:
    /* 0.5 x (1 + tanh u) = x - x / (e^(2u) + 1) */
    fw_vec(cq, ISA_VEC_MUL, x, x, w, n, 0);
    fw_vec(cq, ISA_VEC_MUL, w, x, w, n, 0);
    fw_vec(cq, ISA_VEC_AXPY, x, w, w, n, F32_GELU_C);
    fw_vec(cq, ISA_VEC_SCALE, w, w, w, n, F32_2_SQRT_2_PI);
    fw_vec(cq, ISA_VEC_EXP, w, w, w, n, 0);
    fw_vec_bcast(cq, ISA_VEC_ADD, w, 0, w, n, 0);
    fw_vec(cq, ISA_VEC_RECIP, w, w, w, n, 0);
    fw_vec(cq, ISA_VEC_MUL, x, w, w, n, 0);
    fw_vec(cq, ISA_VEC_SUB, x, w, x, n, 0);
    break;
  case FW_ROWS_ADD: break; /* the add above */
  case FW_ROWS_ADD_ROW: emit_bcast_blocks(cq, p, ISA_VEC_ADD, x, vec, r); break;
  case FW_ROWS_MUL:
  case FW_ROWS_DIV: fw_vec(cq, ISA_VEC_SCALE, x, x, x, n, p->scalar); break;
  case FW_ROWS_RELU: fw_vec(cq, ISA_VEC_RELU, x, x, x, n, 0); break;
  }
  fw_vec(cq, ISA_VEC_TO_BF16, x, x, x, n, 0);
}

/* One core's programs: the constants and row vectors first, two tiles ahead; then for each
 * tile: compute it, store it, load the tile after next into its slot once the store landed. */
static void emit_core(const core_t *k, fw_prog_t *cq, fw_prog_t *dq) {
  const plan_t *p = k->p;
  const uint32_t lb = 4 * p->lanes, nfixed = p->nconst + p->nvec;
  if (p->nconst) fw_dma_hbm_to_vmem(dq, p->nvec ? ISA_SEM_NONE : SEM_CONST, 1, p->a->consts, lb, 0, p->nconst, lb);
  if (p->kind == FW_ROWS_LAYERNORM) {
    fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 1, p->a->gamma, lb, p->nconst, p->nb, lb);
    fw_dma_hbm_to_vmem(dq, SEM_CONST, 1, p->a->beta, lb, p->nconst + p->nb, p->nb, lb);
  } else if (p->kind == FW_ROWS_ADD_ROW) {
    fw_dma_hbm_to_vmem(dq, SEM_CONST, 1, p->a->row, lb, p->nconst, p->nb, lb);
  }
  emit_load(dq, k, 0);
  if (k->ntiles > 1) emit_load(dq, k, 1);
  if (nfixed) fw_sem_wait(cq, SEM_CONST, 1);
  for (uint32_t t = 0; t < k->ntiles; t++) {
    fw_sem_wait(cq, SEM_LOADED, 1);
    emit_tile(cq, k, t);
    fw_sem_signal(cq, SEM_READY, 1);
    fw_sem_wait(dq, SEM_READY, 1);
    emit_store(dq, k, t);
    if (t + 2 < k->ntiles) {
      fw_sem_wait(dq, SEM_STORED, 1);
      emit_load(dq, k, t + 2);
    }
  }
  fw_sem_wait(dq, SEM_STORED, fw_min_u32(k->ntiles, 2));
  fw_halt(cq);
  fw_halt(dq);
}

static int plan_core(const chip_geometry_t *chip, const plan_t *p, unsigned c, core_t *k) {
  memset(k, 0, sizeof *k);
  k->p = p;
  fw_gemm_core_rows(p->a->in.n, isa_geometry_cores(chip), c, &k->lo, &k->hi);
  if (k->hi <= k->lo) return 0;
  k->tile = tile_rows(p, k->hi - k->lo);
  k->ntiles = fw_ceil_div(k->hi - k->lo, k->tile);
  const uint32_t tl = p->nb * k->tile, base = p->nconst + p->nvec;
  k->slot[0] = base, k->slot[1] = base + tl;
  k->slot_b[0] = base + 2 * tl, k->slot_b[1] = base + 3 * tl;
  k->work = base + (p->second ? 4 : 2) * tl;
  return 1;
}

static int run(const chip_geometry_t *chip, fw_rows_kind_t kind, const fw_rows_args_t *a, fw_prog_t *cq,
               fw_prog_t *dq, char *err, size_t errlen) {
  plan_t p;
  if (plan(chip, kind, a, &p, err, errlen)) return -1;
  const unsigned cores = isa_geometry_cores(chip);
  for (unsigned c = 0; c < cores; c++) {
    core_t k;
    if (plan_core(chip, &p, c, &k)) {
      emit_core(&k, &cq[c], &dq[c]);
    } else {
      fw_halt(&cq[c]);
      fw_halt(&dq[c]);
    }
    char desc[96];
    snprintf(desc, sizeof desc, "%s of %u rows of %u on core %u", p.what, a->in.n, a->in.c, c);
    if (fw_programs_fit(chip, &cq[c], &dq[c], desc, " (split the rows)", err, errlen)) return -1;
  }
  return 0;
}

int fw_softmax_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                    size_t errlen) {
  return run(chip, FW_ROWS_SOFTMAX, a, cq, dq, err, errlen);
}

int fw_layernorm_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                      size_t errlen) {
  return run(chip, FW_ROWS_LAYERNORM, a, cq, dq, err, errlen);
}

int fw_map_rows(const chip_geometry_t *chip, const fw_rows_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                size_t errlen) {
  if (a->op < FW_ROWS_GELU_ERF || a->op > FW_ROWS_RELU) {
    snprintf(err, errlen, "row map: op %d is not a map (GELU, Add, Mul, Div or Relu)", (int)a->op);
    return -1;
  }
  return run(chip, a->op, a, cq, dq, err, errlen);
}

uint32_t fw_rows_tile(const chip_geometry_t *chip, fw_rows_kind_t kind, const fw_rows_args_t *a, unsigned core,
                      char *err, size_t errlen) {
  plan_t p;
  core_t k;
  if (plan(chip, kind, a, &p, err, errlen)) return 0;
  return core < isa_geometry_cores(chip) && plan_core(chip, &p, core, &k) ? k.tile : 0;
}
