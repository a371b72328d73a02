/* graph: the model graph's helpers (model/graph.h). */
#include "model/graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const OP_NAMES[GRAPH_OP_COUNT] = {
#define GRAPH_OP_NAME(id, name) name,
    GRAPH_OPS(GRAPH_OP_NAME)
#undef GRAPH_OP_NAME
};

const char *graph_op_name(graph_op_t op) {
  return (unsigned)op < GRAPH_OP_COUNT ? OP_NAMES[op] : "?";
}

void graph_free(graph_t *g) {
  if (!g) return;
  for (size_t i = 0; i < g->ntensors; i++) free(g->tensors[i].data);
  free(g->tensors);
  free(g->nodes);
  memset(g, 0, sizeof *g);
  g->input = g->output = -1;
}

uint64_t graph_tensor_elems(const graph_tensor_t *t) {
  uint64_t n = 1;
  for (unsigned i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
  return n;
}

static void print_shape(const graph_tensor_t *t, FILE *f) {
  fputc('[', f);
  for (unsigned i = 0; i < t->rank; i++) fprintf(f, "%s%" PRId64, i ? "," : "", t->dims[i]);
  fputc(']', f);
}

int graph_print(const graph_t *g, FILE *f) {
  size_t hist[GRAPH_OP_COUNT] = {0}, nconst = 0;
  uint64_t weights = 0;
  for (size_t i = 0; i < g->nnodes; i++) hist[g->nodes[i].op]++;
  for (size_t i = 0; i < g->ntensors; i++)
    if (g->tensors[i].data) nconst++, weights += graph_tensor_elems(&g->tensors[i]);
  fprintf(f, "graph: opset %" PRId64 ", producer '%s', %zu nodes, %zu tensors (%zu constant, %" PRIu64
             " weights)\n", g->opset, g->producer, g->nnodes, g->ntensors, nconst, weights);
  fprintf(f, "ops:");
  for (int op = 0; op < GRAPH_OP_COUNT; op++)
    if (hist[op]) fprintf(f, " %s %zu", graph_op_name((graph_op_t)op), hist[op]);
  fputc('\n', f);
  if (g->input >= 0) {
    fprintf(f, "input  %s ", g->tensors[g->input].name);
    print_shape(&g->tensors[g->input], f);
    fputc('\n', f);
  }
  for (size_t i = 0; i < g->nnodes; i++) {
    const graph_node_t *n = &g->nodes[i];
    fprintf(f, "%4zu %-18s %s (", i, graph_op_name(n->op), n->name);
    for (unsigned k = 0; k < n->nin; k++) {
      if (k) fputs(", ", f);
      if (n->in[k] < 0) { fputs("-", f); continue; }
      const graph_tensor_t *t = &g->tensors[n->in[k]];
      fputs(t->data ? "const" : "", f);
      print_shape(t, f);
    }
    fputs(") -> ", f);
    print_shape(&g->tensors[n->out], f);
    fputc('\n', f);
  }
  if (g->output >= 0) {
    fprintf(f, "output %s ", g->tensors[g->output].name);
    print_shape(&g->tensors[g->output], f);
    fputc('\n', f);
  }
  return ferror(f) ? -1 : 0;
}
