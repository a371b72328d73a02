/*
 * RTL tests of the chip (rtl/chip_*.sv through csim/chip.c and the firmware in fw/):
 * GEMMs of many shapes through HBM, bit-exact against the golden model; the DMA timing
 * contract of docs/isa.md to the cycle; semaphore ordering between the queues; every
 * error path of the command processor; the timeout report. Run once per reset seed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "chip_gemm.h"
#include "hal.h"
#include "mxu_golden.h"
#include "rng.h"
#include "test_util.h"

static chip_t *make_chip(unsigned size, unsigned bw, unsigned latency) {
  chip_config_t cfg = {size, size, 1u << 22, bw, latency, test_seed()};
  char err[256];
  chip_t *c = chip_new(&cfg, err, sizeof err);
  cr_assert_not_null(c, "%s", err);
  return c;
}

static void check_gemm(chip_t *c, size_t m, size_t k, size_t n, rng_t *rng) {
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4), *want = malloc(m * n * 4);
  for (size_t i = 0; i < m * k; i++) a[i] = rng_bf16(rng, -5, 3);
  for (size_t i = 0; i < k * n; i++) b[i] = rng_bf16(rng, -5, 3);
  chip_gemm_stats_t st;
  char err[512];
  cr_assert_eq(chip_gemm(c, m, k, n, a, b, out, &st, err, sizeof err), 0, "M=%zu K=%zu N=%zu: %s", m, k, n, err);
  mxu_golden_gemm(chip_geometry(c)->rows, m, k, n, a, b, want);
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(out[i], want[i], "M=%zu K=%zu N=%zu C[%zu][%zu]: chip 0x%08x golden 0x%08x", m, k, n, i / n, i % n,
                 out[i], want[i]);
  cr_assert_gt(st.hbm_bytes, 0);
  for (unsigned s = 0; s < 32; s++) cr_assert_eq(chip_sem(c, s), 0, "semaphore %u left at %u", s, chip_sem(c, s));
  cr_assert_eq(st.compute, ((k + chip_geometry(c)->rows - 1) / chip_geometry(c)->rows) *
                               ((n + chip_geometry(c)->cols - 1) / chip_geometry(c)->cols) * m,
               "one compute cycle per activation row per tile");
  free(a), free(b), free(out), free(want);
}

TestSuite(chip_rtl, .timeout = 300);

Test(chip_rtl, gemm_shapes_through_hbm_4x4) {
  chip_t *c = make_chip(4, 16, 7);
  rng_t rng;
  rng_seed(&rng, test_seed() * 3 + 1);
  const size_t shapes[][3] = {{1, 1, 1}, {4, 4, 4}, {3, 5, 7}, {7, 9, 5}, {1, 17, 2}, {16, 16, 16},
                              {9, 8, 31}, {33, 3, 4}, {5, 40, 9}, {2, 2, 64}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) check_gemm(c, shapes[i][0], shapes[i][1], shapes[i][2], &rng);
  chip_free(c);
}

Test(chip_rtl, gemm_shapes_through_hbm_16x16) {
  chip_t *c = make_chip(16, 64, 20);
  rng_t rng;
  rng_seed(&rng, test_seed() * 5 + 2);
  const size_t shapes[][3] = {{16, 16, 16}, {100, 70, 130}, {1, 300, 17}, {64, 33, 64}, {300, 16, 40}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) check_gemm(c, shapes[i][0], shapes[i][1], shapes[i][2], &rng);
  chip_free(c);
}

Test(chip_rtl, gemm_with_narrow_slow_hbm) {
  chip_t *c = make_chip(4, 4, 50);
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 3);
  check_gemm(c, 13, 11, 10, &rng);
  chip_free(c);
}

/* DMA timing contract (docs/isa.md): the program [DMA of `rows` rows of n bytes; FENCE;
 * HALT] runs (rows - 1) * ceil(n / B) + L + 6 cycles when n <= B or B divides n. */
Test(chip_rtl, dma_timing_contract) {
  const unsigned rows_l[] = {1, 5, 64}, bytes_l[] = {4, 16, 64}, bw_l[] = {64, 16, 8}, lat_l[] = {1, 10, 100};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int i = 0; i < 3; i++)
        for (int d = 0; d < 3; d++) {
          unsigned rows = rows_l[a], n = bytes_l[b], bw = bw_l[i], lat = lat_l[d];
          chip_t *c = make_chip(16, bw, lat);
          fw_prog_t p;
          fw_prog_init(&p);
          fw_dma_hbm_to_vmem(&p, 1, 1, 0, 64, 0, rows, n);
          fw_fence(&p);
          fw_halt(&p);
          char err[256];
          cr_assert_eq(chip_load_program(c, CHIP_QUEUE_DMA, p.words, p.count, err, sizeof err), 0);
          chip_status_t st;
          cr_assert_eq(chip_run(c, 2, 100000, &st), 0, "%s", st.report);
          uint64_t per = n <= bw ? 1 : n / bw;
          cr_assert_eq(st.cycles, (rows - 1) * per + lat + 6, "rows %u bytes %u B %u L %u: %llu cycles", rows, n,
                       bw, lat, (unsigned long long)st.cycles);
          cr_assert_eq(chip_sem(c, 1), 1, "the DMA signalled its semaphore");
          cr_assert_eq(st.hbm_bytes, (uint64_t)rows * n);
          fw_prog_free(&p);
          chip_free(c);
        }
}

Test(chip_rtl, dma_round_trip_zero_fills_and_orders) {
  chip_t *c = make_chip(4, 16, 10);
  uint8_t src[256];
  for (int i = 0; i < 256; i++) src[i] = (uint8_t)(i * 7 + 1);
  cr_assert_eq(chip_hbm_write(c, 0, src, sizeof src), 0);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_dma_hbm_to_vmem(&p, FW_SEM_NONE, 0, 0, 16, 10, 8, 12);       /* 8 rows of 12 bytes */
  fw_dma_vmem_to_vmem(&p, FW_SEM_NONE, 0, 10, 100, 8);             /* copy the lines */
  fw_dma_vmem_to_hbm(&p, 4, 1, 100, 4096, 16, 8, 16);              /* whole lines back */
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(c, CHIP_QUEUE_DMA, p.words, p.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, 2, 10000, &st), 0, "%s", st.report);
  uint8_t out[128];
  cr_assert_eq(chip_hbm_read(c, 4096, out, sizeof out), 0);
  for (int r = 0; r < 8; r++)
    for (int i = 0; i < 16; i++)
      cr_assert_eq(out[16 * r + i], i < 12 ? src[16 * r + i] : 0, "row %d byte %d", r, i);
  cr_assert_eq(chip_sem(c, 4), 1);
  fw_prog_free(&p);
  chip_free(c);
}

Test(chip_rtl, semaphores_order_the_queues) {
  /* The compute queue waits for 2 on semaphore 5; the DMA queue adds 1, moves data (slow
   * HBM), adds 1 more. Both halt; the wait consumed both signals. */
  chip_t *c = make_chip(4, 4, 200);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_sem_wait(&cq, 5, 2);
  fw_sem_signal(&cq, 6, 3);
  fw_halt(&cq);
  fw_sem_signal(&dq, 5, 1);
  fw_dma_hbm_to_vmem(&dq, 5, 1, 0, 16, 0, 4, 16);
  fw_sem_wait(&dq, 6, 3);
  fw_halt(&dq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
  cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, 3, 10000, &st), 0, "%s", st.report);
  cr_assert(st.halted[0] && st.halted[1]);
  cr_assert_eq(chip_sem(c, 5), 0);
  cr_assert_eq(chip_sem(c, 6), 0);
  /* the wait could only pass after the DMA: latency 200 */
  cr_assert_gt(st.cycles, 200);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

Test(chip_rtl, unsatisfiable_wait_times_out_with_a_report) {
  chip_t *c = make_chip(4, 16, 5);
  fw_prog_t cq;
  fw_prog_init(&cq);
  fw_sem_signal(&cq, 7, 1);
  fw_sem_wait(&cq, 7, 2);
  fw_halt(&cq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, 1, 2000, &st), -1);
  cr_assert(st.timed_out);
  cr_assert(strstr(st.report, "compute queue still at command 1 (SEM_WAIT on semaphore 7 for 2; it holds 1)"), "%s",
            st.report);
  fw_prog_free(&cq);
  chip_free(c);
}

/* Runs a one-command program (then HALT) on a queue and returns the error code. */
static unsigned run_error(int queue, const uint32_t w[8], char *report, size_t len) {
  chip_t *c = make_chip(4, 16, 5);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_raw(&p, w);
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(c, queue, p.words, p.count, err, sizeof err), 0);
  chip_status_t st;
  int rc = chip_run(c, 1u << queue, 1000, &st);
  snprintf(report, len, "%s", st.report);
  unsigned code = st.error[queue];
  cr_assert(code == 0 || (rc == -1 && !st.running[queue] && !st.halted[queue] && st.pc[queue] == 0),
            "an error stops the queue at the command: %s", st.report);
  fw_prog_free(&p);
  chip_free(c);
  return code;
}

Test(chip_rtl, every_error_path_stops_the_queue) {
  /* 4x4 chip: VMEM 4096 lines of 16 bytes, accumulator 4096 rows, HBM 4 MiB. */
  struct {
    int queue;
    uint32_t w[8];
    unsigned code;
    const char *what;
  } cases[] = {
      {0, {0x77}, 1, "illegal opcode"},
      {1, {0x00}, 1, "zero command"},
      {0, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 16}, 2, "DMA in the compute queue"},
      {1, {0x20, 0, 0}, 2, "MXU_LOAD in the DMA queue"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 4090, 7, 16}, 3, "DMA past the end of VMEM"},
      {1, {0x10 | 1u << 8, 0, 2, 4095, 0, 0, 2, 4}, 3, "VMEM->VMEM destination past the end"},
      {1, {0x10 | 1u << 8, 0, 0, (1u << 22) - 8, 16, 0, 1, 16}, 4, "DMA past the end of HBM"},
      {1, {0x10 | 1u << 8, 0, 1, 0, 0x40000000u, 0, 3, 16}, 4, "stride past the end of HBM"},
      {0, {0x21, 0, 0, 10, 4090, 0}, 5, "MATMUL past the accumulator"},
      {0, {0x22, 0, 4095, 2, 0}, 5, "STORE past the accumulator"},
      {0, {0x21, 0, 4090, 10, 0, 0}, 3, "MATMUL activations past VMEM"},
      {0, {0x20, 0, 4093}, 3, "LOAD weights past VMEM"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 0, 16}, 6, "zero rows"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 6}, 6, "bytes not a multiple of 4"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 20}, 6, "bytes beyond a line"},
      {1, {0x10 | 1u << 8, 0, 3, 0, 16, 0, 1, 16}, 6, "unknown DMA kind"},
      {0, {0x21, 0, 0, 0, 0, 0}, 6, "MATMUL of zero rows"},
      {0, {0x03 | 40u << 8, 1}, 7, "semaphore out of range"},
      {1, {0x10 | 40u << 8, 1, 0, 0, 16, 0, 1, 16}, 7, "DMA completion semaphore out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char report[512];
    unsigned code = run_error(cases[i].queue, cases[i].w, report, sizeof report);
    cr_expect_eq(code, cases[i].code, "%s: error %u, expected %u (%s)", cases[i].what, code, cases[i].code, report);
    cr_expect(strstr(report, "stopped with error"), "%s: %s", cases[i].what, report);
  }
}

Test(chip_rtl, program_without_halt_runs_off_the_end) {
  chip_t *c = make_chip(4, 16, 5);
  const chip_geometry_t *g = chip_geometry(c);
  fw_prog_t p;
  fw_prog_init(&p);
  for (unsigned i = 0; i < g->queue_depth; i++) fw_sem_signal(&p, 1, 1);
  char err[256];
  cr_assert_eq(chip_load_program(c, 1, p.words, p.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, 2, 100000, &st), -1);
  cr_assert_eq(st.error[1], 1, "ran off the end of the command memory");
  fw_sem_signal(&p, 1, 1);
  cr_assert_eq(chip_load_program(c, 1, p.words, p.count, err, sizeof err), -1);
  cr_assert(strstr(err, "does not fit"), "%s", err);
  fw_prog_free(&p);
  chip_free(c);
}
