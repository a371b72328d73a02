/*
 * graph: a neural network as the model compiler takes it (docs/models.md): tensors with
 * static shapes, constant tensors holding float32 values, and compute nodes of the supported
 * ops with their attributes checked and parsed. The ONNX reader (onnx_reader.h) builds one
 * from a .onnx file, with the shape-only subgraphs already folded away; the compiler
 * (model_compile.h) lowers it to firmware kernels. Every tensor a node names exists, and
 * nodes are in topological order.
 */
#ifndef MODEL_GRAPH_H
#define MODEL_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GRAPH_MAX_RANK 6
#define GRAPH_MAX_INPUTS 3   /* a node's inputs (Conv and Gemm: X, W, B) */
#define GRAPH_NAME_MAX 128

/* The ops that reach the compiler (ONNX names in graph_op_name). The reader folds Constant,
 * Identity, Shape, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast and Dropout (eval) away. */
#define GRAPH_OPS(X)                                                                              \
  X(CONV, "Conv") X(RELU, "Relu") X(MAXPOOL, "MaxPool") X(AVGPOOL, "AveragePool")                  \
  X(GLOBALAVGPOOL, "GlobalAveragePool") X(ADD, "Add") X(SUB, "Sub") X(MUL, "Mul") X(DIV, "Div")    \
  X(POW, "Pow") X(SQRT, "Sqrt") X(ERF, "Erf") X(TANH, "Tanh") X(FLATTEN, "Flatten")                 \
  X(RESHAPE, "Reshape") X(TRANSPOSE, "Transpose") X(GEMM, "Gemm") X(MATMUL, "MatMul")              \
  X(SOFTMAX, "Softmax") X(REDUCEMEAN, "ReduceMean") X(LAYERNORM, "LayerNormalization")

typedef enum {
#define GRAPH_OP_ENUM(id, name) GRAPH_OP_##id,
  GRAPH_OPS(GRAPH_OP_ENUM)
#undef GRAPH_OP_ENUM
  GRAPH_OP_COUNT
} graph_op_t;

const char *graph_op_name(graph_op_t op);

typedef struct {
  char name[GRAPH_NAME_MAX];
  unsigned rank;
  int64_t dims[GRAPH_MAX_RANK];  /* static, each >= 1 */
  float *data;                   /* a constant (initializer or folded): the product of dims values; else NULL */
  bool is_input, is_output;      /* a graph input (not an initializer) / a graph output */
} graph_tensor_t;

/* Attributes, parsed for the ops that have them (defaults filled in as ONNX defines them). */
typedef struct {
  /* Conv, MaxPool, AveragePool: 2-D only (NCHW inputs) */
  int64_t kernel[2];   /* kernel_shape, or from W's shape for Conv */
  int64_t strides[2];
  int64_t pads[4];     /* top, left, bottom, right (ONNX order: x1_begin, x2_begin, x1_end, x2_end) */
  int64_t count_include_pad;  /* AveragePool */
  int64_t ceil_mode;          /* MaxPool, AveragePool: only 0 is supported (checked) */
  /* Gemm */
  float alpha, beta;
  int64_t trans_a, trans_b;
  /* Softmax, Flatten, LayerNormalization: the axis, made non-negative */
  int64_t axis;
  float epsilon;       /* LayerNormalization */
  /* Transpose */
  unsigned nperm;
  int64_t perm[GRAPH_MAX_RANK];
  /* ReduceMean: axes made non-negative, keepdims */
  unsigned naxes;
  int64_t axes[GRAPH_MAX_RANK];
  int64_t keepdims;
} graph_attrs_t;

typedef struct {
  char name[GRAPH_NAME_MAX];  /* the ONNX node's name, or "<op>_<index>" when it has none */
  graph_op_t op;
  unsigned nin;
  int in[GRAPH_MAX_INPUTS];   /* tensor indices; -1 for an optional input left out */
  int out;                    /* the one output tensor used (every supported op has one) */
  /* Reshape (also what the reader makes of Unsqueeze and Squeeze on computed tensors) has one
   * input, the data: the target shape, with 0 and -1 resolved, is its output tensor's dims. */
  graph_attrs_t attrs;
} graph_node_t;

typedef struct {
  graph_tensor_t *tensors;
  size_t ntensors;
  graph_node_t *nodes;
  size_t nnodes;
  int input, output;   /* the one graph input and the one graph output (tensor indices) */
  int64_t opset;       /* the default domain's opset version */
  char producer[64];   /* producer_name, for reports */
} graph_t;

void graph_free(graph_t *g);

/* Elements of a tensor (the product of its dims). */
uint64_t graph_tensor_elems(const graph_tensor_t *t);

/* A summary for debugging: the op histogram, then each node with its input and output shapes.
 * Returns 0, or -1 if writing to f failed. */
int graph_print(const graph_t *g, FILE *f);

#endif
