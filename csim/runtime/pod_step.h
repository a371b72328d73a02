/*
 * pod_step: a data-parallel training step in miniature on a pod of RTL chips (what
 * `make sim` runs). Phase 1: every chip runs the firmware GEMM (fw/gemm.h) on its own A and
 * B from its HBM (its forward/backward matmul). Phase 2: the pod all-reduces the products
 * (the gradient sum) in place in HBM with the collective firmware (fw/collective.h).
 */
#ifndef RUNTIME_POD_STEP_H
#define RUNTIME_POD_STEP_H

#include <stdint.h>

#include "fw/collective.h"
#include "runtime/status.h"
#include "system/chip_core.h"

typedef struct {
  unsigned pod_w, pod_h;         /* the pod; the step runs on all of it */
  unsigned mxu_rows, mxu_cols;   /* a built chip */
  unsigned link_latency;
  uint64_t m, k, n;              /* each chip's GEMM: M x K times K x N */
  fw_coll_algo_t algo;           /* of the all-reduce */
  uint64_t seed;                 /* reset randomisation */
  chip_model_t model;            /* the chips' model (chip_core.h) */
  const bool *rtl_chips;         /* NULL, or pod_w * pod_h flags: those chips run the RTL (pod_config_t) */
  const char *trace_path;        /* FST of one chip over both phases, or NULL */
  void (*progress)(void *ctx, uint64_t cycles);  /* NULL, or the pod's progress (pod_config_t) */
  void *progress_ctx;
  unsigned trace_chip;           /* y * pod_w + x */
} pod_step_config_t;

typedef struct {
  uint64_t gemm_cycles;          /* phase 1: the programs started .. the pod quiet */
  uint64_t allreduce_cycles;     /* phase 2: the collective alone */
  fw_slice_t slice;              /* the whole pod */
  fw_coll_args_t allreduce;      /* the all-reduce run (lines, chunk) */
} pod_step_stats_t;

/* RT_OK when the step fits the chips (the GEMM, the all-reduce's buffer and programs), else
 * RT_INVALID with a message. */
rt_status_t pod_step_check(const pod_step_config_t *cfg, char *err, size_t errlen);

/* a: chips x M x K bf16, b: chips x K x N bf16, chip y * pod_w + x at index y * pod_w + x;
 * prod gets each chip's GEMM result (chips x M x N fp32 bits), sum what each chip holds
 * after the all-reduce. Returns RT_OK, RT_INVALID (as pod_step_check) or RT_FAILED. */
rt_status_t pod_step_run(const pod_step_config_t *cfg, const uint16_t *a, const uint16_t *b, uint32_t *prod,
                         uint32_t *sum, pod_step_stats_t *st, char *err, size_t errlen);

#endif
