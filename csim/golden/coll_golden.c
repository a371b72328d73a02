/* coll_golden: see coll_golden.h. */
#include "golden/coll_golden.h"

#include <string.h>

#include "golden/arith_golden.h"

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
  for (unsigned i = 2; i <= n; i++) acc = arith_golden_fp32_add(v[coord(k + i, n, dir)], acc);
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

void coll_golden(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, const uint32_t *in, uint32_t *out) {
  const unsigned w = s->w, h = s->h, chips = w * h;
  const uint32_t L = a->lines;
  memcpy(out, in, sizeof(uint32_t) * chips * L * lanes);
  uint32_t row[256], col[256];
  if (a->op == FW_COLL_BROADCAST) { /* every chip ends with the root's buffer */
    for (unsigned c = 0; c < chips; c++)
      memcpy(out + (uint64_t)c * L * lanes, in + (uint64_t)a->root * L * lanes, sizeof(uint32_t) * L * lanes);
    return;
  }
  if (a->op == FW_COLL_ALL_TO_ALL) { /* block j of chip i <- block i of chip j */
    const uint32_t bl = L / chips;
    for (unsigned i = 0; i < chips; i++)
      for (unsigned j = 0; j < chips; j++)
        memcpy(out + ((uint64_t)i * L + (uint64_t)j * bl) * lanes, in + ((uint64_t)j * L + (uint64_t)i * bl) * lanes,
               sizeof(uint32_t) * bl * lanes);
    return;
  }
  if (a->op != FW_COLL_ALLREDUCE) {
    /* forward rings over the whole buffer: along X (segment kx), then along Y over that
     * segment (segment ky); the line belongs to chip (kx, ky) */
    for (uint32_t l = 0; l < L; l++) {
      unsigned kx = seg_index(0, L, w, l);
      uint32_t lo = (uint32_t)((uint64_t)kx * L / w), len = (uint32_t)((uint64_t)(kx + 1) * L / w) - lo;
      unsigned ky = seg_index(lo, len, h, l), owner = ky * w + kx;
      for (unsigned e = 0; e < lanes; e++) {
        if (a->op == FW_COLL_REDUCE_SCATTER) {
          for (unsigned j = 0; j < h; j++) {
            for (unsigned i = 0; i < w; i++) row[i] = in[((uint64_t)(j * w + i) * L + l) * lanes + e];
            col[j] = w > 1 ? ring_sum(row, w, 1, kx) : row[0];
          }
          out[((uint64_t)owner * L + l) * lanes + e] = h > 1 ? ring_sum(col, h, 1, ky) : col[0];
        } else {
          for (unsigned c = 0; c < chips; c++)
            out[((uint64_t)c * L + l) * lanes + e] = in[((uint64_t)owner * L + l) * lanes + e];
        }
      }
    }
    return;
  }
  for (uint32_t l = 0; l < L; l++) {
    int x_first;
    region_t r = region_of(a, l, &x_first);
    if (a->algo == FW_COLL_RING) x_first = 1;
    unsigned n1 = x_first ? w : h, n2 = x_first ? h : w;
    /* first dimension: segment of the region; second: segment of that segment */
    unsigned k1 = n1 > 1 ? seg_index(r.lo, r.len, n1, l) : 0;
    region_t r2 = r;
    if (a->algo == FW_COLL_TORUS2D) {
      r2.lo = r.lo + (uint32_t)((uint64_t)k1 * r.len / n1);
      r2.len = r.lo + (uint32_t)((uint64_t)(k1 + 1) * r.len / n1) - r2.lo;
    }
    unsigned k2 = n2 > 1 ? seg_index(r2.lo, r2.len, n2, l) : 0;
    for (unsigned e = 0; e < lanes; e++) {
      for (unsigned j = 0; j < n2; j++) {
        for (unsigned i = 0; i < n1; i++) {
          unsigned x = x_first ? i : j, y = x_first ? j : i;
          row[i] = in[((uint64_t)(y * w + x) * L + l) * lanes + e];
        }
        col[j] = n1 > 1 ? ring_sum(row, n1, r.dir, k1) : row[0];
      }
      uint32_t total = n2 > 1 ? ring_sum(col, n2, r.dir, k2) : col[0];
      for (unsigned c = 0; c < chips; c++) out[((uint64_t)c * L + l) * lanes + e] = total;
    }
  }
}
