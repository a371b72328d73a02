/*
 * model_plan: the model compiler (docs/models.md, "The compiler"). It lowers a graph (graph.h)
 * for one chip's share of the batch to a schedule of firmware kernels -- convolutions and fully
 * connected layers as windowed GEMMs with their bias, residual add and ReLU fused in (fw/conv.h),
 * pooling (fw/pool.h) -- in the activation layout of fw/act.h, with an HBM memory plan: the
 * constants (a zero line, every layer's weights in its kernel's layout, its bias) at the bottom,
 * then an arena where each activation lives from the step that makes it to its last reader, its
 * bytes reused after that (first fit). Every chip of a data-parallel slice holds the same plan
 * for its own images. The golden check (job/infer_job) walks the same steps.
 */
#ifndef MODEL_MODEL_PLAN_H
#define MODEL_MODEL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fw/act.h"
#include "fw/hal.h"
#include "model/graph.h"

typedef enum {
  MODEL_STEP_CONV,           /* Conv, Gemm, MatMul by a constant: a windowed GEMM (+ bias, + residual, ReLU) */
  MODEL_STEP_MAXPOOL,
  MODEL_STEP_AVGPOOL,
  MODEL_STEP_GLOBALAVGPOOL
} model_step_kind_t;

/* An activation: a graph tensor's share on one chip, in fw/act.h's layout. */
typedef struct {
  fw_act_t act;        /* its layout; act.addr its place in HBM (the same on every chip) */
  int tensor;          /* the graph tensor */
  int alias;           /* -1, or the buffer whose bytes these are (a Flatten or Reshape of it) */
  int producer;        /* the step that writes it (-1: the host, the graph's input) */
  int last_use;        /* the last step that reads it (the output: the number of steps) */
} model_buf_t;

#define MODEL_MAX_CORES 2    /* a chip's cores (chip_obs.h's CHIP_MAX_CORES; job/infer_job checks they agree) */
#define MODEL_STEP_MAX_NODES 4
typedef struct {
  model_step_kind_t kind;
  char name[GRAPH_NAME_MAX];   /* the first graph node's name */
  char ops[64];                /* the fused ops, e.g. "Conv+Add+Relu" */
  unsigned nnodes;
  int nodes[MODEL_STEP_MAX_NODES];
  int in, res, out;            /* buffers (res: the residual, -1 when none) */
  /* the window: a convolution's or a pool's */
  unsigned kh, kw, sh, sw, pt, pl, pb, pr;
  bool relu, has_bias, count_include_pad;
  int weight, bias;            /* conv: graph tensors of W (Cout x Cin x kh x kw; for Gemm/MatMul see trans_b) and B (-1) */
  bool gemm, trans_b;          /* conv from a Gemm/MatMul: W is K x N (trans_b: N x K) */
  uint32_t weights_addr, bias_addr;  /* HBM: the packed constants */
  unsigned parts;              /* program loads the step takes (output pixels split so each fits a queue) */
  uint64_t macs;               /* multiply-accumulates on one chip, real shapes */
  uint64_t padded_macs;        /* ... as the MXU tiles run them (K per kernel row and N padded to whole tiles) */
} model_step_t;

typedef struct {
  const graph_t *graph;
  unsigned images;             /* the batch on one chip */
  chip_geometry_t chip;
  model_step_t *steps;
  size_t nsteps;
  model_buf_t *bufs;
  size_t nbufs;
  int input, output;           /* buffers */
  uint32_t zero_addr;          /* a line of zeros */
  uint8_t *consts;             /* the HBM image of [0, consts_bytes): zero line, weights, biases */
  uint64_t consts_bytes;
  uint64_t arena_addr, arena_bytes;  /* the activations: where, and the most live at once */
  uint64_t act_bytes_total;    /* what the activations would take without reuse */
  uint64_t hbm_bytes;          /* the HBM one chip needs */
} model_plan_t;

/* Lowers g for `images` images on a chip of geometry *chip. 0, or -1 with a message naming the
 * node (and its op) that cannot be lowered, or the size that does not fit. */
int model_plan_build(const graph_t *g, const chip_geometry_t *chip, unsigned images, model_plan_t *p, char *err,
                     size_t errlen);
void model_plan_free(model_plan_t *p);

/* Step s's programs for every core (compute[c], dma[c], as fw_conv2d), part `part` of
 * steps[s].parts. 0, or -1 with a message. */
int model_step_programs(const model_plan_t *p, size_t s, unsigned part, fw_prog_t *compute, fw_prog_t *dma, char *err,
                        size_t errlen);

/* The programs that zero step s's output border before it runs (fw/border.h: the memory plan
 * reuses HBM), core 0's DMA queue: 1 when the output has no border (nothing to run), 0 with the
 * programs, or -1 with a message. */
int model_step_border_programs(const model_plan_t *p, size_t s, fw_prog_t *compute, fw_prog_t *dma, char *err,
                               size_t errlen);

/* --print-plan: the schedule (step, ops, nodes, shapes, MACs, parts) and the memory plan
 * (every buffer's place, size and life). -1 when the stream fails. */
int model_plan_print(const model_plan_t *p, FILE *f);

/* The host's side of the input and output: NCHW float32 of one chip's images to bf16 (RNE) in
 * the input buffer's layout (a host image of fw_act_bytes), and the output buffer's bf16 back
 * to float32. */
void model_pack_input(const model_plan_t *p, const float *x, uint8_t *image);
void model_unpack_output(const model_plan_t *p, const uint8_t *image, float *y);

#endif
