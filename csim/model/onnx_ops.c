/* onnx_ops: the ONNX reader's table of supported ops and attributes, and for each op its
 * checks, its folding on constants and its shape inference (model/onnx_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_internal.h"
#include "model/onnx_reader.h"

typedef struct op_rule op_rule_t;
typedef int (*op_fn)(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin);

struct op_rule {
  const char *op;       /* ONNX op_type (default domain) */
  const char *attrs;    /* the attributes accepted, space-separated ("" none) */
  unsigned min_in, max_in;
  op_fn fn;
  graph_op_t gop;       /* what it becomes when it computes (not folded) */
  const char *doc;      /* what is supported, for the table in docs/models.md */
};

#define V(i) (&r->vals[(i)])
#define OUT0 (r->node->n_output ? r->node->output[0] : NULL)

/* ------------------------------------------------------------------ helpers */

static bool is_const(const rd_t *r, int v) { return v >= 0 && r->vals[v].kind != VAL_ACT; }

static int need_const(rd_t *r, int v, unsigned k, val_kind_t kind) {
  if (v < 0) return rd_node_fail(r, "input %u is missing", k);
  if (r->vals[v].kind == VAL_ACT)
    return rd_node_fail(r, "input %u ('%.200s') must be a constant (an initializer or folded at load); it is computed",
                        k, r->node->input[k]);
  if (r->vals[v].kind != kind)
    return rd_node_fail(r, "input %u ('%.200s') must be %s", k, r->node->input[k], kind == VAL_F32 ? "float32" : "int64");
  return 0;
}

static int need_act(rd_t *r, int v, unsigned k) {
  if (v < 0) return rd_node_fail(r, "input %u is missing", k);
  if (r->vals[v].kind != VAL_ACT)
    return rd_node_fail(r, "input %u ('%.200s') is a constant: computing on constants alone is not supported "
                        "(fold it at export)", k, r->node->input[k]);
  return 0;
}

static int bind_out(rd_t *r, int v) { return v < 0 ? -1 : rd_bind(r, OUT0, v); }

static int norm_axis(rd_t *r, const char *what, int64_t axis, unsigned rank, int64_t *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return rd_node_fail(r, "%s %lld is out of range for rank %u", what, (long long)axis, rank);
  *out = axis < 0 ? axis + rank : axis;
  return 0;
}

/* The strides of a row-major shape. */
static void strides_of(unsigned rank, const int64_t *dims, int64_t *st) {
  int64_t s = 1;
  for (unsigned k = rank; k-- > 0;) st[k] = s, s *= dims[k];
}

/* A constant with v's data and a new shape (same element count): Reshape and its kin. */
static int const_reshape(rd_t *r, int v, unsigned rank, const int64_t *dims) {
  const val_kind_t kind = V(v)->kind;
  int o = rd_new_const(r, OUT0, kind, rank, dims);
  if (o < 0) return -1;
  size_t n = (size_t)rd_val_elems(V(o));
  if (kind == VAL_F32) memcpy(V(o)->f, V(v)->f, n * sizeof(float));
  else memcpy(V(o)->i, V(v)->i, n * sizeof(int64_t));
  return bind_out(r, o);
}

/* Data as int64 list (a constant int64 tensor of at most max values). */
static int const_ints(rd_t *r, int v, unsigned k, unsigned max, int64_t *out, unsigned *n) {
  if (need_const(r, v, k, VAL_I64)) return -1;
  int64_t e = rd_val_elems(V(v));
  if (V(v)->rank > 1 || e > max) return rd_node_fail(r, "input %u must be a list of at most %u integers", k, max);
  for (int64_t j = 0; j < e; j++) out[j] = V(v)->i[j];
  *n = (unsigned)e;
  return 0;
}

/* ------------------------------------------------------------------ folded ops */

static int op_constant(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)in, (void)nin;
  if (r->node->n_attribute != 1) return rd_node_fail(r, "needs exactly one value attribute");
  Onnx__AttributeProto *a = r->node->attribute[0];
  int v = -1;
  if (!strcmp(a->name, "value")) {
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t) return rd_node_fail(r, "attribute 'value' is not a tensor");
    char what[300], label[280];
    snprintf(what, sizeof what, "%s: attribute 'value'", rd_node_label(r, label, sizeof label));
    v = rd_tensor_val(r, a->t, OUT0, what);
  } else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
    const bool f = a->name[6] == 'f';
    if (a->type != (f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
      return rd_node_fail(r, "attribute '%s' has the wrong type", a->name);
    if ((v = rd_new_const(r, OUT0, f ? VAL_F32 : VAL_I64, 0, NULL)) < 0) return -1;
    if (f) V(v)->f[0] = a->f;
    else V(v)->i[0] = a->i;
  } else {  /* value_floats, value_ints */
    const bool f = a->name[6] == 'f';
    if (a->type != (f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))
      return rd_node_fail(r, "attribute '%s' has the wrong type", a->name);
    int64_t d = (int64_t)(f ? a->n_floats : a->n_ints);
    if ((v = rd_new_const(r, OUT0, f ? VAL_F32 : VAL_I64, 1, &d)) < 0) return -1;
    if (f && d) memcpy(V(v)->f, a->floats, (size_t)d * sizeof(float));
    if (!f && d) memcpy(V(v)->i, a->ints, (size_t)d * sizeof(int64_t));
  }
  return bind_out(r, v);
}

static int op_identity(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  if (in[0] < 0) return rd_node_fail(r, "input 0 is missing");
  if (!strcmp(r->node->op_type, "Dropout") && nin > 2 && in[2] >= 0)
    return rd_node_fail(r, "input 'training_mode' is given (only inference is supported: leave it out)");
  return rd_bind(r, OUT0, in[0]);  /* Dropout's mask output stays undefined: a consumer is refused */
}

static int op_shape(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  int64_t start, end;
  if (rd_attr_int(r, "start", 0, &start) || rd_attr_int(r, "end", GRAPH_MAX_RANK + 1, &end)) return -1;
  const int64_t rank = V(in[0])->rank;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  int64_t n = end > start ? end - start : 0;
  int v = rd_new_const(r, OUT0, VAL_I64, 1, &n);
  if (v < 0) return -1;
  for (int64_t k = 0; k < n; k++) V(v)->i[k] = V(in[0])->dims[start + k];
  return bind_out(r, v);
}

static int op_gather(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  int64_t axis;
  if (!is_const(r, in[0]))
    return rd_node_fail(r, "Gather on a computed tensor ('%.200s') is not supported (only on constants and shapes)",
                        r->node->input[0]);
  if (need_const(r, in[1], 1, VAL_I64) || rd_attr_int(r, "axis", 0, &axis)) return -1;
  const val_t d = *V(in[0]), x = *V(in[1]);
  if (norm_axis(r, "attribute 'axis'", axis, d.rank, &axis)) return -1;
  if (d.rank - 1 + x.rank > GRAPH_MAX_RANK) return rd_node_fail(r, "the output's rank is over %d", GRAPH_MAX_RANK);
  int64_t dims[GRAPH_MAX_RANK];
  unsigned rank = 0;
  for (int64_t k = 0; k < axis; k++) dims[rank++] = d.dims[k];
  for (unsigned k = 0; k < x.rank; k++) dims[rank++] = x.dims[k];
  for (unsigned k = (unsigned)axis + 1; k < d.rank; k++) dims[rank++] = d.dims[k];
  int64_t outer = rd_elems((unsigned)axis, d.dims), inner = rd_elems(d.rank - (unsigned)axis - 1, d.dims + axis + 1);
  int64_t nidx = rd_val_elems(&x), dim = d.dims[axis];
  int o = rd_new_const(r, OUT0, d.kind, rank, dims);
  if (o < 0) return -1;
  for (int64_t j = 0; j < nidx; j++) {
    int64_t ix = V(in[1])->i[j];
    if (ix < -dim || ix >= dim) return rd_node_fail(r, "index %lld is out of range for dimension %lld", (long long)ix, (long long)dim);
    if (ix < 0) ix += dim;
    for (int64_t a = 0; a < outer; a++)
      for (int64_t b = 0; b < inner; b++) {
        int64_t src = (a * dim + ix) * inner + b, dst = (a * nidx + j) * inner + b;
        if (d.kind == VAL_F32) V(o)->f[dst] = V(in[0])->f[src];
        else V(o)->i[dst] = V(in[0])->i[src];
      }
  }
  return bind_out(r, o);
}

/* Unsqueeze and Squeeze: a new shape for the same data (folded, or a Reshape node). */
static int same_data(rd_t *r, int v, unsigned rank, const int64_t *dims) {
  if (is_const(r, v)) return const_reshape(r, v, rank, dims);
  if (rd_check_act_shape(r, "the output", rank, dims)) return -1;
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, GRAPH_OP_RESHAPE, 1, &v, &a, OUT0, rank, dims));
}

static int op_unsqueeze(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  int64_t axes[GRAPH_MAX_RANK], dims[GRAPH_MAX_RANK];
  unsigned naxes;
  if (nin < 2 || in[1] < 0) return rd_node_fail(r, "input 'axes' is missing");
  if (const_ints(r, in[1], 1, GRAPH_MAX_RANK, axes, &naxes)) return -1;
  const val_t x = *V(in[0]);
  const unsigned rank = x.rank + naxes;
  if (rank > GRAPH_MAX_RANK) return rd_node_fail(r, "the output's rank is over %d", GRAPH_MAX_RANK);
  bool mark[GRAPH_MAX_RANK] = {false};
  for (unsigned k = 0; k < naxes; k++) {
    int64_t a = 0;
    if (norm_axis(r, "axis", axes[k], rank, &a)) return -1;
    if (mark[a]) return rd_node_fail(r, "axis %lld is given twice", (long long)axes[k]);
    mark[a] = true;
  }
  for (unsigned k = 0, j = 0; k < rank; k++) dims[k] = mark[k] ? 1 : x.dims[j++];
  return same_data(r, in[0], rank, dims);
}

static int op_squeeze(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  int64_t axes[GRAPH_MAX_RANK], dims[GRAPH_MAX_RANK];
  unsigned naxes = 0, rank = 0;
  const val_t x = *V(in[0]);
  bool drop[GRAPH_MAX_RANK] = {false};
  if (nin > 1 && in[1] >= 0) {
    if (const_ints(r, in[1], 1, GRAPH_MAX_RANK, axes, &naxes)) return -1;
    for (unsigned k = 0; k < naxes; k++) {
      int64_t a = 0;
      if (norm_axis(r, "axis", axes[k], x.rank, &a)) return -1;
      if (x.dims[a] != 1) return rd_node_fail(r, "axis %lld has dimension %lld, not 1", (long long)axes[k], (long long)x.dims[a]);
      drop[a] = true;
    }
  } else {
    for (unsigned k = 0; k < x.rank; k++) drop[k] = x.dims[k] == 1;
  }
  for (unsigned k = 0; k < x.rank; k++)
    if (!drop[k]) dims[rank++] = x.dims[k];
  return same_data(r, in[0], rank, dims);
}

static int op_concat(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  int64_t axis, dims[GRAPH_MAX_RANK];
  if (rd_attr_int(r, "axis", 0, &axis)) return -1;
  for (unsigned k = 0; k < nin; k++) {
    if (in[k] < 0) return rd_node_fail(r, "input %u is missing", k);
    if (!is_const(r, in[k]))
      return rd_node_fail(r, "Concat of a computed tensor ('%.200s') is not supported (only of constants and shapes)",
                          r->node->input[k]);
  }
  const val_t first = *V(in[0]);
  if (first.rank == 0) return rd_node_fail(r, "input 0 is a scalar");
  if (norm_axis(r, "attribute 'axis'", axis, first.rank, &axis)) return -1;
  memcpy(dims, first.dims, sizeof dims);
  dims[axis] = 0;
  for (unsigned k = 0; k < nin; k++) {
    const val_t *x = V(in[k]);
    if (x->kind != first.kind || x->rank != first.rank) return rd_node_fail(r, "input %u's type or rank differs from input 0's", k);
    for (unsigned d = 0; d < x->rank; d++)
      if (d != axis && x->dims[d] != first.dims[d]) return rd_node_fail(r, "input %u's shape differs from input 0's off the axis", k);
    dims[axis] += x->dims[axis];
    if (dims[axis] > ONNX_MAX_FOLD_ELEMS) return rd_node_fail(r, "the output is too large");
  }
  int o = rd_new_const(r, OUT0, first.kind, first.rank, dims);
  if (o < 0) return -1;
  const int64_t outer = rd_elems((unsigned)axis, dims), inner = rd_elems(first.rank - (unsigned)axis - 1, dims + axis + 1);
  const size_t es = first.kind == VAL_F32 ? sizeof(float) : sizeof(int64_t);
  char *dst = first.kind == VAL_F32 ? (char *)V(o)->f : (char *)V(o)->i;
  for (int64_t a = 0; a < outer; a++)
    for (unsigned k = 0; k < nin; k++) {
      const val_t *x = V(in[k]);
      size_t chunk = (size_t)(x->dims[axis] * inner) * es;
      const char *src = (x->kind == VAL_F32 ? (const char *)x->f : (const char *)x->i) + (size_t)a * chunk;
      memcpy(dst, src, chunk);
      dst += chunk;
    }
  return bind_out(r, o);
}

/* Slice's arguments resolved against the data's shape (ONNX's clamping rules). */
typedef struct {
  int64_t start[GRAPH_MAX_RANK], step[GRAPH_MAX_RANK], len[GRAPH_MAX_RANK];
} slice_t;

static int slice_args(rd_t *r, const int *in, unsigned nin, const val_t *x, slice_t *s) {
  int64_t st[GRAPH_MAX_RANK], en[GRAPH_MAX_RANK], ax[GRAPH_MAX_RANK], sp[GRAPH_MAX_RANK];
  unsigned n, ne, na, ns;
  if (nin < 3) return rd_node_fail(r, "inputs 'starts' and 'ends' are needed");
  if (const_ints(r, in[1], 1, GRAPH_MAX_RANK, st, &n) || const_ints(r, in[2], 2, GRAPH_MAX_RANK, en, &ne)) return -1;
  na = ns = n;
  for (unsigned k = 0; k < n; k++) ax[k] = k, sp[k] = 1;
  if (nin > 3 && in[3] >= 0 && const_ints(r, in[3], 3, GRAPH_MAX_RANK, ax, &na)) return -1;
  if (nin > 4 && in[4] >= 0 && const_ints(r, in[4], 4, GRAPH_MAX_RANK, sp, &ns)) return -1;
  if (ne != n || na != n || ns != n) return rd_node_fail(r, "starts, ends, axes and steps differ in length");
  for (unsigned k = 0; k < x->rank; k++) s->start[k] = 0, s->step[k] = 1, s->len[k] = x->dims[k];
  bool seen[GRAPH_MAX_RANK] = {false};
  for (unsigned k = 0; k < n; k++) {
    int64_t a = 0;
    if (norm_axis(r, "axis", ax[k], x->rank, &a)) return -1;
    if (seen[a]) return rd_node_fail(r, "axis %lld is given twice", (long long)ax[k]);
    seen[a] = true;
    const int64_t d = x->dims[a];
    int64_t b = st[k], e = en[k], p = sp[k];
    if (p == 0) return rd_node_fail(r, "a step is 0");
    if (b < 0) b = b < -d ? 0 : b + d;  /* clamped as ONNX says, without overflow on INT64_MIN/MAX */
    if (e < 0) e = e < -d ? -1 : e + d;
    if (p > 0) b = b > d ? d : b, e = e < 0 ? 0 : e > d ? d : e;
    else b = b > d - 1 ? d - 1 : b, e = e > d - 1 ? d - 1 : e;
    int64_t len = p > 0 ? (e > b ? (e - b + p - 1) / p : 0) : (b > e ? (b - e + (-p) - 1) / (-p) : 0);
    s->start[a] = b, s->step[a] = p, s->len[a] = len;
  }
  return 0;
}

/* Copies the slice s of constant x into constant o (any rank, any steps). */
static void slice_copy(rd_t *r, int xv, int o, const slice_t *s) {
  const val_t *x = V(xv);
  int64_t xst[GRAPH_MAX_RANK], idx[GRAPH_MAX_RANK] = {0};
  strides_of(x->rank, x->dims, xst);
  const int64_t n = rd_val_elems(V(o));
  for (int64_t j = 0; j < n; j++) {
    int64_t src = 0;
    for (unsigned k = 0; k < x->rank; k++) src += (s->start[k] + idx[k] * s->step[k]) * xst[k];
    if (x->kind == VAL_F32) V(o)->f[j] = x->f[src];
    else V(o)->i[j] = x->i[src];
    for (unsigned k = x->rank; k-- > 0;) {
      if (++idx[k] < s->len[k]) break;
      idx[k] = 0;
    }
  }
}

/* A constant slice of constant x (the slice's output shape s->len). */
static int new_slice(rd_t *r, const char *name, int xv, const slice_t *s) {
  int o = rd_new_const(r, name, V(xv)->kind, V(xv)->rank, s->len);
  if (o >= 0) slice_copy(r, xv, o, s);
  return o;
}

/* Slice of a computed tensor: supported where torch splits a fused projection (the q, k, v of
 * nn.MultiheadAttention): the last axis of MatMul(X, W) [+ b] with W and b constants. The
 * projection is made again with W's and b's columns sliced, so no Slice reaches the compiler. */
static int slice_projection(rd_t *r, int xv, const slice_t *s) {
  const val_t x = *V(xv);
  const unsigned last = x.rank - 1;
  for (unsigned k = 0; k < last; k++)
    if (s->len[k] != x.dims[k]) goto unsupported;
  if (s->step[last] != 1 || s->len[last] < 1 || x.producer < 0) goto unsupported;
  rnode_t add = r->nodes[x.producer], mm = add;
  int bias = -1;
  if (add.op == GRAPH_OP_ADD) {
    int k = is_const(r, add.in[0]) ? 0 : 1;
    bias = add.in[k];
    int m = add.in[1 - k];
    if (!is_const(r, bias) || V(bias)->kind != VAL_F32 || is_const(r, m) || V(m)->producer < 0) goto unsupported;
    if (V(bias)->rank < 1 || V(bias)->dims[V(bias)->rank - 1] != x.dims[last]) goto unsupported;
    mm = r->nodes[V(m)->producer];
  }
  if (mm.op != GRAPH_OP_MATMUL || !is_const(r, mm.in[1]) || V(mm.in[1])->kind != VAL_F32 || V(mm.in[1])->rank != 2) goto unsupported;
  slice_t ws = {{0}, {1, 1}, {V(mm.in[1])->dims[0], s->len[last]}};
  ws.start[1] = s->start[last];
  int w = new_slice(r, V(mm.in[1])->name, mm.in[1], &ws);
  if (w < 0) return -1;
  V(w)->suffix = "/slice";
  int ins[2] = {mm.in[0], w};
  int64_t dims[GRAPH_MAX_RANK];
  memcpy(dims, x.dims, sizeof dims);
  dims[last] = s->len[last];
  int y = rd_emit(r, GRAPH_OP_MATMUL, 2, ins, &mm.attrs, OUT0, x.rank, dims);
  if (y < 0 || bias < 0) return bind_out(r, y);
  V(y)->suffix = "/matmul";
  slice_t bs;
  for (unsigned k = 0; k < V(bias)->rank; k++) bs.start[k] = 0, bs.step[k] = 1, bs.len[k] = V(bias)->dims[k];
  bs.start[V(bias)->rank - 1] = s->start[last];
  bs.len[V(bias)->rank - 1] = s->len[last];
  int b = new_slice(r, V(bias)->name, bias, &bs);
  if (b < 0) return -1;
  V(b)->suffix = "/slice";
  int ains[2] = {y, b};
  return bind_out(r, rd_emit(r, GRAPH_OP_ADD, 2, ains, &add.attrs, OUT0, x.rank, dims));
unsupported:
  return rd_node_fail(r, "Slice of a computed tensor ('%.200s') is supported only along the last axis, step 1, of a "
                      "MatMul by a constant (plus a constant bias)", r->node->input[0]);
}

static int op_slice(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  slice_t s;
  const val_t x = *V(in[0]);
  if (x.rank == 0) return rd_node_fail(r, "input 0 is a scalar");
  if (slice_args(r, in, nin, &x, &s)) return -1;
  if (is_const(r, in[0])) return bind_out(r, new_slice(r, OUT0, in[0], &s));
  return slice_projection(r, in[0], &s);
}

static int op_cast(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  int64_t to;
  if (rd_attr_int(r, "to", -1, &to)) return -1;
  if (to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && to != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
    return rd_node_fail(r, "attribute 'to' = %lld (only FLOAT (1) and INT64 (7) are supported)", (long long)to);
  const val_kind_t kind = to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? VAL_F32 : VAL_I64;
  const val_t x = *V(in[0]);
  if (x.kind == kind || (x.kind == VAL_ACT && kind == VAL_F32)) return rd_bind(r, OUT0, in[0]);
  if (x.kind == VAL_ACT) return rd_node_fail(r, "a cast of a computed tensor to int64 is not supported");
  int o = rd_new_const(r, OUT0, kind, x.rank, x.dims);
  if (o < 0) return -1;
  for (int64_t j = 0, n = rd_val_elems(&x); j < n; j++) {
    if (kind == VAL_F32) { V(o)->f[j] = (float)V(in[0])->i[j]; continue; }
    float f = V(in[0])->f[j];
    if (!(f > -9.2e18f && f < 9.2e18f)) return rd_node_fail(r, "value %g does not fit int64", (double)f);
    V(o)->i[j] = (int64_t)f;
  }
  return bind_out(r, o);
}

/* ------------------------------------------------------------------ element-wise ops */

static float eval_f(graph_op_t op, float a, float b) {
  switch (op) {
    case GRAPH_OP_ADD: return a + b;
    case GRAPH_OP_SUB: return a - b;
    case GRAPH_OP_MUL: return a * b;
    case GRAPH_OP_DIV: return a / b;
    case GRAPH_OP_POW: return powf(a, b);
    case GRAPH_OP_RELU: return a > 0 ? a : 0.0f;
    case GRAPH_OP_SQRT: return sqrtf(a);
    case GRAPH_OP_ERF: return erff(a);
    case GRAPH_OP_TANH: return tanhf(a);
    default: return NAN;
  }
}

static int eval_i(rd_t *r, graph_op_t op, int64_t a, int64_t b, int64_t *out) {
  /* shape arithmetic: done in unsigned so that hostile values wrap rather than overflow */
  switch (op) {
    case GRAPH_OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return 0;
    case GRAPH_OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return 0;
    case GRAPH_OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return 0;
    case GRAPH_OP_DIV:
      if (b == 0 || (a == INT64_MIN && b == -1)) return rd_node_fail(r, "an integer division by %lld", (long long)b);
      *out = a / b;
      return 0;
    default: return rd_node_fail(r, "is not supported on int64 constants");
  }
}

static int fold_binary(rd_t *r, graph_op_t op, int av, int bv) {
  const val_t a = *V(av), b = *V(bv);
  if (a.kind != b.kind) return rd_node_fail(r, "inputs are of different types (float32 and int64)");
  unsigned rank;
  int64_t dims[GRAPH_MAX_RANK], as[GRAPH_MAX_RANK], bs[GRAPH_MAX_RANK], idx[GRAPH_MAX_RANK] = {0};
  if (rd_broadcast(r, &a, &b, &rank, dims)) return -1;
  int o = rd_new_const(r, OUT0, a.kind, rank, dims);
  if (o < 0) return -1;
  int64_t ast[GRAPH_MAX_RANK], bst[GRAPH_MAX_RANK];
  strides_of(a.rank, a.dims, ast);
  strides_of(b.rank, b.dims, bst);
  for (unsigned k = 0; k < rank; k++) {  /* stride 0 along broadcast dimensions */
    int ka = (int)k - (int)(rank - a.rank), kb = (int)k - (int)(rank - b.rank);
    as[k] = ka < 0 || a.dims[ka] == 1 ? 0 : ast[ka];
    bs[k] = kb < 0 || b.dims[kb] == 1 ? 0 : bst[kb];
  }
  for (int64_t j = 0, n = rd_val_elems(V(o)); j < n; j++) {
    int64_t ia = 0, ib = 0;
    for (unsigned k = 0; k < rank; k++) ia += idx[k] * as[k], ib += idx[k] * bs[k];
    if (a.kind == VAL_F32) V(o)->f[j] = eval_f(op, V(av)->f[ia], V(bv)->f[ib]);
    else if (eval_i(r, op, V(av)->i[ia], V(bv)->i[ib], &V(o)->i[j])) return -1;
    for (unsigned k = rank; k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return bind_out(r, o);
}

static int op_binary(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)nin;
  if (in[1] < 0) return rd_node_fail(r, "input 1 is missing");
  if (is_const(r, in[0]) && is_const(r, in[1])) return fold_binary(r, rule->gop, in[0], in[1]);
  for (unsigned k = 0; k < 2; k++)
    if (V(in[k])->kind == VAL_I64) return rd_node_fail(r, "input %u is int64 and input %u is computed", k, 1 - k);
  if (rule->gop == GRAPH_OP_POW && (need_act(r, in[0], 0) || need_const(r, in[1], 1, VAL_F32))) return -1;
  if (rule->gop == GRAPH_OP_POW && rd_val_elems(V(in[1])) != 1)
    return rd_node_fail(r, "the exponent must be one constant value (it has shape of %lld elements)",
                        (long long)rd_val_elems(V(in[1])));
  unsigned rank;
  int64_t dims[GRAPH_MAX_RANK];
  if (rd_broadcast(r, V(in[0]), V(in[1]), &rank, dims) || rd_check_act_shape(r, "the output", rank, dims)) return -1;
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, rule->gop, 2, in, &a, OUT0, rank, dims));
}

static int op_unary(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)nin;
  const val_t x = *V(in[0]);
  if (x.kind == VAL_I64) return rd_node_fail(r, "is not supported on int64 constants");
  if (x.kind == VAL_F32) {
    int o = rd_new_const(r, OUT0, VAL_F32, x.rank, x.dims);
    if (o < 0) return -1;
    for (int64_t j = 0, n = rd_val_elems(&x); j < n; j++) V(o)->f[j] = eval_f(rule->gop, V(in[0])->f[j], 0);
    return bind_out(r, o);
  }
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, rule->gop, 1, in, &a, OUT0, x.rank, x.dims));
}

/* ------------------------------------------------------------------ layout ops */

static int op_flatten(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  const val_t x = *V(in[0]);
  int64_t axis;
  if (rd_attr_int(r, "axis", 1, &axis)) return -1;
  if (axis < -(int64_t)x.rank || axis > (int64_t)x.rank)
    return rd_node_fail(r, "attribute 'axis' = %lld is out of range for rank %u", (long long)axis, x.rank);
  if (axis < 0) axis += x.rank;
  int64_t dims[2] = {rd_elems((unsigned)axis, x.dims), rd_elems(x.rank - (unsigned)axis, x.dims + axis)};
  if (is_const(r, in[0])) return const_reshape(r, in[0], 2, dims);
  graph_attrs_t a = {.axis = axis};
  return bind_out(r, rd_emit(r, GRAPH_OP_FLATTEN, 1, in, &a, OUT0, 2, dims));
}

static int op_reshape(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  int64_t shape[GRAPH_MAX_RANK], allowzero;
  unsigned n;
  if (nin < 2 || in[1] < 0) return rd_node_fail(r, "input 'shape' is missing");
  if (!is_const(r, in[1]))
    return rd_node_fail(r, "input 'shape' ('%.200s') is computed from data: a dynamic shape is not supported",
                        r->node->input[1]);
  if (rd_attr_int(r, "allowzero", 0, &allowzero) || const_ints(r, in[1], 1, GRAPH_MAX_RANK, shape, &n)) return -1;
  if (allowzero != 0) return rd_node_fail(r, "attribute 'allowzero' = %lld (only 0 is supported)", (long long)allowzero);
  const val_t x = *V(in[0]);
  int64_t known = 1, minus = -1, total = rd_val_elems(&x);
  for (unsigned k = 0; k < n; k++) {
    if (shape[k] == 0) {
      if (k >= x.rank) return rd_node_fail(r, "shape entry %u is 0 but the input has rank %u", k, x.rank);
      shape[k] = x.dims[k];
    }
    if (shape[k] == -1) {
      if (minus >= 0) return rd_node_fail(r, "the shape has two -1 entries");
      minus = k;
      continue;
    }
    if (shape[k] < 1) return rd_node_fail(r, "shape entry %u is %lld", k, (long long)shape[k]);
    if (known > ONNX_MAX_ELEMS / shape[k]) return rd_node_fail(r, "the shape has over 2^40 elements");
    known *= shape[k];
  }
  if (minus >= 0) {
    if (total % known) return rd_node_fail(r, "cannot reshape %lld elements with a -1 entry beside %lld", (long long)total, (long long)known);
    shape[minus] = total / known;
  } else if (known != total) {
    return rd_node_fail(r, "the target shape has %lld elements, the input %lld", (long long)known, (long long)total);
  }
  if (is_const(r, in[0])) return const_reshape(r, in[0], n, shape);
  if (rd_check_act_shape(r, "the output", n, shape)) return -1;
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, GRAPH_OP_RESHAPE, 1, in, &a, OUT0, n, shape));
}

static int op_transpose(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  const val_t x = *V(in[0]);
  graph_attrs_t a = {0};
  unsigned n;
  int64_t dims[GRAPH_MAX_RANK];
  if (rd_attr_ints(r, "perm", GRAPH_MAX_RANK, a.perm, &n)) return -1;
  if (!rd_attr(r, "perm"))
    for (n = 0; n < x.rank; n++) a.perm[n] = x.rank - 1 - n;
  if (n != x.rank) return rd_node_fail(r, "attribute 'perm' has %u entries for rank %u", n, x.rank);
  bool seen[GRAPH_MAX_RANK] = {false};
  for (unsigned k = 0; k < n; k++) {
    if (a.perm[k] < 0 || a.perm[k] >= n || seen[a.perm[k]]) return rd_node_fail(r, "attribute 'perm' is not a permutation");
    seen[a.perm[k]] = true;
    dims[k] = x.dims[a.perm[k]];
  }
  a.nperm = n;
  if (!is_const(r, in[0])) return bind_out(r, rd_emit(r, GRAPH_OP_TRANSPOSE, 1, in, &a, OUT0, n, dims));
  int o = rd_new_const(r, OUT0, x.kind, n, dims);
  if (o < 0) return -1;
  int64_t xst[GRAPH_MAX_RANK], idx[GRAPH_MAX_RANK] = {0};
  strides_of(x.rank, x.dims, xst);
  for (int64_t j = 0, tot = rd_val_elems(&x); j < tot; j++) {
    int64_t src = 0;
    for (unsigned k = 0; k < n; k++) src += idx[k] * xst[a.perm[k]];
    if (x.kind == VAL_F32) V(o)->f[j] = V(in[0])->f[src];
    else V(o)->i[j] = V(in[0])->i[src];
    for (unsigned k = n; k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return bind_out(r, o);
}

/* ------------------------------------------------------------------ compute ops */

/* Attributes every 2-D window op shares: kernel, strides, pads; dilations 1, auto_pad NOTSET. */
static int window_attrs(rd_t *r, graph_attrs_t *a, bool kernel_required) {
  int64_t v[8];
  unsigned n;
  char pad[32];
  if (rd_attr_string(r, "auto_pad", "NOTSET", pad, sizeof pad)) return -1;
  if (strcmp(pad, "NOTSET")) return rd_node_fail(r, "attribute 'auto_pad' = '%s' (only NOTSET: give pads)", pad);
  if (rd_attr_ints(r, "dilations", 8, v, &n)) return -1;
  for (unsigned k = 0; k < n; k++)
    if (v[k] != 1) return rd_node_fail(r, "attribute 'dilations' has %lld (only 1 is supported)", (long long)v[k]);
  if (rd_attr_ints(r, "kernel_shape", 8, v, &n)) return -1;
  if (kernel_required && !n) return rd_node_fail(r, "attribute 'kernel_shape' is missing");
  if (n && n != 2) return rd_node_fail(r, "attribute 'kernel_shape' has %u dimensions (only 2-D is supported)", n);
  for (unsigned k = 0; k < n; k++) {
    if (v[k] < 1 || v[k] > 1 << 20) return rd_node_fail(r, "attribute 'kernel_shape' has %lld", (long long)v[k]);
    a->kernel[k] = v[k];
  }
  if (rd_attr_ints(r, "strides", 8, v, &n)) return -1;
  if (n && n != 2) return rd_node_fail(r, "attribute 'strides' has %u values (2-D: 2)", n);
  for (unsigned k = 0; k < 2; k++) {
    a->strides[k] = n ? v[k] : 1;
    if (a->strides[k] < 1 || a->strides[k] > 1 << 20) return rd_node_fail(r, "attribute 'strides' has %lld", (long long)a->strides[k]);
  }
  if (rd_attr_ints(r, "pads", 8, v, &n)) return -1;
  if (n && n != 4) return rd_node_fail(r, "attribute 'pads' has %u values (2-D: 4)", n);
  for (unsigned k = 0; k < 4; k++) {
    a->pads[k] = n ? v[k] : 0;
    if (a->pads[k] < 0 || a->pads[k] > 1 << 20) return rd_node_fail(r, "attribute 'pads' has %lld", (long long)a->pads[k]);
  }
  return 0;
}

/* The output rows and columns of a window op on x [N, C, H, W]. */
static int window_out(rd_t *r, const val_t *x, const graph_attrs_t *a, int64_t *oh, int64_t *ow) {
  for (unsigned k = 0; k < 2; k++) {
    int64_t in = x->dims[2 + k] + a->pads[k] + a->pads[k + 2];
    if (in < a->kernel[k])
      return rd_node_fail(r, "the kernel (%lld) is larger than the padded input (%lld)", (long long)a->kernel[k], (long long)in);
    *(k ? ow : oh) = (in - a->kernel[k]) / a->strides[k] + 1;
  }
  return 0;
}

static int need_rank(rd_t *r, int v, unsigned k, unsigned rank, const char *why) {
  if (V(v)->rank != rank) return rd_node_fail(r, "input %u has rank %u (%s: %u)", k, V(v)->rank, why, rank);
  return 0;
}

static int op_conv(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  graph_attrs_t a = {0};
  int64_t group;
  if (need_act(r, in[0], 0) || need_const(r, in[1], 1, VAL_F32)) return -1;
  if (need_rank(r, in[0], 0, 4, "only 2-D convolutions, NCHW") || need_rank(r, in[1], 1, 4, "OIHW weights")) return -1;
  if (rd_attr_int(r, "group", 1, &group)) return -1;
  if (group != 1) return rd_node_fail(r, "attribute 'group' = %lld (only 1 is supported)", (long long)group);
  if (window_attrs(r, &a, false)) return -1;
  const val_t x = *V(in[0]), w = *V(in[1]);
  if (a.kernel[0] && (a.kernel[0] != w.dims[2] || a.kernel[1] != w.dims[3]))
    return rd_node_fail(r, "attribute 'kernel_shape' differs from the weights' shape");
  a.kernel[0] = w.dims[2], a.kernel[1] = w.dims[3];
  if (w.dims[1] != x.dims[1])
    return rd_node_fail(r, "the weights have %lld input channels, the input %lld", (long long)w.dims[1], (long long)x.dims[1]);
  if (nin > 2 && in[2] >= 0) {
    if (need_const(r, in[2], 2, VAL_F32)) return -1;
    if (V(in[2])->rank != 1 || V(in[2])->dims[0] != w.dims[0]) return rd_node_fail(r, "the bias is not of shape [%lld]", (long long)w.dims[0]);
  }
  int64_t dims[4] = {x.dims[0], w.dims[0], 0, 0};
  if (window_out(r, &x, &a, &dims[2], &dims[3]) || rd_check_act_shape(r, "the output", 4, dims)) return -1;
  return bind_out(r, rd_emit(r, GRAPH_OP_CONV, nin > 2 ? 3 : 2, in, &a, OUT0, 4, dims));
}

static int op_pool(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)nin;
  graph_attrs_t a = {0};
  int64_t order = 0;
  if (need_act(r, in[0], 0) || need_rank(r, in[0], 0, 4, "only 2-D pooling, NCHW") || window_attrs(r, &a, true)) return -1;
  if (rd_attr_int(r, "ceil_mode", 0, &a.ceil_mode) || rd_attr_int(r, "count_include_pad", 0, &a.count_include_pad) ||
      rd_attr_int(r, "storage_order", 0, &order))
    return -1;
  if (a.ceil_mode != 0) return rd_node_fail(r, "attribute 'ceil_mode' = %lld (only 0 is supported)", (long long)a.ceil_mode);
  if (order != 0) return rd_node_fail(r, "attribute 'storage_order' = %lld (only 0 is supported)", (long long)order);
  if (a.count_include_pad != 0 && a.count_include_pad != 1)
    return rd_node_fail(r, "attribute 'count_include_pad' = %lld (0 or 1)", (long long)a.count_include_pad);
  if (r->node->n_output > 1 && r->node->output[1][0])
    return rd_node_fail(r, "output 'Indices' is not supported");
  for (unsigned k = 0; k < 4; k++)
    if (a.pads[k] >= a.kernel[k % 2])
      return rd_node_fail(r, "attribute 'pads' has %lld, not less than the kernel (%lld)", (long long)a.pads[k], (long long)a.kernel[k % 2]);
  const val_t x = *V(in[0]);
  int64_t dims[4] = {x.dims[0], x.dims[1], 0, 0};
  if (window_out(r, &x, &a, &dims[2], &dims[3]) || rd_check_act_shape(r, "the output", 4, dims)) return -1;
  return bind_out(r, rd_emit(r, rule->gop, 1, in, &a, OUT0, 4, dims));
}

static int op_gap(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  if (need_act(r, in[0], 0) || need_rank(r, in[0], 0, 4, "only 2-D pooling, NCHW")) return -1;
  int64_t dims[4] = {V(in[0])->dims[0], V(in[0])->dims[1], 1, 1};
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, GRAPH_OP_GLOBALAVGPOOL, 1, in, &a, OUT0, 4, dims));
}

static int op_gemm(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  graph_attrs_t a = {0};
  if (rd_attr_float(r, "alpha", 1.0f, &a.alpha) || rd_attr_float(r, "beta", 1.0f, &a.beta) ||
      rd_attr_int(r, "transA", 0, &a.trans_a) || rd_attr_int(r, "transB", 0, &a.trans_b))
    return -1;
  if (need_act(r, in[0], 0)) return -1;
  if (!is_const(r, in[1])) return rd_node_fail(r, "input B ('%.200s') is computed: only a constant B is supported", r->node->input[1]);
  if (need_const(r, in[1], 1, VAL_F32) || need_rank(r, in[0], 0, 2, "Gemm") || need_rank(r, in[1], 1, 2, "Gemm")) return -1;
  if ((a.trans_a != 0 && a.trans_a != 1) || (a.trans_b != 0 && a.trans_b != 1))
    return rd_node_fail(r, "attributes 'transA' and 'transB' must be 0 or 1");
  const val_t A = *V(in[0]), B = *V(in[1]);
  const int64_t m = A.dims[a.trans_a], k = A.dims[1 - a.trans_a], kb = B.dims[a.trans_b], n = B.dims[1 - a.trans_b];
  if (k != kb) return rd_node_fail(r, "A has K = %lld, B has K = %lld", (long long)k, (long long)kb);
  int64_t dims[2] = {m, n};
  if (nin > 2 && in[2] >= 0) {
    if (need_const(r, in[2], 2, VAL_F32)) return -1;
    const val_t *c = V(in[2]);
    for (unsigned j = 0; j < c->rank; j++) {  /* C broadcasts one way, to [M, N] */
      int64_t want = c->rank == 2 ? dims[j] : n;
      if (c->rank > 2 || (c->dims[j] != 1 && c->dims[j] != want))
        return rd_node_fail(r, "input C does not broadcast to [%lld, %lld]", (long long)m, (long long)n);
    }
  }
  return bind_out(r, rd_emit(r, GRAPH_OP_GEMM, nin > 2 ? 3 : 2, in, &a, OUT0, 2, dims));
}

static int op_matmul(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  if (in[1] < 0) return rd_node_fail(r, "input 1 is missing");
  if (is_const(r, in[0]) && is_const(r, in[1])) return need_act(r, in[0], 0);
  for (unsigned k = 0; k < 2; k++) {
    if (V(in[k])->kind == VAL_I64) return rd_node_fail(r, "input %u is int64", k);
    if (V(in[k])->rank < 2) return rd_node_fail(r, "input %u has rank %u (at least 2 is supported)", k, V(in[k])->rank);
  }
  const val_t A = *V(in[0]), B = *V(in[1]);
  if (A.dims[A.rank - 1] != B.dims[B.rank - 2])
    return rd_node_fail(r, "A has K = %lld, B has K = %lld", (long long)A.dims[A.rank - 1], (long long)B.dims[B.rank - 2]);
  val_t ab = A, bb = B;  /* the batch dimensions broadcast */
  ab.rank -= 2, bb.rank -= 2;
  unsigned rank;
  int64_t dims[GRAPH_MAX_RANK];
  if (rd_broadcast(r, &ab, &bb, &rank, dims)) return -1;
  if (rank + 2 > GRAPH_MAX_RANK) return rd_node_fail(r, "the output's rank is over %d", GRAPH_MAX_RANK);
  dims[rank] = A.dims[A.rank - 2], dims[rank + 1] = B.dims[B.rank - 1];
  if (rd_check_act_shape(r, "the output", rank + 2, dims)) return -1;
  graph_attrs_t a = {0};
  return bind_out(r, rd_emit(r, GRAPH_OP_MATMUL, 2, in, &a, OUT0, rank + 2, dims));
}

static int last_axis(rd_t *r, const char *attr, int64_t axis, unsigned rank, int64_t *out) {
  if (norm_axis(r, attr, axis, rank, out)) return -1;
  if (*out != (int64_t)rank - 1)
    return rd_node_fail(r, "%s = %lld is not the last axis (only the last axis is supported)", attr, (long long)axis);
  return 0;
}

static int op_softmax(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  graph_attrs_t a = {0};
  if (need_act(r, in[0], 0) || rd_attr_int(r, "axis", -1, &a.axis)) return -1;
  const val_t x = *V(in[0]);
  if (x.rank < 1 || last_axis(r, "attribute 'axis'", a.axis, x.rank, &a.axis)) return x.rank ? -1 : rd_node_fail(r, "input 0 is a scalar");
  return bind_out(r, rd_emit(r, GRAPH_OP_SOFTMAX, 1, in, &a, OUT0, x.rank, x.dims));
}

static int op_reducemean(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule, (void)nin;
  graph_attrs_t a = {0};
  if (need_act(r, in[0], 0) || rd_attr_int(r, "keepdims", 1, &a.keepdims) ||
      rd_attr_ints(r, "axes", GRAPH_MAX_RANK, a.axes, &a.naxes))
    return -1;
  const val_t x = *V(in[0]);
  if (a.naxes != 1 || x.rank < 1)
    return rd_node_fail(r, "attribute 'axes' must name one axis, the last (it names %u)", a.naxes);
  if (last_axis(r, "attribute 'axes'", a.axes[0], x.rank, &a.axes[0])) return -1;
  if (a.keepdims != 0 && a.keepdims != 1) return rd_node_fail(r, "attribute 'keepdims' must be 0 or 1");
  int64_t dims[GRAPH_MAX_RANK];
  memcpy(dims, x.dims, sizeof dims);
  dims[x.rank - 1] = 1;
  return bind_out(r, rd_emit(r, GRAPH_OP_REDUCEMEAN, 1, in, &a, OUT0, a.keepdims ? x.rank : x.rank - 1, dims));
}

static int op_layernorm(rd_t *r, const op_rule_t *rule, const int *in, unsigned nin) {
  (void)rule;
  graph_attrs_t a = {0};
  int64_t stash;
  if (need_act(r, in[0], 0) || rd_attr_int(r, "axis", -1, &a.axis) || rd_attr_float(r, "epsilon", 1e-5f, &a.epsilon) ||
      rd_attr_int(r, "stash_type", 1, &stash))
    return -1;
  if (stash != 1) return rd_node_fail(r, "attribute 'stash_type' = %lld (only 1, float32)", (long long)stash);
  const val_t x = *V(in[0]);
  if (x.rank < 1) return rd_node_fail(r, "input 0 is a scalar");
  if (last_axis(r, "attribute 'axis'", a.axis, x.rank, &a.axis)) return -1;
  for (unsigned k = 1; k < nin; k++) {
    if (in[k] < 0) continue;
    if (need_const(r, in[k], k, VAL_F32)) return -1;
    if (V(in[k])->rank != 1 || V(in[k])->dims[0] != x.dims[x.rank - 1])
      return rd_node_fail(r, "input %u is not of shape [%lld]", k, (long long)x.dims[x.rank - 1]);
  }
  if (in[1] < 0) return rd_node_fail(r, "input 'Scale' is missing");
  for (size_t k = 1; k < r->node->n_output; k++)
    if (r->node->output[k][0]) return rd_node_fail(r, "outputs 'Mean' and 'InvStdDev' are not supported");
  return bind_out(r, rd_emit(r, GRAPH_OP_LAYERNORM, nin, in, &a, OUT0, x.rank, x.dims));
}

/* ------------------------------------------------------------------ the table */

#define NO_GOP GRAPH_OP_COUNT
static const op_rule_t RULES[] = {
    {"Conv", "kernel_shape strides pads dilations group auto_pad", 2, 3, op_conv, GRAPH_OP_CONV,
     "2-D (X NCHW, W constant OIHW, B constant); group 1, dilations 1, auto_pad NOTSET"},
    {"MaxPool", "kernel_shape strides pads dilations ceil_mode auto_pad storage_order", 1, 1, op_pool, GRAPH_OP_MAXPOOL,
     "2-D; ceil_mode 0, dilations 1, auto_pad NOTSET, storage_order 0, pads < kernel, no Indices output"},
    {"AveragePool", "kernel_shape strides pads ceil_mode auto_pad count_include_pad", 1, 1, op_pool, GRAPH_OP_AVGPOOL,
     "2-D; ceil_mode 0, auto_pad NOTSET, pads < kernel, count_include_pad 0 or 1"},
    {"GlobalAveragePool", "", 1, 1, op_gap, GRAPH_OP_GLOBALAVGPOOL, "2-D (NCHW)"},
    {"Relu", "", 1, 1, op_unary, GRAPH_OP_RELU, "folded on constants"},
    {"Sqrt", "", 1, 1, op_unary, GRAPH_OP_SQRT, "folded on constants"},
    {"Erf", "", 1, 1, op_unary, GRAPH_OP_ERF, "folded on constants"},
    {"Tanh", "", 1, 1, op_unary, GRAPH_OP_TANH, "folded on constants"},
    {"Add", "", 2, 2, op_binary, GRAPH_OP_ADD, "broadcasting; folded on constants (float32 or int64)"},
    {"Sub", "", 2, 2, op_binary, GRAPH_OP_SUB, "broadcasting; folded on constants (float32 or int64)"},
    {"Mul", "", 2, 2, op_binary, GRAPH_OP_MUL, "broadcasting; folded on constants (float32 or int64)"},
    {"Div", "", 2, 2, op_binary, GRAPH_OP_DIV, "broadcasting; folded on constants (float32 or int64)"},
    {"Pow", "", 2, 2, op_binary, GRAPH_OP_POW, "the exponent one constant value; folded on constants"},
    {"MatMul", "", 2, 2, op_matmul, GRAPH_OP_MATMUL, "ranks >= 2, batch dimensions broadcast; either input may be computed"},
    {"Gemm", "alpha beta transA transB", 2, 3, op_gemm, GRAPH_OP_GEMM,
     "A computed [M, K]; B constant; C constant, broadcasting to [M, N]; transA, transB 0 or 1"},
    {"Softmax", "axis", 1, 1, op_softmax, GRAPH_OP_SOFTMAX, "axis the last"},
    {"ReduceMean", "axes keepdims", 1, 1, op_reducemean, GRAPH_OP_REDUCEMEAN, "axes one, the last; keepdims 0 or 1"},
    {"LayerNormalization", "axis epsilon stash_type", 2, 3, op_layernorm, GRAPH_OP_LAYERNORM,
     "opset 17; axis the last; Scale and B constant [D]; stash_type 1; only output Y"},
    {"Flatten", "axis", 1, 1, op_flatten, GRAPH_OP_FLATTEN, "any axis; folded on constants"},
    {"Reshape", "allowzero", 2, 2, op_reshape, GRAPH_OP_RESHAPE,
     "shape constant after folding (0 and -1 resolved); allowzero 0; folded on constants"},
    {"Transpose", "perm", 1, 1, op_transpose, GRAPH_OP_TRANSPOSE, "any permutation; folded on constants"},
    {"Unsqueeze", "", 2, 2, op_unsqueeze, GRAPH_OP_RESHAPE, "axes constant; folded, or a Reshape of a computed tensor"},
    {"Squeeze", "", 1, 2, op_squeeze, GRAPH_OP_RESHAPE, "axes constant; folded, or a Reshape of a computed tensor"},
    {"Constant", "value value_float value_floats value_int value_ints", 0, 0, op_constant, NO_GOP,
     "folded; value a FLOAT or INT64 tensor"},
    {"Identity", "", 1, 1, op_identity, NO_GOP, "folded (its output is its input)"},
    {"Dropout", "seed", 1, 3, op_identity, NO_GOP, "folded (inference: output = input); no training_mode, no mask used"},
    {"Cast", "to", 1, 1, op_cast, NO_GOP, "to FLOAT or INT64; folded on constants, FLOAT to FLOAT on computed tensors"},
    {"Shape", "start end", 1, 1, op_shape, NO_GOP, "folded (every shape is static)"},
    {"Gather", "axis", 2, 2, op_gather, NO_GOP, "folded: data and indices constant (shapes, weights)"},
    {"Concat", "axis", 1, 64, op_concat, NO_GOP, "folded: every input constant"},
    {"Slice", "", 3, 5, op_slice, NO_GOP,
     "folded on constants; on a computed tensor only the last axis, step 1, of MatMul by a constant [+ constant bias] "
     "(the projection is split)"},
};
#define NRULES (sizeof RULES / sizeof RULES[0])

static const op_rule_t *rule_of(const char *op) {
  for (size_t k = 0; k < NRULES; k++)
    if (!strcmp(RULES[k].op, op)) return &RULES[k];
  return NULL;
}

static bool word_in(const char *list, const char *w) {
  const size_t n = strlen(w);
  if (n == 0) return false;  /* an empty name (strstr would find it everywhere, forever) */
  for (const char *p = list; (p = strstr(p, w)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

void onnx_rules_markdown(FILE *f) {
  fprintf(f, "| op | attributes | supported |\n|---|---|---|\n");
  for (size_t k = 0; k < NRULES; k++)
    fprintf(f, "| %s | %s | %s |\n", RULES[k].op, RULES[k].attrs[0] ? RULES[k].attrs : "-", RULES[k].doc);
}

int rd_node(rd_t *r, const Onnx__NodeProto *n) {
  const char *op = n->op_type ? n->op_type : "";
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx"))
    return rd_node_fail(r, "domain '%.100s' is not supported (only the default domain)", n->domain);
  const op_rule_t *rule = rule_of(op);
  if (!rule) return rd_node_fail(r, "op '%.60s' is not supported", op);
  if (!strcmp(op, "LayerNormalization") && r->opset < 17)
    return rd_node_fail(r, "LayerNormalization needs opset 17 (the model's is %lld)", (long long)r->opset);
  for (size_t k = 0; k < n->n_attribute; k++)
    if (!n->attribute[k]->name || !word_in(rule->attrs, n->attribute[k]->name))
      return rd_node_fail(r, "attribute '%.60s' is not supported", n->attribute[k]->name ? n->attribute[k]->name : "");
  if (n->n_input < rule->min_in || n->n_input > rule->max_in)
    return rd_node_fail(r, "has %zu inputs (%u to %u are supported)", n->n_input, rule->min_in, rule->max_in);
  if (n->n_output < 1 || !n->output[0][0]) return rd_node_fail(r, "has no output");
  int in[64];
  for (size_t k = 0; k < n->n_input; k++) {
    in[k] = rd_lookup(r, n->input[k]);
    if (in[k] < 0 && n->input[k][0])
      return rd_node_fail(r, "input '%.200s' is not produced by an earlier node, an initializer or the graph input",
                          n->input[k]);
    if (in[k] < 0 && k < rule->min_in) return rd_node_fail(r, "input %zu is missing", k);
  }
  return rule->fn(r, rule, in, (unsigned)n->n_input);
}

int rd_emit(rd_t *r, graph_op_t op, unsigned nin, const int *in, const graph_attrs_t *a, const char *out_name,
            unsigned rank, const int64_t *dims) {
  if (rd_check_act_shape(r, "the output", rank, dims)) return -1;
  if (r->nnodes == r->capnodes) {
    size_t cap = r->capnodes ? 2 * r->capnodes : 64;
    rnode_t *p = realloc(r->nodes, cap * sizeof *p);
    if (!p) return rd_fail(r, "out of memory");
    r->nodes = p;
    r->capnodes = cap;
  }
  int v = rd_new_val(r, out_name, VAL_ACT, rank, dims);
  if (v < 0) return -1;
  rnode_t *n = &r->nodes[r->nnodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->name = r->node->name && r->node->name[0] ? r->node->name : NULL;
  n->index = r->node_index;
  n->nin = nin;
  for (unsigned k = 0; k < GRAPH_MAX_INPUTS; k++) n->in[k] = k < nin ? in[k] : -1;
  n->out = v;
  n->attrs = *a;
  V(v)->producer = (int)r->nnodes++;
  return v;
}
