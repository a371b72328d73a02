/* model_plan: see model_plan.h and docs/models.md, "The compiler". */
#include "model/model_plan.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fw/border.h"
#include "fw/conv.h"
#include "fw/fw_util.h"
#include "fw/hal.h"
#include "fw/pool.h"
#include "util/bf16.h"

#define ALIGN 512u                 /* every buffer and constant starts on a 128x128 chip's line */
#define HBM_LIMIT (1ull << 32)     /* 32-bit HBM addresses (docs/isa.md) */

static uint64_t align_up(uint64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* ---- lowering: graph nodes to steps */

typedef struct {
  const graph_t *g;
  model_plan_t *p;
  int *buf_of;      /* graph tensor -> buffer, -1 */
  int *consumers;   /* graph tensor -> reading nodes */
  int *reader;      /* graph tensor -> one reading node (the only one when consumers is 1) */
  bool *fused;      /* graph node -> lowered into a step already */
  size_t cap_steps, cap_bufs;
  char *err;
  size_t errlen;
} lower_t;

static int fail_node(lower_t *l, int node, const char *why) {
  const graph_node_t *n = &l->g->nodes[node];
  snprintf(l->err, l->errlen, "node '%s' (%s): %s", n->name, graph_op_name(n->op), why);
  return -1;
}

/* The buffer of graph tensor t as an activation of `images` images: [N, C, H, W] or [N, K]. */
static int buffer_of(lower_t *l, int t, int producer) {
  if (l->buf_of[t] >= 0) return l->buf_of[t];
  const graph_tensor_t *gt = &l->g->tensors[t];
  fw_act_t a = {0};
  a.n = l->p->images;
  if (gt->rank == 4) a.c = (uint32_t)gt->dims[1], a.h = (uint32_t)gt->dims[2], a.w = (uint32_t)gt->dims[3];
  else if (gt->rank == 2) a.c = (uint32_t)gt->dims[1], a.h = a.w = 1;
  else return -1;
  if (l->p->nbufs == l->cap_bufs) {
    l->cap_bufs = l->cap_bufs ? 2 * l->cap_bufs : 64;
    model_buf_t *nb = realloc(l->p->bufs, l->cap_bufs * sizeof *nb);
    if (!nb) return -2;
    l->p->bufs = nb;
  }
  l->p->bufs[l->p->nbufs] = (model_buf_t){.act = a, .tensor = t, .alias = -1, .producer = producer, .last_use = -1};
  return l->buf_of[t] = (int)l->p->nbufs++;
}

static model_step_t *new_step(lower_t *l, model_step_kind_t kind, int node) {
  if (l->p->nsteps == l->cap_steps) {
    l->cap_steps = l->cap_steps ? 2 * l->cap_steps : 64;
    model_step_t *ns = realloc(l->p->steps, l->cap_steps * sizeof *ns);
    if (!ns) return NULL;
    l->p->steps = ns;
  }
  model_step_t *s = &l->p->steps[l->p->nsteps++];
  *s = (model_step_t){.kind = kind, .res = -1, .weight = -1, .bias = -1, .parts = 1};
  snprintf(s->name, sizeof s->name, "%s", l->g->nodes[node].name);
  snprintf(s->ops, sizeof s->ops, "%s", graph_op_name(l->g->nodes[node].op));
  s->nodes[s->nnodes++] = node;
  l->fused[node] = true;
  return s;
}

static void fuse(lower_t *l, model_step_t *s, int node) {
  const size_t len = strlen(s->ops);
  snprintf(s->ops + len, sizeof s->ops - len, "+%s", graph_op_name(l->g->nodes[node].op));
  if (s->nnodes < MODEL_STEP_MAX_NODES) s->nodes[s->nnodes++] = node;
  l->fused[node] = true;
}

/* The node that alone reads tensor t, if it has op `op` and is not lowered yet; else -1. */
static int sole_reader(const lower_t *l, int t, graph_op_t op) {
  if (l->consumers[t] != 1 || l->g->tensors[t].is_output) return -1;
  const int r = l->reader[t];
  return !l->fused[r] && l->g->nodes[r].op == op ? r : -1;
}

static bool is_activation(const lower_t *l, int t) { return t >= 0 && !l->g->tensors[t].data; }

static bool same_shape(const graph_tensor_t *a, const graph_tensor_t *b) {
  if (a->rank != b->rank) return false;
  for (unsigned i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Conv, Gemm or MatMul by a constant, with what follows fused in: + bias (the op's own), then
 * an Add of another activation of the same shape (the residual), then a Relu. The step's output
 * is the last fused node's. */
static int lower_conv(lower_t *l, int node) {
  const graph_t *g = l->g;
  const graph_node_t *n = &g->nodes[node];
  model_step_t *s = new_step(l, MODEL_STEP_CONV, node);
  if (!s) return -2;
  if (!is_activation(l, n->in[0])) return fail_node(l, node, "its input is a constant (fold it in the exporter)");
  if (n->nin < 2 || n->in[1] < 0 || !g->tensors[n->in[1]].data)
    return fail_node(l, node, "the weights must be a constant (an initializer)");
  s->weight = n->in[1];
  s->bias = n->nin > 2 ? n->in[2] : -1;
  if (s->bias >= 0 && !g->tensors[s->bias].data) return fail_node(l, node, "the bias must be a constant");
  s->has_bias = s->bias >= 0;
  const graph_tensor_t *x = &g->tensors[n->in[0]], *w = &g->tensors[s->weight];
  if (n->op == GRAPH_OP_CONV) {
    if (x->rank != 4) return fail_node(l, node, "only 2-D convolutions (NCHW inputs) are supported");
    s->kh = (unsigned)n->attrs.kernel[0], s->kw = (unsigned)n->attrs.kernel[1];
    s->sh = (unsigned)n->attrs.strides[0], s->sw = (unsigned)n->attrs.strides[1];
    s->pt = (unsigned)n->attrs.pads[0], s->pl = (unsigned)n->attrs.pads[1];
    s->pb = (unsigned)n->attrs.pads[2], s->pr = (unsigned)n->attrs.pads[3];
    if (s->has_bias && graph_tensor_elems(&g->tensors[s->bias]) != (uint64_t)w->dims[0])
      return fail_node(l, node, "the bias's length is not the output channels'");
  } else {
    if (x->rank != 2 || w->rank != 2) return fail_node(l, node, "only 2-D operands are supported on this path");
    if (n->op == GRAPH_OP_GEMM) {
      if (n->attrs.trans_a) return fail_node(l, node, "attribute transA=1 is not supported");
      if (n->attrs.alpha != 1.0f || n->attrs.beta != 1.0f)
        return fail_node(l, node, "attributes alpha and beta other than 1 are not supported");
      s->trans_b = n->attrs.trans_b != 0;
    }
    s->gemm = true;
    s->kh = s->kw = s->sh = s->sw = 1;
    const int64_t nout = s->trans_b ? w->dims[0] : w->dims[1];
    if (s->has_bias && graph_tensor_elems(&g->tensors[s->bias]) != (uint64_t)nout)
      return fail_node(l, node, "a bias that is not one value per output column is not supported");
  }
  int out = n->out, r;
  if ((r = sole_reader(l, out, GRAPH_OP_ADD)) >= 0) {
    const graph_node_t *add = &g->nodes[r];
    const int other = add->in[0] == out ? add->in[1] : add->in[0];
    if (is_activation(l, other) && other != out && same_shape(&g->tensors[other], &g->tensors[out])) {
      fuse(l, s, r);
      s->res = other;  /* a graph tensor until the buffers are made */
      out = add->out;
    }
  }
  if ((r = sole_reader(l, out, GRAPH_OP_RELU)) >= 0) {
    fuse(l, s, r);
    s->relu = true;
    out = g->nodes[r].out;
  }
  s->in = n->in[0];
  s->out = out;
  return 0;
}

static int lower_pool(lower_t *l, int node) {
  const graph_node_t *n = &l->g->nodes[node];
  const model_step_kind_t kind = n->op == GRAPH_OP_MAXPOOL   ? MODEL_STEP_MAXPOOL
                                 : n->op == GRAPH_OP_AVGPOOL ? MODEL_STEP_AVGPOOL
                                                             : MODEL_STEP_GLOBALAVGPOOL;
  if (l->g->tensors[n->in[0]].rank != 4) return fail_node(l, node, "only 2-D pooling (NCHW inputs) is supported");
  model_step_t *s = new_step(l, kind, node);
  if (!s) return -2;
  if (kind != MODEL_STEP_GLOBALAVGPOOL) {
    s->kh = (unsigned)n->attrs.kernel[0], s->kw = (unsigned)n->attrs.kernel[1];
    s->sh = (unsigned)n->attrs.strides[0], s->sw = (unsigned)n->attrs.strides[1];
    s->pt = (unsigned)n->attrs.pads[0], s->pl = (unsigned)n->attrs.pads[1];
    s->pb = (unsigned)n->attrs.pads[2], s->pr = (unsigned)n->attrs.pads[3];
    s->count_include_pad = n->attrs.count_include_pad != 0;
  }
  s->in = n->in[0];
  s->out = n->out;
  return 0;
}

/* Flatten or Reshape that keeps the bytes: [N, C, 1, 1] <-> [N, C] (the layout is the same when
 * the buffer has no border). */
static int lower_view(lower_t *l, int node) {
  const graph_node_t *n = &l->g->nodes[node];
  const graph_tensor_t *x = &l->g->tensors[n->in[0]], *y = &l->g->tensors[n->out];
  const bool x1 = x->rank == 2 || (x->rank == 4 && x->dims[2] == 1 && x->dims[3] == 1);
  const bool y1 = y->rank == 2 || (y->rank == 4 && y->dims[2] == 1 && y->dims[3] == 1);
  if (!x1 || !y1 || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
    return fail_node(l, node, "only a reshape between [N, C, 1, 1] and [N, C] is supported on this path");
  l->fused[node] = true;
  const int src = buffer_of(l, n->in[0], -1);
  if (src < 0) return src == -2 ? -2 : fail_node(l, node, "unsupported rank");
  const int b = buffer_of(l, n->out, l->p->bufs[src].producer);
  if (b < 0) return b;
  l->p->bufs[b].alias = src;
  return 0;
}

static int lower_node(lower_t *l, int node) {
  switch (l->g->nodes[node].op) {
    case GRAPH_OP_CONV:
    case GRAPH_OP_GEMM:
    case GRAPH_OP_MATMUL: return lower_conv(l, node);
    case GRAPH_OP_MAXPOOL:
    case GRAPH_OP_AVGPOOL:
    case GRAPH_OP_GLOBALAVGPOOL: return lower_pool(l, node);
    case GRAPH_OP_FLATTEN:
    case GRAPH_OP_RESHAPE: return lower_view(l, node);
    case GRAPH_OP_RELU:
    case GRAPH_OP_ADD: return fail_node(l, node, "not fused into a convolution or matrix product before it "
                                                 "(only Conv/Gemm [+Add] [+Relu] chains are lowered yet)");
    default: return fail_node(l, node, "not lowered to a kernel yet (docs/models.md, \"Status\")");
  }
}

/* ---- buffers, borders, the memory plan */

/* Steps were made in node order of their first node; run them in the order of their last node
 * (a fused residual's producer can come after the convolution that adds it). */
static int by_last_node(const void *a, const void *b) {
  const model_step_t *x = a, *y = b;
  const int lx = x->nodes[x->nnodes - 1], ly = y->nodes[y->nnodes - 1];
  return (lx > ly) - (lx < ly);
}

static void use(model_plan_t *p, int b, int step) {
  while (b >= 0) {
    if (p->bufs[b].last_use < step) p->bufs[b].last_use = step;
    b = p->bufs[b].alias;
  }
}

typedef struct {
  uint64_t at, bytes;
} span_t;

/* First fit in the arena: the lowest offset where `bytes` fits between the live spans. */
static uint64_t first_fit(const span_t *live, size_t n, uint64_t bytes) {
  uint64_t at = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t i = 0; i < n; i++)
      if (live[i].bytes && at < live[i].at + live[i].bytes && live[i].at < at + bytes) at = live[i].at + live[i].bytes, moved = true;
  }
  return at;
}

static int plan_memory(model_plan_t *p, char *err, size_t errlen) {
  span_t *live = calloc(p->nbufs, sizeof *live);
  if (!live) return -2;
  uint64_t peak = 0;
  for (int s = -1; s < (int)p->nsteps; s++) {
    for (size_t b = 0; b < p->nbufs; b++) /* what step s makes */
      if (p->bufs[b].producer == s && p->bufs[b].alias < 0) {
        const uint64_t bytes = align_up(fw_act_bytes(&p->bufs[b].act));
        live[b] = (span_t){first_fit(live, p->nbufs, bytes), bytes};
        if (live[b].at + bytes > peak) peak = live[b].at + bytes;
        p->act_bytes_total += bytes;
      }
    for (size_t b = 0; b < p->nbufs; b++) /* what nothing reads after step s */
      if (p->bufs[b].alias < 0 && live[b].bytes && p->bufs[b].last_use == s && (int)b != p->output) live[b].bytes = 0;
  }
  p->arena_addr = align_up(p->consts_bytes);
  p->arena_bytes = peak;
  p->hbm_bytes = p->arena_addr + peak;
  for (size_t b = 0; b < p->nbufs; b++) {
    int root = (int)b;
    while (p->bufs[root].alias >= 0) root = p->bufs[root].alias;
    p->bufs[b].act.addr = (uint32_t)(p->arena_addr + live[root].at);
  }
  free(live);
  if (p->hbm_bytes > HBM_LIMIT) {
    snprintf(err, errlen, "the model needs %" PRIu64 " bytes of HBM a chip (weights %" PRIu64 ", activations %" PRIu64
             "); HBM addresses are 32 bits (at most %llu)", p->hbm_bytes, p->consts_bytes, p->arena_bytes,
             (unsigned long long)HBM_LIMIT);
    return -1;
  }
  return 0;
}

/* ---- constants: the weights in the kernel's K order (fw_conv_weight_row), the bias in lines */

static uint32_t weight_rows(const model_plan_t *p, const model_step_t *s) {
  return fw_conv_k(p->chip.rows, s->kh, s->kw, fw_act_cp(&p->bufs[s->in].act));
}

static uint32_t ldb_of(const model_plan_t *p, const model_step_t *s) { return (p->bufs[s->out].act.c + 1) & ~1u; }

static uint32_t bias_lines(const model_plan_t *p, const model_step_t *s) {
  return fw_ceil_div(p->bufs[s->out].act.c, p->chip.cols);
}

static void pack_weights(const model_plan_t *p, const model_step_t *s, uint16_t *bm) {
  const graph_tensor_t *w = &p->graph->tensors[s->weight];
  const uint32_t cin = p->bufs[s->in].act.c, cout = p->bufs[s->out].act.c, cp = fw_act_cp(&p->bufs[s->in].act);
  const uint32_t ldb = ldb_of(p, s);
  for (uint32_t co = 0; co < cout; co++)
    for (uint32_t c = 0; c < cin; c++)
      for (uint32_t i = 0; i < s->kh; i++)
        for (uint32_t j = 0; j < s->kw; j++) {
          float v;
          if (!s->gemm) v = w->data[((co * cin + c) * s->kh + i) * s->kw + j];
          else v = s->trans_b ? w->data[(size_t)co * cin + c] : w->data[(size_t)c * cout + co];
          bm[(size_t)fw_conv_weight_row(p->chip.rows, s->kw, cp, i, j, c) * ldb + co] = bf16_of_float(v);
        }
}

static int place_constants(model_plan_t *p) {
  uint64_t at = align_up(4ull * p->chip.cols); /* the zero line at 0 */
  for (size_t i = 0; i < p->nsteps; i++) {
    model_step_t *s = &p->steps[i];
    if (s->kind != MODEL_STEP_CONV) continue;
    s->weights_addr = (uint32_t)at;
    at = align_up(at + 2ull * weight_rows(p, s) * ldb_of(p, s));
    if (s->has_bias) s->bias_addr = (uint32_t)at, at = align_up(at + 4ull * p->chip.cols * bias_lines(p, s));
    if (at > HBM_LIMIT) return -1;
  }
  p->consts_bytes = at;
  p->consts = calloc(at, 1);
  if (!p->consts) return -2;
  for (size_t i = 0; i < p->nsteps; i++) {
    const model_step_t *s = &p->steps[i];
    if (s->kind != MODEL_STEP_CONV) continue;
    pack_weights(p, s, (uint16_t *)(p->consts + s->weights_addr));
    if (s->has_bias) memcpy(p->consts + s->bias_addr, p->graph->tensors[s->bias].data, 4ull * p->bufs[s->out].act.c);
  }
  return 0;
}

/* ---- the steps' figures and their split into parts that fit the queues */

static void count_macs(model_plan_t *p, model_step_t *s) {
  if (s->kind != MODEL_STEP_CONV) return;
  const fw_act_t *in = &p->bufs[s->in].act, *out = &p->bufs[s->out].act;
  const uint64_t pixels = (uint64_t)out->n * out->h * out->w;
  const uint32_t mx = isa_geometry_mxus(&p->chip);
  s->macs = pixels * in->c * s->kh * s->kw * out->c;
  const uint64_t cols = (uint64_t)fw_ceil_div(fw_ceil_div(out->c, p->chip.cols), mx) * mx * p->chip.cols;
  s->padded_macs = pixels * weight_rows(p, s) * cols;
}

static fw_conv_args_t conv_args(const model_plan_t *p, const model_step_t *s, uint32_t m0, uint32_t pixels) {
  fw_conv_args_t a = {.pixels = pixels, .weights = s->weights_addr, .zero = p->zero_addr, .has_bias = s->has_bias,
                      .bias = s->bias_addr, .relu = s->relu};
  a.win = (fw_gemm_window_t){.in = p->bufs[s->in].act, .out = p->bufs[s->out].act, .kh = s->kh, .kw = s->kw,
                             .sh = s->sh, .sw = s->sw, .pt = s->pt, .pl = s->pl, .m0 = m0};
  if (s->res >= 0) a.win.res = p->bufs[s->res].act, a.win.has_res = true;
  return a;
}

static void part_range(const model_plan_t *p, const model_step_t *s, unsigned part, uint32_t *m0, uint32_t *n) {
  const fw_act_t *out = &p->bufs[s->out].act;
  const uint64_t pixels = (uint64_t)out->n * out->h * out->w;
  *m0 = (uint32_t)(pixels * part / s->parts);
  *n = (uint32_t)(pixels * (part + 1) / s->parts) - *m0;
}

int model_step_programs(const model_plan_t *p, size_t i, unsigned part, fw_prog_t *cq, fw_prog_t *dq, char *err,
                        size_t errlen) {
  const model_step_t *s = &p->steps[i];
  const fw_act_t *in = &p->bufs[s->in].act, *out = &p->bufs[s->out].act;
  if (s->kind == MODEL_STEP_CONV) {
    uint32_t m0, n;
    part_range(p, s, part, &m0, &n);
    const fw_conv_args_t a = conv_args(p, s, m0, n);
    return fw_conv2d(&p->chip, &a, cq, dq, err, errlen);
  }
  const fw_pool_args_t a = {.in = *in, .out = *out, .kh = s->kh, .kw = s->kw, .sh = s->sh, .sw = s->sw,
                            .pad_top = s->pt, .pad_left = s->pl, .pad_bottom = s->pb, .pad_right = s->pr,
                            .count_include_pad = s->count_include_pad};
  const int rc = s->kind == MODEL_STEP_GLOBALAVGPOOL ? fw_global_avgpool(&p->chip, in, out, cq, dq, err, errlen)
                 : s->kind == MODEL_STEP_MAXPOOL     ? fw_maxpool(&p->chip, &a, cq, dq, err, errlen)
                                                     : fw_avgpool(&p->chip, &a, cq, dq, err, errlen);
  if (rc) return rc;
  for (unsigned c = 0; c < isa_geometry_cores(&p->chip); c++) fw_halt(&cq[c]), fw_halt(&dq[c]); /* pooling composes: end it */
  return fw_programs_fit(&p->chip, &cq[0], &dq[0], s->ops, "", err, errlen);
}

int model_step_border_programs(const model_plan_t *p, size_t i, fw_prog_t *cq, fw_prog_t *dq, char *err,
                               size_t errlen) {
  const fw_act_t *out = &p->bufs[p->steps[i].out].act;
  if (!out->bh && !out->bw) return 1;
  if (fw_zero_border(&p->chip, out, p->zero_addr, &dq[0], err, errlen)) return -1;
  for (unsigned c = 0; c < isa_geometry_cores(&p->chip); c++) fw_halt(&cq[c]), fw_halt(&dq[c]);
  return fw_programs_fit(&p->chip, &cq[0], &dq[0], "zeroing a border", "", err, errlen);
}

/* The fewest parts (1, 2, 4, ...) whose programs each build and fit the queues: a big layer's
 * im2col DMAs can outnumber a queue's 32,768 commands. */
static int split_step(model_plan_t *p, size_t i, char *err, size_t errlen) {
  model_step_t *s = &p->steps[i];
  const fw_act_t *out = &p->bufs[s->out].act;
  const uint64_t pixels = (uint64_t)out->n * out->h * out->w;
  char first[512] = "";
  for (s->parts = 1;; s->parts *= 2) {
    bool ok = true;
    for (unsigned part = 0; ok && part < s->parts; part++) {
      fw_prog_t cq[MODEL_MAX_CORES], dq[MODEL_MAX_CORES];
      for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
      ok = model_step_programs(p, i, part, cq, dq, err, errlen) == 0;
      for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
    }
    if (ok) return 0;
    if (!first[0]) snprintf(first, sizeof first, "%s", err);
    if (s->kind != MODEL_STEP_CONV || s->parts * 2 > pixels) break;
  }
  snprintf(err, errlen, "step '%s' (%s) cannot run on this chip: %s", s->name, s->ops, first);
  return -1;
}

/* ---- the whole compiler */

static int lower_all(lower_t *l) {
  const graph_t *g = l->g;
  for (size_t i = 0; i < g->nnodes; i++)
    for (unsigned k = 0; k < g->nodes[i].nin; k++) {
      const int t = g->nodes[i].in[k];
      if (t >= 0) l->consumers[t]++, l->reader[t] = (int)i;
    }
  for (size_t i = 0; i < g->nnodes; i++) {
    if (l->fused[i]) continue;
    const int rc = lower_node(l, (int)i);
    if (rc) return rc;
  }
  return 0;
}

/* Graph tensors to buffers, in run order; the input's buffer first. */
static int make_buffers(lower_t *l) {
  model_plan_t *p = l->p;
  const int in = buffer_of(l, l->g->input, -1);
  if (in < 0) {
    if (in == -2) return -2;
    snprintf(l->err, l->errlen, "the graph's input '%s' must be [N, C, H, W] or [N, K]", l->g->tensors[l->g->input].name);
    return -1;
  }
  p->input = in;
  for (size_t i = 0; i < p->nsteps; i++) {
    model_step_t *s = &p->steps[i];
    const int tin = s->in, tres = s->res, tout = s->out;
    if ((s->in = buffer_of(l, tin, -1)) < 0 || (tres >= 0 && (s->res = buffer_of(l, tres, -1)) < 0))
      return s->in == -2 || s->res == -2 ? -2 : fail_node(l, s->nodes[0], "an input of rank other than 2 or 4");
    if (p->bufs[s->in].producer >= (int)i)
      return fail_node(l, s->nodes[0], "reads a tensor that is made after it (the graph is not in order)");
    if ((s->out = buffer_of(l, tout, (int)i)) < 0)
      return s->out == -2 ? -2 : fail_node(l, s->nodes[0], "an output of rank other than 2 or 4");
    use(p, s->in, (int)i);
    if (s->res >= 0) use(p, s->res, (int)i);
  }
  if (l->buf_of[l->g->output] < 0) {
    snprintf(l->err, l->errlen, "the graph's output '%s' is not made by any step", l->g->tensors[l->g->output].name);
    return -1;
  }
  p->output = l->buf_of[l->g->output];
  use(p, p->output, (int)p->nsteps);
  return 0;
}

/* Each buffer's border: the most any convolution reading it pads by (pooling reads only the
 * interior; a view shares its source's bytes, so both keep no border). */
static int set_borders(lower_t *l) {
  model_plan_t *p = l->p;
  for (size_t i = 0; i < p->nsteps; i++) {
    const model_step_t *s = &p->steps[i];
    if (s->kind != MODEL_STEP_CONV) continue;
    fw_act_t *a = &p->bufs[s->in].act;
    const uint32_t bh = s->pt > s->pb ? s->pt : s->pb, bw = s->pl > s->pr ? s->pl : s->pr;
    if (bh > a->bh) a->bh = bh;
    if (bw > a->bw) a->bw = bw;
  }
  for (size_t b = 0; b < p->nbufs; b++) {
    const int src = p->bufs[b].alias;
    if (src < 0) continue;
    if (p->bufs[b].act.bh || p->bufs[b].act.bw || p->bufs[src].act.bh || p->bufs[src].act.bw) {
      snprintf(l->err, l->errlen, "tensor '%s' is a reshape of '%s' and is padded: not supported on this path",
               l->g->tensors[p->bufs[b].tensor].name, l->g->tensors[p->bufs[src].tensor].name);
      return -1;
    }
  }
  return 0;
}

int model_plan_build(const graph_t *g, const chip_geometry_t *chip, unsigned images, model_plan_t *p, char *err,
                     size_t errlen) {
  *p = (model_plan_t){.graph = g, .images = images, .chip = *chip, .input = -1, .output = -1};
  lower_t l = {.g = g, .p = p, .err = err, .errlen = errlen};
  l.buf_of = malloc(g->ntensors * sizeof *l.buf_of);
  l.consumers = calloc(g->ntensors, sizeof *l.consumers);
  l.reader = calloc(g->ntensors, sizeof *l.reader);
  l.fused = calloc(g->nnodes ? g->nnodes : 1, sizeof *l.fused);
  int rc = -2;
  if (l.buf_of && l.consumers && l.reader && l.fused) {
    for (size_t t = 0; t < g->ntensors; t++) l.buf_of[t] = -1;
    rc = lower_all(&l);
    if (!rc) qsort(p->steps, p->nsteps, sizeof *p->steps, by_last_node);
    if (!rc && !p->nsteps) snprintf(err, errlen, "the graph has nothing to run"), rc = -1;
    if (!rc) rc = make_buffers(&l);
    if (!rc) rc = set_borders(&l);
    if (!rc) {
      rc = place_constants(p);
      if (rc == -1) snprintf(err, errlen, "the model's weights need more than the 4 GiB HBM addresses reach");
    }
    if (!rc) rc = plan_memory(p, err, errlen);
    for (size_t i = 0; !rc && i < p->nsteps; i++) count_macs(p, &p->steps[i]), rc = split_step(p, i, err, errlen);
  }
  if (rc == -2) snprintf(err, errlen, "out of memory compiling the model");
  free(l.buf_of), free(l.consumers), free(l.reader), free(l.fused);
  if (rc) model_plan_free(p);
  return rc ? -1 : 0;
}

void model_plan_free(model_plan_t *p) {
  free(p->steps), free(p->bufs), free(p->consts);
  p->steps = NULL, p->bufs = NULL, p->consts = NULL;
  p->nsteps = p->nbufs = 0;
}

/* ---- host input and output */

void model_pack_input(const model_plan_t *p, const float *x, uint8_t *image) {
  const fw_act_t *a = &p->bufs[p->input].act;
  memset(image, 0, fw_act_bytes(a));
  for (uint32_t n = 0; n < a->n; n++)
    for (uint32_t c = 0; c < a->c; c++)
      for (uint32_t h = 0; h < a->h; h++)
        for (uint32_t w = 0; w < a->w; w++) {
          const uint64_t at = fw_act_pixel_addr(a, n, h, w) - a->addr + 2ull * c;
          const uint16_t v = bf16_of_float(x[(((size_t)n * a->c + c) * a->h + h) * a->w + w]);
          memcpy(image + at, &v, 2);
        }
}

void model_unpack_output(const model_plan_t *p, const uint8_t *image, float *y) {
  const fw_act_t *a = &p->bufs[p->output].act;
  for (uint32_t n = 0; n < a->n; n++)
    for (uint32_t c = 0; c < a->c; c++)
      for (uint32_t h = 0; h < a->h; h++)
        for (uint32_t w = 0; w < a->w; w++) {
          uint16_t v;
          memcpy(&v, image + fw_act_pixel_addr(a, n, h, w) - a->addr + 2ull * c, 2);
          y[(((size_t)n * a->c + c) * a->h + h) * a->w + w] = bf16_to_float(v);
        }
}

/* ---- --print-plan */

static const char *kind_name(model_step_kind_t k) {
  switch (k) {
    case MODEL_STEP_CONV: return "gemm";
    case MODEL_STEP_MAXPOOL: return "maxpool";
    case MODEL_STEP_AVGPOOL: return "avgpool";
    default: return "gap";
  }
}

static void shape(char *s, size_t len, const fw_act_t *a) {
  snprintf(s, len, "%ux%ux%ux%u", a->n, a->c, a->h, a->w);
}

int model_plan_print(const model_plan_t *p, FILE *f) {
  fprintf(f, "schedule: %zu steps for %u image%s a chip on %ux%u MXUs (x%u, %u core%s)\n", p->nsteps, p->images,
          p->images == 1 ? "" : "s", p->chip.rows, p->chip.cols, isa_geometry_mxus(&p->chip),
          isa_geometry_cores(&p->chip), isa_geometry_cores(&p->chip) == 1 ? "" : "s");
  fprintf(f, "%4s  %-8s %-18s %-28s %-16s %-16s %-14s %5s  %s\n", "step", "kernel", "ops", "first node", "in (NCHW)",
          "out (NCHW)", "MACs", "parts", "window");
  for (size_t i = 0; i < p->nsteps; i++) {
    const model_step_t *s = &p->steps[i];
    char in[32], out[32], win[64] = "";
    shape(in, sizeof in, &p->bufs[s->in].act), shape(out, sizeof out, &p->bufs[s->out].act);
    if (s->kind != MODEL_STEP_GLOBALAVGPOOL)
      snprintf(win, sizeof win, "%ux%u/%u,%u pad %u,%u,%u,%u%s%s", s->kh, s->kw, s->sh, s->sw, s->pt, s->pl, s->pb,
               s->pr, s->res >= 0 ? " +residual" : "", s->relu ? " relu" : "");
    fprintf(f, "%4zu  %-8s %-18s %-28.28s %-16s %-16s %-14" PRIu64 " %5u  %s\n", i, kind_name(s->kind), s->ops, s->name,
            in, out, s->macs, s->parts, win);
  }
  fprintf(f, "memory plan (HBM of each chip): %" PRIu64 " bytes = constants %" PRIu64 " (zero line, weights, biases) "
          "+ activations %" PRIu64 " at 0x%" PRIx64 " (%" PRIu64 " without reuse)\n", p->hbm_bytes, p->consts_bytes,
          p->arena_bytes, p->arena_addr, p->act_bytes_total);
  fprintf(f, "%4s  %-32s %-16s %-10s %-12s %-12s %s\n", "buf", "tensor", "shape", "border", "address", "bytes", "life (steps)");
  for (size_t b = 0; b < p->nbufs; b++) {
    const model_buf_t *m = &p->bufs[b];
    char sh[32], border[16], life[48];
    shape(sh, sizeof sh, &m->act);
    snprintf(border, sizeof border, "%u,%u", m->act.bh, m->act.bw);
    if (m->alias >= 0) snprintf(life, sizeof life, "view of buf %d", m->alias);
    else if (m->producer < 0) snprintf(life, sizeof life, "host .. %d", m->last_use);
    else snprintf(life, sizeof life, "%d .. %d%s", m->producer, m->last_use, (int)b == p->output ? " (output)" : "");
    fprintf(f, "%4zu  %-32.32s %-16s %-10s 0x%-10x %-12" PRIu64 " %s\n", b, p->graph->tensors[m->tensor].name, sh,
            border, m->act.addr, fw_act_bytes(&m->act), life);
  }
  return ferror(f) ? -1 : 0;
}
