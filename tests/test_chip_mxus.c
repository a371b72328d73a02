/*
 * Tests of a core with several MXUs (rtl/chip_top.sv Mxus; docs/isa.md, "MXUs"), on the 4x4
 * chip built with two (CHIP_SIZES 4x4x2) under the model of TPU_MODEL: the MXU field and its
 * error; two MXUs working side by side to the cycle (the timing contract of docs/timing.md,
 * "Several MXUs"); the compute queue's release fences and the vector unit waiting for every
 * MXU; the firmware GEMM over both MXUs, bit-exact against the golden model, with its cycles
 * held to one MXU's share. Run once per reset seed, and on the fast model and in lockstep.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "golden/gemm_golden.h"
#include "golden/mxu_golden.h"
#include "runtime/chip_gemm.h"
#include "runtime/mxu_driver.h"
#include "chip_test.h"
#include "util/rng.h"

enum { R = 4, HBM_IN = 0, HBM_OUT = 1u << 20, W0 = 0, W1 = 4, ACT = 8, OUT0 = 100, OUT1 = 200, MARK = 0x7F7F7F7Fu };

static chip_t *make_chip(unsigned mxus) {
  chip_config_t cfg = test_chip_config(R, R, 16, 7);
  cfg.mxus = mxus;
  return test_chip_new(&cfg);
}

/* VMEM from HBM: two weight tiles (lines W0, W1: R rows of R bf16), M activation rows (line
 * ACT), and a marker in the output lines, so a store that has not landed shows. */
static void stage(chip_t *c, const uint16_t *w0, const uint16_t *w1, const uint16_t *act, uint32_t m) {
  const uint32_t lb = 4 * R;
  uint8_t *img = calloc(1, (size_t)(ACT + m) * lb);
  for (uint32_t r = 0; r < R; r++) {
    memcpy(img + (W0 + r) * lb, w0 + r * R, 2 * R);
    memcpy(img + (W1 + r) * lb, w1 + r * R, 2 * R);
  }
  for (uint32_t r = 0; r < m; r++) memcpy(img + (ACT + r) * lb, act + r * R, 2 * R);
  cr_assert_eq(chip_hbm_write(c, HBM_IN, img, (size_t)(ACT + m) * lb), 0);
  uint32_t *mark = malloc((size_t)m * lb);
  for (size_t i = 0; i < (size_t)m * R; i++) mark[i] = MARK;
  cr_assert_eq(chip_hbm_write(c, HBM_IN + (ACT + m) * lb, mark, (size_t)m * lb), 0);
  fw_prog_t dq;
  fw_prog_init(&dq);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, HBM_IN, lb, 0, ACT + m, lb);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, HBM_IN + (ACT + m) * lb, lb, OUT0, m, lb);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, HBM_IN + (ACT + m) * lb, lb, OUT1, m, lb);
  fw_halt(&dq);
  test_load_once(c, ISA_QUEUE_DMA, &dq);
  test_run(c, ISA_QMASK_DMA, 100000, NULL);
  free(img), free(mark);
}

/* M output rows of VMEM from `line`, through HBM. */
static void fetch(chip_t *c, uint32_t line, uint32_t m, uint32_t *out) {
  fw_prog_t dq;
  fw_prog_init(&dq);
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, line, HBM_OUT, 4 * R, m, 4 * R);
  fw_halt(&dq);
  test_load_once(c, ISA_QUEUE_DMA, &dq);
  test_run(c, ISA_QMASK_DMA, 100000, NULL);
  cr_assert_eq(chip_hbm_read(c, HBM_OUT, out, (size_t)m * 4 * R), 0);
}

static void random_bf16(rng_t *r, uint16_t *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = rng_bf16(r, -4, 3);
}

static void expect_product(const uint32_t *got, const uint16_t *act, const uint16_t *w, uint32_t m, const char *what) {
  uint32_t *want = malloc((size_t)m * R * 4);
  mxu_golden_gemm(R, m, R, R, act, w, want);
  for (size_t i = 0; i < (size_t)m * R; i++)
    cr_assert_eq(got[i], want[i], "%s: row %zu lane %zu is 0x%08x, golden 0x%08x", what, i / R, i % R, got[i], want[i]);
  free(want);
}

TestSuite(chip_mxus, .timeout = 300);

/* The MXU field names a unit of the core: past the last one, error 11 at that command
 * (before anything runs), on a one-MXU chip as on a two-MXU one. */
Test(chip_mxus, an_mxu_past_the_core_is_error_11) {
  for (unsigned mxus = 1; mxus <= 2; mxus++) {
    chip_t *c = make_chip(mxus);
    for (unsigned kind = 0; kind < 3; kind++)
      for (unsigned m = mxus - 1; m <= mxus + 1; m += 2) { /* the last MXU runs; the one past it does not */
        fw_prog_t p;
        fw_prog_init(&p);
        fw_mxu_select(&p, m);
        if (kind == 0) fw_mxu_load(&p, 0);
        else if (kind == 1) fw_mxu_matmul(&p, 0, 1, 0, false);
        else fw_mxu_store(&p, 0, 1, 0);
        fw_halt(&p);
        test_load_once(c, ISA_QUEUE_COMPUTE, &p);
        chip_status_t st;
        const int rc = chip_run(c, ISA_QMASK_COMPUTE, 10000, &st);
        if (m < mxus) {
          cr_assert_eq(rc, 0, "MXU %u of %u: %s", m, mxus, st.report);
        } else {
          cr_assert_eq(rc, -1);
          cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_MXU, "MXU %u of %u: %s", m, mxus, st.report);
          cr_assert_eq(st.pc[ISA_QUEUE_COMPUTE], 0, "it stops at the command");
          cr_assert(strstr(st.report, "MXU index") != NULL, "the report names the error: %s", st.report);
        }
      }
    chip_free(c);
  }
}

/* Two MXUs side by side, to the cycle (docs/timing.md, "Several MXUs"): the compute queue
 * issues a command a cycle, so the second MXU's load and matmul start one cycle after the
 * first's, and the pair takes one cycle more than one MXU alone; each MXU's results are its
 * own weights times the shared activations. The one-MXU program takes the same cycles on
 * either chip. */
Test(chip_mxus, two_mxus_work_side_by_side_to_the_cycle) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 31 + 5);
  static const uint32_t rows[] = {1, 4, 9, 37};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const uint32_t m = rows[i];
    uint16_t w0[R * R], w1[R * R], *act = malloc((size_t)m * R * 2);
    random_bf16(&rng, w0, R * R), random_bf16(&rng, w1, R * R), random_bf16(&rng, act, (size_t)m * R);
    uint64_t alone[2];
    for (unsigned mxus = 1; mxus <= 2; mxus++) {
      chip_t *c = make_chip(mxus);
      stage(c, w0, w1, act, m);
      fw_prog_t cq;
      fw_prog_init(&cq);
      fw_mxu_load(&cq, W0);
      fw_mxu_matmul(&cq, ACT, m, 0, false);
      fw_mxu_store(&cq, 0, m, OUT0);
      fw_halt(&cq);
      test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
      alone[mxus - 1] = test_run(c, ISA_QMASK_COMPUTE, 100000, NULL);
      chip_free(c);
    }
    cr_assert_eq(alone[1], alone[0], "M=%u: one MXU's work takes the same cycles on a chip with two", m);

    chip_t *c = make_chip(2);
    stage(c, w0, w1, act, m);
    fw_prog_t cq;
    fw_prog_init(&cq);
    for (unsigned u = 0; u < 2; u++) fw_mxu_select(&cq, u), fw_mxu_load(&cq, u ? W1 : W0);
    for (unsigned u = 0; u < 2; u++) fw_mxu_select(&cq, u), fw_mxu_matmul(&cq, ACT, m, 0, false);
    for (unsigned u = 0; u < 2; u++) fw_mxu_select(&cq, u), fw_mxu_store(&cq, 0, m, u ? OUT1 : OUT0);
    fw_halt(&cq);
    test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
    const uint64_t pair = test_run(c, ISA_QMASK_COMPUTE, 100000, NULL);
    cr_assert_eq(pair, alone[0] + 1, "M=%u: two MXUs take %llu cycles, one alone %llu: the contract says one more", m,
                 (unsigned long long)pair, (unsigned long long)alone[0]);
    uint32_t *out = malloc((size_t)m * R * 4);
    fetch(c, OUT0, m, out);
    expect_product(out, act, w0, m, "MXU 0");
    fetch(c, OUT1, m, out);
    expect_product(out, act, w1, m, "MXU 1");
    free(out), free(act);
    chip_free(c);
  }
}

/* The compute queue's SEM_SIGNAL fires once the stores of every MXU issued before it have
 * landed, whichever finishes last: here MXU 1's long matmul and store end well after MXU 0's
 * short one, and the DMA queue, released by the signal, copies MXU 1's rows out at once. A
 * fence that watched MXU 0 alone would let it copy the marker. */
Test(chip_mxus, a_release_waits_for_every_mxu) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 1);
  const uint32_t m = 40;
  uint16_t w0[R * R], w1[R * R], *act = malloc((size_t)m * R * 2);
  random_bf16(&rng, w0, R * R), random_bf16(&rng, w1, R * R), random_bf16(&rng, act, (size_t)m * R);
  chip_t *c = make_chip(2);
  stage(c, w0, w1, act, m);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_mxu_select(&cq, 1);
  fw_mxu_load(&cq, W1);
  fw_mxu_matmul(&cq, ACT, m, 0, false);
  fw_mxu_store(&cq, 0, m, OUT1);
  fw_mxu_select(&cq, 0);
  fw_mxu_load(&cq, W0);
  fw_mxu_matmul(&cq, ACT, 1, 0, false);
  fw_mxu_store(&cq, 0, 1, OUT0);
  fw_sem_signal(&cq, 3, 1);
  fw_halt(&cq);
  fw_sem_wait(&dq, 3, 1);
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, OUT1, HBM_OUT, 4 * R, m, 4 * R);
  fw_halt(&dq);
  test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
  test_load_once(c, ISA_QUEUE_DMA, &dq);
  test_run(c, ISA_QMASK_ALL, 100000, NULL);
  uint32_t *out = malloc((size_t)m * R * 4);
  cr_assert_eq(chip_hbm_read(c, HBM_OUT, out, (size_t)m * R * 4), 0);
  expect_product(out, act, w1, m, "MXU 1's rows, copied when the release fired");
  free(out), free(act);
  chip_free(c);
}

/* A VEC waits for the stores of every MXU issued before it (the compute queue's VMEM
 * effects in program order): ADD of MXU 0's and MXU 1's rows, right after both stores. */
Test(chip_mxus, a_vec_waits_for_every_mxu) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 11 + 2);
  const uint32_t m = 24;
  uint16_t w0[R * R], w1[R * R], *act = malloc((size_t)m * R * 2);
  random_bf16(&rng, w0, R * R), random_bf16(&rng, w1, R * R), random_bf16(&rng, act, (size_t)m * R);
  chip_t *c = make_chip(2);
  stage(c, w0, w1, act, m);
  fw_prog_t cq;
  fw_prog_init(&cq);
  fw_mxu_select(&cq, 0);
  fw_mxu_load(&cq, W0);
  fw_mxu_matmul(&cq, ACT, 1, 0, false);
  fw_mxu_store(&cq, 0, 1, OUT0 + m - 1);  /* MXU 0 writes its row early ... */
  fw_mxu_select(&cq, 1);
  fw_mxu_load(&cq, W1);
  fw_mxu_matmul(&cq, ACT, m, 0, false);
  fw_mxu_store(&cq, 0, m, OUT1);          /* ... MXU 1 its rows late */
  fw_vec(&cq, ISA_VEC_COPY, OUT1, 0, OUT0, m, 0);
  fw_halt(&cq);
  test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
  test_run(c, ISA_QMASK_COMPUTE, 100000, NULL);
  uint32_t *out = malloc((size_t)m * R * 4);
  fetch(c, OUT0, m, out);
  expect_product(out, act, w1, m, "MXU 1's rows, copied by the VEC after its store");
  free(out), free(act);
  chip_free(c);
}

/* The firmware GEMM over both MXUs (column tiles in groups of two, one per MXU): every bit
 * as the golden model's, every semaphore back at zero, one compute cycle per activation row
 * per tile, and no faster than the MXU alone on one MXU's share of the column tiles. */
Test(chip_mxus, gemm_over_two_mxus_matches_golden) {
  const size_t shapes[][3] = {{1, 1, 1}, {13, 23, 10}, {40, 64, 48}, {7, 5, 33}, {64, 64, 64}, {33, 100, 17},
                              {5, 32, 16}, {70, 48, 36}};
  const chip_gemm_opts_t variants[] = {{0}, {.relu = true, .bf16_out = true}, {.b_transposed = true},
                                       {.a_transposed = true}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 23 + 9);
  chip_t *c = make_chip(2);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
      const size_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
      if (v > 0 && i % 2) continue;  /* the variants on every other shape: enough, and quicker */
      uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
      uint32_t *out = malloc(m * n * 4);
      random_bf16(&rng, a, m * k), random_bf16(&rng, b, k * n);
      chip_gemm_stats_t st;
      test_chip_gemm(c, m, k, n, a, b, out, &variants[v], &st);
      test_gemm_matches_golden(R, m, k, n, a, b, &variants[v], out);
      test_sems_zero(c, "after the GEMM");
      const uint64_t kts = (k + R - 1) / R, nts = (n + R - 1) / R;
      cr_assert_eq(st.compute, kts * nts * m, "one compute cycle per activation row per tile, over both MXUs");
      const uint64_t share = (nts + 1) / 2 * R;
      cr_assert_geq(st.cycles, mxu_contract_cycles(R, R, m, k, share < n ? share : n), "M=%zu K=%zu N=%zu", m, k, n);
      cr_assert_lt(st.cycles, chip_cycle_bound(c));
      free(a), free(b), free(out);
    }
  chip_free(c);
}

/* Two MXUs halve a GEMM with many column tiles: at 64 x 64 x 64 on 4x4 MXUs (16 column
 * tiles, 8 each) the pair needs at most 0.52 of one MXU's cycles. */
Test(chip_mxus, two_mxus_halve_a_wide_gemm) {
  const size_t m = 64, k = 64, n = 64;
  rng_t rng;
  rng_seed(&rng, test_seed() + 77);
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4);
  random_bf16(&rng, a, m * k), random_bf16(&rng, b, k * n);
  uint64_t cycles[2];
  for (unsigned mxus = 1; mxus <= 2; mxus++) {
    chip_t *c = make_chip(mxus);
    cycles[mxus - 1] = test_chip_gemm(c, m, k, n, a, b, out, NULL, NULL);
    chip_free(c);
  }
  cr_assert_leq(cycles[1] * 100, cycles[0] * 52, "two MXUs %llu cycles, one %llu", (unsigned long long)cycles[1],
                (unsigned long long)cycles[0]);
  free(a), free(b), free(out);
}
