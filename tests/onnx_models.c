/*
 * The ONNX reader on the reference models scripts/export_models.py writes (build/models, or the
 * directory in ONNX_MODELS_DIR): ResNet-50, BERT-base and the small CNN and transformer. Not part
 * of `make test` (the name is not test_*): exporting ResNet-50 and BERT-base takes about a minute,
 * so `make onnx-models` runs these after `scripts/export_models.py`. A missing file FAILS its test
 * (it is never skipped and counted as a pass). Each test logs its load time.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/onnx_reader.h"

TestSuite(onnx_models, .timeout = 300);

static void load_model(const char *name, int64_t batch, graph_t *g) {
  const char *dir = getenv("ONNX_MODELS_DIR");
  char path[512], err[1024];
  snprintf(path, sizeof path, "%s/%s.onnx", dir && dir[0] ? dir : "build/models", name);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s is missing: run /usr/bin/python3 scripts/export_models.py first", path);
  fclose(f);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  onnx_load_opts_t o = {.batch = batch};
  cr_assert_eq(onnx_load(path, &o, g, err, sizeof err), 0, "%s", err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  cr_log_info("%s: %zu nodes, %zu tensors, loaded in %.3f s", path, g->nnodes, g->ntensors,
              (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

static size_t count_op(const graph_t *g, graph_op_t op) {
  size_t n = 0;
  for (size_t i = 0; i < g->nnodes; i++) n += g->nodes[i].op == op;
  return n;
}

static void assert_out(const graph_t *g, unsigned rank, const int64_t *dims) {
  const graph_tensor_t *t = &g->tensors[g->output];
  cr_assert_eq(t->rank, rank);
  for (unsigned k = 0; k < rank; k++) cr_assert_eq(t->dims[k], dims[k], "output dim %u is %lld", k, (long long)t->dims[k]);
}

static uint64_t weights(const graph_t *g) {
  uint64_t n = 0;
  for (size_t t = 0; t < g->ntensors; t++)
    if (g->tensors[t].data) n += graph_tensor_elems(&g->tensors[t]);
  return n;
}

Test(onnx_models, resnet50_is_torchvision_s_53_convolutions) {
  graph_t g;
  load_model("resnet50", 32, &g);
  cr_assert_eq(g.nnodes, 122);
  cr_assert_eq(count_op(&g, GRAPH_OP_CONV), 53);
  cr_assert_eq(count_op(&g, GRAPH_OP_RELU), 49);
  cr_assert_eq(count_op(&g, GRAPH_OP_ADD), 16);
  cr_assert_eq(count_op(&g, GRAPH_OP_MAXPOOL), 1);
  cr_assert_eq(count_op(&g, GRAPH_OP_GEMM), 1);
  const graph_node_t *stem = &g.nodes[0];
  cr_assert_eq(stem->op, GRAPH_OP_CONV);
  cr_assert_eq(stem->attrs.kernel[0], 7);
  cr_assert_eq(stem->attrs.strides[0], 2);
  cr_assert_eq(g.tensors[stem->out].dims[2], 112);
  assert_out(&g, 2, (int64_t[]){32, 1000});
  cr_assert_eq(weights(&g), 25530472, "the weights with batch norm folded in: %llu", (unsigned long long)weights(&g));
  graph_free(&g);
}

Test(onnx_models, bert_base_has_12_encoder_layers) {
  graph_t g;
  load_model("bert_base", 8, &g);
  cr_assert_eq(count_op(&g, GRAPH_OP_SOFTMAX), 12);
  cr_assert_eq(count_op(&g, GRAPH_OP_ERF), 12);
  cr_assert(count_op(&g, GRAPH_OP_LAYERNORM) == 24 || count_op(&g, GRAPH_OP_REDUCEMEAN) == 48, "24 norms");
  cr_assert_eq(count_op(&g, GRAPH_OP_MATMUL) + count_op(&g, GRAPH_OP_GEMM), 12 * 8, "q, k, v, 2 attention, out, 2 FFN a layer");
  assert_out(&g, 3, (int64_t[]){8, 128, 768});
  graph_free(&g);
}

Test(onnx_models, the_small_models_load) {
  graph_t g;
  load_model("cnn_small", 2, &g);
  cr_assert_geq(count_op(&g, GRAPH_OP_CONV), 4);
  assert_out(&g, 2, (int64_t[]){2, 10});
  graph_free(&g);
  load_model("transformer_small", 2, &g);
  cr_assert_eq(count_op(&g, GRAPH_OP_SOFTMAX), 2);
  assert_out(&g, 3, (int64_t[]){2, 16, 64});
  graph_free(&g);
  load_model("transformer_small_opset17", 2, &g);
  cr_assert_eq(count_op(&g, GRAPH_OP_LAYERNORM), 4);
  graph_free(&g);
}
