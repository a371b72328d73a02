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
#include "chip/chip_core.h"
#include "pod/pod.h"
#include "profile/profile.h"

typedef struct {
  /* the pod (the step runs on all of it) and its chips (the kernels beyond the GEMM use core
   * 0); machine.chip.hbm_bytes 0: each chip's HBM sized to the step, else its capacity */
  pod_config_t machine;
  uint64_t m, k, n;              /* each chip's GEMM: M x K times K x N */
  fw_coll_algo_t algo;           /* of the all-reduce */
  const char *trace_path;        /* FST of one chip over both phases, or NULL */
  profile_t *profile;           /* NULL, or a profile of the chips (profile/profile.h) */
  unsigned trace_chip;           /* y * size_x + x */
} pod_step_config_t;

typedef struct {
  uint64_t gemm_cycles;          /* phase 1: the programs started .. the pod quiet */
  uint64_t allreduce_cycles;     /* phase 2: the collective alone */
  fw_slice_t slice;              /* the whole pod */
  fw_coll_args_t allreduce;      /* the all-reduce run (lines, chunk) */
  uint64_t memory_bytes;         /* memory pages the chips' memories held at the end (chip_memory) */
} pod_step_stats_t;

/* What pod_step_check finds: the chips' geometry, the all-reduce (whole pod, the products'
 * lines, the default chunk) and the pod to build (the machine with each chip's HBM sized to
 * the GEMM). */
typedef struct {
  chip_geometry_t geo;
  fw_slice_t slice;
  fw_coll_args_t allreduce;
  pod_config_t pod;
} pod_step_plan_t;

/* RT_OK and *plan when the step fits the chips (the GEMM, the all-reduce's buffer and
 * programs), else RT_INVALID with a message. */
rt_status_t pod_step_check(const pod_step_config_t *cfg, pod_step_plan_t *plan, char *err, size_t errlen);

/* The data of a step, as data-parallel chips hold it: every chip multiplies its own A by the
 * same B (the weights), chip i's A being `a` (M x K bf16) with its rows turned by i: row r of
 * chip i's A is row (r + i) mod M of `a`, so its product is the product of a and b with its
 * rows turned the same way. Each chip's product is known from one product, and no two chips
 * hold the same values. b: K x N bf16.
 *
 * The results are read where the chips leave them (C in HBM, M x N fp32 row-major): after
 * phase 1, products(ctx, r) is called (each chip's product: pod_step_read), after phase 2
 * sums(ctx, r) (what each chip holds after the all-reduce); either's failure is the run's.
 * A and B are cleared from HBM once the GEMMs are done, so a big pod holds what is live.
 * plan: pod_step_check's for cfg (not checked again). Returns RT_OK or RT_FAILED. */
typedef struct pod_step_results pod_step_results_t;
typedef struct {
  void *ctx;
  rt_status_t (*products)(void *ctx, pod_step_results_t *r, char *err, size_t errlen);
  rt_status_t (*sums)(void *ctx, pod_step_results_t *r, char *err, size_t errlen);
} pod_step_io_t;
rt_status_t pod_step_run(const pod_step_config_t *cfg, const pod_step_plan_t *plan, const uint16_t *a,
                         const uint16_t *b, const pod_step_io_t *io, pod_step_stats_t *st, char *err, size_t errlen);
/* Chip (index y * pod_w + x)'s C values [first, first + n) as its HBM holds them now: 0, or -1. */
int pod_step_read(pod_step_results_t *r, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals);

#endif
