/*
 * chip_test: the helpers every chip and pod suite shares (tests/test_chip.c, test_cmdq.c,
 * test_dma.c, test_vec.c, test_gemm.c, test_chip_cores.c, test_chip_mxus.c, test_pod.c,
 * test_rdma.c, test_line_sum.c, test_profile.c, test_randprog.c, test_collective.c): making a
 * chip or a pod of this run's model and reset seed, loading a program into a queue, running
 * queues until they halt, checking that a run left no semaphore behind, running the firmware
 * GEMM and holding it to the golden model. Each asserts what it does (a chip that cannot be made, a program that does not load, a
 * run that fails stop the test with the reason), so a suite states only what it tests.
 * Header-only: every suite stays one object (make mutants relinks each alone).
 */
#ifndef CHIP_TEST_H
#define CHIP_TEST_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "chip/chip.h"
#include "fw/hal.h"
#include "golden/gemm_golden.h"
#include "pod/pod.h"
#include "runtime/chip_gemm.h"
#include "test_util.h"

/* A chip made from cfg as it is (its model and seed included). */
static inline chip_t *test_chip_new(const chip_config_t *cfg) {
  char err[1024];
  chip_t *c = chip_new(cfg, err, sizeof err);
  cr_assert_not_null(c, "%s", err);
  return c;
}

/* A rows x cols chip of one core and one MXU with 4 MiB of HBM moving hbm_bytes_per_cycle at
 * hbm_latency, this run's model and reset seed: what the chip suites build on. */
static inline chip_config_t test_chip_config(unsigned rows, unsigned cols, unsigned hbm_bytes_per_cycle,
                                             unsigned hbm_latency) {
  return (chip_config_t){.rows = rows, .cols = cols, .hbm_bytes = 1u << 22, .hbm_bytes_per_cycle = hbm_bytes_per_cycle,
                         .hbm_latency = hbm_latency, .seed = test_seed(), .model = test_model()};
}

/* The chip of test_chip_config with a size x size MXU. */
static inline chip_t *test_chip(unsigned size, unsigned hbm_bytes_per_cycle, unsigned hbm_latency) {
  const chip_config_t cfg = test_chip_config(size, size, hbm_bytes_per_cycle, hbm_latency);
  return test_chip_new(&cfg);
}

/* Loads p into queue `queue` of c; p stays the caller's (to load again or free). */
static inline void test_load(chip_t *c, int queue, const fw_prog_t *p) {
  char err[256];
  cr_assert(fw_prog_ok(p), "the program ran out of memory while it was built");
  cr_assert_eq(chip_load_program(c, queue, p->words, p->count, err, sizeof err), 0, "%s", err);
}

/* Loads p into queue `queue` of c and frees it: a program that runs once. */
static inline void test_load_once(chip_t *c, int queue, fw_prog_t *p) {
  test_load(c, queue, p);
  fw_prog_free(p);
}

/* Loads the program [HALT] into queue `queue` of c: a queue with nothing to do. */
static inline void test_load_halt(chip_t *c, int queue) {
  fw_prog_t p;
  fw_prog_init(&p);
  fw_halt(&p);
  test_load_once(c, queue, &p);
}

/* Runs the queues of `mask` until they halt, within max_cycles, and returns the run's cycles;
 * the run's status goes to *st when st is not NULL. A run that fails stops the test. */
static inline uint64_t test_run(chip_t *c, unsigned mask, uint64_t max_cycles, chip_status_t *st) {
  chip_status_t own;
  if (!st) st = &own;
  cr_assert_eq(chip_run(c, mask, max_cycles, st), 0, "%s", st->report);
  return st->cycles;
}

/* Loads cq into the compute queue and dq into the DMA queue, runs both to their HALTs within
 * max_cycles and returns the cycles (the status in *st when not NULL); the programs stay the
 * caller's. */
static inline uint64_t test_run_programs(chip_t *c, const fw_prog_t *cq, const fw_prog_t *dq, uint64_t max_cycles,
                                         chip_status_t *st) {
  test_load(c, ISA_QUEUE_COMPUTE, cq);
  test_load(c, ISA_QUEUE_DMA, dq);
  return test_run(c, ISA_QMASK_ALL, max_cycles, st);
}

/* Every semaphore of c's first core is back at zero: a program that consumed what it signalled. */
static inline void test_sems_zero(chip_t *c, const char *what) {
  for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
    cr_assert_eq(chip_sem(c, s), 0, "%s: semaphore %u left at %u", what, s, chip_sem(c, s));
}

/* Loads core k's programs cq[k] and dq[k] (each ending in HALT) into every core of c, runs them
 * all within max_cycles and returns the cycles; then every semaphore of every core must be back
 * at zero, and the programs are freed. */
static inline uint64_t test_run_cores(chip_t *c, fw_prog_t *cq, fw_prog_t *dq, uint64_t max_cycles) {
  const unsigned cores = isa_geometry_cores(chip_geometry(c));
  for (unsigned k = 0; k < cores; k++) {
    test_load(c, (int)(k * ISA_NUM_QUEUES + ISA_QUEUE_COMPUTE), &cq[k]);
    test_load(c, (int)(k * ISA_NUM_QUEUES + ISA_QUEUE_DMA), &dq[k]);
  }
  const uint64_t cycles = test_run(c, (1u << (ISA_NUM_QUEUES * cores)) - 1, max_cycles, NULL);
  for (unsigned k = 0; k < cores; k++) {
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
      cr_assert_eq(chip_sem(c, k * ISA_NUM_SEMS + s), 0, "core %u semaphore %u left at %u", k, s,
                   chip_sem(c, k * ISA_NUM_SEMS + s));
    fw_prog_free(&cq[k]);
    fw_prog_free(&dq[k]);
  }
  return cycles;
}

/* The firmware GEMM out = a x b (M x K by K x N) on c with opts (NULL: the defaults); returns its
 * cycles, its statistics in *st when st is not NULL. A GEMM that fails stops the test. */
static inline uint64_t test_chip_gemm(chip_t *c, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                                      uint32_t *out, const chip_gemm_opts_t *opts, chip_gemm_stats_t *st) {
  chip_gemm_stats_t own;
  if (!st) st = &own;
  char err[512];
  cr_assert_eq(chip_gemm(c, m, k, n, a, b, out, opts, st, err, sizeof err), 0, "M=%zu K=%zu N=%zu: %s", m, k, n, err);
  return st->cycles;
}

/* out, the firmware GEMM of a (M x K) by b (K x N) with opts (NULL: the defaults) on a chip of
 * `rows` x `rows` MXUs, is the golden model's to the bit (ReLU and bf16 output as opts say). */
static inline void test_gemm_matches_golden(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                                            const uint16_t *b, const chip_gemm_opts_t *opts, const uint32_t *out) {
  const bool relu = opts && opts->relu, bf16 = opts && opts->bf16_out;
  uint32_t *want = malloc(m * n * 4);
  gemm_golden(rows, m, k, n, a, b, relu, bf16, want);
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(out[i], want[i], "M=%zu K=%zu N=%zu%s%s%s%s C[%zu][%zu]: chip 0x%08x golden 0x%08x", m, k, n,
                 relu ? " relu" : "", bf16 ? " bf16" : "", opts && opts->a_transposed ? " A^T" : "",
                 opts && opts->b_transposed ? " B^T" : "", i / n, i % n, out[i], want[i]);
  free(want);
}

/* A pod made from cfg as it is. */
static inline pod_t *test_pod_new(const pod_config_t *cfg) {
  char err[1024];
  pod_t *p = pod_new(cfg, err, sizeof err);
  cr_assert_not_null(p, "%s", err);
  return p;
}

/* An x by y pod of size x size chips (test_machine: this run's model, seed and threads) with
 * links of latency `link` and 1 MiB of HBM a chip at 64 bytes a cycle, latency 10: what the
 * pod and remote-DMA suites build on. */
static inline pod_t *test_pod(unsigned size, unsigned x, unsigned y, unsigned link) {
  pod_config_t cfg = test_machine(x, y, size, size);
  cfg.link_latency = link, cfg.chip.hbm_bytes = 1u << 20, cfg.chip.hbm_bytes_per_cycle = 64, cfg.chip.hbm_latency = 10;
  return test_pod_new(&cfg);
}

#endif
