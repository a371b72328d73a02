/*
 * onnx_reader: reads a .onnx model (protobuf, parsed by protobuf-c from the onnx.proto schema
 * that Debian's python3-onnx installs) into a graph_t (model/graph.h) the compiler lowers.
 *
 * Opsets 13..17 of the default domain; one float32 graph input and one output; initializers
 * become float32 constants (int64 ones only feed shape arithmetic). The shape-only subgraphs
 * torch exports (Shape, Gather, Unsqueeze, Concat, Slice, Cast, Constant, Identity, Dropout, and
 * element-wise ops on constants) are folded at load; Reshape targets become static shapes; every
 * remaining tensor gets a static shape; nodes whose outputs are unused are dropped. Every node is
 * checked against one table of supported ops and attributes (onnx_rules_markdown prints it, and
 * docs/models.md, "Reading ONNX", holds the same table). A refusal is a one-line message naming
 * the file, the node (name and op) and the attribute or input at fault; nothing is printed here.
 */
#ifndef MODEL_ONNX_READER_H
#define MODEL_ONNX_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/graph.h"

#define ONNX_MAX_FILE_BYTES (2ull << 30)  /* protobuf's own limit; bigger models use external data */

typedef struct {
  int64_t batch;       /* 0: the file's own static batch; else fixes a symbolic first input dimension */
  uint64_t max_bytes;  /* refuse a file or buffer larger than this; 0: ONNX_MAX_FILE_BYTES */
} onnx_load_opts_t;

/* Reads the model at path into *g (zeroed first; free it with graph_free). o may be NULL (the
 * defaults). Returns 0, or -1 with a one-line message in err (and *g empty). A file that is not
 * a regular file (a FIFO, a device, a directory) is refused, not waited on. */
int onnx_load(const char *path, const onnx_load_opts_t *o, graph_t *g, char *err, size_t errlen);

/* The same from len bytes at data, named origin in messages (the fuzzer's entry). */
int onnx_load_buffer(const void *data, size_t len, const char *origin, const onnx_load_opts_t *o,
                     graph_t *g, char *err, size_t errlen);

/* The table of supported ops and attributes as a Markdown table (docs/models.md has the same). */
void onnx_rules_markdown(FILE *f);

#endif
