/*
 * onnx_internal: what the ONNX reader's files share (onnx_reader.c: the model, its inputs and
 * the graph it hands over; onnx_ops.c: the table of supported ops and each op's checks, folding
 * and shape inference; onnx_values.c: the table of values by name, constant tensors,
 * attributes and messages). Not for use outside csim/model/onnx_*.c.
 *
 * While a model loads, every tensor name maps to a value: a constant (float32, or int64 for
 * shape arithmetic) with its data, or an activation (computed at run time) with a static
 * shape. Folding makes new constants; the ops the compiler runs become reader nodes, which
 * turn into graph_t nodes once the unused ones are dropped.
 */
#ifndef MODEL_ONNX_INTERNAL_H
#define MODEL_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/graph.h"
#include "onnx/onnx.pb-c.h"

#define ONNX_MAX_ELEMS (1ll << 40)     /* a tensor of more elements is refused (overflow guard) */
#define ONNX_MAX_FOLD_ELEMS (1ll << 26) /* a constant folding would make of more is refused */
#define ONNX_MAX_FOLD_TOTAL (1ll << 28) /* and all of them together (a chain of broadcasts) */

typedef enum { VAL_ACT, VAL_F32, VAL_I64 } val_kind_t;

typedef struct {
  const char *name;  /* the first name it was given (a string of the protobuf) */
  const char *suffix; /* appended to name in the graph for tensors the reader made up, or NULL */
  val_kind_t kind;
  unsigned rank;
  int64_t dims[GRAPH_MAX_RANK];
  float *f;          /* VAL_F32 data (owned), else NULL */
  int64_t *i;        /* VAL_I64 data (owned), else NULL */
  int producer;      /* the reader node computing it (VAL_ACT), -1 for the graph input */
  int gidx;          /* its graph tensor once built, else -1 */
  bool live;
} val_t;

typedef struct {
  graph_op_t op;
  const char *name;  /* the ONNX node's name, or NULL */
  size_t index;      /* the ONNX node's position, for "<op>_<index>" */
  unsigned nin;
  int in[GRAPH_MAX_INPUTS];  /* value indices, -1 when left out */
  int out;
  graph_attrs_t attrs;
  bool live;
} rnode_t;

typedef struct {
  const char *key;
  int val;
} name_slot_t;

typedef struct {
  const char *origin;
  char *err;
  size_t errlen;
  const Onnx__NodeProto *node;  /* the node being read, for messages */
  size_t node_index;
  val_t *vals;
  size_t nvals, capvals;
  name_slot_t *names;           /* open addressing, capacity a power of two */
  size_t capnames, nnames;
  rnode_t *nodes;
  size_t nnodes, capnodes;
  int64_t opset;
  int64_t folded;               /* elements of the constants made so far (ONNX_MAX_FOLD_TOTAL) */
  int input;                    /* the graph input's value */
  const char *batch_param;      /* the input's symbolic first dimension, or NULL */
  int64_t batch;
  const Onnx__GraphProto *graph;
} rd_t;

/* ---- messages (onnx_values.c): each returns -1 so that callers can `return fail(...)` */
int rd_fail(rd_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "origin: node 'name' (Op): ..." for the node being read */
int rd_node_fail(rd_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *rd_node_label(const rd_t *r, char *buf, size_t len);

/* ---- values by name */
int rd_names_init(rd_t *r, size_t expected);
int rd_lookup(const rd_t *r, const char *name);  /* the value index, or -1 */
int rd_bind(rd_t *r, const char *name, int val);  /* -1 (with a message) if already bound */
/* A new value (shape and kind, data NULL): its index, or -1 out of memory. */
int rd_new_val(rd_t *r, const char *name, val_kind_t kind, unsigned rank, const int64_t *dims);
/* A new constant: allocates its data (zeroed). Refuses over ONNX_MAX_FOLD_ELEMS when folding. */
int rd_new_const(rd_t *r, const char *name, val_kind_t kind, unsigned rank, const int64_t *dims);
void rd_free(rd_t *r);

/* ---- shapes */
int64_t rd_elems(unsigned rank, const int64_t *dims);  /* -1 over ONNX_MAX_ELEMS */
int rd_check_act_shape(rd_t *r, const char *what, unsigned rank, const int64_t *dims);
/* ONNX (numpy) broadcasting of a and b into out; -1 with a message if they do not broadcast. */
int rd_broadcast(rd_t *r, const val_t *a, const val_t *b, unsigned *rank, int64_t *dims);
int64_t rd_val_elems(const val_t *v);

/* ---- tensors (initializers, Constant's value): a new constant value, or -1 with a message */
int rd_tensor_val(rd_t *r, Onnx__TensorProto *t, const char *name, const char *what);

/* ---- attributes of the node being read */
const Onnx__AttributeProto *rd_attr(const rd_t *r, const char *name);
/* Each returns 0 with the attribute's value or the default when absent; -1 (with a message
 * naming the attribute) when it has the wrong type or too many values. */
int rd_attr_int(rd_t *r, const char *name, int64_t def, int64_t *out);
int rd_attr_float(rd_t *r, const char *name, float def, float *out);
int rd_attr_ints(rd_t *r, const char *name, unsigned max, int64_t *out, unsigned *n);  /* *n 0 when absent */
int rd_attr_string(rd_t *r, const char *name, const char *def, char *out, size_t len);

/* ---- the ops (onnx_ops.c) */
/* Checks the node being read against the table and folds it into constants or adds reader
 * nodes; binds its outputs. 0, or -1 with a message. */
int rd_node(rd_t *r, const Onnx__NodeProto *n);
/* Adds a reader node computing a new activation of the given shape; the value index or -1. */
int rd_emit(rd_t *r, graph_op_t op, unsigned nin, const int *in, const graph_attrs_t *a,
            const char *out_name, unsigned rank, const int64_t *dims);

#endif
