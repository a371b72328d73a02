/*
 * randprog_run: runs random program sets (randprog.h) on RTL chips and judges each run
 * (docs/robustness.md). A bench is two pods of the target's size: the one under test
 * lives through every program set, whatever the last one did; the reference, with other
 * reset values, is reset before each valid set. A run must end as its kind says:
 *   valid    every queue halts, every semaphore ends at zero, and the pod under test
 *            matches the reference in every result byte in HBM, and in cycles when no
 *            RDMA ran (the routers' round-robin arbiters carry state from the traffic
 *            before, as in hardware: contending packets may be granted in another order);
 *   invalid  the broken queue stops with its error at its command; every other queue
 *            halts or waits at a SEM_WAIT, and the timeout report names it and its
 *            semaphore;
 *   mutated  each queue halted, stopped or waits where the golden command checker
 *            (golden/cmd_golden.h) says it may: the error it reports is the checker's
 *            for that command, and every command before it is legal;
 * never a host crash, a run without an end, or a chip the next set cannot use (the next
 * set runs on it; semaphores left by a failed set are drained by the host first).
 */
#ifndef RANDPROG_RUN_H
#define RANDPROG_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "chip/chip_core.h"
#include "profile/profile.h"
#include "verify/randprog.h"

typedef struct randprog_bench randprog_bench_t;

/* Outcomes of the pod under test. */
typedef enum { RANDPROG_HALTED, RANDPROG_STOPPED, RANDPROG_TIMED_OUT, RANDPROG_OUTCOMES } randprog_outcome_t;

typedef struct {
  uint64_t sets[RANDPROG_KINDS];          /* program sets run, by kind */
  uint64_t outcomes[RANDPROG_OUTCOMES];   /* how they ended */
  uint64_t errors[16];                    /* queues stopped, by error code */
  uint64_t opcodes[256];                  /* commands loaded, by opcode */
  uint64_t commands, cycles;              /* loaded; simulated on the pod under test */
  uint64_t drains;                        /* sets after which the host drained semaphores */
  uint64_t cycle_checked;                 /* valid sets without RDMA, held to the reference's cycles */
} randprog_stats_t;

/* A bench of two pod_x x pod_y pods of rows x cols chips (reset seeds from `seed`), the one
 * under test of `model`; with CHIP_MODEL_CHECK every chip under test runs the RTL and the fast
 * model in lockstep (a divergence fails the set), and the reference runs the fast model. The pod
 * under test runs on `threads` threads (pod_config_t.threads), the reference on one. */
randprog_bench_t *randprog_bench_new(unsigned pod_x, unsigned pod_y, unsigned rows, unsigned cols, unsigned mxus,
                                     unsigned cores, uint64_t seed,
                                     chip_model_t model, unsigned threads, char *err, size_t errlen);
void randprog_bench_free(randprog_bench_t *b);
/* What programs for this bench are generated for. */
const randprog_target_t *randprog_bench_target(const randprog_bench_t *b);

/* A profile (profile/profile.h; NULL: none) of the pod under test (not the reference), and the
 * phase its next runs belong to (pod_phase): the CLI names each set's. */
void randprog_bench_profile(randprog_bench_t *b, profile_t *prof);
void randprog_bench_phase(randprog_bench_t *b, const char *name);

/* Runs one program set and judges it: 0 when it ended as its kind says, else -1 with what
 * went wrong in why. Adds to *stats. */
int randprog_bench_run(randprog_bench_t *b, const randprog_t *p, randprog_stats_t *stats, char *why, size_t whylen);

#endif
