/*
 * Tests of a chip with two cores (rtl/chip_core.sv, chip_top's Cores; docs/isa.md, "Cores"),
 * on the 4x4 chip built with two cores of two MXUs each (CHIP_SIZES 4x4x2c2) under the model of
 * TPU_MODEL: each core's queues, semaphores, VMEM and HBM port its own, to the cycle
 * (docs/timing.md, "Cores"); remote DMA from one core to the other through
 * the chip's router, and the RDMA core field's error; the firmware GEMM over both cores,
 * bit-exact against the golden model. Run once per reset seed, on the fast model and in lockstep.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "golden/gemm_golden.h"
#include "runtime/chip_gemm.h"
#include "chip_test.h"
#include "util/rng.h"

enum { R = 4, LB = 4 * R, CORE1 = ISA_NUM_QUEUES };  /* a line's bytes; core 1's first queue */

static chip_t *make_chip(unsigned cores, unsigned bw, unsigned latency) {
  chip_config_t cfg = test_chip_config(R, R, bw, latency);
  cfg.mxus = 2, cfg.cores = cores;
  return test_chip_new(&cfg);
}

TestSuite(chip_cores, .timeout = 300);

/* Each core has its own queues, semaphores and VMEM: both run the same program at once on
 * their own lines (HBM -> VMEM -> HBM through different HBM regions), each semaphore of one
 * core untouched by the other's, and a one-core chip has no queue 2. */
Test(chip_cores, each_core_has_its_queues_semaphores_and_vmem) {
  chip_t *c = make_chip(2, 16, 5);
  uint8_t in[2][8 * LB], out[2][8 * LB];
  for (unsigned k = 0; k < 2; k++) {
    for (unsigned i = 0; i < sizeof in[k]; i++) in[k][i] = (uint8_t)(i * 7 + k * 101);
    cr_assert_eq(chip_hbm_write(c, 0x1000 * (k + 1), in[k], sizeof in[k]), 0);
  }
  for (unsigned k = 0; k < 2; k++) {
    fw_prog_t dq, cq;
    fw_prog_init(&dq);
    fw_prog_init(&cq);
    /* the same lines on both cores: each core's VMEM is its own */
    fw_dma_hbm_to_vmem(&dq, 3, 1, 0x1000 * (k + 1), LB, 40, 8, LB);
    fw_sem_wait(&dq, 3, 1);
    fw_sem_signal(&dq, 9, 5 + k);  /* left behind: each core's semaphore 9 shows its own */
    fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, 40, 0x10000 * (k + 1), LB, 8, LB);
    fw_halt(&dq);
    fw_sem_signal(&cq, 4, 1);
    fw_sem_wait(&cq, 4, 1);
    fw_halt(&cq);
    test_load_once(c, (int)(k * CORE1 + ISA_QUEUE_DMA), &dq);
    test_load_once(c, (int)(k * CORE1 + ISA_QUEUE_COMPUTE), &cq);
  }
  test_run(c, CHIP_QMASK_EVERY_CORE, 100000, NULL);
  for (unsigned k = 0; k < 2; k++) {
    cr_assert_eq(chip_hbm_read(c, 0x10000 * (k + 1), out[k], sizeof out[k]), 0);
    cr_assert_eq(memcmp(out[k], in[k], sizeof in[k]), 0, "core %u moved its own lines", k);
    cr_assert_eq(chip_sem(c, k * ISA_NUM_SEMS + 9), 5 + k, "core %u's semaphore 9", k);
    cr_assert_eq(chip_sem(c, k * ISA_NUM_SEMS + 3), 0);
  }
  chip_free(c);
  chip_t *one = make_chip(1, 16, 5);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(one, CORE1, p.words, p.count, err, sizeof err), -1);
  cr_assert(strstr(err, "no queue 2") != NULL, "%s", err);
  fw_prog_free(&p);
  chip_free(one);
}

/* Each core has its own HBM port, with its share of the chip's bandwidth (B / cores), into the
 * one memory (docs/timing.md, "Cores"): [DMA of `rows` rows of n bytes; FENCE; HALT] takes
 * (rows - 1) ceil(n / (B / cores)) + L + 6 cycles on one core alone and the same on both at
 * once; what one core writes the other reads. */
Test(chip_cores, each_core_has_its_own_hbm_port_to_the_cycle) {
  static const unsigned rows_of[] = {1, 2, 7, 16};
  static const unsigned lat_of[] = {1, 5, 40};
  static const unsigned bw_of[] = {2 * LB, LB};  /* a port's share: a row a cycle, a row in two */
  for (size_t i = 0; i < sizeof rows_of / sizeof *rows_of; i++)
    for (size_t j = 0; j < sizeof lat_of / sizeof *lat_of; j++)
      for (size_t b = 0; b < sizeof bw_of / sizeof *bw_of; b++) {
        const unsigned rows = rows_of[i], L = lat_of[j], per_row = (LB + bw_of[b] / 2 - 1) / (bw_of[b] / 2);
        uint64_t cycles[2];
        for (unsigned both = 0; both < 2; both++) {
          chip_t *c = make_chip(2, bw_of[b], L);
          for (unsigned k = 0; k <= both; k++) {
            fw_prog_t dq;
            fw_prog_init(&dq);
            fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 0x1000 * k, LB, 0, rows, LB);
            fw_fence(&dq);
            fw_halt(&dq);
            test_load_once(c, (int)(k * CORE1 + ISA_QUEUE_DMA), &dq);
          }
          cycles[both] = test_run(c, both ? (ISA_QMASK_DMA | ISA_QMASK_DMA << CORE1) : ISA_QMASK_DMA, 100000, NULL);
          chip_free(c);
        }
        const uint64_t want = (uint64_t)(rows - 1) * per_row + L + 6;
        cr_assert_eq(cycles[0], want, "rows %u, L %u, B %u: one core %llu, contract %llu", rows, L, bw_of[b],
                     (unsigned long long)cycles[0], (unsigned long long)want);
        cr_assert_eq(cycles[1], want, "rows %u, L %u, B %u: both cores %llu, contract %llu", rows, L, bw_of[b],
                     (unsigned long long)cycles[1], (unsigned long long)want);
      }
  /* one memory: core 0 writes HBM through its port, then core 1 reads it through its own */
  chip_t *c = make_chip(2, 2 * LB, 5);
  uint8_t in[4 * LB], out[4 * LB];
  for (unsigned i = 0; i < sizeof in; i++) in[i] = (uint8_t)(3 * i + 1);
  cr_assert_eq(chip_hbm_write(c, 0x1000, in, sizeof in), 0);
  fw_prog_t d0, d1;
  fw_prog_init(&d0);
  fw_prog_init(&d1);
  fw_dma_hbm_to_vmem(&d0, ISA_SEM_NONE, 0, 0x1000, LB, 0, 4, LB);
  fw_fence(&d0);
  fw_dma_vmem_to_hbm(&d0, ISA_SEM_NONE, 0, 0, 0x8000, LB, 4, LB);
  fw_fence(&d0);
  fw_halt(&d0);
  fw_dma_hbm_to_vmem(&d1, ISA_SEM_NONE, 0, 0x8000, LB, 20, 4, LB);
  fw_fence(&d1);
  fw_dma_vmem_to_hbm(&d1, ISA_SEM_NONE, 0, 20, 0x9000, LB, 4, LB);
  fw_fence(&d1);
  fw_halt(&d1);
  test_load_once(c, ISA_QUEUE_DMA, &d0);
  test_run(c, ISA_QMASK_DMA, 100000, NULL);
  test_load_once(c, CORE1 + ISA_QUEUE_DMA, &d1);
  test_run(c, ISA_QMASK_DMA << CORE1, 100000, NULL);
  cr_assert_eq(chip_hbm_read(c, 0x9000, out, sizeof out), 0);
  cr_assert_eq(memcmp(out, in, sizeof in), 0, "core 1 read what core 0 wrote");
  chip_free(c);
}

/* An RDMA to this chip's own (x, y) naming the other core goes out through the router and
 * back (ejecting at local port 0) into that core's VMEM and semaphore: core 0 sends its lines
 * to core 1 while core 1 sends its own to core 0, both on engine 0 at once (core 0's taken
 * first); each core waits for its lines and writes them to HBM. */
Test(chip_cores, an_rdma_carries_lines_to_the_other_core) {
  chip_t *c = make_chip(2, 16, 5);
  uint8_t in[2][6 * LB], out[2][6 * LB];
  for (unsigned k = 0; k < 2; k++) {
    for (unsigned i = 0; i < sizeof in[k]; i++) in[k][i] = (uint8_t)(i * 13 + k * 59 + 1);
    cr_assert_eq(chip_hbm_write(c, 0x1000 * (k + 1), in[k], sizeof in[k]), 0);
  }
  for (unsigned k = 0; k < 2; k++) {
    fw_prog_t dq;
    fw_prog_init(&dq);
    fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 0x1000 * (k + 1), LB, 10, 6, LB);
    fw_fence(&dq);
    fw_raw(&dq, (uint32_t[ISA_CMD_WORDS]){0});  /* the RDMA, written below with its core field */
    fw_sem_wait(&dq, 7, 6);                     /* the other core's six lines have landed here */
    fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, 100, 0x10000 * (k + 1), LB, 6, LB);
    fw_halt(&dq);
    fw_prog_t r;
    fw_prog_init(&r);
    fw_rdma(&r, 0, 0, 10, 100, 6, 7, 1, ISA_SEM_NONE, 0);
    ISA_PUT(r.words, RDMA, core, 1 - k);
    memcpy(dq.words + 2 * ISA_CMD_WORDS, r.words, ISA_CMD_WORDS * 4);
    fw_prog_free(&r);
    test_load_once(c, (int)(k * CORE1 + ISA_QUEUE_DMA), &dq);
  }
  test_run(c, ISA_QMASK_DMA | ISA_QMASK_DMA << CORE1, 100000, NULL);
  for (unsigned k = 0; k < 2; k++) {
    cr_assert_eq(chip_hbm_read(c, 0x10000 * (k + 1), out[k], sizeof out[k]), 0);
    cr_assert_eq(memcmp(out[k], in[1 - k], sizeof out[k]), 0, "core %u holds core %u's lines", k, 1 - k);
    cr_assert_eq(chip_sem(c, k * ISA_NUM_SEMS + 7), 0);
  }
  chip_free(c);
}

/* The RDMA core field names a core of the destination chip: past the chip's cores it is error
 * 8 (REMOTE) at that command, on a one-core chip (core 1) as on a two-core one (core 2). */
Test(chip_cores, an_rdma_to_a_core_past_the_chip_is_error_8) {
  for (unsigned cores = 1; cores <= 2; cores++) {
    chip_t *c = make_chip(cores, 16, 5);
    fw_prog_t dq;
    fw_prog_init(&dq);
    fw_rdma(&dq, 0, 0, 0, 8, 1, ISA_SEM_NONE, 0, ISA_SEM_NONE, 0);
    ISA_PUT(dq.words, RDMA, core, cores);
    fw_halt(&dq);
    test_load_once(c, ISA_QUEUE_DMA, &dq);
    chip_status_t st;
    cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), -1);
    cr_assert_eq(st.error[ISA_QUEUE_DMA], ISA_ERR_REMOTE, "%u cores: %s", cores, st.report);
    cr_assert_eq(st.pc[ISA_QUEUE_DMA], 0);
    chip_free(c);
  }
}

/* The firmware GEMM over both cores (each core its share of A's rows, over its two MXUs):
 * every bit as the golden model's, both cores' semaphores back at zero, one compute cycle per
 * activation row per tile in all; and on a tall GEMM (256 x 64 x 64, HBM at 64 bytes a
 * cycle) the two cores together take at most 0.62 of one core's cycles (measured: 0.59). */
Test(chip_cores, gemm_over_two_cores_matches_golden) {
  const size_t shapes[][3] = {{1, 1, 1}, {2, 5, 3}, {13, 23, 10}, {40, 64, 48}, {7, 5, 33}, {33, 100, 17}, {70, 48, 36}};
  const chip_gemm_opts_t variants[] = {{0}, {.relu = true, .bf16_out = true}, {.b_transposed = true},
                                       {.a_transposed = true}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 29 + 3);
  chip_t *c = make_chip(2, 16, 7);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
      const size_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
      if (v > 0 && i % 2) continue;
      uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
      uint32_t *out = malloc(m * n * 4);
      for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -4, 3);
      for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -4, 3);
      chip_gemm_stats_t st;
      test_chip_gemm(c, m, k, n, a, b, out, &variants[v], &st);
      test_gemm_matches_golden(R, m, k, n, a, b, &variants[v], out);
      for (unsigned s = 0; s < 2 * ISA_NUM_SEMS; s++)
        cr_assert_eq(chip_sem(c, s), 0, "core %u's semaphore %u left at %u", s / ISA_NUM_SEMS, s % ISA_NUM_SEMS,
                     chip_sem(c, s));
      cr_assert_eq(st.compute, (uint64_t)((k + R - 1) / R) * ((n + R - 1) / R) * m);
      free(a), free(b), free(out);
    }
  chip_free(c);
  const size_t m = 256, k = 64, n = 64;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4);
  for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -4, 3);
  for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -4, 3);
  uint64_t cycles[2];
  for (unsigned cores = 1; cores <= 2; cores++) {
    chip_t *x = make_chip(cores, 64, 7);
    cycles[cores - 1] = test_chip_gemm(x, m, k, n, a, b, out, NULL, NULL);
    chip_free(x);
  }
  cr_assert_leq(cycles[1] * 100, cycles[0] * 62, "two cores %llu cycles, one %llu", (unsigned long long)cycles[1],
                (unsigned long long)cycles[0]);
  free(a), free(b), free(out);
}
