/*
 * coll_job: a collective on a slice (`tpusim collective`; docs/collectives.md) as one job that
 * owns config -> check -> build -> run -> golden check -> measure. It checks once
 * (coll_job_new keeps the plan), gives every chip its seeded inputs (rng_coll_input), runs
 * the collective firmware on the pod (runtime/pod_collective), checks every chip's results
 * against the golden model and the float64 bound (job/coll_check, across MPI ranks), and
 * derives the nccl-tests bandwidth figures. A client parses and reports.
 */
#ifndef JOB_COLL_JOB_H
#define JOB_COLL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "golden/coll_golden.h"
#include "runtime/pod_collective.h"

typedef struct {
  pod_coll_config_t run;  /* the machine, the slice, the op, the values, the trace, the profile */
  uint64_t seed;          /* the inputs (the chips' reset seed is run.machine.chip.seed) */
} coll_job_config_t;

typedef struct {
  pod_coll_stats_t stats;
  coll_check_t check;     /* every chip's results against the golden model */
  bool correct;           /* no mismatch, no sum outside the float64 bound, every semaphore back at 0 */
  uint64_t bytes;         /* each chip's buffer */
  pod_coll_bw_t bw;       /* algbw, busbw, the link and the slice's bound */
} coll_job_result_t;

typedef struct coll_job coll_job_t;

/* Checks cfg: NULL with *rc RT_INVALID and a message when the collective cannot be asked of
 * the chips, RT_FAILED when out of memory. */
coll_job_t *coll_job_new(const coll_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void coll_job_free(coll_job_t *j);

/* Runs it and its check: RT_OK (the verdict in the result), RT_INVALID when the programs turn
 * out not to fit the queues, RT_FAILED with a message. The profile (run.profile) may be set on
 * coll_job_config after the check. */
rt_status_t coll_job_run(coll_job_t *j, char *err, size_t errlen);
coll_job_config_t *coll_job_config(coll_job_t *j);
const coll_job_result_t *coll_job_result(const coll_job_t *j);

#endif
