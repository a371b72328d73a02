/*
 * fuzz_onnx: libFuzzer harness for the ONNX reader (model/onnx_reader.h), `make fuzz`. Any
 * input must be refused with a one-line message and nothing handed over, or read into a graph
 * that keeps graph.h's promises: indices in range, nodes in topological order, static shapes
 * of at least 1, constants with data and activations without. The first byte picks the batch
 * option (0 or 1..3), so both paths of a symbolic batch are fuzzed; the rest is the model.
 * Seeds: tests/fuzz/corpus/onnx (small valid models, their truncations, bad cases).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const graph_t *g) {
  if (g->input < 0 || (size_t)g->input >= g->ntensors || g->output < 0 || (size_t)g->output >= g->ntensors)
    __builtin_trap();
  bool *ready = calloc(g->ntensors, 1);
  if (!ready) return;
  for (size_t t = 0; t < g->ntensors; t++) {
    const graph_tensor_t *x = &g->tensors[t];
    if (x->rank > GRAPH_MAX_RANK || !memchr(x->name, '\0', sizeof x->name)) __builtin_trap();
    for (unsigned k = 0; k < x->rank; k++)
      if (x->dims[k] < 1) __builtin_trap();
    if (x->data) (void)*(volatile float *)&x->data[graph_tensor_elems(x) - 1];  /* ASan: the data is all there */
    ready[t] = x->data || x->is_input;
  }
  for (size_t i = 0; i < g->nnodes; i++) {
    const graph_node_t *n = &g->nodes[i];
    if (n->op >= GRAPH_OP_COUNT || n->nin < 1 || n->nin > GRAPH_MAX_INPUTS) __builtin_trap();
    for (unsigned k = 0; k < n->nin; k++)
      if (n->in[k] >= 0 && ((size_t)n->in[k] >= g->ntensors || !ready[n->in[k]])) __builtin_trap();
    if (n->out < 0 || (size_t)n->out >= g->ntensors || ready[n->out] || g->tensors[n->out].data) __builtin_trap();
    ready[n->out] = true;
  }
  if (!ready[g->output] || g->tensors[g->input].data) __builtin_trap();
  free(ready);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  onnx_load_opts_t o = {.batch = data[0] & 3};
  char err[512];
  graph_t g;
  /* a copy of exactly the model's bytes, so that ASan sees any read past them */
  uint8_t *model = malloc(size - 1 ? size - 1 : 1);
  if (!model) return 0;
  memcpy(model, data + 1, size - 1);
  if (onnx_load_buffer(model, size - 1, "fuzz", &o, &g, err, sizeof err)) {
    if (!err[0] || strchr(err, '\n') || g.nnodes || g.ntensors || g.tensors || g.nodes) __builtin_trap();
  } else {
    check(&g);
    graph_free(&g);
  }
  free(model);
  return 0;
}
