/* pool: see pool.h, docs/models.md ("Pooling kernels") and docs/timing.md ("Pooling"). */
#include "fw/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/fw_util.h"

/* Semaphores: input rows landed (DMA -> compute), ring slots given back (compute -> DMA), an
 * output row ready to store (compute -> DMA), an output row's store landed (DMA -> compute). */
enum { SEM_LOADED = FW_SEMS_STREAM, SEM_FREE, SEM_READY, SEM_STORED };

uint32_t fw_pool_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t pad_lo, uint32_t pad_hi) {
  const uint64_t span = (uint64_t)in + pad_lo + pad_hi;
  if (!k || !s || span < k) return 0;
  const uint64_t n = (span - k) / s + 1;
  return n > UINT32_MAX ? 0 : (uint32_t)n;
}

/* 1/n rounded to fp32, to nearest even (n >= 1): the significand of 2^(24+e) / n, 2^e <= n. */
static uint32_t recip_bits(uint64_t n) {
  unsigned e = 0;
  while ((n >> (e + 1)) != 0) e++;
  if ((n & (n - 1)) == 0) return (uint32_t)(127 - e) << 23;
  const uint64_t num = 1ull << (24 + e);
  uint64_t q = num / n;
  const uint64_t r = num % n;
  if (2 * r > n || (2 * r == n && (q & 1))) q++;
  int exp = -(int)e - 1;  /* 1/n = q * 2^(exp - 23), q in (2^23, 2^24] */
  if (q == 1ull << 24) q >>= 1, exp++;
  return (uint32_t)(127 + exp) << 23 | (uint32_t)(q - (1u << 23));
}

/* ---------------------------------------------------------------- the plan */

typedef struct {
  uint32_t r;          /* the phase buffer it reads: input columns r, r + sw, ... */
  int64_t q;           /* output column ow reads that buffer's line ow + q */
  int64_t lo, hi;      /* the output columns whose pixel is inside the image (empty when lo > hi) */
  int64_t copy_hi;     /* [lo, copy_hi]: the columns whose first valid tap this is (in the window's first valid row) */
} tap_t;

typedef struct {
  uint32_t start, len, cols;  /* output columns [start, start + len) see `cols` valid input columns */
} seg_t;

typedef struct {
  uint32_t n, oh, g;              /* image, output row, channel group */
  uint32_t ih_lo, ih_hi;          /* the window's input rows inside the image */
  uint32_t need_lo;               /* the load (index in the core's sequence) of row ih_lo */
  uint32_t new_lo, new_n;         /* the loads this row is the first to need: rows ih_hi - new_n + 1 .. ih_hi */
} row_t;

typedef struct {
  fw_pool_kind_t kind;
  const fw_act_t *in, *out;
  uint32_t lanes, nb, cp;         /* C, channel blocks, channels rounded up to even */
  uint32_t kh, kw, sh, sw, pt, pl;
  bool incl;
  uint32_t oh, ow;
  uint32_t plen[FW_POOL_MAX_WINDOW], poff[FW_POOL_MAX_WINDOW], sb; /* phase buffers; sb: lines of one block */
  tap_t tap[FW_POOL_MAX_WINDOW];
  seg_t seg[2 * FW_POOL_MAX_WINDOW + 1];
  uint32_t nseg;
  /* one core's VMEM plan and rows */
  uint32_t vmem;                  /* the VMEM lines it may use */
  uint32_t group, ngroups, ring, slot_lines, acc_base;
  row_t *rows;
  uint32_t nrows, nloads;
} plan_t;

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static uint32_t block_channels(const plan_t *p, uint32_t b) { return fw_min_u32(p->lanes, p->cp - b * p->lanes); }
static uint32_t group_blocks(const plan_t *p, uint32_t g) { return fw_min_u32(p->group, p->nb - g * p->group); }

static int check_act(const char *what, const char *name, const fw_act_t *t, char *err, size_t errlen) {
  if (!t->n || !t->c || !t->h || !t->w) {
    snprintf(err, errlen, "%s: %s has a zero dimension (%ux%ux%ux%u)", what, name, t->n, t->c, t->h, t->w);
    return -1;
  }
  if (t->addr + fw_act_bytes(t) > (1ull << 32) || fw_act_bytes(t) >> 32) {
    snprintf(err, errlen, "%s: %s (%llu bytes at 0x%x) reaches past 32-bit HBM addresses", what, name,
             (unsigned long long)fw_act_bytes(t), t->addr);
    return -1;
  }
  return 0;
}

/* What every pooling needs of the chip and its two tensors. */
static int check_tensors(const chip_geometry_t *chip, const char *what, const fw_act_t *in, const fw_act_t *out,
                         char *err, size_t errlen) {
  if (chip->cols % 2) {
    snprintf(err, errlen, "%s: a line of %u bf16 channels is not whole 4-byte words", what, chip->cols);
    return -1;
  }
  if (check_act(what, "the input", in, err, errlen) || check_act(what, "the output", out, err, errlen)) return -1;
  if (out->n != in->n || out->c != in->c) {
    snprintf(err, errlen, "%s: the output has %u images of %u channels, the input %u of %u", what, out->n, out->c,
             in->n, in->c);
    return -1;
  }
  if (in->addr < out->addr + fw_act_bytes(out) && out->addr < in->addr + fw_act_bytes(in)) {
    snprintf(err, errlen, "%s: the input and the output overlap in HBM", what);
    return -1;
  }
  return 0;
}

static int check_window(const char *what, const fw_pool_args_t *a, char *err, size_t errlen) {
  const uint32_t v[4] = {a->kh, a->kw, a->sh, a->sw};
  static const char *const name[4] = {"kernel height", "kernel width", "stride height", "stride width"};
  for (int i = 0; i < 4; i++)
    if (v[i] < 1 || v[i] > FW_POOL_MAX_WINDOW) {
      snprintf(err, errlen, "%s: %s %u is outside 1..%u", what, name[i], v[i], FW_POOL_MAX_WINDOW);
      return -1;
    }
  if (a->pad_top >= a->kh || a->pad_bottom >= a->kh || a->pad_left >= a->kw || a->pad_right >= a->kw) {
    snprintf(err, errlen, "%s: pads %u,%u,%u,%u (top, left, bottom, right) must each be below the %ux%u kernel", what,
             a->pad_top, a->pad_left, a->pad_bottom, a->pad_right, a->kh, a->kw);
    return -1;
  }
  const uint32_t oh = fw_pool_out_size(a->in.h, a->kh, a->sh, a->pad_top, a->pad_bottom);
  const uint32_t ow = fw_pool_out_size(a->in.w, a->kw, a->sw, a->pad_left, a->pad_right);
  if (!oh || !ow) {
    snprintf(err, errlen, "%s: the %ux%u kernel is larger than the padded %ux%u input", what, a->kh, a->kw, a->in.h,
             a->in.w);
    return -1;
  }
  if (a->out.h != oh || a->out.w != ow) {
    snprintf(err, errlen, "%s: the output is %ux%u; a %ux%u kernel, stride %ux%u, over %ux%u gives %ux%u", what,
             a->out.h, a->out.w, a->kh, a->kw, a->sh, a->sw, a->in.h, a->in.w, oh, ow);
    return -1;
  }
  return 0;
}

/* The columns: phase buffers, taps and (averages without padding) runs of equal counts. */
static void plan_columns(plan_t *p) {
  const int64_t W = p->in->w, sw = p->sw, pl = p->pl, OW = p->ow;
  const int64_t last = (OW - 1) * sw - pl + p->kw - 1, cols = last < W - 1 ? last + 1 : W; /* columns any tap reads */
  bool used[FW_POOL_MAX_WINDOW] = {false};
  for (int64_t j = 0; j < p->kw; j++) used[(((j - pl) % sw) + sw) % sw] = true;
  p->sb = 0;
  for (uint32_t r = 0; r < p->sw; r++) {
    p->plen[r] = used[r] && r < cols ? (uint32_t)((cols - 1 - r) / sw + 1) : 0;
    p->poff[r] = p->sb;
    p->sb += p->plen[r];
  }
  for (int64_t j = 0; j < p->kw; j++) {
    tap_t *t = &p->tap[j];
    const int64_t jj = j - pl, r = ((jj % sw) + sw) % sw;
    t->r = (uint32_t)r, t->q = (jj - r) / sw;
    t->lo = t->q < 0 ? -t->q : 0;
    t->hi = OW - 1 < (int64_t)p->plen[r] - 1 - t->q ? OW - 1 : (int64_t)p->plen[r] - 1 - t->q;
    /* the first valid column of window ow is max(0, pl - ow sw): nonincreasing in ow */
    t->copy_hi = t->lo - 1;
    while (t->copy_hi < t->hi && (pl - (t->copy_hi + 1) * sw > 0 ? pl - (t->copy_hi + 1) * sw : 0) == j) t->copy_hi++;
  }
  p->nseg = 0;
  for (int64_t ow = 0; ow < OW; ow++) {
    const int64_t a = pl - ow * sw > 0 ? pl - ow * sw : 0, b = W - 1 + pl - ow * sw < p->kw - 1 ? W - 1 + pl - ow * sw : p->kw - 1;
    const uint32_t n = (uint32_t)(b - a + 1);
    if (p->nseg && p->seg[p->nseg - 1].cols == n)
      p->seg[p->nseg - 1].len++;
    else
      p->seg[p->nseg++] = (seg_t){(uint32_t)ow, 1, n};
  }
}

/* The rows of output rows [lo, hi) (index n * OH + oh) over `passes` channel groups, with the
 * loads they need in order: each pass loads each input row it uses once. */
static row_t *make_rows(const plan_t *p, uint32_t lo, uint32_t hi, uint32_t passes, uint32_t *nrows, uint32_t *nloads) {
  row_t *rows = malloc(((size_t)(hi - lo) * passes + 1) * sizeof *rows);
  if (!rows) return NULL;
  uint32_t k = 0, loads = 0;
  for (uint32_t g = 0; g < passes; g++)
    for (uint32_t t = lo; t < hi; t++) {
      row_t *r = &rows[k];
      r->n = t / p->oh, r->oh = t % p->oh, r->g = g;
      const int64_t top = (int64_t)r->oh * p->sh - p->pt, bot = top + p->kh - 1;
      r->ih_lo = (uint32_t)(top > 0 ? top : 0);
      r->ih_hi = (uint32_t)(bot < p->in->h - 1 ? bot : p->in->h - 1);
      const row_t *prev = k ? &rows[k - 1] : NULL;
      const bool same = prev && prev->g == g && prev->n == r->n && prev->ih_hi >= r->ih_lo;
      const uint32_t first_new = same ? prev->ih_hi + 1 : r->ih_lo;
      r->need_lo = same ? prev->need_lo + (r->ih_lo - prev->ih_lo) : loads;
      r->new_lo = loads;
      r->new_n = r->ih_hi + 1 > first_new ? r->ih_hi + 1 - first_new : 0;
      loads += r->new_n;
      k++;
    }
  *nrows = k, *nloads = loads;
  return rows;
}

static uint32_t last_load(const row_t *r) { return r->need_lo + (r->ih_hi - r->ih_lo); }

/* Ring slots: every row's window (the least that runs), or also the next row's loads beside it
 * (the DMA queue then never waits for a slot: it loads row t + 2 once row t is done). */
static uint32_t ring_slots(const row_t *rows, uint32_t n, bool ahead) {
  uint32_t slots = 1;
  for (uint32_t t = 0; t < n; t++) {
    slots = max_u32(slots, last_load(&rows[t]) - rows[t].need_lo + 1);
    if (ahead && t + 1 < n) slots = max_u32(slots, last_load(&rows[t + 1]) - rows[t].need_lo + 1);
  }
  return slots;
}

/* Core `core`'s share of the output rows (contiguous, like the GEMM's rows) and its VMEM plan:
 * the ring of input-row slots from line 0, then two output rows. As many channel blocks a pass
 * as fit beside a ring deep enough that the DMA queue never waits for a slot; else one block a
 * pass and the least ring that runs. */
static int plan_core(const chip_geometry_t *chip, plan_t *p, unsigned core, unsigned cores, const char *what,
                     char *err, size_t errlen) {
  const uint64_t total = (uint64_t)p->in->n * p->oh;
  const uint32_t lo = (uint32_t)(total * core / cores), hi = (uint32_t)(total * (core + 1) / cores);
  p->rows = NULL, p->nrows = p->nloads = 0;
  if (lo == hi) return 0;
  /* each output row takes at least two commands of each queue a channel pass */
  if ((uint64_t)(hi - lo) * 2 > chip->queue_depth) {
    snprintf(err, errlen, "%s: %u output rows on a core need more than the %u commands a queue holds (split the batch)",
             what, hi - lo, chip->queue_depth);
    return -1;
  }
  uint32_t n2, l2;
  row_t *two = make_rows(p, lo, hi, p->nb > 1 ? 2 : 1, &n2, &l2);
  if (!two) {
    snprintf(err, errlen, "%s: out of memory planning", what);
    return -1;
  }
  const uint32_t ahead = ring_slots(two, n2, true), least = ring_slots(two, n2, false);
  free(two);
  uint32_t ring = ahead;
  uint64_t blocks = p->vmem / ((uint64_t)ahead * p->sb + 2ull * p->ow);
  if (!blocks) {
    ring = least;
    blocks = p->vmem / ((uint64_t)least * p->sb + 2ull * p->ow) ? 1 : 0;
  }
  if (!blocks) {
    snprintf(err, errlen, "%s: %u input rows of %u lines and two output rows of %u lines do not fit the %u lines of VMEM",
             what, least, p->sb, p->ow, p->vmem);
    return -1;
  }
  p->group = (uint32_t)(blocks < p->nb ? blocks : p->nb);
  p->ngroups = fw_ceil_div(p->nb, p->group);
  p->ring = ring, p->slot_lines = p->group * p->sb, p->acc_base = ring * p->slot_lines;
  if ((uint64_t)(hi - lo) * p->ngroups * 2 > chip->queue_depth) {
    snprintf(err, errlen, "%s: %u output rows in %u channel passes on a core need more than the %u commands a queue holds"
             " (split the batch)", what, hi - lo, p->ngroups, chip->queue_depth);
    return -1;
  }
  p->rows = make_rows(p, lo, hi, p->ngroups, &p->nrows, &p->nloads);
  if (!p->rows) {
    snprintf(err, errlen, "%s: out of memory planning", what);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- the programs */

static uint32_t acc_line(const plan_t *p, uint32_t t) { return p->acc_base + (t % 2) * p->group * p->ow; }

/* DMA queue: the input rows output row t is the first to need, each into the next ring slot
 * once the load that last used it has been given back; the last DMA of a row signals it. */
static void emit_loads(fw_prog_t *dq, const plan_t *p, uint32_t t) {
  if (t >= p->nrows) return;
  const row_t *r = &p->rows[t];
  const uint32_t g0 = r->g * p->group, gb = group_blocks(p, r->g), pb = (uint32_t)fw_act_pixel_bytes(p->in);
  uint32_t last_phase = 0;
  for (uint32_t ph = 0; ph < p->sw; ph++)
    if (p->plen[ph]) last_phase = ph;
  for (uint32_t k = 0; k < r->new_n; k++) {
    const uint32_t load = r->new_lo + k, ih = r->ih_hi + 1 - r->new_n + k, slot = (load % p->ring) * p->slot_lines;
    if (load >= p->ring) fw_sem_wait(dq, SEM_FREE, 1);
    for (uint32_t b = 0; b < gb; b++)
      for (uint32_t ph = 0; ph < p->sw; ph++) {
        if (!p->plen[ph]) continue;
        const bool last = b + 1 == gb && ph == last_phase;
        const uint32_t src = (uint32_t)fw_act_pixel_addr(p->in, r->n, ih, ph) + 2 * (g0 + b) * p->lanes;
        fw_dma_hbm_to_vmem(dq, last ? SEM_LOADED : ISA_SEM_NONE, 1, src, p->sw * pb, slot + b * p->sb + p->poff[ph],
                           p->plen[ph], 2 * block_channels(p, g0 + b));
      }
  }
}

/* DMA queue: output row t's blocks into the output's interior; the last signals its landing. */
static void emit_store(fw_prog_t *dq, const plan_t *p, uint32_t t) {
  const row_t *r = &p->rows[t];
  const uint32_t g0 = r->g * p->group, gb = group_blocks(p, r->g), pb = (uint32_t)fw_act_pixel_bytes(p->out);
  for (uint32_t b = 0; b < gb; b++) {
    const uint32_t dst = (uint32_t)fw_act_pixel_addr(p->out, r->n, r->oh, 0) + 2 * (g0 + b) * p->lanes;
    fw_dma_vmem_to_hbm(dq, b + 1 == gb ? SEM_STORED : ISA_SEM_NONE, 1, acc_line(p, t) + b * p->ow, dst, pb, p->ow,
                       2 * block_channels(p, g0 + b));
  }
}

/* Compute queue: the window's taps in row-major order, each over the output columns whose
 * pixel is inside the image; the first valid tap of a window copies, the others combine. */
static void emit_taps(fw_prog_t *cq, const plan_t *p, const row_t *r, uint32_t acc, uint32_t gb) {
  const isa_vec_op_t op = p->kind == FW_POOL_MAX ? ISA_VEC_MAX : ISA_VEC_ADD;
  for (uint32_t ih = r->ih_lo; ih <= r->ih_hi; ih++) {
    const uint32_t slot = ((r->need_lo + ih - r->ih_lo) % p->ring) * p->slot_lines;
    for (uint32_t j = 0; j < p->kw; j++) {
      const tap_t *tp = &p->tap[j];
      if (tp->lo > tp->hi) continue;
      const int64_t split = ih == r->ih_lo ? tp->copy_hi : tp->lo - 1; /* [lo, split] copy, the rest combine */
      const uint32_t ncopy = (uint32_t)(split - tp->lo + 1), nop = (uint32_t)(tp->hi - split);
      for (uint32_t b = 0; b < gb; b++) {
        const uint32_t src = slot + b * p->sb + p->poff[tp->r] + (uint32_t)(tp->lo + tp->q);
        const uint32_t dst = acc + b * p->ow + (uint32_t)tp->lo;
        if (ncopy) fw_vec(cq, ISA_VEC_COPY, src, src, dst, ncopy, 0);
        if (nop) fw_vec(cq, op, dst + ncopy, src + ncopy, dst + ncopy, nop, 0);
      }
    }
  }
}

/* Compute queue: an average's sums times the fp32 reciprocal of their counts. */
static void emit_scale(fw_prog_t *cq, const plan_t *p, const row_t *r, uint32_t acc, uint32_t gb) {
  const uint64_t vr = r->ih_hi - r->ih_lo + 1;
  if (p->incl || p->nseg == 1) {
    const uint64_t count = p->incl ? (uint64_t)p->kh * p->kw : vr * p->seg[0].cols;
    fw_vec(cq, ISA_VEC_SCALE, acc, acc, acc, gb * p->ow, recip_bits(count));
    return;
  }
  for (uint32_t s = 0; s < p->nseg; s++)
    for (uint32_t b = 0; b < gb; b++)
      fw_vec(cq, ISA_VEC_SCALE, acc + b * p->ow + p->seg[s].start, 0, acc + b * p->ow + p->seg[s].start, p->seg[s].len,
             recip_bits(vr * p->seg[s].cols));
}

/* Compute queue: output row t. Widen its new input rows in place, wait for the store of the
 * row that last used its output lines, pool, round, give back the input rows the next row does
 * not need and hand the row to the DMA queue. */
static void emit_row(fw_prog_t *cq, const plan_t *p, uint32_t t, uint32_t *freed) {
  const row_t *r = &p->rows[t];
  const uint32_t gb = group_blocks(p, r->g), acc = acc_line(p, t);
  if (r->new_n) fw_sem_wait(cq, SEM_LOADED, r->new_n);
  for (uint32_t k = 0; k < r->new_n;) {
    /* consecutive slots at once; a pass of fewer blocks than the slots hold widens its own lines only */
    const uint32_t s = (r->new_lo + k) % p->ring, run = gb == p->group ? fw_min_u32(r->new_n - k, p->ring - s) : 1;
    const uint32_t line = s * p->slot_lines;
    fw_vec(cq, ISA_VEC_TO_FP32, line, line, line, run == 1 ? gb * p->sb : run * p->slot_lines, 0);
    k += run;
  }
  if (t >= 2) fw_sem_wait(cq, SEM_STORED, 1);
  emit_taps(cq, p, r, acc, gb);
  if (p->kind == FW_POOL_AVG) emit_scale(cq, p, r, acc, gb);
  fw_vec(cq, ISA_VEC_TO_BF16, acc, acc, acc, gb * p->ow, 0);
  const uint32_t keep = t + 1 < p->nrows ? p->rows[t + 1].need_lo : p->nloads; /* loads before it are done with */
  if (keep > *freed) {
    fw_sem_signal(cq, SEM_FREE, keep - *freed);
    *freed = keep;
  }
  fw_sem_signal(cq, SEM_READY, 1);
}

/* One core's programs. The DMA queue loads two output rows ahead, then for each row t waits
 * for it, stores it and loads for row t + 2; at the end it takes the signals nobody waited for
 * (the last slots' and the last two stores'), which also waits for the stores to land. */
static void emit_core(const plan_t *p, fw_prog_t *cq, fw_prog_t *dq) {
  uint32_t freed = 0;
  emit_loads(dq, p, 0);
  emit_loads(dq, p, 1);
  for (uint32_t t = 0; t < p->nrows; t++) {
    emit_row(cq, p, t, &freed);
    fw_sem_wait(dq, SEM_READY, 1);
    emit_store(dq, p, t);
    emit_loads(dq, p, t + 2);
  }
  if (p->nloads) fw_sem_wait(dq, SEM_FREE, fw_min_u32(p->nloads, p->ring));
  fw_sem_wait(dq, SEM_STORED, fw_min_u32(p->nrows, 2));
}

static int pool(const chip_geometry_t *chip, fw_pool_kind_t kind, const fw_pool_args_t *a, fw_prog_t *cq, fw_prog_t *dq,
                char *err, size_t errlen) {
  const char *what = kind == FW_POOL_MAX ? "MaxPool" : "AveragePool";
  if (check_tensors(chip, what, &a->in, &a->out, err, errlen) || check_window(what, a, err, errlen)) return -1;
  plan_t p;
  memset(&p, 0, sizeof p);
  p.kind = kind, p.in = &a->in, p.out = &a->out, p.lanes = chip->cols, p.cp = fw_act_cp(&a->in);
  p.nb = fw_ceil_div(p.cp, p.lanes);
  p.kh = a->kh, p.kw = a->kw, p.sh = a->sh, p.sw = a->sw, p.pt = a->pad_top, p.pl = a->pad_left;
  p.incl = a->count_include_pad, p.oh = a->out.h, p.ow = a->out.w;
  p.vmem = a->vmem_lines && a->vmem_lines < chip->vmem_lines ? a->vmem_lines : chip->vmem_lines;
  if (a->in.w > p.vmem) {
    snprintf(err, errlen, "%s: an input row of %u pixels does not fit the %u lines of VMEM", what, a->in.w, p.vmem);
    return -1;
  }
  if ((uint64_t)a->in.n * p.oh > UINT32_MAX) {
    snprintf(err, errlen, "%s: %u images of %u output rows are too many (split the batch)", what, a->in.n, p.oh);
    return -1;
  }
  plan_columns(&p);
  const unsigned cores = isa_geometry_cores(chip);
  for (unsigned c = 0; c < cores; c++) {
    if (plan_core(chip, &p, c, cores, what, err, errlen)) return -1;
    if (p.nrows) emit_core(&p, &cq[c], &dq[c]);
    free(p.rows);
    char desc[96];
    snprintf(desc, sizeof desc, "%s of %ux%ux%ux%u on core %u", what, a->in.n, a->in.c, a->in.h, a->in.w, c);
    if (fw_programs_fit(chip, &cq[c], &dq[c], desc, " (split the batch)", err, errlen)) return -1;
  }
  return 0;
}

int fw_maxpool(const chip_geometry_t *chip, const fw_pool_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
               size_t errlen) {
  return pool(chip, FW_POOL_MAX, a, cq, dq, err, errlen);
}

int fw_avgpool(const chip_geometry_t *chip, const fw_pool_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
               size_t errlen) {
  return pool(chip, FW_POOL_AVG, a, cq, dq, err, errlen);
}

/* ---------------------------------------------------------------- GlobalAveragePool */

typedef struct {
  const fw_act_t *in, *out;
  uint32_t lanes, nb, cp, lo, chunk_rows, chunks; /* chunks: of one item (an image's channel block) */
  uint32_t buf_lines;                             /* a buffer: the running sum's line, then chunk_rows x W */
} global_t;

/* DMA queue: chunk k of the core's sequence (item lo + k / chunks) into buffer k % 2, once
 * chunk k - 2 has been summed; its last DMA signals it. */
static void global_load(fw_prog_t *dq, const global_t *g, uint32_t k, uint32_t nchunks) {
  if (k >= nchunks) return;
  const fw_act_t *in = g->in;
  const uint32_t item = g->lo + k / g->chunks, n = item / g->nb, b = item % g->nb;
  const uint32_t h0 = (k % g->chunks) * g->chunk_rows, rows = fw_min_u32(g->chunk_rows, in->h - h0);
  const uint32_t data = (k % 2) * g->buf_lines + 1, pb = (uint32_t)fw_act_pixel_bytes(in);
  const uint32_t bytes = 2 * fw_min_u32(g->lanes, g->cp - b * g->lanes);
  if (k >= 2) fw_sem_wait(dq, SEM_FREE, 1);
  if (in->bw == 0) /* no border between rows: the chunk's pixels are evenly spaced */
    fw_dma_hbm_to_vmem(dq, SEM_LOADED, 1, (uint32_t)fw_act_pixel_addr(in, n, h0, 0) + 2 * b * g->lanes, pb, data,
                       rows * in->w, bytes);
  else
    for (uint32_t h = 0; h < rows; h++)
      fw_dma_hbm_to_vmem(dq, h + 1 == rows ? SEM_LOADED : ISA_SEM_NONE, 1,
                         (uint32_t)fw_act_pixel_addr(in, n, h0 + h, 0) + 2 * b * g->lanes, pb, data + h * in->w,
                         in->w, bytes);
}

/* Compute queue: chunk k widened and folded into its item's sum, in pixel order: the first
 * chunk's SUM_LINES starts from its first pixel, a later one from the running sum copied into
 * the line before its pixels. An item's last chunk scales by 1 / (H W) and rounds to bf16. */
static void global_chunk(fw_prog_t *cq, const global_t *g, uint32_t k) {
  const uint32_t li = k / g->chunks, c = k % g->chunks, h0 = c * g->chunk_rows;
  const uint32_t lines = fw_min_u32(g->chunk_rows, g->in->h - h0) * g->in->w;
  const uint32_t lead = (k % 2) * g->buf_lines, data = lead + 1, sum = 2 * g->buf_lines + li % 2;
  fw_sem_wait(cq, SEM_LOADED, 1);
  fw_vec(cq, ISA_VEC_TO_FP32, data, data, data, lines, 0);
  if (c == 0) {
    if (li >= 2) fw_sem_wait(cq, SEM_STORED, 1); /* the item two before stored its sum line */
    fw_vec(cq, ISA_VEC_SUM_LINES, data, data, sum, lines, 0);
  } else {
    fw_vec(cq, ISA_VEC_COPY, sum, sum, lead, 1, 0);
    fw_vec(cq, ISA_VEC_SUM_LINES, lead, lead, sum, lines + 1, 0);
  }
  fw_sem_signal(cq, SEM_FREE, 1);
  if (c + 1 == g->chunks) {
    fw_vec(cq, ISA_VEC_SCALE, sum, sum, sum, 1, recip_bits((uint64_t)g->in->h * g->in->w));
    fw_vec(cq, ISA_VEC_TO_BF16, sum, sum, sum, 1, 0);
    fw_sem_signal(cq, SEM_READY, 1);
  }
}

static int global_core(const chip_geometry_t *chip, global_t *g, uint32_t lo, uint32_t hi, fw_prog_t *cq,
                       fw_prog_t *dq, char *err, size_t errlen) {
  const char *what = "GlobalAveragePool";
  const uint64_t nchunks = (uint64_t)(hi - lo) * g->chunks;
  if (nchunks * 2 > chip->queue_depth) {
    snprintf(err, errlen, "%s: %llu chunks on a core need more than the %u commands a queue holds (split the batch)",
             what, (unsigned long long)nchunks, chip->queue_depth);
    return -1;
  }
  g->lo = lo;
  const uint32_t K = (uint32_t)nchunks, pb = (uint32_t)fw_act_pixel_bytes(g->out);
  global_load(dq, g, 0, K);
  global_load(dq, g, 1, K);
  for (uint32_t k = 0; k < K; k++) {
    global_chunk(cq, g, k);
    if (k % g->chunks + 1 == g->chunks) {
      const uint32_t li = k / g->chunks, item = lo + li, n = item / g->nb, b = item % g->nb;
      fw_sem_wait(dq, SEM_READY, 1);
      fw_dma_vmem_to_hbm(dq, SEM_STORED, 1, 2 * g->buf_lines + li % 2,
                         (uint32_t)fw_act_pixel_addr(g->out, n, 0, 0) + 2 * b * g->lanes, pb, 1,
                         2 * fw_min_u32(g->lanes, g->cp - b * g->lanes));
    }
    global_load(dq, g, k + 2, K);
  }
  fw_sem_wait(dq, SEM_FREE, fw_min_u32(K, 2));
  fw_sem_wait(dq, SEM_STORED, fw_min_u32(hi - lo, 2));
  char desc[96];
  snprintf(desc, sizeof desc, "%s of %ux%ux%ux%u", what, g->in->n, g->in->c, g->in->h, g->in->w);
  return fw_programs_fit(chip, cq, dq, desc, " (split the batch)", err, errlen);
}

int fw_global_avgpool(const chip_geometry_t *chip, const fw_act_t *in, const fw_act_t *out, fw_prog_t *cq,
                      fw_prog_t *dq, char *err, size_t errlen) {
  const char *what = "GlobalAveragePool";
  if (check_tensors(chip, what, in, out, err, errlen)) return -1;
  if (out->h != 1 || out->w != 1) {
    snprintf(err, errlen, "%s: the output is %ux%u, not 1x1", what, out->h, out->w);
    return -1;
  }
  global_t g = {.in = in, .out = out, .lanes = chip->cols, .cp = fw_act_cp(in)};
  g.nb = fw_ceil_div(g.cp, g.lanes);
  /* two buffers of the running sum's line and whole image rows, two sum lines */
  const uint64_t room = chip->vmem_lines >= 4 ? (chip->vmem_lines - 2) / 2 - 1 : 0;
  const uint64_t cap = in->w < FW_POOL_GLOBAL_CHUNK_PIXELS ? FW_POOL_GLOBAL_CHUNK_PIXELS / in->w : 1;
  const uint64_t rows = room / in->w < cap ? room / in->w : cap;
  g.chunk_rows = (uint32_t)(rows < in->h ? rows : in->h);
  if (!g.chunk_rows) {
    snprintf(err, errlen, "%s: two input rows of %u pixels do not fit the %u lines of VMEM", what, in->w,
             chip->vmem_lines);
    return -1;
  }
  g.chunks = fw_ceil_div(in->h, g.chunk_rows);
  g.buf_lines = 1 + g.chunk_rows * in->w;
  const unsigned cores = isa_geometry_cores(chip);
  const uint64_t items = (uint64_t)in->n * g.nb;
  if (items > UINT32_MAX) {
    snprintf(err, errlen, "%s: %llu channel blocks are too many", what, (unsigned long long)items);
    return -1;
  }
  for (unsigned c = 0; c < cores; c++) {
    const uint32_t lo = (uint32_t)(items * c / cores), hi = (uint32_t)(items * (c + 1) / cores);
    if (lo < hi && global_core(chip, &g, lo, hi, &cq[c], &dq[c], err, errlen)) return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- costs */

/* The cost is read off the programs themselves, so it cannot drift from what the kernel emits. */
int fw_pool_cost(const chip_geometry_t *chip, fw_pool_kind_t kind, const fw_pool_args_t *a, unsigned core,
                 fw_pool_cost_t *cost, char *err, size_t errlen) {
  const unsigned cores = isa_geometry_cores(chip);
  memset(cost, 0, sizeof *cost);
  if (core >= cores) {
    snprintf(err, errlen, "pooling cost: the chip has no core %u", core);
    return -1;
  }
  fw_prog_t *cq = calloc(cores, sizeof *cq), *dq = calloc(cores, sizeof *dq);
  int rc = -1;
  if (!cq || !dq) {
    snprintf(err, errlen, "pooling cost: out of memory");
    goto done;
  }
  rc = kind == FW_POOL_GLOBAL ? fw_global_avgpool(chip, &a->in, &a->out, cq, dq, err, errlen)
                           : pool(chip, kind, a, cq, dq, err, errlen);
  if (rc) goto done;
  uint64_t lead = 0; /* the loads the compute queue waits for before its first VEC */
  for (size_t i = 0; i < cq[core].count; i++) {
    const uint32_t *w = cq[core].words + i * ISA_CMD_WORDS;
    if (!cost->vec_cmds && isa_opcode(w) == ISA_OP_SEM_WAIT && ISA_GET(w, SEM_WAIT, sem) == SEM_LOADED)
      lead += ISA_GET(w, SEM_WAIT, value);
    if (isa_opcode(w) != ISA_OP_VEC) continue;
    cost->vec_lines += ISA_GET(w, VEC, rows), cost->vec_cmds++;
    cost->vec_single += ISA_GET(w, VEC, rows) == 1;
  }
  for (size_t i = 0; i < dq[core].count; i++) {
    const uint32_t *w = dq[core].words + i * ISA_CMD_WORDS;
    if (isa_opcode(w) == ISA_OP_SEM_WAIT && ISA_GET(w, SEM_WAIT, sem) == SEM_READY) cost->tail_rows = 0;
    if (isa_opcode(w) != ISA_OP_DMA) continue;
    const uint64_t rows = ISA_GET(w, DMA, rows), bytes = rows * ISA_GET(w, DMA, bytes);
    if (ISA_GET(w, DMA, kind) == ISA_DMA_VMEM_TO_HBM) cost->tail_rows += rows;
    if (lead && ISA_GET(w, DMA, kind) == ISA_DMA_HBM_TO_VMEM) {
      cost->lead_rows += rows;
      lead -= ISA_GET(w, DMA, sem) == SEM_LOADED;
    }
    if (ISA_GET(w, DMA, kind) == ISA_DMA_HBM_TO_VMEM)
      cost->load_rows += rows, cost->load_bytes += bytes;
    else
      cost->store_rows += rows, cost->store_bytes += bytes;
  }
  cost->compute_cmds = (uint32_t)cq[core].count, cost->dma_cmds = (uint32_t)dq[core].count;
done:
  for (unsigned c = 0; cq && dq && c < cores; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  free(cq);
  free(dq);
  return rc;
}

uint64_t fw_pool_contract_cycles(const fw_pool_cost_t *c, uint32_t p, uint32_t hbm_latency) {
  if (!c->vec_cmds) return 0;
  return c->vec_lines + c->vec_single + (c->lead_rows - 1) * p + (c->tail_rows - 1) * p + 2ull * hbm_latency + 15;
}
