/* coll_golden: see coll_golden.h. */
#include "golden/coll_golden.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden_fpu.h"

/* Segment k of n of [lo, lo+len): [lo + floor(k len / n), lo + floor((k+1) len / n)). */
static unsigned seg_index(uint32_t lo, uint32_t len, unsigned n, uint32_t line) {
  for (unsigned k = 0; k < n; k++)
    if (line < lo + (uint32_t)((uint64_t)(k + 1) * len / n)) return k;
  return n - 1;
}

/* Coordinate of ring position p (forward: p; backward: (n - p) mod n). */
static unsigned coord(unsigned p, unsigned n, int dir) { return dir > 0 ? p % n : (n - p % n) % n; }

/* The reduction of a ring reduce-scatter for segment k: the partial starts at position
 * k+1 and each next position adds its own value to it: own + partial. `val(pos)`
 * is given as an array over coordinates. */
static uint32_t ring_sum(const uint32_t *v, unsigned n, int dir, unsigned k) {
  uint32_t acc = v[coord(k + 1, n, dir)];
  for (unsigned i = 2; i <= n; i++) acc = arith_golden_fpu_fp32_add(v[coord(k + i, n, dir)], acc);
  return acc;
}

typedef struct {
  uint32_t lo, len;
  int dir;
} region_t;

/* Region (and direction) of a line for the all-reduce algorithms: halves by direction
 * (ring), quarters (torus2d: A = first half X first, B = second half Y first). */
static region_t region_of(const fw_coll_args_t *a, uint32_t l, int *x_first) {
  uint32_t L = a->lines, h = L / 2;
  region_t r;
  *x_first = 1;
  if (a->algo == FW_COLL_RING) {
    r = l < h ? (region_t){0, h, 1} : (region_t){h, L - h, -1};
    return r;
  }
  if (l < h) {
    r = l < h / 2 ? (region_t){0, h / 2, 1} : (region_t){h / 2, h - h / 2, -1};
  } else {
    uint32_t q = (L - h) / 2;
    r = l < h + q ? (region_t){h, q, 1} : (region_t){h + q, (L - h) - q, -1};
    *x_first = 0;
  }
  return r;
}

unsigned coll_golden_owner(const fw_slice_t *s, uint32_t lines, uint32_t l) {
  unsigned kx = seg_index(0, lines, s->w, l);
  uint32_t lo = (uint32_t)((uint64_t)kx * lines / s->w), len = (uint32_t)((uint64_t)(kx + 1) * lines / s->w) - lo;
  return seg_index(lo, len, s->h, l) * s->w + kx;
}

/* Rings of up to 255 chips a dimension. */
typedef struct {
  uint32_t row[256], col[256];
} rings_t;

/* Every chip's value of lane e of line l after the collective (not all_to_all), from every
 * chip's value of that lane: v[chip] in, out[chip] out. */
static void golden_lane(const fw_slice_t *s, const fw_coll_args_t *a, uint32_t l, const uint32_t *v, uint32_t *out,
                        rings_t *rg) {
  const unsigned w = s->w, h = s->h, chips = w * h;
  const uint32_t L = a->lines;
  uint32_t *row = rg->row, *col = rg->col;
  if (a->op == FW_COLL_BROADCAST) { /* every chip ends with the root's buffer */
    for (unsigned c = 0; c < chips; c++) out[c] = v[a->root];
    return;
  }
  if (a->op != FW_COLL_ALLREDUCE) {
    /* forward rings over the whole buffer: along X (segment kx), then along Y over that
     * segment (segment ky); the line belongs to chip (kx, ky) */
    const unsigned owner = coll_golden_owner(s, L, l), kx = owner % w, ky = owner / w;
    memcpy(out, v, sizeof *out * chips);
    if (a->op == FW_COLL_REDUCE_SCATTER) {
      for (unsigned j = 0; j < h; j++) {
        for (unsigned i = 0; i < w; i++) row[i] = v[j * w + i];
        col[j] = w > 1 ? ring_sum(row, w, 1, kx) : row[0];
      }
      out[owner] = h > 1 ? ring_sum(col, h, 1, ky) : col[0];
    } else {
      for (unsigned c = 0; c < chips; c++) out[c] = v[owner];
    }
    return;
  }
  int x_first;
  region_t r = region_of(a, l, &x_first);
  if (a->algo == FW_COLL_RING) x_first = 1;
  const unsigned n1 = x_first ? w : h, n2 = x_first ? h : w;
  /* first dimension: segment of the region; second: segment of that segment */
  const unsigned k1 = n1 > 1 ? seg_index(r.lo, r.len, n1, l) : 0;
  region_t r2 = r;
  if (a->algo == FW_COLL_TORUS2D) {
    r2.lo = r.lo + (uint32_t)((uint64_t)k1 * r.len / n1);
    r2.len = r.lo + (uint32_t)((uint64_t)(k1 + 1) * r.len / n1) - r2.lo;
  }
  const unsigned k2 = n2 > 1 ? seg_index(r2.lo, r2.len, n2, l) : 0;
  for (unsigned j = 0; j < n2; j++) {
    for (unsigned i = 0; i < n1; i++) {
      const unsigned x = x_first ? i : j, y = x_first ? j : i;
      row[i] = v[y * w + x];
    }
    col[j] = n1 > 1 ? ring_sum(row, n1, r.dir, k1) : row[0];
  }
  const uint32_t total = n2 > 1 ? ring_sum(col, n2, r.dir, k2) : col[0];
  for (unsigned c = 0; c < chips; c++) out[c] = total;
}

void coll_golden(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, const uint32_t *in, uint32_t *out) {
  const unsigned chips = s->w * s->h;
  const uint32_t L = a->lines;
  if (a->op == FW_COLL_ALL_TO_ALL) { /* block j of chip i <- block i of chip j */
    const uint32_t bl = L / chips;
    memcpy(out, in, sizeof(uint32_t) * chips * L * lanes);
    for (unsigned i = 0; i < chips; i++)
      for (unsigned j = 0; j < chips; j++)
        memcpy(out + ((uint64_t)i * L + (uint64_t)j * bl) * lanes, in + ((uint64_t)j * L + (uint64_t)i * bl) * lanes,
               sizeof(uint32_t) * bl * lanes);
    return;
  }
  uint32_t *v = malloc(2 * chips * sizeof *v), *o = v + chips;
  rings_t *rg = malloc(sizeof *rg);
  if (!v || !rg) abort(); /* a golden model without memory cannot answer */
  for (uint32_t l = 0; l < L; l++)
    for (unsigned e = 0; e < lanes; e++) {
      for (unsigned c = 0; c < chips; c++) v[c] = in[((uint64_t)c * L + l) * lanes + e];
      golden_lane(s, a, l, v, o, rg);
      for (unsigned c = 0; c < chips; c++) out[((uint64_t)c * L + l) * lanes + e] = o[c];
    }
  free(v), free(rg);
}

double coll_golden_bound(unsigned n) {
  const double k = (n ? n - 1 : 0) * 0x1p-24;
  return k / (1 - k);
}

static double fp32_value(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static void mismatch(coll_check_t *c, unsigned chip, uint64_t value, uint32_t got, uint32_t want) {
  if (c->mismatches++ == 0) c->first_chip = chip, c->first_value = value, c->got = got, c->want = want;
}

/* Values checked at a time, of all the chips together: every chip's inputs and outputs of a
 * block are held at once (64 MiB). */
enum { CHECK_BLOCK_VALUES = 1 << 23 };

int coll_golden_check_stream(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems,
                             const coll_golden_io_t *io, coll_check_t *c) {
  const unsigned chips = s->w * s->h;
  memset(c, 0, sizeof *c);
  c->bound = coll_golden_bound(chips);
  if (a->op == FW_COLL_ALL_TO_ALL) { /* element level: chip i's block j is chip j's block i */
    const uint64_t b = elems / chips;
    uint32_t *got = malloc((b + 1) * sizeof *got), *want = malloc((b + 1) * sizeof *want);
    int rc = got && want ? 0 : -1;
    for (unsigned i = 0; i < chips && !rc; i++)
      for (unsigned j = 0; j < chips && !rc; j++) {
        const bool mine = io->shares < 2 || i % io->shares == io->share;
        if (mine) io->input(io->ctx, j, (uint64_t)i * b, b, want);
        if ((rc = io->output(io->ctx, i, (uint64_t)j * b, b, got)) || !mine) continue;
        for (uint64_t t = 0; t < b; t++, c->checked++)
          if (got[t] != want[t]) mismatch(c, i, j * b + t, got[t], want[t]);
      }
    free(got), free(want);
    return rc;
  }
  /* the golden model works on whole lines: the values padded with zeros */
  fw_coll_args_t ga = *a;
  ga.lines = (uint32_t)((elems + lanes - 1) / lanes);
  const bool reduction = a->op == FW_COLL_ALLREDUCE || a->op == FW_COLL_REDUCE_SCATTER;
  const uint64_t per_chip = CHECK_BLOCK_VALUES / chips, block_lines = per_chip / lanes ? per_chip / lanes : 1;
  const uint64_t span = block_lines * lanes; /* values of a block, per chip */
  uint32_t *in = malloc(chips * span * sizeof *in), *out = malloc(chips * span * sizeof *out);
  uint32_t *v = malloc(chips * sizeof *v), *want = malloc(chips * sizeof *want);
  rings_t *rg = malloc(sizeof *rg);
  int rc = in && out && v && want && rg ? 0 : -1;
  for (uint64_t e0 = 0; e0 < elems && !rc; e0 += span) {
    const uint64_t n = elems - e0 < span ? elems - e0 : span;
    const bool mine = io->shares < 2 || (e0 / span) % io->shares == io->share;
    for (unsigned i = 0; i < chips && !rc; i++) {
      memset(in + i * span, 0, span * sizeof *in);
      if (mine) io->input(io->ctx, i, e0, n, in + i * span);
      rc = io->output(io->ctx, i, e0, n, out + i * span);
    }
    for (uint64_t k = 0; k < n && !rc && mine; k++) {
      const uint64_t e = e0 + k;
      const uint32_t l = (uint32_t)(e / lanes);
      double sum = 0, mag = 0;  /* the float64 sum of the chips' values */
      for (unsigned o = 0; o < chips; o++) {
        v[o] = in[o * span + k];
        const double x = fp32_value(v[o]);
        sum += x, mag += fabs(x);
      }
      golden_lane(s, &ga, l, v, want, rg);
      const unsigned owner = a->op == FW_COLL_REDUCE_SCATTER ? coll_golden_owner(s, ga.lines, l) : 0;
      for (unsigned i = 0; i < chips; i++) {
        if (a->op == FW_COLL_REDUCE_SCATTER && owner != i) continue;
        const uint32_t got = out[i * span + k];
        c->checked++;
        if (got != want[i]) mismatch(c, i, e, got, want[i]);
        if (!reduction) continue;
        const double err = fabs(fp32_value(got) - sum);
        if (mag > 0 && err / mag > c->max_rel_error) c->max_rel_error = err / mag;
        if (err > c->bound * mag) c->bound_violations++;
      }
    }
  }
  free(in), free(out), free(v), free(want), free(rg);
  return rc;
}

uint64_t coll_golden_merge_key(const fw_coll_args_t *a, unsigned chips, uint64_t elems, const coll_check_t *c) {
  if (!c->mismatches) return UINT64_MAX;
  if (a->op == FW_COLL_ALL_TO_ALL) return (uint64_t)c->first_chip * elems + c->first_value; /* chip, then value */
  return c->first_value * chips + c->first_chip;                                           /* value, then chip */
}

/* The arrays of coll_golden_check as a coll_golden_io_t. */
typedef struct {
  const uint32_t *in, *out;
  uint64_t elems;
} arrays_t;

static void array_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const arrays_t *x = ctx;
  memcpy(vals, x->in + chip * x->elems + first, n * sizeof *vals);
}

static int array_output(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const arrays_t *x = ctx;
  memcpy(vals, x->out + chip * x->elems + first, n * sizeof *vals);
  return 0;
}

int coll_golden_check(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems,
                      const uint32_t *in, const uint32_t *out, coll_check_t *c) {
  arrays_t x = {in, out, elems};
  const coll_golden_io_t io = {&x, array_input, array_output, 0, 0};
  return coll_golden_check_stream(s, a, lanes, elems, &io, c);
}
