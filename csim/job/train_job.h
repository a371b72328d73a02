/*
 * train_job: the MLP training experiment (`tpusim train`, docs/training.md) as one runtime
 * job that owns config -> check -> build -> run -> measure. It checks the configuration once
 * (train_job_new), initialises the network from the seed, then runs every step as firmware on
 * the slice (runtime/pod_train) with the reference trainer (golden/train_golden) beside it,
 * comparing every chip's parameters and probabilities bit for bit after every step, and
 * measures the step's compute and communication alone and the accuracy of the trained network.
 * A client (the CLI, the tests) parses, calls these in order and reports what it gets back.
 *
 * The job layer sits above the runtime and the golden models (a job checks the hardware it
 * runs against a model that shares no code with it) and below the clients.
 */
#ifndef JOB_TRAIN_JOB_H
#define JOB_TRAIN_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "fw/train.h"
#include "pod/pod.h"
#include "profile/profile.h"
#include "runtime/status.h"
#include "util/dataset.h"

typedef struct {
  double loss;      /* the mean cross-entropy of the step's batch, from the chips' probabilities */
  double wall_s;    /* host seconds since the first step began, at the end of this one */
  uint64_t cycles;  /* the pod's cycles for the step */
} train_job_step_t;

typedef struct {
  pod_config_t machine;     /* the pod (progress hooks included); machine.chip.seed: the chips' reset */
  fw_slice_t slice;         /* the slice trained on (pod_w/pod_h filled in from the machine) */
  unsigned hidden, batch, dp, mp, steps;
  float lr;
  uint64_t seed;            /* the initial weights and the order the steps take the examples */
  dataset_t train, test;    /* moved into the job (train_job_free frees them), the training set
                             * shuffled in place from seed */
  const char *trace_path;   /* FST of one chip from the first step on, or NULL */
  unsigned trace_chip;      /* y * size_x + x */
  unsigned trace_steps;     /* the trace holds the first N steps (0: all of them) */
  /* called before each step and after it, checked against the reference (NULL: not called);
   * step counts from 0 */
  void (*before_step)(void *ctx, unsigned step);
  void (*on_step)(void *ctx, unsigned step, const train_job_step_t *rec);
  void *ctx;
} train_job_config_t;

typedef struct {
  unsigned chips;              /* of the slice */
  unsigned batch_per_chip;     /* the plan's b */
  const train_job_step_t *steps;  /* one record a step */
  uint64_t step_cycles;        /* the median step */
  uint64_t compute_cycles;     /* the step without its collectives, on a lone chip */
  uint64_t comm_cycles;        /* the step's collectives alone (0 with one replica and no mp) */
  uint64_t exposed_cycles;     /* step - compute, or 0 */
  double mxu_utilization;      /* each chip's MXU work over the step at full rate */
  double model_macs, tflops;   /* the model's work once a step, and it per second at the clock */
  double train_accuracy, test_accuracy;  /* of the trained network (NAN when out of memory) */
  /* the network before and after (row-major fp32 bits; layer l is rows[l] x cols[l] as
   * train_job_layer_shape says) and the training examples in step order as bf16 bits */
  const uint32_t *w_init[FW_TRAIN_LAYERS], *b_init[FW_TRAIN_LAYERS];
  const uint32_t *w_final[FW_TRAIN_LAYERS], *b_final[FW_TRAIN_LAYERS];
  const uint16_t *x_bf16;
} train_job_result_t;

typedef struct train_job train_job_t;

/* Takes cfg (its datasets moved in, even on failure) and checks it: NULL with *rc RT_INVALID
 * and a message when the run does not fit the machine, RT_FAILED when out of memory. */
train_job_t *train_job_new(train_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void train_job_free(train_job_t *j);

/* The job's configuration as checked (slice and datasets included) and its plan. */
const train_job_config_t *train_job_config(const train_job_t *j);
const fw_train_plan_t *train_job_plan(const train_job_t *j);

/* Layer l's weight shape: rows x cols (features-hidden, hidden-hidden, hidden-classes). */
void train_job_layer_shape(const train_job_t *j, unsigned l, unsigned *rows, unsigned *cols);

/* Builds the pod and the reference, runs every step, each checked bit for bit: RT_OK, or
 * RT_INVALID / RT_FAILED with a message ("step N: ..." when a step fails or disagrees). */
rt_status_t train_job_train(train_job_t *j, profile_t *profile, char *err, size_t errlen);

/* After train_job_train: the step's compute and communication alone, and the accuracies. */
rt_status_t train_job_measure(train_job_t *j, char *err, size_t errlen);

const train_job_result_t *train_job_result(const train_job_t *j);

#endif
