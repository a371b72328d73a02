/* onnx_reader: a .onnx file into a graph_t (model/onnx_reader.h): the model's checks, its
 * input and initializers, the nodes in order (onnx_ops.c), the declared shapes compared with
 * the inferred ones, the unused nodes dropped, and the graph handed over. */
#include "model/onnx_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/onnx_internal.h"

#define MIN_OPSET 13
#define MAX_OPSET 17

static bool default_domain(const char *d) { return !d || !d[0] || !strcmp(d, "ai.onnx"); }

static int check_model(rd_t *r, const Onnx__ModelProto *m) {
  if (!m->graph) return rd_fail(r, "not an ONNX model: it has no graph");
  if (!m->has_ir_version || m->ir_version < 3)
    return rd_fail(r, "not an ONNX model this reader supports: IR version %lld (3 or later)",
                   m->has_ir_version ? (long long)m->ir_version : 0ll);
  bool found = false;
  for (size_t k = 0; k < m->n_opset_import; k++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[k];
    if (!default_domain(o->domain)) continue;  /* other domains: refused if a node uses one */
    found = true;
    r->opset = o->has_version ? o->version : 0;
  }
  if (!found) return rd_fail(r, "the model imports no opset of the default domain");
  if (r->opset < MIN_OPSET || r->opset > MAX_OPSET)
    return rd_fail(r, "opset %lld is not supported (opsets %d to %d of the default domain)", (long long)r->opset,
                   MIN_OPSET, MAX_OPSET);
  if (m->graph->n_sparse_initializer) return rd_fail(r, "sparse initializers are not supported");
  if (m->n_functions) return rd_fail(r, "model-local functions are not supported");
  if (m->graph->n_output != 1)
    return rd_fail(r, "the graph has %zu outputs (exactly one is supported)", m->graph->n_output);
  return 0;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t k = 0; k < g->n_initializer; k++)
    if (g->initializer[k]->name && !strcmp(g->initializer[k]->name, name)) return true;
  return false;
}

/* The one graph input that is not an initializer: float32 with a static shape, or its first
 * dimension symbolic and fixed by the batch option. */
static int read_input(rd_t *r, const Onnx__GraphProto *g) {
  const Onnx__ValueInfoProto *in = NULL;
  for (size_t k = 0; k < g->n_input; k++) {
    if (!g->input[k]->name || !g->input[k]->name[0]) return rd_fail(r, "graph input %zu has no name", k);
    if (is_initializer(g, g->input[k]->name)) continue;  /* IR < 4 lists initializers as inputs */
    if (in) return rd_fail(r, "the graph has more than one input ('%.100s', '%.100s'): exactly one is supported", in->name,
                           g->input[k]->name);
    in = g->input[k];
  }
  if (!in) return rd_fail(r, "the graph has no input");
  const char *name = in->name;
  const Onnx__TypeProto *t = in->type;
  if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type)
    return rd_fail(r, "graph input '%.200s' is not a tensor", name);
  if (!t->tensor_type->has_elem_type || t->tensor_type->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return rd_fail(r, "graph input '%.200s' is not float32", name);
  const Onnx__TensorShapeProto *s = t->tensor_type->shape;
  if (!s) return rd_fail(r, "graph input '%.200s' has no shape", name);
  if (s->n_dim > GRAPH_MAX_RANK || s->n_dim == 0) return rd_fail(r, "graph input '%.200s' has rank %zu (1 to %d)", name, s->n_dim, GRAPH_MAX_RANK);
  int64_t dims[GRAPH_MAX_RANK];
  for (size_t k = 0; k < s->n_dim; k++) {
    const Onnx__TensorShapeProto__Dimension *d = s->dim[k];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      dims[k] = d->dim_value;
      if (k == 0 && r->batch && dims[0] != r->batch)
        return rd_fail(r, "graph input '%.200s' has a fixed batch of %lld; --batch %lld cannot change it", name,
                       (long long)dims[0], (long long)r->batch);
    } else if (k == 0 && r->batch) {
      dims[0] = r->batch;
      r->batch_param = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : NULL;
    } else {
      const char *p = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : "";
      return rd_fail(r, "graph input '%.200s' dimension %zu is symbolic ('%.60s'): a dynamic shape is not supported%s", name, k,
                     p, k == 0 ? " (give a batch size, --batch B)" : "");
    }
    if (dims[k] <= 0) return rd_fail(r, "graph input '%.200s' dimension %zu is %lld (each must be at least 1)", name, k, (long long)dims[k]);
  }
  if (rd_elems((unsigned)s->n_dim, dims) < 0) return rd_fail(r, "graph input '%.200s' has over 2^40 elements", name);
  if ((r->input = rd_new_val(r, name, VAL_ACT, (unsigned)s->n_dim, dims)) < 0) return -1;
  return rd_bind(r, name, r->input);
}

static int read_initializers(rd_t *r, const Onnx__GraphProto *g) {
  for (size_t k = 0; k < g->n_initializer; k++) {
    Onnx__TensorProto *t = g->initializer[k];
    char what[300];
    if (!t->name || !t->name[0]) return rd_fail(r, "initializer %zu has no name", k);
    snprintf(what, sizeof what, "initializer '%.200s'", t->name);
    int v = rd_tensor_val(r, t, t->name, what);
    if (v < 0 || rd_bind(r, t->name, v)) return -1;
  }
  return 0;
}

/* A shape the file declares (value_info, the graph output) against the one inferred. */
static int check_declared(rd_t *r, const Onnx__ValueInfoProto *vi, const char *what) {
  int v = rd_lookup(r, vi->name);
  const Onnx__TypeProto *t = vi->type;
  if (v < 0 || !t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type || !t->tensor_type->shape)
    return 0;
  const Onnx__TensorShapeProto *s = t->tensor_type->shape;
  const val_t *x = &r->vals[v];
  bool ok = s->n_dim == x->rank;
  for (size_t k = 0; ok && k < s->n_dim; k++) {
    const Onnx__TensorShapeProto__Dimension *d = s->dim[k];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) ok = d->dim_value == x->dims[k];
    else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && r->batch_param &&
             !strcmp(d->dim_param, r->batch_param))
      ok = x->dims[k] == r->batch;
  }
  if (ok) return 0;
  char want[200] = "", got[200] = "";
  for (size_t k = 0; k < s->n_dim && k < GRAPH_MAX_RANK + 2; k++) {
    const Onnx__TensorShapeProto__Dimension *d = s->dim[k];
    size_t u = strlen(want);
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      snprintf(want + u, sizeof want - u, "%s%lld", k ? "," : "", (long long)d->dim_value);
    else
      snprintf(want + u, sizeof want - u, "%s%.20s", k ? "," : "",
               d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : "?");
  }
  for (unsigned k = 0; k < x->rank; k++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", k ? "," : "", (long long)x->dims[k]);
  return rd_fail(r, "%s '%.200s' is declared with shape [%s]; the inferred shape is [%s]", what, vi->name, want, got);
}

static int read_nodes(rd_t *r, const Onnx__GraphProto *g) {
  for (size_t k = 0; k < g->n_node; k++) {
    r->node = g->node[k];
    r->node_index = k;
    if (rd_node(r, g->node[k])) return -1;
    for (size_t o = 0; o < g->node[k]->n_output; o++)  /* every output a node binds (folded ones included) */
      if (!g->node[k]->output[o]) return rd_node_fail(r, "output %zu has no name", o);
  }
  r->node = NULL;
  for (size_t k = 0; k < g->n_value_info; k++)
    if (g->value_info[k]->name && check_declared(r, g->value_info[k], "tensor")) return -1;
  const Onnx__ValueInfoProto *out = g->output[0];
  if (!out->name || rd_lookup(r, out->name) < 0)
    return rd_fail(r, "graph output '%.200s' is not produced by any node", out->name ? out->name : "");
  return check_declared(r, out, "graph output");
}

/* Marks what the output needs; nodes and constants nothing needs are dropped. */
static int mark_live(rd_t *r, int out) {
  const val_t *o = &r->vals[out];
  if (o->kind != VAL_ACT || out == r->input)
    return rd_fail(r, "graph output '%.200s' %s: the graph computes nothing", o->name,
                   out == r->input ? "is the graph input" : "is a constant");
  r->vals[out].live = true;
  r->vals[r->input].live = true;
  for (size_t k = r->nnodes; k-- > 0;) {  /* reverse topological order */
    rnode_t *n = &r->nodes[k];
    if (!r->vals[n->out].live) continue;
    n->live = true;
    for (unsigned j = 0; j < n->nin; j++)
      if (n->in[j] >= 0) r->vals[n->in[j]].live = true;
  }
  /* the input must reach the output */
  bool *reach = calloc(r->nvals, sizeof *reach);
  if (!reach) return rd_fail(r, "out of memory");
  reach[r->input] = true;
  for (size_t k = 0; k < r->nnodes; k++)
    for (unsigned j = 0; j < r->nodes[k].nin; j++)
      if (r->nodes[k].in[j] >= 0 && reach[r->nodes[k].in[j]]) reach[r->nodes[k].out] = true;
  bool ok = reach[out];
  free(reach);
  return ok ? 0 : rd_fail(r, "graph output '%.200s' does not depend on the graph input", o->name);
}

static void set_name(char *dst, const char *name, const char *suffix) {
  snprintf(dst, GRAPH_NAME_MAX, "%s%s", name, suffix ? suffix : "");
}

/* The live values and nodes into g (constants' data moved, not copied). */
static int build_graph(rd_t *r, const Onnx__ModelProto *m, int out, graph_t *g) {
  size_t nt = 0, nn = 0;
  for (size_t k = 0; k < r->nvals; k++) nt += r->vals[k].live;
  for (size_t k = 0; k < r->nnodes; k++) nn += r->nodes[k].live;
  g->tensors = calloc(nt ? nt : 1, sizeof *g->tensors);
  g->nodes = calloc(nn ? nn : 1, sizeof *g->nodes);
  if (!g->tensors || !g->nodes) return rd_fail(r, "out of memory");
  for (size_t k = 0; k < r->nvals; k++) {
    val_t *v = &r->vals[k];
    if (!v->live) continue;
    if (v->kind == VAL_I64) return rd_fail(r, "int64 tensor '%.200s' reaches a compute op", v->name);
    graph_tensor_t *t = &g->tensors[g->ntensors];
    v->gidx = (int)g->ntensors++;
    set_name(t->name, v->name, v->suffix);
    t->rank = v->rank;
    memcpy(t->dims, v->dims, sizeof t->dims);
    t->data = v->f;
    v->f = NULL;
    t->is_input = (int)k == r->input;
    t->is_output = (int)k == out;
  }
  for (size_t k = 0; k < r->nnodes; k++) {
    const rnode_t *s = &r->nodes[k];
    if (!s->live) continue;
    graph_node_t *d = &g->nodes[g->nnodes++];
    if (s->name) set_name(d->name, s->name, r->vals[s->out].suffix);
    else snprintf(d->name, sizeof d->name, "%s_%zu%s", graph_op_name(s->op), s->index,
                  r->vals[s->out].suffix ? r->vals[s->out].suffix : "");
    d->op = s->op;
    d->nin = s->nin;
    for (unsigned j = 0; j < GRAPH_MAX_INPUTS; j++) d->in[j] = j < s->nin && s->in[j] >= 0 ? r->vals[s->in[j]].gidx : -1;
    d->out = r->vals[s->out].gidx;
    d->attrs = s->attrs;
  }
  g->input = r->vals[r->input].gidx;
  g->output = r->vals[out].gidx;
  g->opset = r->opset;
  snprintf(g->producer, sizeof g->producer, "%s%s%s", m->producer_name ? m->producer_name : "",
           m->producer_version ? " " : "", m->producer_version ? m->producer_version : "");
  return 0;
}

static int load_model(rd_t *r, Onnx__ModelProto *m, graph_t *g) {
  if (check_model(r, m)) return -1;
  const Onnx__GraphProto *gp = m->graph;
  size_t names = gp->n_initializer + gp->n_input;
  for (size_t k = 0; k < gp->n_node; k++) names += gp->node[k]->n_output;
  if (rd_names_init(r, names) || read_input(r, gp) || read_initializers(r, gp) || read_nodes(r, gp)) return -1;
  int out = rd_lookup(r, gp->output[0]->name);
  if (mark_live(r, out) || build_graph(r, m, out, g)) return -1;
  return 0;
}

/* onnx_load_buffer, freeing to_free (the file's bytes) once protobuf-c has parsed them: peak
 * memory is then the parsed model (whose weight bytes become the graph's constants). */
static int load_bytes(const void *data, size_t len, const char *origin, const onnx_load_opts_t *o, graph_t *g,
                      char *err, size_t errlen, void *to_free) {
  rd_t r = {.origin = origin ? origin : "model", .err = err, .errlen = errlen, .input = -1};
  onnx_load_opts_t def = {0};
  if (!o) o = &def;
  if (err && errlen) err[0] = '\0';
  memset(g, 0, sizeof *g);
  g->input = g->output = -1;
  const uint64_t max = o->max_bytes ? o->max_bytes : ONNX_MAX_FILE_BYTES;
  if (o->batch < 0 || o->batch > (1ll << 30)) {
    free(to_free);
    return rd_fail(&r, "batch %lld is out of range (1 to 2^30, or 0)", (long long)o->batch);
  }
  r.batch = o->batch;
  if (len == 0 || len > max) free(to_free);
  if (len == 0) return rd_fail(&r, "the file is empty: not an ONNX model");
  if (len > max) return rd_fail(&r, "the model is %zu bytes, over the limit of %llu", len, (unsigned long long)max);
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
  free(to_free);
  if (!m) return rd_fail(&r, "not a valid ONNX model (protobuf): truncated, corrupt or another kind of file");
  int rc = load_model(&r, m, g);
  onnx__model_proto__free_unpacked(m, NULL);
  rd_free(&r);
  if (rc) graph_free(g);
  return rc;
}

int onnx_load_buffer(const void *data, size_t len, const char *origin, const onnx_load_opts_t *o, graph_t *g,
                     char *err, size_t errlen) {
  return load_bytes(data, len, origin, o, g, err, errlen, NULL);
}

int onnx_load(const char *path, const onnx_load_opts_t *o, graph_t *g, char *err, size_t errlen) {
  rd_t r = {.origin = path, .err = err, .errlen = errlen};
  const uint64_t max = o && o->max_bytes ? o->max_bytes : ONNX_MAX_FILE_BYTES;
  if (err && errlen) err[0] = '\0';
  memset(g, 0, sizeof *g);
  g->input = g->output = -1;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return rd_fail(&r, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    return rd_fail(&r, "not a regular file");
  }
  if ((uint64_t)st.st_size > max) {
    close(fd);
    return rd_fail(&r, "the file is %lld bytes, over the limit of %llu (protobuf's 2 GiB; external data is not supported)",
                   (long long)st.st_size, (unsigned long long)max);
  }
  size_t len = (size_t)st.st_size, got = 0;
  char *buf = malloc(len ? len : 1);
  if (!buf) {
    close(fd);
    return rd_fail(&r, "out of memory (%zu bytes)", len);
  }
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (got != len) {
    free(buf);
    return rd_fail(&r, "read %zu of its %zu bytes", got, len);
  }
  return load_bytes(buf, len, path, o, g, err, errlen, buf);
}
