/*
 * infer_job: a model's inference on a pod (`tpusim infer`; docs/models.md) as one job that owns
 * config -> check -> build -> run -> golden check -> measure. It checks once (infer_job_new: the
 * batch against the data-parallel chips, the compiled plan against the chip, its HBM), then runs
 * the plan's steps one program load at a time on every chip at once (each chip its own images,
 * data parallel), and after each step holds every chip's output of it to the golden model run on
 * the same lowered graph (the golden kernels of csim/golden, sharing no code with the firmware),
 * so that a difference names the first layer that made it. The figures: cycles per step and in
 * all, MACs, MXU utilisation against the shape's bound, images a second at the chip's clock.
 */
#ifndef JOB_INFER_JOB_H
#define JOB_INFER_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/graph.h"
#include "model/model_plan.h"
#include "pod/pod.h"
#include "profile/profile.h"
#include "runtime/status.h"

typedef struct {
  pod_config_t machine;       /* the pod; every chip is a data-parallel replica */
  const graph_t *graph;       /* with its batch fixed (the reader's --batch) */
  unsigned dp;                /* chips the batch is split over (0: every chip of the pod) */
  const float *input;         /* NCHW float32 of the whole batch, or NULL: seeded uniform [-1, 1) */
  uint64_t seed;
  bool golden;                /* hold every step of every chip to the golden model (default on) */
  profile_t *profile;         /* NULL, or a profile of the pod */
  void (*progress)(void *ctx, size_t step, size_t steps);
  void *progress_ctx;
} infer_job_config_t;

typedef struct {
  uint64_t cycles;            /* the pod's, over every part */
  uint64_t macs, padded_macs; /* one chip's */
} infer_step_result_t;

typedef struct {
  infer_step_result_t *steps; /* plan.nsteps */
  uint64_t cycles, macs;      /* all steps, one chip's MACs */
  double utilization;         /* MACs over cycles x the chip's MACs a cycle */
  double bound;               /* the shapes' padding bound: real over padded MACs */
  double seconds;             /* host time of the run */
  bool checked, bit_exact;
  size_t mismatches;          /* output elements that differ, over every step and chip */
  int first_step;             /* the first step with a difference (-1: none) */
  unsigned first_chip;
  size_t first_index;         /* NCHW index in that step's output */
  uint16_t got, want;
  float *output;              /* NCHW float32 of the whole batch (bf16 values) */
  size_t output_elems;
} infer_job_result_t;

typedef struct infer_job infer_job_t;

/* Checks cfg and compiles the model: NULL with *rc RT_INVALID and a message when it cannot run
 * (the batch does not split over the chips, a node cannot be lowered, it does not fit HBM),
 * RT_FAILED when out of memory. cfg's pointers must outlive the job. */
infer_job_t *infer_job_new(const infer_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void infer_job_free(infer_job_t *j);

const model_plan_t *infer_job_plan(const infer_job_t *j);
/* The whole batch's output shape: the graph's output dims (rank, dims). */
const graph_tensor_t *infer_job_output(const infer_job_t *j);

/* The profile the run feeds (NULL: none), set after the check. */
void infer_job_set_profile(infer_job_t *j, profile_t *prof);

/* Runs it: RT_OK (the verdict in the result), RT_FAILED with a message. */
rt_status_t infer_job_run(infer_job_t *j, char *err, size_t errlen);
const infer_job_result_t *infer_job_result(const infer_job_t *j);

#endif
