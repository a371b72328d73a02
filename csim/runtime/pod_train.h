/*
 * pod_train: runs training (fw/train.h) on a slice of a pod of RTL chips. The host loads the
 * examples, their labels and each chip's initial parameter shard into its HBM once; each step
 * it loads every chip's step programs and runs the pod; it reads the parameters and the
 * probabilities the chips wrote back to HBM. Chips outside the slice stay idle.
 */
#ifndef RUNTIME_POD_TRAIN_H
#define RUNTIME_POD_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "fw/train.h"
#include "runtime/status.h"
#include "chip/chip_core.h"
#include "pod/pod.h"
#include "profile/profile.h"

typedef struct {
  /* the pod and its chips (each core a data-parallel replica); machine.chip.hbm_bytes 0: each
   * chip's HBM sized to the plan, else its capacity */
  pod_config_t machine;
  fw_slice_t slice;             /* w/h filled in from the pod */
  fw_train_net_t net;
  unsigned examples;            /* training examples, in the order the steps take them */
  const uint16_t *x;            /* examples x features bf16 bit patterns */
  const uint8_t *label;         /* examples, each below classes */
  const uint32_t *w[FW_TRAIN_LAYERS], *bias[FW_TRAIN_LAYERS];  /* the initial network (train_args.h shapes) */
  const char *trace_path;       /* FST of one chip from the first step on, or NULL */
  unsigned trace_chip;          /* y * size_x + x */
  profile_t *profile;           /* NULL, or a profile of the chips (profile/profile.h) */
} pod_train_config_t;

typedef struct pod_train pod_train_t;

/* RT_OK when the run fits the chips (the plan of fw_train_plan), else RT_INVALID with a message. */
rt_status_t pod_train_check(const pod_train_config_t *cfg, fw_train_plan_t *plan, char *err, size_t errlen);

/* Builds the pod of a run pod_train_check accepted with the plan it gave (not checked again),
 * loads the data and the parameters, runs the init programs. NULL with *rc and a message on
 * failure. */
pod_train_t *pod_train_build(const pod_train_config_t *cfg, const fw_train_plan_t *plan, rt_status_t *rc, char *err,
                             size_t errlen);
/* pod_train_check, then pod_train_build. */
pod_train_t *pod_train_new(const pod_train_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void pod_train_free(pod_train_t *t);
const fw_train_plan_t *pod_train_plan(const pod_train_t *t);

/* One step on examples first .. first + batch - 1; *cycles: the pod's cycles for it. */
rt_status_t pod_train_step(pod_train_t *t, unsigned first, uint64_t *cycles, char *err, size_t errlen);

/* Slice chip i (y * w + x within the slice): its parameter lines (plan->param_lines x C) and
 * last probabilities (b x C), as it wrote them to HBM. */
int pod_train_read(pod_train_t *t, unsigned chip, uint32_t *params, uint32_t *probs);

/* Ends the trace (pod_train_config_t.trace_path): later steps are not recorded. */
void pod_train_trace_close(pod_train_t *t);

/* Semaphores not back at zero on the slice's chips, every core's (after a step: must be 0). */
unsigned pod_train_sems_left(pod_train_t *t);

/* The step's collectives alone, on this pod (they touch no parameter): *cycles. */
rt_status_t pod_train_comm_cycles(pod_train_t *t, uint64_t *cycles, char *err, size_t errlen);

/* The step of t without its collectives, on a fresh lone chip of the same machine (the
 * slice's first chip's program; the update there uses unreduced gradients, so it runs apart). */
rt_status_t pod_train_compute_cycles(const pod_train_t *t, uint64_t *cycles, char *err, size_t errlen);

#endif
