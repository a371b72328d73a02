/*
 * step_job: the data-parallel training step in miniature (`tpusim step`; docs/gemm.md,
 * docs/collectives.md) as one job that owns config ->
 * check -> build -> run -> golden check -> measure. It checks once (step_job_new), makes the
 * seeded data, runs the GEMMs and the all-reduce on the pod (runtime/pod_step), checks every
 * chip's product against the golden GEMM and the sums against the golden all-reduce, and
 * derives the figures (runtime/perf, pod_coll_bandwidth). A client parses and reports.
 */
#ifndef JOB_STEP_JOB_H
#define JOB_STEP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "golden/coll_golden.h"
#include "golden/gemm_golden.h"
#include "runtime/pod_collective.h"
#include "runtime/pod_step.h"

typedef struct {
  pod_step_config_t run;  /* the machine, the GEMM, the algorithm, the trace and the profile */
  uint64_t seed;          /* the data (the chips' reset seed is run.machine.chip.seed) */
} step_job_config_t;

typedef struct {
  pod_step_stats_t stats;
  golden_diff_t gemm;     /* the products against the golden GEMM */
  unsigned gemm_chip;     /* the chip of the first product mismatch */
  coll_check_t sums;      /* the sums against the golden all-reduce */
  bool correct;           /* no mismatch, no sum outside the float64 bound */
  /* the figures: the GEMM phase's MXU utilisation (ideal cycles over its cycles), the pod's
   * peak, the GEMM's FLOPS over the GEMM phase and over the whole step, the all-reduce's bus
   * bandwidth */
  double mxu_utilization, peak_flops, gemm_flops, sustained_flops;
  uint64_t allreduce_bytes, total_cycles;
  pod_coll_bw_t allreduce_bw;
} step_job_result_t;

typedef struct step_job step_job_t;

/* Checks cfg: NULL with *rc RT_INVALID and a message when the step does not fit the chips,
 * RT_FAILED when out of memory. */
step_job_t *step_job_new(const step_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void step_job_free(step_job_t *j);

/* Runs the step and its checks: RT_OK (the verdict in the result, mismatches included) or
 * RT_FAILED with a message. The machine's progress hooks are the checked config's; the
 * profile (run.profile) may be set on step_job_config after the check. */
rt_status_t step_job_run(step_job_t *j, char *err, size_t errlen);
step_job_config_t *step_job_config(step_job_t *j);
const step_job_result_t *step_job_result(const step_job_t *j);

#endif
