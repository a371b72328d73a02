/*
 * The worked example of docs/kernels.md: the line_sum kernel (fw/line_sum.c) on RTL chips,
 * bit-exact against its golden model (csim/golden/line_sum_golden.c). On one chip for many
 * row counts and chunk sizes; on a slice, where every chip sums its own rows, a barrier
 * separates the kernels, and an all-reduce adds the chips' sums (golden: coll_golden over
 * the golden per-chip sums). Every semaphore ends at zero. Set LINE_SUM_TRACE=FILE.fst to
 * write the waveform of the first single-chip run (docs/kernels.md, "Look at it").
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fw/collective.h"
#include "fw/hal.h"
#include "fw/line_sum.h"
#include "golden/coll_golden.h"
#include "golden/line_sum_golden.h"
#include "chip/chip.h"
#include "pod/pod.h"
#include "chip_test.h"
#include "util/rng.h"

TestSuite(line_sum, .timeout = 300);

/* Random fp32 values of both signs over a few binades, so sums round. */
static void random_lines(rng_t *r, uint32_t *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t x = rng_next(r);
    v[i] = (uint32_t)((x >> 40) & 0x807FFFFFu) | (uint32_t)(124 + (x >> 8) % 8) << 23;
  }
}

/* Runs line_sum of `rows` lines (chunk 0: the kernel's choice) on chip c and returns the
 * result line in out; checks that every semaphore is back at zero. */
static void run_on_chip(chip_t *c, const uint32_t *in, uint32_t rows, uint32_t chunk, uint32_t *out) {
  const chip_geometry_t *g = chip_geometry(c);
  const uint32_t line = 4 * g->cols, out_addr = rows * line;
  cr_assert_eq(chip_hbm_write(c, 0, in, (size_t)rows * line), 0);
  fw_line_sum_args_t a = {.src = 0, .rows = rows, .chunk_lines = chunk, .vmem_line = 0};
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  char err[256];
  cr_assert_eq(fw_line_sum(g, &a, &cq, &dq, err, sizeof err), 0, "%s", err);
  /* the caller stores the result and halts */
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, fw_line_sum_result_line(g, &a), out_addr, line, 1, line);
  fw_fence(&dq);
  fw_halt(&dq);
  fw_halt(&cq);
  test_load(c, ISA_QUEUE_COMPUTE, &cq);
  test_load(c, ISA_QUEUE_DMA, &dq);
  chip_status_t st;
  test_run(c, ISA_QMASK_ALL, 10000000, &st);
  cr_assert_eq(chip_hbm_read(c, out_addr, out, line), 0);
  test_sems_zero(c, "after line_sum");
  fw_prog_free(&cq);
  fw_prog_free(&dq);
}

static void check_chip(unsigned size, const uint32_t *rows_list, size_t nrows, uint32_t chunk, const char *trace) {
  chip_config_t cfg = chip_config_default(size, size);
  cfg.seed = test_seed();
  cfg.model = test_model();
  chip_t *c = test_chip_new(&cfg);
  char err[256];
  if (trace) cr_assert_eq(chip_trace(c, trace, err, sizeof err), 0, "%s", err);
  rng_t r;
  rng_seed(&r, test_seed() * 31 + size);
  for (size_t t = 0; t < nrows; t++) {
    const uint32_t rows = rows_list[t];
    uint32_t *in = malloc((size_t)rows * size * 4), got[128], want[128];
    random_lines(&r, in, (size_t)rows * size);
    run_on_chip(c, in, rows, chunk, got);
    /* the documented chunk: the one asked for, else 256 lines (VMEM has room for two) */
    const uint32_t want_chunk = chunk ? chunk : rows < 256 ? rows : 256;
    fw_line_sum_args_t a = {.rows = rows, .chunk_lines = chunk};
    cr_assert_eq(fw_line_sum_chunk(chip_geometry(c), &a), want_chunk);
    cr_assert_eq(line_sum_golden(size, rows, want_chunk, in, want), 0);
    for (unsigned l = 0; l < size; l++)
      cr_assert_eq(got[l], want[l], "%ux%u chip, %u rows, chunk %u: lane %u is 0x%08x, golden 0x%08x", size, size, rows,
                   chunk, l, got[l], want[l]);
    free(in);
  }
  chip_free(c);
}

Test(line_sum, on_a_chip_with_the_default_chunk) {
  static const uint32_t rows[] = {1, 2, 3, 7, 64, 255, 256, 257, 1000};
  check_chip(4, rows, sizeof rows / sizeof rows[0], 0, getenv("LINE_SUM_TRACE"));
  check_chip(16, rows, sizeof rows / sizeof rows[0], 0, NULL);
}

Test(line_sum, on_a_chip_with_small_and_odd_chunks) {
  static const uint32_t rows[] = {1, 5, 6, 23, 100};
  check_chip(4, rows, sizeof rows / sizeof rows[0], 1, NULL);
  check_chip(4, rows, sizeof rows / sizeof rows[0], 5, NULL);
  check_chip(4, rows, sizeof rows / sizeof rows[0], 7, NULL);
}

Test(line_sum, bad_arguments_are_refused) {
  chip_geometry_t g;
  cr_assert_eq(chip_top_geometry(4, 4, 1, 1, &g), 0);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  char err[256];
  fw_line_sum_args_t none = {.rows = 0};
  cr_expect_eq(fw_line_sum(&g, &none, &cq, &dq, err, sizeof err), -1);
  cr_expect(strstr(err, "at least one row"), "%s", err);
  fw_line_sum_args_t big = {.rows = 10, .chunk_lines = g.vmem_lines};
  cr_expect_eq(fw_line_sum(&g, &big, &cq, &dq, err, sizeof err), -1);
  cr_expect(strstr(err, "do not fit VMEM"), "%s", err);
  fw_line_sum_args_t huge = {.rows = 10, .chunk_lines = 0x80000000u};  /* 2 chunks would wrap 32 bits */
  cr_expect_eq(fw_line_sum(&g, &huge, &cq, &dq, err, sizeof err), -1);
  cr_expect(strstr(err, "do not fit VMEM"), "%s", err);
  fw_line_sum_args_t late = {.rows = 10, .vmem_line = g.vmem_lines - 1};  /* no room left for buffers */
  cr_expect_eq(fw_line_sum(&g, &late, &cq, &dq, err, sizeof err), -1);
  cr_expect(strstr(err, "do not fit VMEM"), "%s", err);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
}

/* On a w x h slice of a pod: line_sum on every chip, a barrier, an all-reduce of the one
 * result line, the store. Row y of the slice sums rows + y * extra lines, so the first row
 * of chips finishes early and enters the barrier (and then the all-reduce) while the others
 * still sum: the barrier keeps the collective's remote signals (semaphores 0..29) away from
 * chips still inside line_sum (16..20), docs/kernels.md. */
static void check_slice(unsigned pw, unsigned ph, fw_slice_t s, uint32_t rows, uint32_t extra) {
  const unsigned size = 4, lanes = 4, chips = s.w * s.h, line = 4 * lanes;
  pod_config_t pc = {.size_x = pw, .size_y = ph, .link_latency = 1, .chip = chip_config_default(size, size), .threads = test_threads(ph)};
  pc.chip.seed = test_seed();
  pc.chip.model = test_model();
  char err[2048];
  pod_t *pod = pod_new(&pc, err, sizeof err);
  cr_assert_not_null(pod, "%s", err);
  cr_assert_eq(pod_set_slice(pod, s.x0, s.y0, s.w, s.h), 0);
  /* pod_run starts every chip: the ones outside the slice just halt */
  fw_prog_t halt;
  fw_prog_init(&halt);
  fw_halt(&halt);
  for (unsigned y = 0; y < ph; y++)
    for (unsigned x = 0; x < pw; x++)
      for (int q = 0; q < ISA_NUM_QUEUES; q++)
        cr_assert_eq(chip_load_program(pod_chip(pod, x, y), q, halt.words, halt.count, err, sizeof err), 0, "%s", err);
  fw_prog_free(&halt);
  const chip_geometry_t *g = chip_geometry(pod_chip(pod, s.x0, s.y0));
  const uint32_t most = rows + (s.h - 1) * extra, out_addr = most * line;
  /* the all-reduce needs its line at the same place on every chip: one chunk size for all */
  fw_line_sum_args_t a = {.src = 0, .rows = most, .chunk_lines = 256, .vmem_line = 0};
  const uint32_t result = fw_line_sum_result_line(g, &a);
  const fw_coll_args_t ar = {FW_COLL_ALLREDUCE, FW_COLL_RING, result, 1, 1, 0, false};
  uint32_t *in = malloc((size_t)chips * most * lanes * 4), sums[64 * 4], want[64 * 4];
  rng_t r;
  rng_seed(&r, test_seed() * 7 + rows);
  random_lines(&r, in, (size_t)chips * most * lanes);
  for (unsigned i = 0; i < chips; i++) {
    const unsigned x = s.x0 + i % s.w, y = s.y0 + i / s.w;
    const uint32_t *mine = in + (size_t)i * most * lanes;
    chip_t *c = pod_chip(pod, x, y);
    a.rows = rows + (i / s.w) * extra;
    cr_assert_eq(fw_line_sum_result_line(g, &a), result);
    cr_assert_eq(chip_hbm_write(c, 0, mine, (size_t)a.rows * line), 0);
    fw_prog_t cq, dq;
    fw_prog_init(&cq);
    fw_prog_init(&dq);
    cr_assert_eq(fw_line_sum(g, &a, &cq, &dq, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fw_barrier(&s, x, y, result + 1 + fw_coll_scratch_lines(&ar), &cq, &dq, err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(fw_collective(g, &s, &ar, x, y, &cq, &dq, err, sizeof err), 0, "%s", err);
    fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, result, out_addr, line, 1, line);
    fw_fence(&dq);
    fw_halt(&cq);
    fw_halt(&dq);
    test_load(c, ISA_QUEUE_COMPUTE, &cq);
    test_load(c, ISA_QUEUE_DMA, &dq);
    fw_prog_free(&cq);
    fw_prog_free(&dq);
    /* golden: this chip's sum */
    cr_assert_eq(line_sum_golden(lanes, a.rows, fw_line_sum_chunk(g, &a), mine, sums + i * lanes), 0);
  }
  uint64_t cycles;
  cr_assert_eq(pod_run(pod, ISA_QMASK_ALL, 10000000, &cycles, err, sizeof err), 0, "%s", err);
  /* golden: the all-reduce of the chips' sums, in the collective's order */
  fw_coll_args_t ga = ar;
  ga.data_line = 0;
  coll_golden(&s, &ga, lanes, sums, want);
  for (unsigned i = 0; i < chips; i++) {
    chip_t *c = pod_chip(pod, s.x0 + i % s.w, s.y0 + i / s.w);
    uint32_t got[4];
    cr_assert_eq(chip_hbm_read(c, out_addr, got, line), 0);
    for (unsigned l = 0; l < lanes; l++)
      cr_assert_eq(got[l], want[i * lanes + l], "%ux%u slice, %u rows: chip %u lane %u is 0x%08x, golden 0x%08x", s.w,
                   s.h, rows, i, l, got[l], want[i * lanes + l]);
    for (unsigned k = 0; k < ISA_NUM_SEMS; k++) cr_assert_eq(chip_sem(c, k), 0, "chip %u semaphore %u", i, k);
  }
  free(in);
  pod_free(pod);
}

Test(line_sum, on_a_slice_then_all_reduced) {
  check_slice(2, 2, (fw_slice_t){0, 0, 2, 2, 2, 2}, 300, 0);
  check_slice(2, 2, (fw_slice_t){0, 0, 2, 2, 2, 2}, 20, 3000);
  check_slice(4, 2, (fw_slice_t){1, 0, 3, 2, 4, 2}, 77, 2000);
}
