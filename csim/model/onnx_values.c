/* onnx_values: the ONNX reader's values by name, constant tensors, attributes and messages
 * (model/onnx_internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_internal.h"

/* ------------------------------------------------------------------ messages */

static int vfail(rd_t *r, const char *prefix, const char *fmt, va_list ap) {
  if (r->err && r->errlen && !r->err[0]) {  /* the first message is the cause: keep it */
    int n = snprintf(r->err, r->errlen, "%s: %s", r->origin, prefix);
    if (n >= 0 && (size_t)n < r->errlen) vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    /* one line, whatever the file's strings hold */
    for (char *p = r->err; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
  }
  return -1;
}

int rd_fail(rd_t *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(r, "", fmt, ap);
  va_end(ap);
  return -1;
}

const char *rd_node_label(const rd_t *r, char *buf, size_t len) {
  const Onnx__NodeProto *n = r->node;
  const char *op = n && n->op_type ? n->op_type : "?";
  if (n && n->name && n->name[0]) snprintf(buf, len, "node '%.200s' (%.60s)", n->name, op);
  else snprintf(buf, len, "node %zu (%.60s)", r->node_index, op);
  return buf;
}

int rd_node_fail(rd_t *r, const char *fmt, ...) {
  char label[300], prefix[310];
  snprintf(prefix, sizeof prefix, "%s: ", rd_node_label(r, label, sizeof label));
  va_list ap;
  va_start(ap, fmt);
  vfail(r, prefix, fmt, ap);
  va_end(ap);
  return -1;
}

/* ------------------------------------------------------------------ values by name */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;  /* FNV-1a */
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h;
}

int rd_names_init(rd_t *r, size_t expected) {
  size_t cap = 64;
  while (cap < 2 * expected + 2) cap *= 2;
  r->names = calloc(cap, sizeof *r->names);
  r->capnames = cap;
  return r->names ? 0 : rd_fail(r, "out of memory");
}

static size_t slot_of(const rd_t *r, const char *name) {
  size_t i = hash_str(name) & (r->capnames - 1);
  while (r->names[i].key && strcmp(r->names[i].key, name)) i = (i + 1) & (r->capnames - 1);
  return i;
}

int rd_lookup(const rd_t *r, const char *name) {
  if (!name || !name[0]) return -1;
  const name_slot_t *s = &r->names[slot_of(r, name)];
  return s->key ? s->val : -1;
}

int rd_bind(rd_t *r, const char *name, int val) {
  if (!name || !name[0]) return 0;  /* an optional output left out */
  if (2 * (r->nnames + 1) > r->capnames) {
    name_slot_t *old = r->names;
    size_t oldcap = r->capnames;
    if (rd_names_init(r, 2 * r->nnames + 2)) return -1;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].key) r->names[slot_of(r, old[i].key)] = old[i];
    free(old);
  }
  name_slot_t *s = &r->names[slot_of(r, name)];
  if (s->key) return rd_fail(r, "tensor '%.200s' is defined twice", name);
  s->key = name;
  s->val = val;
  r->nnames++;
  return 0;
}

int rd_new_val(rd_t *r, const char *name, val_kind_t kind, unsigned rank, const int64_t *dims) {
  if (rank > GRAPH_MAX_RANK) return rd_fail(r, "tensor '%.200s' has rank %u (at most %d)", name, rank, GRAPH_MAX_RANK);
  if (r->nvals == r->capvals) {
    size_t cap = r->capvals ? 2 * r->capvals : 256;
    val_t *v = realloc(r->vals, cap * sizeof *v);
    if (!v) return rd_fail(r, "out of memory");
    r->vals = v;
    r->capvals = cap;
  }
  val_t *v = &r->vals[r->nvals];
  memset(v, 0, sizeof *v);
  v->name = name ? name : "";
  v->kind = kind;
  v->rank = rank;
  if (rank) memcpy(v->dims, dims, rank * sizeof *dims);
  v->producer = -1;
  v->gidx = -1;
  return (int)r->nvals++;
}

int rd_new_const(rd_t *r, const char *name, val_kind_t kind, unsigned rank, const int64_t *dims) {
  int64_t n = rd_elems(rank, dims);
  if (n < 0 || n > ONNX_MAX_FOLD_ELEMS)
    return rd_node_fail(r, "folding would make a constant of over %lld elements", (long long)ONNX_MAX_FOLD_ELEMS);
  if ((r->folded += n) > ONNX_MAX_FOLD_TOTAL)
    return rd_node_fail(r, "folding would make over %lld elements of constants in all", (long long)ONNX_MAX_FOLD_TOTAL);
  int v = rd_new_val(r, name, kind, rank, dims);
  if (v < 0) return -1;
  size_t bytes = (size_t)(n ? n : 1) * (kind == VAL_F32 ? sizeof(float) : sizeof(int64_t));
  void *p = calloc(1, bytes);
  if (!p) return rd_fail(r, "out of memory (a constant of %zu bytes)", bytes);
  if (kind == VAL_F32) r->vals[v].f = p;
  else r->vals[v].i = p;
  return v;
}

void rd_free(rd_t *r) {
  for (size_t i = 0; i < r->nvals; i++) free(r->vals[i].f), free(r->vals[i].i);
  free(r->vals);
  free(r->names);
  free(r->nodes);
  r->vals = NULL;
  r->names = NULL;
  r->nodes = NULL;
}

/* ------------------------------------------------------------------ shapes */

int64_t rd_elems(unsigned rank, const int64_t *dims) {
  int64_t n = 1;
  for (unsigned i = 0; i < rank; i++) {
    if (dims[i] < 0) return -1;
    if (dims[i] && n > ONNX_MAX_ELEMS / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

int64_t rd_val_elems(const val_t *v) { return rd_elems(v->rank, v->dims); }

int rd_check_act_shape(rd_t *r, const char *what, unsigned rank, const int64_t *dims) {
  for (unsigned i = 0; i < rank; i++)
    if (dims[i] <= 0)
      return rd_node_fail(r, "%s has dimension %u = %lld (each must be at least 1)", what, i, (long long)dims[i]);
  if (rd_elems(rank, dims) < 0) return rd_node_fail(r, "%s has over 2^40 elements", what);
  return 0;
}

int rd_broadcast(rd_t *r, const val_t *a, const val_t *b, unsigned *rank, int64_t *dims) {
  unsigned n = a->rank > b->rank ? a->rank : b->rank;
  for (unsigned k = 0; k < n; k++) {  /* aligned from the right */
    int64_t da = k < n - a->rank ? 1 : a->dims[k - (n - a->rank)];
    int64_t db = k < n - b->rank ? 1 : b->dims[k - (n - b->rank)];
    if (da != db && da != 1 && db != 1)
      return rd_node_fail(r, "inputs of shapes that do not broadcast (dimension %u: %lld and %lld)", k,
                          (long long)da, (long long)db);
    dims[k] = da == 1 ? db : da;
  }
  *rank = n;
  return 0;
}

/* ------------------------------------------------------------------ tensors */

static int tensor_dims(rd_t *r, const Onnx__TensorProto *t, const char *what, int64_t *dims, int64_t *n) {
  if (t->n_dims > GRAPH_MAX_RANK) return rd_fail(r, "%s has rank %zu (at most %d)", what, t->n_dims, GRAPH_MAX_RANK);
  for (size_t k = 0; k < t->n_dims; k++) {
    if (t->dims[k] < 0) return rd_fail(r, "%s has a negative dimension (%lld)", what, (long long)t->dims[k]);
    dims[k] = t->dims[k];
  }
  *n = rd_elems((unsigned)t->n_dims, dims);
  if (*n < 0) return rd_fail(r, "%s has over 2^40 elements", what);
  return 0;
}

int rd_tensor_val(rd_t *r, Onnx__TensorProto *t, const char *name, const char *what) {
  int64_t dims[GRAPH_MAX_RANK], n = 0;
  if (t->n_external_data || (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
    return rd_fail(r, "%s keeps its data in an external file (not supported: save the model as one file)", what);
  if (t->segment) return rd_fail(r, "%s is a segment of a tensor (not supported)", what);
  if (tensor_dims(r, t, what, dims, &n)) return -1;
  int32_t type = t->has_data_type ? t->data_type : 0;
  if (type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
    return rd_fail(r, "%s has data type %d (only FLOAT (1) and INT64 (7) are supported)", what, (int)type);
  const bool f32 = type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  const size_t esize = f32 ? 4 : 8;
  const size_t typed = f32 ? t->n_float_data : t->n_int64_data;
  const size_t have = t->has_raw_data ? t->raw_data.len : typed * esize;
  if (t->has_raw_data && typed)
    return rd_fail(r, "%s has both raw_data and typed data", what);
  if (have != (uint64_t)n * esize)
    return rd_fail(r, "%s holds %zu bytes of data; its shape needs %llu", what, have, (unsigned long long)n * esize);
  int v = rd_new_val(r, name, f32 ? VAL_F32 : VAL_I64, (unsigned)t->n_dims, dims);
  if (v < 0) return -1;
  void *data = NULL;
  if (t->has_raw_data && n > 0 && ((uintptr_t)t->raw_data.data % 8) == 0) {
    data = t->raw_data.data;  /* little-endian host: take protobuf-c's copy instead of a second one */
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = 0;
  } else {
    data = malloc(n ? (size_t)n * esize : esize);
    if (!data) return rd_fail(r, "out of memory (%s)", what);
    if (n) memcpy(data, t->has_raw_data ? (const void *)t->raw_data.data
                                        : f32 ? (const void *)t->float_data : (const void *)t->int64_data,
                  (size_t)n * esize);
  }
  if (f32) r->vals[v].f = data;
  else r->vals[v].i = data;
  return v;
}

/* ------------------------------------------------------------------ attributes */

const Onnx__AttributeProto *rd_attr(const rd_t *r, const char *name) {
  for (size_t k = 0; k < r->node->n_attribute; k++) {
    const Onnx__AttributeProto *a = r->node->attribute[k];
    if (a->name && !strcmp(a->name, name)) return a;
  }
  return NULL;
}

static int wrong_type(rd_t *r, const char *name, const char *want) {
  return rd_node_fail(r, "attribute '%s' is not %s", name, want);
}

int rd_attr_int(rd_t *r, const char *name, int64_t def, int64_t *out) {
  const Onnx__AttributeProto *a = rd_attr(r, name);
  *out = def;
  if (!a) return 0;
  if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) return wrong_type(r, name, "an integer");
  *out = a->i;
  return 0;
}

int rd_attr_float(rd_t *r, const char *name, float def, float *out) {
  const Onnx__AttributeProto *a = rd_attr(r, name);
  *out = def;
  if (!a) return 0;
  if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) return wrong_type(r, name, "a float");
  *out = a->f;
  return 0;
}

int rd_attr_ints(rd_t *r, const char *name, unsigned max, int64_t *out, unsigned *n) {
  const Onnx__AttributeProto *a = rd_attr(r, name);
  *n = 0;
  if (!a) return 0;
  if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) return wrong_type(r, name, "a list of integers");
  if (a->n_ints > max) return rd_node_fail(r, "attribute '%s' has %zu values (at most %u here)", name, a->n_ints, max);
  for (size_t k = 0; k < a->n_ints; k++) out[k] = a->ints[k];
  *n = (unsigned)a->n_ints;
  return 0;
}

int rd_attr_string(rd_t *r, const char *name, const char *def, char *out, size_t len) {
  const Onnx__AttributeProto *a = rd_attr(r, name);
  snprintf(out, len, "%s", def);
  if (!a) return 0;
  if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) return wrong_type(r, name, "a string");
  size_t n = a->s.len < len - 1 ? a->s.len : len - 1;
  if (n) memcpy(out, a->s.data, n);
  out[n] = '\0';
  if (memchr(out, '\0', n)) out[0] = '?';  /* an embedded NUL: matches nothing */
  return 0;
}
