/*
 * pod_scenarios: pod runs the command line cannot ask for, on a 4x4 pod sliced into two 2x4
 * halves, shared by tests/test_pod_threads.c (one process, 1 to 4 threads) and
 * tests/pod_probe.c (MPI ranks): the cases where a split pod could step a chip a cycle
 * late or early, or lose a credit (docs/scale.md "Threads" and "MPI").
 */
#ifndef TESTS_POD_SCENARIOS_H
#define TESTS_POD_SCENARIOS_H

#include <stdio.h>

#include "fw/hal.h"
#include "pod/pod.h"

/* (1,0) sends a packet out of its slice: its router drops it and returns the dropped flits'
 * credits one a cycle to its own sender, a chip quiet but not still with nothing on a link, so
 * the run's end needs the check before a quiet chip's own step. */
static inline void scenario_out_of_slice(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 1 && y == 0) fw_rdma(d, 2, 0, 0, 0, 3, 5, 1, ISA_SEM_NONE, 0);
}
/* Traffic inside the slice after it. */
static inline void scenario_in_slice(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 0 && y == 0) fw_rdma(d, 1, 3, 0, 0, 2, 5, 1, ISA_SEM_NONE, 0);
  if (x == 1 && y == 3) fw_sem_wait(d, 5, 2);
}
/* (0,1) sends a short transfer to (0,2) and waits for an answer, so the last credits come back
 * to it while it sleeps (from another band or rank: they must still wake it), then a long
 * transfer that needs every credit. */
static inline void scenario_credits_to_a_sleeper(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 0 && y == 1) {
    fw_rdma(d, 0, 2, 0, 0, 2, 5, 1, ISA_SEM_NONE, 0);
    fw_sem_wait(d, 6, 1);
    fw_rdma(d, 0, 2, 0, 0, 60, 5, 1, ISA_SEM_NONE, 0);
  }
  if (x == 0 && y == 2) {
    fw_sem_wait(d, 5, 2);
    fw_rdma(d, 0, 1, 0, 0, 1, 6, 1, ISA_SEM_NONE, 0);
    fw_sem_wait(d, 5, 60);
  }
}

typedef struct {
  const char *name;
  void (*prog)(unsigned x, unsigned y, fw_prog_t *d);
  int rc; /* pod_run's */
} pod_scenario_t;

/* In this order, on one pod (the slices set by pod_scenario_slices). */
static const pod_scenario_t pod_scenarios[] = {
    {"out of the slice", scenario_out_of_slice, -1},
    {"inside the slice", scenario_in_slice, 0},
    {"credits back to a sleeping chip", scenario_credits_to_a_sleeper, 0},
};
#define POD_SCENARIOS (sizeof pod_scenarios / sizeof pod_scenarios[0])

static inline int pod_scenario_slices(pod_t *p) { return pod_set_slice(p, 0, 0, 2, 4) || pod_set_slice(p, 2, 0, 2, 4); }

/* Loads scenario s's programs (each chip's DMA queue, then HALT): 0, or -1 with a message. */
static inline int pod_scenario_load(pod_t *p, const pod_scenario_t *s, char *err, size_t errlen) {
  for (unsigned y = 0; y < 4; y++)
    for (unsigned x = 0; x < 4; x++) {
      fw_prog_t d;
      fw_prog_init(&d);
      s->prog(x, y, &d);
      fw_halt(&d);
      const int rc = chip_load_program(pod_chip(p, x, y), ISA_QUEUE_DMA, d.words, d.count, err, errlen);
      fw_prog_free(&d);
      if (rc) return -1;
    }
  return 0;
}

#endif
