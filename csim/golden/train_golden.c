/* train_golden: see train_golden.h and docs/training.md ("The step, exactly"). */
#include "golden/train_golden.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/coll_golden.h"
#include "golden/mxu_golden_fpu.h"
#include "golden/vec_golden.h"

#define NEG_INF 0xFF800000u

struct train_golden {
  fw_train_net_t net;
  fw_slice_t s;
  unsigned C, chips, cores, b, bp, hm;  /* b: examples per core (each core a data-parallel replica) */
  unsigned k[FW_TRAIN_LAYERS], n[FW_TRAIN_LAYERS], kp[FW_TRAIN_LAYERS], nb[FW_TRAIN_LAYERS];
  unsigned np[FW_TRAIN_LAYERS];  /* columns padded to whole blocks: nb x C */
  size_t lines[FW_TRAIN_LAYERS], first[FW_TRAIN_LAYERS], total;  /* parameter lines */
  uint32_t *params;  /* chips x total x C */
  uint32_t *probs;   /* chips x cores x b x C */
};

/* What one core of a chip computes in a step, between the all-reduces. Every matrix has
 * the chip's padded shape (Fp, Hp, Hmp: features, hidden and hidden / mp rounded up to C;
 * C classes): the chip computes whole tiles, so its pad lanes hold what the MXU and the
 * vector unit make of the pad weights -- zero while every value is finite, but inf x 0 is
 * NaN, and the reference holds every lane (docs/training.md, "Pad lanes"). */
typedef struct {
  uint16_t *x;                 /* b x Fp, pad features zero */
  uint32_t *y;                 /* b x C, one-hot */
  uint16_t *wb[FW_TRAIN_LAYERS]; /* kp x np */
  uint32_t *z1, *z2;           /* b x Hp, b x Hmp (bias added) */
  uint16_t *a1b, *a2b;
  uint32_t *zp;                /* b x C lines: the (partial) logits */
  uint32_t *da1;               /* nb1 blocks of bp lines x C: the (partial) input gradient of layer 2 */
  uint32_t *grad;              /* total x C */
  uint16_t *dz2b, *dz3b;       /* b x Hmp, b x C */
} chip_work_t;

static unsigned up(unsigned a, unsigned m) { return (a + m - 1) / m * m; }

/* The chip's place (docs/training.md, "Layouts"). */
static void place(const train_golden_t *t, unsigned i, unsigned *dp, unsigned *mp, fw_slice_t *dpg, fw_slice_t *mpg) {
  const fw_slice_t *s = &t->s;
  const unsigned x = s->x0 + i % s->w, y = s->y0 + i / s->w;
  if (t->net.mp == 1) {
    *dp = i, *mp = 0, *dpg = *s, *mpg = (fw_slice_t){x, y, 1, 1, s->pod_w, s->pod_h};
  } else if (t->net.dp == 1) {
    *dp = 0, *mp = i, *mpg = *s, *dpg = (fw_slice_t){x, y, 1, 1, s->pod_w, s->pod_h};
  } else {
    *dp = x - s->x0, *mp = y - s->y0;
    *dpg = (fw_slice_t){s->x0, y, s->w, 1, s->pod_w, s->pod_h};
    *mpg = (fw_slice_t){x, s->y0, 1, s->h, s->pod_w, s->pod_h};
  }
}

/* Element (k, n) of layer l in a chip's parameter lines; its bias n. */
static uint32_t *w_at(const train_golden_t *t, uint32_t *p, unsigned l, unsigned k, unsigned n) {
  return p + (t->first[l] + (size_t)(n / t->C) * t->kp[l] + k) * t->C + n % t->C;
}
static uint32_t *b_at(const train_golden_t *t, uint32_t *p, unsigned l, unsigned n) {
  return p + (t->first[l] + (size_t)t->nb[l] * t->kp[l] + n / t->C) * t->C + n % t->C;
}

/* The chip's shard of layer l: rows [r0, r0 + k), columns [c0, c0 + n) of the network's. */
static void shard(const train_golden_t *t, unsigned mp, unsigned l, unsigned *r0, unsigned *c0) {
  *r0 = l == 2 ? mp * t->hm : 0;
  *c0 = l == 1 ? mp * t->hm : 0;
}

train_golden_t *train_golden_new(const fw_train_net_t *net, const fw_slice_t *s, unsigned lanes, unsigned cores,
                                 const uint32_t *const w[FW_TRAIN_LAYERS], const uint32_t *const bias[FW_TRAIN_LAYERS],
                                 char *err, size_t errlen) {
  train_golden_t *t = calloc(1, sizeof *t);
  if (!t) goto oom;
  t->net = *net, t->s = *s, t->C = lanes, t->chips = s->w * s->h, t->cores = cores ? cores : 1;
  t->b = net->batch / net->dp / t->cores, t->bp = up(t->b, lanes), t->hm = net->hidden / net->mp;
  const unsigned full_n[3] = {net->hidden, net->hidden, net->classes};
  const unsigned ks[3] = {net->features, net->hidden, t->hm}, ns[3] = {net->hidden, t->hm, net->classes};
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    t->k[l] = ks[l], t->n[l] = ns[l], t->kp[l] = up(ks[l], lanes), t->nb[l] = (ns[l] + lanes - 1) / lanes;
    t->np[l] = t->nb[l] * lanes;
    t->lines[l] = (size_t)t->nb[l] * t->kp[l] + t->nb[l];
    t->first[l] = t->total;
    t->total += t->lines[l];
  }
  t->params = calloc((size_t)t->chips * t->total * lanes, sizeof *t->params);
  t->probs = calloc((size_t)t->chips * t->cores * t->b * lanes, sizeof *t->probs);
  if (!t->params || !t->probs) goto oom;
  for (unsigned i = 0; i < t->chips; i++) {
    unsigned dp, mp, r0, c0;
    fw_slice_t g1, g2;
    place(t, i, &dp, &mp, &g1, &g2);
    uint32_t *p = t->params + (size_t)i * t->total * lanes;
    for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
      shard(t, mp, l, &r0, &c0);
      for (unsigned k = 0; k < t->k[l]; k++)
        for (unsigned n = 0; n < t->n[l]; n++) *w_at(t, p, l, k, n) = w[l][(size_t)(r0 + k) * full_n[l] + c0 + n];
      for (unsigned n = 0; n < t->n[l]; n++) *b_at(t, p, l, n) = bias[l][c0 + n];
    }
  }
  return t;
oom:
  train_golden_free(t);
  snprintf(err, errlen, "out of memory for the reference trainer");
  return NULL;
}

void train_golden_free(train_golden_t *t) {
  if (!t) return;
  free(t->params);
  free(t->probs);
  free(t);
}

const uint32_t *train_golden_params(const train_golden_t *t, unsigned chip, size_t *lines) {
  if (lines) *lines = t->total;
  return t->params + (size_t)chip * t->total * t->C;
}

const uint32_t *train_golden_probs(const train_golden_t *t, unsigned chip) {
  return t->probs + (size_t)chip * t->cores * t->b * t->C;
}

void train_golden_network(const train_golden_t *t, unsigned dp_rank, uint32_t *const w[FW_TRAIN_LAYERS],
                          uint32_t *const bias[FW_TRAIN_LAYERS]) {
  const unsigned full_n[3] = {t->net.hidden, t->net.hidden, t->net.classes};
  for (unsigned i = 0; i < t->chips; i++) {
    unsigned dp, mp, r0, c0;
    fw_slice_t g1, g2;
    place(t, i, &dp, &mp, &g1, &g2);
    if (dp != dp_rank) continue;
    uint32_t *p = t->params + (size_t)i * t->total * t->C;
    for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
      shard(t, mp, l, &r0, &c0);
      for (unsigned k = 0; k < t->k[l]; k++)
        for (unsigned n = 0; n < t->n[l]; n++) w[l][(size_t)(r0 + k) * full_n[l] + c0 + n] = *w_at(t, p, l, k, n);
      for (unsigned n = 0; n < t->n[l]; n++) bias[l][c0 + n] = *b_at(t, p, l, n);
    }
  }
}

static uint32_t lane(isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t s) { return vec_golden_lane(op, a, b, s); }
static uint16_t bf16(uint32_t v) { return arith_golden_fp32_to_bf16(v); }

/* m x k -> k x m */
static uint16_t *transpose16(const uint16_t *a, unsigned m, unsigned k) {
  uint16_t *t = malloc((size_t)m * k * sizeof *t + 1);
  if (t)
    for (unsigned i = 0; i < m; i++)
      for (unsigned j = 0; j < k; j++) t[(size_t)j * m + i] = a[(size_t)i * k + j];
  return t;
}

/* An all-reduce over group g: member chips of the slice in the group's order (its index
 * y * w + x), `lines` lines of C lanes each at buf(i). */
static int group_allreduce(const train_golden_t *t, const fw_slice_t *g, uint32_t lines, uint32_t *const *buf) {
  const unsigned n = g->w * g->h, C = t->C;
  if (n == 1) return 0;
  uint32_t *in = malloc((size_t)n * lines * C * sizeof *in), *out = malloc((size_t)n * lines * C * sizeof *out);
  if (!in || !out) {
    free(in), free(out);
    return -1;
  }
  for (unsigned j = 0; j < n; j++) memcpy(in + (size_t)j * lines * C, buf[j], (size_t)lines * C * sizeof *in);
  /* the 2-D torus algorithm when the group spans both dimensions with wraparound links (a
   * dimension of more than 2 chips spans the pod), else the ring */
  const bool torus = g->w > 1 && g->h > 1 && (g->w <= 2 || g->w == g->pod_w) && (g->h <= 2 || g->h == g->pod_h);
  const fw_coll_args_t a = {FW_COLL_ALLREDUCE, torus ? FW_COLL_TORUS2D : FW_COLL_RING, 0, lines, 1, 0, false};
  coll_golden(g, &a, C, in, out);
  for (unsigned j = 0; j < n; j++) memcpy(buf[j], out + (size_t)j * lines * C, (size_t)lines * C * sizeof *out);
  free(in), free(out);
  return 0;
}

/* Every group of the kind (dp or mp): its members' buffers all-reduced. */
static int allreduce_groups(const train_golden_t *t, bool dp_groups, uint32_t lines, uint32_t *const *per_chip) {
  int rc = 0;
  uint32_t **buf = malloc(t->chips * sizeof *buf);
  bool *done = calloc(t->chips, sizeof *done);
  if (!buf || !done) rc = -1;
  for (unsigned i = 0; i < t->chips && rc == 0; i++) {
    if (done[i]) continue;
    unsigned dp, mp;
    fw_slice_t g1, g2;
    place(t, i, &dp, &mp, &g1, &g2);
    const fw_slice_t *g = dp_groups ? &g1 : &g2;
    for (unsigned gy = 0; gy < g->h; gy++)
      for (unsigned gx = 0; gx < g->w; gx++) {
        unsigned c = (g->y0 + gy - t->s.y0) * t->s.w + (g->x0 + gx - t->s.x0);
        buf[gy * g->w + gx] = per_chip[c];
        done[c] = true;
      }
    rc = group_allreduce(t, g, lines, buf);
  }
  free(buf), free(done);
  return rc;
}

static void work_free(chip_work_t *w) {
  free(w->x), free(w->y), free(w->z1), free(w->z2), free(w->a1b), free(w->a2b), free(w->zp), free(w->da1);
  free(w->grad), free(w->dz2b), free(w->dz3b);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) free(w->wb[l]);
}

/* Z = Z + bias, A = bf16(relu(Z)) over the b lines of layer l's padded output columns. */
static void bias_relu(const train_golden_t *t, uint32_t *p, unsigned l, uint32_t *z, uint16_t *a) {
  const unsigned np = t->np[l];
  for (unsigned e = 0; e < t->b; e++)
    for (unsigned n = 0; n < np; n++) {
      uint32_t *zz = &z[(size_t)e * np + n];
      *zz = lane(ISA_VEC_ADD, *zz, *b_at(t, p, l, n), 0);
      a[(size_t)e * np + n] = bf16(lane(ISA_VEC_RELU, *zz, 0, 0));
    }
}

/* Forward up to the partial logits, on the padded shapes (each layer's kp x np weights as
 * the parameter lines hold them, pad rows and lanes included). */
static int forward(const train_golden_t *t, unsigned i, unsigned core, const uint16_t *x, const uint8_t *label,
                   unsigned first, chip_work_t *w) {
  const unsigned C = t->C, b = t->b, F = t->net.features, fp = t->kp[0], hp = t->kp[1], hmp = t->kp[2];
  unsigned dp, mp;
  fw_slice_t g1, g2;
  place(t, i, &dp, &mp, &g1, &g2);
  uint32_t *p = t->params + (size_t)i * t->total * C;
  w->x = calloc((size_t)b * fp, 2);
  w->y = calloc((size_t)b * C, 4);
  w->z1 = malloc((size_t)b * hp * 4), w->a1b = malloc((size_t)b * hp * 2);
  w->z2 = malloc((size_t)b * hmp * 4), w->a2b = malloc((size_t)b * hmp * 2);
  w->zp = malloc((size_t)b * C * 4);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) w->wb[l] = malloc((size_t)t->kp[l] * t->np[l] * 2);
  if (!w->x || !w->y || !w->z1 || !w->a1b || !w->z2 || !w->a2b || !w->zp || !w->wb[0] || !w->wb[1] || !w->wb[2])
    return -1;
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++)
    for (unsigned k = 0; k < t->kp[l]; k++)
      for (unsigned n = 0; n < t->np[l]; n++) w->wb[l][(size_t)k * t->np[l] + n] = bf16(*w_at(t, p, l, k, n));
  const unsigned ex = first + (dp * t->cores + core) * b;
  for (unsigned e = 0; e < b; e++) memcpy(w->x + (size_t)e * fp, x + (size_t)(ex + e) * F, (size_t)F * 2);
  for (unsigned e = 0; e < b; e++) w->y[(size_t)e * C + label[ex + e]] = 0x3F800000u;
  /* layer 1, layer 2: Z = A W + bias; A = bf16(relu(Z)); layer 3's partial logits, a line
   * (C lanes, np[2] = C) per example */
  mxu_golden_fpu_gemm(C, b, fp, hp, w->x, w->wb[0], w->z1);
  bias_relu(t, p, 0, w->z1, w->a1b);
  mxu_golden_fpu_gemm(C, b, hp, hmp, w->a1b, w->wb[1], w->z2);
  bias_relu(t, p, 1, w->z2, w->a2b);
  mxu_golden_fpu_gemm(C, b, hmp, C, w->a2b, w->wb[2], w->zp);
  return 0;
}

/* The gradients of layer l into w->grad, every lane of its lines: dW = A^T dZ (A: b x kp bf16,
 * dZ: b x np bf16), db = the sum of dZ's fp32 lines (b x C lanes a block, nb blocks) in line order. */
static int layer_grads(const train_golden_t *t, unsigned l, const uint16_t *a, const uint16_t *dzb,
                       const uint32_t *dz_lines, chip_work_t *w) {
  const unsigned C = t->C, b = t->b, k = t->kp[l], n = t->np[l];
  uint16_t *at = transpose16(a, b, k);
  uint32_t *dw = malloc((size_t)k * n * 4 + 4), *sum = malloc(C * 4);
  if (!at || !dw || !sum) {
    free(at), free(dw), free(sum);
    return -1;
  }
  mxu_golden_fpu_gemm(C, k, b, n, at, dzb, dw);
  for (unsigned kk = 0; kk < k; kk++)
    for (unsigned nn = 0; nn < n; nn++) *w_at(t, w->grad, l, kk, nn) = dw[(size_t)kk * n + nn];
  for (unsigned nt = 0; nt < t->nb[l]; nt++) {
    vec_golden_lines(ISA_VEC_SUM_LINES, C, b, dz_lines + (size_t)nt * b * C, NULL, 0, sum);
    memcpy(b_at(t, w->grad, l, nt * C), sum, C * 4);
  }
  free(at), free(dw), free(sum);
  return 0;
}

/* fp32 values (rows x cols) as nb blocks of `rows` lines of C lanes (zero beyond cols). */
static uint32_t *as_lines(const train_golden_t *t, const uint32_t *v, unsigned rows, unsigned cols, unsigned stride) {
  const unsigned C = t->C, nb = (cols + C - 1) / C;
  uint32_t *l = calloc((size_t)nb * stride * C + 1, 4);
  if (l)
    for (unsigned r = 0; r < rows; r++)
      for (unsigned c = 0; c < cols; c++) l[((size_t)(c / C) * stride + r) * C + c % C] = v[(size_t)r * cols + c];
  return l;
}

/* Softmax, dZ3, layer 3's gradients and input gradient, then layer 2's input gradient. */
static int middle(const train_golden_t *t, unsigned i, unsigned core, chip_work_t *w) {
  const unsigned C = t->C, b = t->b, K = t->net.classes, hp = t->kp[1], hmp = t->kp[2];
  uint32_t *p = t->params + (size_t)i * t->total * C, *probs = t->probs + ((size_t)i * t->cores + core) * b * C;
  uint32_t mask[VEC_GOLDEN_MAX_LANES], z[VEC_GOLDEN_MAX_LANES], m[VEC_GOLDEN_MAX_LANES], e[VEC_GOLDEN_MAX_LANES];
  uint32_t s[VEC_GOLDEN_MAX_LANES], r[VEC_GOLDEN_MAX_LANES];
  for (unsigned c = 0; c < C; c++) mask[c] = c < K ? 0 : NEG_INF;
  float inv = 1.0f / (float)t->net.batch;
  uint32_t inv_bits;
  memcpy(&inv_bits, &inv, 4);
  uint32_t *dz3 = calloc((size_t)b * C, 4);
  w->dz3b = malloc((size_t)b * C * 2);
  w->grad = calloc(t->total * C, 4);
  if (!dz3 || !w->dz3b || !w->grad) {
    free(dz3);
    return -1;
  }
  for (unsigned ex = 0; ex < b; ex++) {
    for (unsigned c = 0; c < C; c++) z[c] = lane(ISA_VEC_ADD, w->zp[(size_t)ex * C + c], *b_at(t, p, 2, c), 0);
    for (unsigned c = 0; c < C; c++) z[c] = lane(ISA_VEC_ADD, z[c], mask[c], 0);
    vec_golden_line(ISA_VEC_MAX_LANES, C, z, NULL, 0, m);
    for (unsigned c = 0; c < C; c++) e[c] = lane(ISA_VEC_EXP, lane(ISA_VEC_SUB, z[c], m[c], 0), 0, 0);
    vec_golden_line(ISA_VEC_SUM_LANES, C, e, NULL, 0, s);
    for (unsigned c = 0; c < C; c++) r[c] = lane(ISA_VEC_RECIP, s[c], 0, 0);
    for (unsigned c = 0; c < C; c++) {
      uint32_t pr = lane(ISA_VEC_MUL, e[c], r[c], 0);
      probs[(size_t)ex * C + c] = pr;
      uint32_t d = lane(ISA_VEC_SCALE, lane(ISA_VEC_SUB, pr, w->y[(size_t)ex * C + c], 0), 0, inv_bits);
      dz3[(size_t)ex * C + c] = d;
      w->dz3b[(size_t)ex * C + c] = bf16(d);
    }
  }
  /* layer 3: input gradient dA2 = dZ3 W3^T, then its gradients; dZ2 = dA2 where Z2 > 0 */
  uint16_t *w3t = transpose16(w->wb[2], hmp, C);
  uint32_t *da2 = malloc((size_t)b * hmp * 4), *dz2 = malloc((size_t)b * hmp * 4);
  w->dz2b = malloc((size_t)b * hmp * 2);
  int rc = -1;
  if (!w3t || !da2 || !dz2 || !w->dz2b) goto out;
  mxu_golden_fpu_gemm(C, b, C, hmp, w->dz3b, w3t, da2);
  if (layer_grads(t, 2, w->a2b, w->dz3b, dz3, w)) goto out;
  for (size_t j = 0; j < (size_t)b * hmp; j++) {
    dz2[j] = lane(ISA_VEC_RELU_GRAD, w->z2[j], da2[j], 0);
    w->dz2b[j] = bf16(dz2[j]);
  }
  /* layer 2's input gradient (partial over mp), in the all-reduce's lines */
  uint16_t *w2t = transpose16(w->wb[1], hp, hmp);
  uint32_t *da1 = malloc((size_t)b * hp * 4);
  if (!w2t || !da1) {
    free(w2t), free(da1);
    goto out;
  }
  mxu_golden_fpu_gemm(C, b, hmp, hp, w->dz2b, w2t, da1);
  w->da1 = as_lines(t, da1, b, hp, t->bp);
  free(w2t), free(da1);
  if (!w->da1) goto out;
  /* dZ2's fp32 lines, for its bias sum */
  uint32_t *dz2l = as_lines(t, dz2, b, hmp, b);
  if (!dz2l) goto out;
  rc = layer_grads(t, 1, w->a1b, w->dz2b, dz2l, w);
  free(dz2l);
out:
  free(dz3), free(w3t), free(da2), free(dz2);
  return rc;
}

/* Layer 1's gradients from the all-reduced dA1. */
static int last(const train_golden_t *t, chip_work_t *w) {
  const unsigned C = t->C, b = t->b, hp = t->kp[1];
  uint32_t *dz1 = malloc((size_t)b * hp * 4);
  uint16_t *dz1b = malloc((size_t)b * hp * 2);
  int rc = -1;
  if (dz1 && dz1b) {
    for (unsigned e = 0; e < b; e++)
      for (unsigned n = 0; n < hp; n++) {
        uint32_t da = w->da1[((size_t)(n / C) * t->bp + e) * C + n % C];
        dz1[(size_t)e * hp + n] = lane(ISA_VEC_RELU_GRAD, w->z1[(size_t)e * hp + n], da, 0);
        dz1b[(size_t)e * hp + n] = bf16(dz1[(size_t)e * hp + n]);
      }
    uint32_t *dz1l = as_lines(t, dz1, b, hp, b);
    if (dz1l) rc = layer_grads(t, 0, w->x, dz1b, dz1l, w);
    free(dz1l);
  }
  free(dz1), free(dz1b);
  return rc;
}

int train_golden_step(train_golden_t *t, const uint16_t *x, const uint8_t *label, unsigned first) {
  const unsigned n = t->chips, K = t->cores, C = t->C;
  chip_work_t *w = calloc((size_t)n * K, sizeof *w); /* core k of chip i: w[i * K + k] */
  uint32_t **bufs = calloc(n, sizeof *bufs);
  int rc = -1;
  if (!w || !bufs) goto out;
  for (unsigned i = 0; i < n; i++)
    for (unsigned k = 0; k < K; k++)
      if (forward(t, i, k, x, label, first, &w[i * K + k])) goto out;
  /* the model-parallel all-reduces: among the chips' same cores */
  for (unsigned k = 0; k < K; k++) {
    for (unsigned i = 0; i < n; i++) bufs[i] = w[i * K + k].zp;
    if (allreduce_groups(t, false, t->b, bufs)) goto out;
  }
  for (unsigned i = 0; i < n; i++)
    for (unsigned k = 0; k < K; k++)
      if (middle(t, i, k, &w[i * K + k])) goto out;
  for (unsigned k = 0; k < K; k++) {
    for (unsigned i = 0; i < n; i++) bufs[i] = w[i * K + k].da1;
    if (allreduce_groups(t, false, (uint32_t)(t->nb[0] * t->bp), bufs)) goto out;
  }
  for (unsigned i = 0; i < n * K; i++)
    if (last(t, &w[i])) goto out;
  /* a chip's gradient: core 0's plus each other core's in turn (core 0 adds what it is
   * handed); then each layer's gradient lines all-reduced over the data-parallel group, and SGD */
  for (unsigned i = 0; i < n; i++)
    for (unsigned k = 1; k < K; k++)
      for (size_t j = 0; j < t->total * C; j++)
        w[i * K].grad[j] = lane(ISA_VEC_ADD, w[i * K].grad[j], w[i * K + k].grad[j], 0);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    for (unsigned i = 0; i < n; i++) bufs[i] = w[i * K].grad + t->first[l] * C;
    if (allreduce_groups(t, true, (uint32_t)t->lines[l], bufs)) goto out;
  }
  float lr;
  memcpy(&lr, &t->net.lr, 4);
  lr = -lr;
  uint32_t nlr;
  memcpy(&nlr, &lr, 4);
  for (unsigned i = 0; i < n; i++) {
    uint32_t *p = t->params + (size_t)i * t->total * C;
    for (size_t j = 0; j < t->total * C; j++) p[j] = lane(ISA_VEC_AXPY, p[j], w[i * K].grad[j], nlr);
  }
  rc = 0;
out:
  for (unsigned i = 0; w && i < n * K; i++) work_free(&w[i]);
  free(w), free(bufs);
  return rc;
}
