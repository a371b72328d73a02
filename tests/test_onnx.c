/*
 * Tests of the ONNX reader (csim/model/onnx_reader.c) on the models scripts/make_onnx_cases.py
 * writes into build/onnx_cases (a Makefile rule): small models torch exported (a CNN, a
 * 2-layer transformer at opsets 13 and 17) with their op lists, shapes, attributes, folded
 * Reshape targets and --batch; edge-case models made with onnx.helper whose folded constants
 * have known values; and one file per class of bad input, each refused with the message
 * fragment in BAD_CASES (and nothing handed over). The table of supported ops in the code must
 * be the one docs/models.md shows. Every loaded graph is checked for the graph_t invariants
 * (model/graph.h). Run from the project root.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/onnx_reader.h"

#define CASES "build/onnx_cases/"
#define TIMEOUT_S 30
#define ERR_LEN 1024

TestSuite(onnx, .timeout = TIMEOUT_S);

/* ------------------------------------------------------------------ helpers */

/* The invariants graph.h promises: indices in range, topological order, static shapes. */
static void check_graph(const graph_t *g) {
  cr_assert(g->input >= 0 && (size_t)g->input < g->ntensors && g->tensors[g->input].is_input);
  cr_assert(g->output >= 0 && (size_t)g->output < g->ntensors && g->tensors[g->output].is_output);
  cr_assert_null(g->tensors[g->input].data);
  bool *ready = calloc(g->ntensors, sizeof *ready);
  cr_assert_not_null(ready);
  for (size_t t = 0; t < g->ntensors; t++) {
    const graph_tensor_t *x = &g->tensors[t];
    cr_assert(x->rank <= GRAPH_MAX_RANK, "%s", x->name);
    for (unsigned k = 0; k < x->rank; k++) cr_assert(x->dims[k] >= 1, "tensor %s dim %u = %lld", x->name, k, (long long)x->dims[k]);
    ready[t] = x->data != NULL || x->is_input;
  }
  for (size_t i = 0; i < g->nnodes; i++) {
    const graph_node_t *n = &g->nodes[i];
    cr_assert(n->op < GRAPH_OP_COUNT && n->nin >= 1 && n->nin <= GRAPH_MAX_INPUTS, "node %s", n->name);
    cr_assert(n->name[0], "node %zu has no name", i);
    for (unsigned k = 0; k < n->nin; k++)
      cr_assert(n->in[k] < 0 || ((size_t)n->in[k] < g->ntensors && ready[n->in[k]]),
                "node %s input %u is not ready (order)", n->name, k);
    cr_assert(n->out >= 0 && (size_t)n->out < g->ntensors && !ready[n->out], "node %s output", n->name);
    cr_assert_null(g->tensors[n->out].data);
    ready[n->out] = true;
  }
  cr_assert(ready[g->output]);
  free(ready);
}

static void load(const char *file, int64_t batch, graph_t *g) {
  char err[ERR_LEN];
  onnx_load_opts_t o = {.batch = batch};
  int rc = onnx_load(file, &o, g, err, sizeof err);
  cr_assert_eq(rc, 0, "%s: %s", file, err);
  check_graph(g);
}

static const graph_tensor_t *T(const graph_t *g, int i) {
  cr_assert(i >= 0 && (size_t)i < g->ntensors);
  return &g->tensors[i];
}

static void assert_dims(const graph_tensor_t *t, unsigned rank, const int64_t *dims) {
  cr_assert_eq(t->rank, rank, "%s: rank %u, want %u", t->name, t->rank, rank);
  for (unsigned k = 0; k < rank; k++)
    cr_assert_eq(t->dims[k], dims[k], "%s: dim %u is %lld, want %lld", t->name, k, (long long)t->dims[k], (long long)dims[k]);
}

static size_t count_op(const graph_t *g, graph_op_t op) {
  size_t n = 0;
  for (size_t i = 0; i < g->nnodes; i++) n += g->nodes[i].op == op;
  return n;
}

static const graph_node_t *node_named(const graph_t *g, const char *name) {
  for (size_t i = 0; i < g->nnodes; i++)
    if (!strcmp(g->nodes[i].name, name)) return &g->nodes[i];
  cr_assert_fail("no node %s", name);
  return NULL;
}

/* ------------------------------------------------------------------ torch's exports */

Test(onnx, torch_cnn_has_the_ops_shapes_and_attributes_torch_exported) {
  graph_t g;
  load(CASES "torch_cnn.onnx", 2, &g);
  const graph_op_t want[] = {GRAPH_OP_CONV, GRAPH_OP_RELU, GRAPH_OP_MAXPOOL, GRAPH_OP_CONV, GRAPH_OP_ADD,
                             GRAPH_OP_RELU, GRAPH_OP_CONV, GRAPH_OP_GLOBALAVGPOOL, GRAPH_OP_FLATTEN, GRAPH_OP_GEMM};
  cr_assert_eq(g.nnodes, sizeof want / sizeof want[0], "%zu nodes", g.nnodes);
  for (size_t i = 0; i < g.nnodes; i++)
    cr_assert_eq(g.nodes[i].op, want[i], "node %zu is %s", i, graph_op_name(g.nodes[i].op));
  assert_dims(T(&g, g.input), 4, (int64_t[]){2, 3, 16, 16});
  assert_dims(T(&g, g.output), 2, (int64_t[]){2, 10});
  const graph_node_t *stem = &g.nodes[0], *pool = &g.nodes[2], *proj = &g.nodes[6], *fc = &g.nodes[9];
  cr_assert_eq(stem->nin, 3);
  cr_assert_eq(stem->attrs.kernel[0], 7);
  cr_assert_eq(stem->attrs.strides[1], 2);
  cr_assert_eq(stem->attrs.pads[0], 3);
  cr_assert_eq(stem->attrs.pads[3], 3);
  assert_dims(T(&g, stem->in[1]), 4, (int64_t[]){8, 3, 7, 7});
  cr_assert_not_null(T(&g, stem->in[1])->data, "the stem's weights (batch norm folded in) are a constant");
  cr_assert_not_null(T(&g, stem->in[2])->data, "and so is its bias");
  assert_dims(T(&g, stem->out), 4, (int64_t[]){2, 8, 8, 8});
  cr_assert_eq(pool->attrs.kernel[0], 3);
  cr_assert_eq(pool->attrs.strides[0], 2);
  cr_assert_eq(pool->attrs.pads[1], 1);
  assert_dims(T(&g, pool->out), 4, (int64_t[]){2, 8, 4, 4});
  cr_assert_eq(proj->attrs.kernel[0], 1);
  cr_assert_eq(proj->attrs.strides[0], 2);
  assert_dims(T(&g, proj->out), 4, (int64_t[]){2, 16, 2, 2});
  cr_assert_eq(fc->attrs.trans_b, 1);
  cr_assert_float_eq(fc->attrs.alpha, 1.0f, 0);
  cr_assert_float_eq(fc->attrs.beta, 1.0f, 0);
  cr_assert_eq(g.opset, 13);
  cr_assert(strstr(g.producer, "pytorch"), "producer '%s'", g.producer);
  graph_free(&g);
}

Test(onnx, the_batch_option_fixes_the_symbolic_batch_everywhere) {
  graph_t g;
  load(CASES "torch_cnn.onnx", 5, &g);
  for (size_t i = 0; i < g.nnodes; i++) cr_assert_eq(T(&g, g.nodes[i].out)->dims[0], 5, "node %s", g.nodes[i].name);
  graph_free(&g);
  load(CASES "torch_transformer.onnx", 3, &g);
  /* torch's attention reshapes [seq, batch, 64] to [seq, batch * heads, 16] with a target it
   * computes from Shape: folded at load to the batch given */
  const graph_node_t *r = node_named(&g, "/layers.0/self_attn/Reshape");
  cr_assert_eq(r->op, GRAPH_OP_RESHAPE);
  cr_assert_eq(r->nin, 1);
  assert_dims(T(&g, r->out), 3, (int64_t[]){16, 12, 16});
  assert_dims(T(&g, node_named(&g, "/layers.0/self_attn/Reshape_3")->out), 2, (int64_t[]){48, 64});
  assert_dims(T(&g, g.output), 3, (int64_t[]){3, 16, 64});
  graph_free(&g);
}

Test(onnx, torch_transformer_folds_its_shape_arithmetic_and_splits_the_qkv_projection) {
  graph_t g;
  load(CASES "torch_transformer.onnx", 2, &g);
  /* per layer: 3 q/k/v MatMuls + 2 attention + 2 FFN; the out projection is a Gemm */
  cr_assert_eq(count_op(&g, GRAPH_OP_MATMUL), 14);
  cr_assert_eq(count_op(&g, GRAPH_OP_GEMM), 2);
  cr_assert_eq(count_op(&g, GRAPH_OP_SOFTMAX), 2);
  cr_assert_eq(count_op(&g, GRAPH_OP_RESHAPE), 10);
  cr_assert_eq(count_op(&g, GRAPH_OP_TRANSPOSE), 12);
  cr_assert_eq(count_op(&g, GRAPH_OP_REDUCEMEAN), 8, "the LayerNorm pattern: 2 ReduceMean per norm, 4 norms");
  cr_assert_eq(count_op(&g, GRAPH_OP_POW), 4);
  cr_assert_eq(count_op(&g, GRAPH_OP_SQRT), 4);
  cr_assert_eq(count_op(&g, GRAPH_OP_ERF), 2);
  cr_assert_eq(g.nnodes, 102);
  const graph_node_t *q = node_named(&g, "/layers.0/self_attn/Slice/matmul");
  assert_dims(T(&g, q->in[1]), 2, (int64_t[]){64, 64});
  cr_assert_not_null(T(&g, q->in[1])->data);
  const graph_node_t *sm = node_named(&g, "/layers.0/self_attn/Softmax");
  cr_assert_eq(sm->attrs.axis, 2);
  assert_dims(T(&g, sm->out), 3, (int64_t[]){8, 16, 16});
  const graph_node_t *rm = node_named(&g, "/layers.0/norm1/ReduceMean");
  cr_assert_eq(rm->attrs.naxes, 1);
  cr_assert_eq(rm->attrs.axes[0], 2);
  cr_assert_eq(rm->attrs.keepdims, 1);
  const graph_node_t *pw = node_named(&g, "/layers.0/norm1/Pow");
  cr_assert_float_eq(T(&g, pw->in[1])->data[0], 2.0f, 0);
  graph_free(&g);
}

Test(onnx, torch_transformer_at_opset_17_has_layer_normalization) {
  graph_t g;
  load(CASES "torch_transformer_opset17.onnx", 2, &g);
  cr_assert_eq(g.opset, 17);
  cr_assert_eq(count_op(&g, GRAPH_OP_LAYERNORM), 4);
  cr_assert_eq(count_op(&g, GRAPH_OP_REDUCEMEAN), 0);
  const graph_node_t *ln = node_named(&g, "/layers.0/norm1/LayerNormalization");
  cr_assert_eq(ln->nin, 3);
  cr_assert_eq(ln->attrs.axis, 2);
  cr_assert_float_eq(ln->attrs.epsilon, 1e-5f, 1e-12);
  assert_dims(T(&g, ln->in[1]), 1, (int64_t[]){64});
  graph_free(&g);
}

/* ------------------------------------------------------------------ edge cases */

Test(onnx, shape_arithmetic_folds_to_known_values) {
  graph_t g;
  load(CASES "ok_folding.onnx", 2, &g);
  /* Reshape(x, Concat(Slice(Shape(x)), Cast(Cast(Unsqueeze(Gather) * Gather)))) -> [2, 12], then
   * Unsqueeze and Squeeze of the activation (Reshapes), Dropout and Identity gone, the dead
   * Relu dropped, and the scale folded: sqrt(row 1 of the table, reversed) + 0.5 */
  const graph_op_t want[] = {GRAPH_OP_RESHAPE, GRAPH_OP_RESHAPE, GRAPH_OP_RESHAPE, GRAPH_OP_MUL};
  cr_assert_eq(g.nnodes, 4);
  for (size_t i = 0; i < 4; i++) cr_assert_eq(g.nodes[i].op, want[i], "node %zu: %s", i, graph_op_name(g.nodes[i].op));
  assert_dims(T(&g, g.nodes[0].out), 2, (int64_t[]){2, 12});
  assert_dims(T(&g, g.nodes[1].out), 3, (int64_t[]){1, 2, 12});
  const graph_tensor_t *scale = T(&g, g.nodes[3].in[1]);
  assert_dims(scale, 1, (int64_t[]){12});
  cr_assert_not_null(scale->data);
  for (int j = 0; j < 12; j++) {
    float want_v = sqrtf((float)(24 - j)) + 0.5f;
    cr_assert_eq(scale->data[j], want_v, "scale[%d] = %.9g, want %.9g", j, scale->data[j], want_v);
  }
  assert_dims(T(&g, g.output), 2, (int64_t[]){2, 12});
  cr_assert_eq(g.ntensors, 6, "the unused Relu's output and the folded constants are gone");
  graph_free(&g);
}

Test(onnx, a_slice_of_a_projection_becomes_a_projection_by_the_sliced_weights) {
  graph_t g;
  load(CASES "ok_split.onnx", 0, &g);
  cr_assert_eq(g.nnodes, 3);
  const graph_node_t *mm = &g.nodes[0], *add = &g.nodes[1];
  cr_assert_eq(mm->op, GRAPH_OP_MATMUL);
  cr_assert_eq(add->op, GRAPH_OP_ADD);
  const graph_tensor_t *w = T(&g, mm->in[1]), *b = T(&g, add->in[1]);
  assert_dims(w, 2, (int64_t[]){4, 2});
  for (int k = 0; k < 4; k++)
    for (int n = 0; n < 2; n++) cr_assert_eq(w->data[k * 2 + n], (float)(k * 6 + 2 + n), "W[%d][%d]", k, n);
  assert_dims(b, 1, (int64_t[]){2});
  cr_assert_eq(b->data[0], 20.0f);
  cr_assert_eq(b->data[1], 30.0f);
  assert_dims(T(&g, g.output), 3, (int64_t[]){3, 5, 2});
  graph_free(&g);
}

Test(onnx, compute_ops_keep_their_attributes) {
  graph_t g;
  load(CASES "ok_ops.onnx", 0, &g);
  cr_assert_eq(g.nnodes, 11);
  const graph_node_t *avg = node_named(&g, "avg"), *tr = node_named(&g, "tr"), *gm = node_named(&g, "gemm");
  cr_assert_eq(avg->op, GRAPH_OP_AVGPOOL);
  cr_assert_eq(avg->attrs.count_include_pad, 1);
  cr_assert_eq(avg->attrs.pads[2], 1);
  cr_assert_eq(tr->attrs.nperm, 4);
  cr_assert_eq(tr->attrs.perm[1], 2);
  cr_assert_eq(tr->attrs.perm[3], 1);
  assert_dims(T(&g, node_named(&g, "mm")->out), 4, (int64_t[]){2, 3, 3, 5});
  cr_assert_eq(node_named(&g, "flat")->attrs.axis, 2);
  assert_dims(T(&g, node_named(&g, "flat")->out), 2, (int64_t[]){6, 15});
  cr_assert_eq(gm->attrs.trans_b, 1);
  cr_assert_eq(gm->attrs.trans_a, 0);
  cr_assert_float_eq(gm->attrs.alpha, 0.5f, 0);
  cr_assert_float_eq(gm->attrs.beta, 2.0f, 0);
  assert_dims(T(&g, gm->out), 2, (int64_t[]){6, 7});
  cr_assert_eq(node_named(&g, "softmax")->attrs.axis, 1);
  assert_dims(T(&g, node_named(&g, "mean")->out), 2, (int64_t[]){6, 1});
  graph_free(&g);
}

Test(onnx, ir3_models_list_initializers_as_inputs) {
  graph_t g;
  load(CASES "ok_ir3.onnx", 0, &g);
  cr_assert_eq(g.nnodes, 2);
  cr_assert_str_eq(T(&g, g.input)->name, "x");
  graph_free(&g);
}

Test(onnx, graph_print_summarises_the_graph) {
  graph_t g;
  load(CASES "torch_cnn.onnx", 2, &g);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f);
  cr_assert_eq(graph_print(&g, f), 0);
  fclose(f);
  cr_assert(strstr(buf, "ops: Conv 3 Relu 2 MaxPool 1 GlobalAveragePool 1 Add 1 Flatten 1 Gemm 1"), "%s", buf);
  cr_assert(strstr(buf, "-> [2,8,8,8]"), "%s", buf);
  cr_assert(strstr(buf, "output y [2,10]"), "%s", buf);
  free(buf);
  graph_free(&g);
}

Test(onnx, the_table_of_supported_ops_is_the_one_in_the_docs) {
  char *table = NULL, *doc = NULL;
  size_t tlen = 0, dlen = 0;
  FILE *f = open_memstream(&table, &tlen);
  onnx_rules_markdown(f);
  fclose(f);
  FILE *d = fopen("docs/models.md", "rb");
  cr_assert_not_null(d, "docs/models.md (run from the project root)");
  FILE *m = open_memstream(&doc, &dlen);
  int c;
  while ((c = fgetc(d)) != EOF) fputc(c, m);
  fclose(d);
  fclose(m);
  cr_assert(strstr(doc, table), "docs/models.md, \"Reading ONNX\", must hold the table onnx_rules_markdown prints:\n%s", table);
  free(table);
  free(doc);
}

/* ------------------------------------------------------------------ bad input */

typedef struct {
  char file[48];
  int64_t batch;
  char fragment[96];
} bad_case_t;

static bad_case_t BAD_CASES[] = {
    {"bad_empty", 0, "the file is empty"},
    {"bad_truncated", 0, "not a valid ONNX model (protobuf)"},
    {"bad_corrupt", 0, "not a valid ONNX model (protobuf)"},
    {"bad_text", 0, "not a valid ONNX model (protobuf)"},
    {"bad_no_graph", 0, "not an ONNX model: it has no graph"},
    {"bad_opset12", 0, "opset 12 is not supported"},
    {"bad_opset18", 0, "opset 18 is not supported"},
    {"bad_domain", 0, "node 'relu1' (Relu): domain 'com.microsoft' is not supported"},
    {"bad_lstm", 0, "node 'lstm1' (LSTM): op 'LSTM' is not supported"},
    {"bad_dilations", 0, "node 'conv1' (Conv): attribute 'dilations' has 2"},
    {"bad_group", 0, "node 'conv1' (Conv): attribute 'group' = 2"},
    {"bad_auto_pad", 0, "node 'conv1' (Conv): attribute 'auto_pad' = 'SAME_UPPER'"},
    {"bad_conv3d", 0, "node 'conv1' (Conv): input 0 has rank 5 (only 2-D"},
    {"bad_ceil_mode", 0, "node 'pool1' (MaxPool): attribute 'ceil_mode' = 1"},
    {"bad_pool_pads", 0, "node 'pool1' (MaxPool): attribute 'pads' has 2, not less than the kernel"},
    {"bad_dynamic_dim", 4, "graph input 'x' dimension 1 is symbolic ('seq'): a dynamic shape"},
    {"bad_dynamic_dim", 0, "dimension 0 is symbolic ('batch'): a dynamic shape is not supported (give a batch size"},
    {"bad_zero_dim", 0, "graph input 'x' dimension 1 is 0"},
    {"bad_negative_dim", 0, "graph input 'x' dimension 1 is -3"},
    {"bad_overflow", 0, "graph input 'x' has over 2^40 elements"},
    {"bad_negative_init", 0, "initializer 'B' has a negative dimension (-4)"},
    {"bad_int32_init", 0, "initializer 'B' has data type 6"},
    {"bad_init_length", 0, "initializer 'B' holds 12 bytes of data; its shape needs 16"},
    {"bad_external", 0, "initializer 'W' keeps its data in an external file"},
    {"bad_two_inputs", 0, "more than one input"},
    {"bad_two_outputs", 0, "the graph has 2 outputs"},
    {"bad_int_input", 0, "graph input 'x' is not float32"},
    {"bad_softmax_axis", 0, "node 'sm1' (Softmax): attribute 'axis' = 1 is not the last axis"},
    {"bad_layernorm_axis", 0, "node 'ln1' (LayerNormalization): attribute 'axis' = 1 is not the last axis"},
    {"bad_layernorm_opset13", 0, "LayerNormalization needs opset 17"},
    {"bad_gemm_b", 0, "node 'gemm1' (Gemm): input B ('r') is computed: only a constant B"},
    {"bad_gemm_k", 0, "node 'gemm1' (Gemm): A has K = 5, B has K = 4"},
    {"bad_dynamic_reshape", 0, "node 'reshape1' (Reshape): input 'shape' ('s') is computed from data: a dynamic shape"},
    {"bad_reshape_count", 0, "node 'reshape1' (Reshape): the target shape has 8 elements, the input 6"},
    {"bad_unknown_attr", 0, "node 'relu1' (Relu): attribute 'alpha' is not supported"},
    {"bad_undefined_input", 0, "node 'add1' (Add): input 'nowhere' is not produced"},
    {"bad_constant_output", 0, "graph output 'k' is a constant: the graph computes nothing"},
    {"bad_dropout_training", 0, "node 'drop1' (Dropout): input 'training_mode' is given"},
    {"bad_slice_axis0", 0, "node 'slice1' (Slice): Slice of a computed tensor ('r') is supported only along the last axis"},
    {"bad_gather_act", 0, "node 'gather1' (Gather): Gather on a computed tensor"},
    {"bad_concat_act", 0, "node 'cat1' (Concat): Concat of a computed tensor"},
    {"bad_pow_tensor", 0, "node 'pow1' (Pow): the exponent must be one constant value"},
    {"bad_div_zero", 0, "node 'div1' (Div): an integer division by 0"},
    {"bad_fixed_batch", 8, "has a fixed batch of 2; --batch 8 cannot change it"},
    {"bad_declared_shape", 0, "tensor 'r' is declared with shape [3,2]; the inferred shape is [2,3]"},
    {"bad_kernel_too_big", 0, "node 'conv1' (Conv): the kernel (5) is larger than the padded input (2)"},
};
#define NBAD (sizeof BAD_CASES / sizeof BAD_CASES[0])

ParameterizedTestParameters(onnx, each_bad_model_is_refused_with_its_message) {
  return cr_make_param_array(bad_case_t, BAD_CASES, NBAD);
}

ParameterizedTest(bad_case_t *c, onnx, each_bad_model_is_refused_with_its_message, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN];
  snprintf(path, sizeof path, CASES "%s.onnx", c->file);
  graph_t g;
  onnx_load_opts_t o = {.batch = c->batch};
  cr_assert_eq(onnx_load(path, &o, &g, err, sizeof err), -1, "%s was accepted", path);
  cr_assert(strstr(err, c->fragment), "%s: message '%s' lacks '%s'", path, err, c->fragment);
  cr_assert(!strncmp(err, path, strlen(path)), "the message names the file: '%s'", err);
  cr_assert_null(strchr(err, '\n'), "one line: '%s'", err);
  cr_assert(g.nnodes == 0 && g.ntensors == 0 && !g.nodes && !g.tensors, "nothing is handed over");
  graph_free(&g);  /* safe on the empty graph */
}

Test(onnx, every_bad_file_has_a_case) {
  DIR *d = opendir(CASES);
  cr_assert_not_null(d, CASES " (made by scripts/make_onnx_cases.py)");
  struct dirent *e;
  size_t files = 0;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, "bad_", 4) || n < 6 || strcmp(e->d_name + n - 5, ".onnx")) continue;
    files++;
    bool found = false;
    for (size_t k = 0; k < NBAD && !found; k++)
      found = strlen(BAD_CASES[k].file) == n - 5 && !strncmp(BAD_CASES[k].file, e->d_name, n - 5);
    cr_assert(found, "%s has no case in BAD_CASES", e->d_name);
  }
  closedir(d);
  cr_assert_geq(files, 40, "only %zu bad files", files);
}

Test(onnx, missing_files_directories_and_fifos_are_refused) {
  char err[ERR_LEN], fifo[64];
  graph_t g;
  cr_assert_eq(onnx_load(CASES "no_such_model.onnx", NULL, &g, err, sizeof err), -1);
  cr_assert(strstr(err, "no_such_model.onnx: cannot open: No such file"), "%s", err);
  cr_assert_eq(onnx_load(CASES, NULL, &g, err, sizeof err), -1);
  cr_assert(strstr(err, "not a regular file"), "%s", err);
  snprintf(fifo, sizeof fifo, "/tmp/onnx_fifo_%d", (int)getpid());
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(onnx_load(fifo, NULL, &g, err, sizeof err), -1, "a FIFO is refused, not waited on");
  unlink(fifo);
  cr_assert(strstr(err, "not a regular file"), "%s", err);
}

Test(onnx, files_over_the_size_limit_and_bad_batches_are_refused) {
  char err[ERR_LEN];
  graph_t g;
  onnx_load_opts_t o = {.max_bytes = 1000};
  cr_assert_eq(onnx_load(CASES "torch_cnn.onnx", &o, &g, err, sizeof err), -1);
  cr_assert(strstr(err, "over the limit of 1000"), "%s", err);
  o = (onnx_load_opts_t){.batch = -1};
  cr_assert_eq(onnx_load(CASES "torch_cnn.onnx", &o, &g, err, sizeof err), -1);
  cr_assert(strstr(err, "batch -1 is out of range"), "%s", err);
  cr_assert_eq(onnx_load_buffer("", 0, "buf", NULL, &g, err, sizeof err), -1);
  cr_assert(strstr(err, "buf: the file is empty"), "%s", err);
}

/* Every prefix of a valid model is refused or read whole: never a crash (ASan in make sanitize). */
Test(onnx, every_truncation_of_a_model_is_refused_cleanly) {
  FILE *f = fopen(CASES "ok_ops.onnx", "rb");
  cr_assert_not_null(f);
  static unsigned char buf[1 << 16];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  cr_assert(len > 100 && len < sizeof buf);
  size_t refused = 0;
  for (size_t n = 0; n < len; n++) {
    char err[ERR_LEN];
    graph_t g;
    unsigned char *copy = malloc(n ? n : 1);  /* its own allocation, so ASan sees any overread */
    memcpy(copy, buf, n);
    if (onnx_load_buffer(copy, n, "cut", NULL, &g, err, sizeof err)) {
      refused++;
      cr_assert(err[0] && !strchr(err, '\n'));
    } else {
      check_graph(&g);
      graph_free(&g);
    }
    free(copy);
  }
  cr_assert_geq(refused, len - 8, "%zu of %zu prefixes refused", refused, len);
}
