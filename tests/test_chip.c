/*
 * RTL tests of the chip (rtl/chip_*.sv through csim/chip/chip.c and the firmware in fw/):
 * GEMMs of many shapes through HBM, bit-exact against the golden model; the DMA timing
 * contract of docs/isa.md to the cycle; semaphore ordering between the queues; every
 * error path of the command processor; the timeout report. Run once per reset seed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "fw/kernels.h"
#include "golden/gemm_golden.h"
#include "golden/mxu_golden.h"
#include "golden/vec_golden.h"
#include "runtime/chip_gemm.h"
#include "chip/chip.h"
#include "test_util.h"
#include "util/rng.h"

static chip_t *make_chip(unsigned size, unsigned bw, unsigned latency) {
  chip_config_t cfg = {.rows = size, .cols = size, .hbm_bytes = 1u << 22, .hbm_bytes_per_cycle = bw, .hbm_latency = latency, .seed = test_seed(), .model = test_model()};
  char err[256];
  chip_t *c = chip_new(&cfg, err, sizeof err);
  cr_assert_not_null(c, "%s", err);
  return c;
}

static void check_gemm_opts(chip_t *c, size_t m, size_t k, size_t n, rng_t *rng, const chip_gemm_opts_t *opts) {
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4), *want = malloc(m * n * 4);
  for (size_t i = 0; i < m * k; i++) a[i] = rng_bf16(rng, -5, 3);
  for (size_t i = 0; i < k * n; i++) b[i] = rng_bf16(rng, -5, 3);
  chip_gemm_stats_t st;
  char err[512];
  cr_assert_eq(chip_gemm(c, m, k, n, a, b, out, opts, &st, err, sizeof err), 0, "M=%zu K=%zu N=%zu: %s", m, k, n, err);
  gemm_golden(chip_geometry(c)->rows, m, k, n, a, b, opts && opts->relu, opts && opts->bf16_out, want);
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(out[i], want[i], "M=%zu K=%zu N=%zu C[%zu][%zu]: chip 0x%08x golden 0x%08x", m, k, n, i / n, i % n,
                 out[i], want[i]);
  cr_assert_gt(st.hbm_bytes, 0);
  cr_assert_lt(st.cycles, chip_cycle_bound(c), "the run's bound (its timeout is twice that) is an upper bound");
  for (unsigned s = 0; s < 32; s++) cr_assert_eq(chip_sem(c, s), 0, "semaphore %u left at %u", s, chip_sem(c, s));
  cr_assert_eq(st.compute, ((k + chip_geometry(c)->rows - 1) / chip_geometry(c)->rows) *
                               ((n + chip_geometry(c)->cols - 1) / chip_geometry(c)->cols) * m,
               "one compute cycle per activation row per tile");
  free(a), free(b), free(out), free(want);
}

static void check_gemm(chip_t *c, size_t m, size_t k, size_t n, rng_t *rng) {
  check_gemm_opts(c, m, k, n, rng, NULL);
}

TestSuite(chip_rtl, .timeout = 300);

/* The firmware GEMM with B^T in HBM (b_transposed: a layer's weights seen from the backward
 * pass): the same bits as with B; and with whole tiles (K, N multiples of the MXU) the same
 * cycles. Ragged edge tiles move other DMA shapes (N rows of K bytes, not K of N), so their
 * cycles may differ by what those DMAs cost. */
Test(chip_rtl, gemm_with_b_transposed_matches_plain_to_the_cycle) {
  static const unsigned sizes[] = {4, 16};
  const size_t shapes[][3] = {{1, 1, 1}, {13, 23, 10}, {40, 64, 48}, {7, 5, 33}, {64, 64, 64}, {33, 100, 17},
                              {5, 32, 16}, {70, 48, 32}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 19 + 3);
  for (unsigned z = 0; z < 2; z++) {
    chip_t *c = make_chip(sizes[z], 16, 7);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      const size_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
      uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
      uint32_t *plain = malloc(m * n * 4), *trans = malloc(m * n * 4), *want = malloc(m * n * 4);
      for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -5, 3);
      for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -5, 3);
      const chip_gemm_opts_t po = {.b_transposed = false}, to = {.b_transposed = true};
      chip_gemm_stats_t ps, ts;
      char err[512];
      cr_assert_eq(chip_gemm(c, m, k, n, a, b, plain, &po, &ps, err, sizeof err), 0, "%s", err);
      cr_assert_eq(chip_gemm(c, m, k, n, a, b, trans, &to, &ts, err, sizeof err), 0, "%s", err);
      gemm_golden(sizes[z], m, k, n, a, b, false, false, want);
      for (size_t j = 0; j < m * n; j++)
        cr_assert(plain[j] == want[j] && trans[j] == want[j], "%ux%u M=%zu K=%zu N=%zu C[%zu]: plain 0x%08x B^T 0x%08x "
                  "golden 0x%08x", sizes[z], sizes[z], m, k, n, j, plain[j], trans[j], want[j]);
      if (k % sizes[z] == 0 && n % sizes[z] == 0)
        cr_assert_eq(ts.cycles, ps.cycles, "%ux%u M=%zu K=%zu N=%zu: %llu cycles from B^T, %llu from B", sizes[z],
                     sizes[z], m, k, n, (unsigned long long)ts.cycles, (unsigned long long)ps.cycles);
      free(a), free(b), free(plain), free(trans), free(want);
    }
    chip_free(c);
  }
}

/* C = A x B computed with A^T in HBM (a_transposed), plain and against the same product from A,
 * with the same options otherwise; every semaphore back at zero. */
static void check_a_transposed(chip_t *c, size_t m, size_t k, size_t n, unsigned kp, bool b_transposed, rng_t *rng) {
  const unsigned size = chip_geometry(c)->rows;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *plain = malloc(m * n * 4), *trans = malloc(m * n * 4), *want = malloc(m * n * 4);
  for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(rng, -5, 3);
  for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(rng, -5, 3);
  const chip_gemm_opts_t po = {.k_panel = kp, .b_transposed = b_transposed},
                         to = {.k_panel = kp, .b_transposed = b_transposed, .a_transposed = true};
  chip_gemm_stats_t ps, ts;
  char err[512];
  cr_assert_eq(chip_gemm(c, m, k, n, a, b, plain, &po, &ps, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_gemm(c, m, k, n, a, b, trans, &to, &ts, err, sizeof err), 0, "%s", err);
  for (unsigned s = 0; s < 32; s++) cr_assert_eq(chip_sem(c, s), 0, "semaphore %u left at %u", s, chip_sem(c, s));
  gemm_golden(size, m, k, n, a, b, false, false, want);
  for (size_t j = 0; j < m * n; j++)
    cr_assert(plain[j] == want[j] && trans[j] == want[j], "%ux%u M=%zu K=%zu N=%zu kp %u%s C[%zu][%zu]: A 0x%08x A^T "
              "0x%08x golden 0x%08x", size, size, m, k, n, kp, b_transposed ? " B^T" : "", j / n, j % n, plain[j],
              trans[j], want[j]);
  cr_assert_eq(ts.compute, ps.compute, "one compute cycle per activation row per tile, as from A");
  free(a), free(b), free(plain), free(trans), free(want);
}

/* The firmware GEMM with A^T in HBM (a_transposed: the activations X of a weight gradient
 * X^T dY), its activation lines made by transposing DMAs (docs/gemm.md, "A transposed"): the
 * same bits as from A, with and without B^T, on 4x4 and 16x16 chips. The shapes have ragged
 * tiles in M, K and N; odd row blocks (a transposing DMA writes an even number of lines, so a
 * block's last one lands past it); M > 2C, so a sub-block takes several transposing DMAs;
 * column tiles side by side in the first pass (N > 2C), with and without the first sub-block
 * taken chunk by chunk; several row blocks; forced K panels, one with a short last panel. */
Test(chip_rtl, gemm_with_a_transposed_matches_plain) {
  static const struct { unsigned size; size_t m, k, n; unsigned kp; } cases[] = {
      {4, 1, 1, 1, 0},     {4, 13, 23, 10, 0},  {4, 7, 5, 33, 0},    {4, 33, 100, 17, 0}, {4, 40, 64, 48, 0},
      {4, 70, 48, 32, 0},  {4, 700, 20, 40, 0}, {4, 301, 40, 64, 1}, {4, 301, 40, 64, 3}, {16, 1, 1, 1, 0},
      {16, 13, 23, 10, 0}, {16, 33, 100, 17, 0}, {16, 70, 48, 32, 0}, {16, 100, 70, 130, 0}, {16, 1100, 40, 200, 0},
      {16, 300, 100, 90, 2}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 23 + 7);
  chip_t *chips[2] = {make_chip(4, 16, 7), make_chip(16, 64, 20)};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int bt = 0; bt < 2; bt++)
      check_a_transposed(chips[cases[i].size == 16], cases[i].m, cases[i].k, cases[i].n, cases[i].kp, bt, &rng);
  chip_free(chips[0]);
  chip_free(chips[1]);
}

/* At scale A^T keeps 99% of the plain GEMM's utilisation: each panel is loaded while the MXU
 * uses the one before across every column tile, and the first pass, which can only follow the
 * transposing DMAs, takes column tiles side by side. 16x16 chip, 256 x 256 x 256, the CLI's
 * default HBM (957 bytes/cycle, latency 100): 66,403 cycles from A, 66,879 from A^T (99.3%);
 * at 64 bytes/cycle and latency 20: 66,243 and 66,088. */
Test(chip_rtl, gemm_with_a_transposed_keeps_99_percent_of_plain) {
  const unsigned hbm[][2] = {{957, 100}, {64, 20}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 29 + 1);
  const size_t m = 256, k = 256, n = 256;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *plain = malloc(m * n * 4), *trans = malloc(m * n * 4);
  for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -5, 3);
  for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -5, 3);
  for (int h = 0; h < 2; h++) {
    chip_t *c = make_chip(16, hbm[h][0], hbm[h][1]);
    const chip_gemm_opts_t po = {0}, to = {.a_transposed = true};
    chip_gemm_stats_t ps, ts;
    char err[512];
    cr_assert_eq(chip_gemm(c, m, k, n, a, b, plain, &po, &ps, err, sizeof err), 0, "%s", err);
    cr_assert_eq(chip_gemm(c, m, k, n, a, b, trans, &to, &ts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(plain, trans, m * n * 4), 0, "A^T gives other bits than A");
    cr_log_info("HBM %u bytes/cycle, latency %u: %llu cycles from A, %llu from A^T", hbm[h][0], hbm[h][1],
                (unsigned long long)ps.cycles, (unsigned long long)ts.cycles);
    cr_assert_leq((double)ts.cycles, (double)ps.cycles / 0.99, "HBM %u bytes/cycle, latency %u: %llu cycles from A^T, "
                  "%llu from A: under 99%% of its utilisation", hbm[h][0], hbm[h][1], (unsigned long long)ts.cycles,
                  (unsigned long long)ps.cycles);
    chip_free(c);
  }
  free(a), free(b), free(plain), free(trans);
}

Test(chip_rtl, gemm_epilogue_relu_and_bf16) {
  chip_t *c = make_chip(4, 16, 7);
  rng_t rng;
  rng_seed(&rng, test_seed() * 13 + 5);
  const chip_gemm_opts_t variants[] = {{.relu = true},
                                       {.bf16_out = true},
                                       {.relu = true, .bf16_out = true, .b_transposed = true},
                                       {.relu = true, .bf16_out = true, .a_transposed = true}};
  for (int v = 0; v < 4; v++) {
    check_gemm_opts(c, 9, 13, 7, &rng, &variants[v]);
    check_gemm_opts(c, 1, 4, 1, &rng, &variants[v]);
    check_gemm_opts(c, 17, 5, 10, &rng, &variants[v]);
  }
  chip_free(c);
}

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

/* The three tilings (docs/gemm.md): one K tile per panel, panels of several K tiles with
 * a short last panel, and one panel over all of K; shapes with partial tiles everywhere. */
Test(chip_rtl, gemm_k_panels_of_every_size) {
  chip_t *c = make_chip(4, 16, 9);
  rng_t rng;
  rng_seed(&rng, test_seed() * 11 + 4);
  const size_t shapes[][3] = {{13, 23, 10}, {6, 16, 9}, {30, 9, 5}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    unsigned kts = (unsigned)(shapes[i][1] + 3) / 4;
    for (unsigned kp = 1; kp <= kts; kp++) {
      /* B^T in HBM for even panels, A^T for two panel sizes in three: every combination */
      chip_gemm_opts_t o = {.k_panel = kp, .b_transposed = kp % 2 == 0, .a_transposed = kp % 3 != 1};
      check_gemm_opts(c, shapes[i][0], shapes[i][1], shapes[i][2], &rng, &o);
    }
  }
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
/* [DMA; FENCE; HALT]: (rows - 1) ceil(n / B) + L + 6, and a transposing DMA (rows <= C)
 * one cycle more per line it writes (n / 2). */
Test(chip_rtl, dma_timing_contract) {
  const unsigned rows_l[] = {1, 5, 16, 64}, bytes_l[] = {4, 16, 64}, bw_l[] = {64, 16, 8}, lat_l[] = {1, 10, 100};
  for (int transposed = 0; transposed < 2; transposed++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 3; b++)
        for (int i = 0; i < 3; i++)
          for (int d = 0; d < 3; d++) {
            unsigned rows = rows_l[a], n = bytes_l[b], bw = bw_l[i], lat = lat_l[d];
            if (transposed && rows > 16) continue;  /* at most C rows */
            chip_t *c = make_chip(16, bw, lat);
            fw_prog_t p;
            fw_prog_init(&p);
            if (transposed) fw_dma_hbm_to_vmem_transposed(&p, 1, 1, 0, 64, 0, rows, n);
            else fw_dma_hbm_to_vmem(&p, 1, 1, 0, 64, 0, rows, n);
            fw_fence(&p);
            fw_halt(&p);
            char err[256];
            cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, sizeof err), 0, "%s", err);
            chip_status_t st;
            cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 100000, &st), 0, "%s", st.report);
            uint64_t per = n <= bw ? 1 : n / bw;
            cr_assert_eq(st.cycles, (rows - 1) * per + lat + 6 + (transposed ? n / 2 : 0),
                         "%s rows %u bytes %u B %u L %u: %llu cycles", transposed ? "transposing" : "plain", rows, n,
                         bw, lat, (unsigned long long)st.cycles);
            cr_assert_eq(chip_sem(c, 1), 1, "the DMA signalled its semaphore");
            cr_assert_eq(st.hbm_bytes, (uint64_t)rows * n);
            fw_prog_free(&p);
            chip_free(c);
          }
}

/* The transposing DMA (docs/isa.md, "Transposing DMA"): rows HBM rows of n/2 bf16 become
 * n/2 VMEM lines of rows bf16, zero beyond; plain DMAs before and after it keep their
 * order. Its timing contract is in dma_timing_contract. */
Test(chip_rtl, transposing_dma_writes_the_transpose) {
  static const unsigned sizes[] = {4, 16};
  rng_t rng;
  rng_seed(&rng, test_seed() * 43 + 1);
  for (unsigned z = 0; z < 2; z++) {
    const unsigned C = sizes[z], line = 4 * C;
    chip_t *c = make_chip(C, 16, 9);
    const unsigned shapes[][2] = {{C, 2 * C}, {1, 2}, {C - 1, 6}, {3, 2 * C - 2}};  /* rows, elements */
    for (unsigned s = 0; s < 4; s++) {
      const unsigned rows = shapes[s][0], elems = shapes[s][1], stride = 4 * line;
      uint16_t x[16 * 32];
      for (unsigned r = 0; r < rows; r++)
        for (unsigned e = 0; e < elems; e++) x[r * elems + e] = rng_bf16(&rng, -4, 4);
      for (unsigned r = 0; r < rows; r++) cr_assert_eq(chip_hbm_write(c, 4096 + r * stride, x + r * elems, 2 * elems), 0);
      uint8_t mark[64];
      for (unsigned i = 0; i < line; i++) mark[i] = (uint8_t)(0xC3 ^ i);
      cr_assert_eq(chip_hbm_write(c, 0, mark, line), 0);
      fw_prog_t p;
      fw_prog_init(&p);
      fw_dma_hbm_to_vmem(&p, ISA_SEM_NONE, 0, 0, line, 100, 1, line);          /* before: a marker line */
      fw_dma_hbm_to_vmem_transposed(&p, 1, 1, 4096, stride, 200, rows, 2 * elems);
      fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 200, 1u << 20, line, elems, line); /* after: reads the result */
      fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 100, 2u << 20, line, 1, line);
      fw_fence(&p);
      fw_halt(&p);
      char err[256];
      cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, sizeof err), 0, "%s", err);
      chip_status_t st;
      cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 100000, &st), 0, "%s", st.report);
      cr_assert_eq(chip_sem(c, 1), 1);
      uint16_t out[32 * 32];
      cr_assert_eq(chip_hbm_read(c, 1u << 20, out, (size_t)elems * line), 0);
      for (unsigned e = 0; e < elems; e++)
        for (unsigned l = 0; l < 2 * C; l++) {
          const uint16_t want = l < rows ? x[l * elems + e] : 0;
          cr_assert_eq(out[e * 2 * C + l], want, "%ux%u rows %u elems %u: line %u lane %u: 0x%04x, want 0x%04x", C, C,
                       rows, elems, e, l, out[e * 2 * C + l], want);
        }
      uint8_t back[64];
      cr_assert_eq(chip_hbm_read(c, 2u << 20, back, line), 0);
      cr_assert_eq(memcmp(back, mark, line), 0, "the DMA before it landed");
      fw_prog_free(&p);
      fw_prog_init(&p);  /* take the semaphore back for the next shape */
      fw_sem_wait(&p, 1, 1);
      fw_halt(&p);
      cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, sizeof err), 0, "%s", err);
      cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 1000, &st), 0, "%s", st.report);
      fw_prog_free(&p);
    }
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
  fw_dma_hbm_to_vmem(&p, ISA_SEM_NONE, 0, 0, 16, 10, 8, 12);       /* 8 rows of 12 bytes */
  fw_dma_vmem_to_vmem(&p, ISA_SEM_NONE, 0, 10, 100, 8);             /* copy the lines */
  fw_dma_vmem_to_hbm(&p, 4, 1, 100, 4096, 16, 8, 16);              /* whole lines back */
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), 0, "%s", st.report);
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
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 10000, &st), 0, "%s", st.report);
  cr_assert(st.halted[0] && st.halted[1]);
  cr_assert_eq(chip_sem(c, 5), 0);
  cr_assert_eq(chip_sem(c, 6), 0);
  /* the wait could only pass after the DMA: latency 200 */
  cr_assert_gt(st.cycles, 200);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

/* Both queues wait on one semaphore in the same cycle: the compute queue's wait is granted
 * against the value first and the DMA queue's against what it leaves (docs/isa.md), so with 4
 * on the semaphore and waits for 3 and 2 only the first passes, and 1 is left. */
Test(chip_rtl, waits_on_one_semaphore_in_one_cycle_are_granted_in_order) {
  chip_t *c = make_chip(4, 16, 5);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_sem_signal(&cq, 5, 4);  /* a release fence: the 4 lands while both queues wait */
  fw_sem_wait(&cq, 5, 3);
  fw_halt(&cq);
  fw_sem_wait(&dq, 5, 2);
  fw_halt(&dq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
  cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 500, &st), -1);
  cr_assert(st.halted[0], "the compute queue's wait passed: %s", st.report);
  cr_assert(strstr(st.report, "DMA queue still at command 0 (SEM_WAIT on semaphore 5 for 2; it holds 1)"), "%s",
            st.report);
  cr_assert_eq(chip_sem(c, 5), 1);
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
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 2000, &st), -1);
  cr_assert(st.timed_out);
  cr_assert(!strncmp(st.report, "timed out after 2000 cycles: ", 29), "a timeout says so first: %s", st.report);
  cr_assert(strstr(st.report, "compute queue still at command 1 (SEM_WAIT on semaphore 7 for 2; it holds 1)"), "%s",
            st.report);
  fw_prog_free(&cq);
  chip_free(c);
}

/* Runs the one-command program [w; HALT] on `queue` of chip c (reused across runs) and
 * returns the queue's error code; the report goes to `report`. An error must stop the queue
 * at the command, before it runs. */
static unsigned run_error_on(chip_t *c, int queue, const uint32_t w[ISA_CMD_WORDS], char *report, size_t len) {
  fw_prog_t p;
  fw_prog_init(&p);
  fw_raw(&p, w);
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(c, queue, p.words, p.count, err, sizeof err), 0, "%s", err);
  chip_status_t st;
  int rc = chip_run(c, ISA_QMASK(queue), 1000, &st);
  snprintf(report, len, "%s", st.report);
  const unsigned code = st.error[queue];
  cr_assert(code == 0 || (rc == -1 && !st.running[queue] && !st.halted[queue] && st.pc[queue] == 0),
            "an error stops the queue at the command: %s", st.report);
  fw_prog_free(&p);
  return code;
}

/* The same on a chip of its own. */
static unsigned run_error(int queue, const uint32_t w[ISA_CMD_WORDS], char *report, size_t len) {
  chip_t *c = make_chip(4, 16, 5);
  unsigned code = run_error_on(c, queue, w, report, len);
  chip_free(c);
  return code;
}

Test(chip_rtl, every_error_path_stops_the_queue) {
  /* 4x4 chip: VMEM of V lines of 16 bytes, accumulator 4096 rows, HBM 4 MiB. */
  chip_geometry_t geo;
  cr_assert_eq(chip_top_geometry(4, 4, 1, 1, &geo), 0);
  const uint32_t V = geo.vmem_lines;
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
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, V - 6, 7, 16}, 3, "DMA past the end of VMEM"},
      {1, {0x10 | 1u << 8, 0, 2, V - 1, 0, 0, 2, 4}, 3, "VMEM->VMEM destination past the end"},
      {1, {0x10 | 1u << 8, 0, 0, (1u << 22) - 8, 16, 0, 1, 16}, 4, "DMA past the end of HBM"},
      {1, {0x10 | 1u << 8, 0, 1, 0, 0x40000000u, 0, 3, 16}, 4, "stride past the end of HBM"},
      {0, {0x21, 0, 0, 10, 4090, 0}, 5, "MATMUL past the accumulator"},
      {0, {0x22, 0, 4095, 2, 0}, 5, "STORE past the accumulator"},
      {0, {0x21, 0, V - 6, 10, 0, 0}, 3, "MATMUL activations past VMEM"},
      {0, {0x20, 0, V - 3}, 3, "LOAD weights past VMEM"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 0, 16}, 6, "zero rows"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 6}, 6, "bytes not a multiple of 4"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 20}, 6, "bytes beyond a line"},
      {1, {0x10 | 1u << 8, 0, ISA_NUM_DMA_KINDS, 0, 16, 0, 1, 16}, 6, "unknown DMA kind"},
      {0, {0x21, 0, 0, 0, 0, 0}, 6, "MATMUL of zero rows"},
      {0, {0x03 | 40u << 8, 1}, 7, "semaphore out of range"},
      {0, {0x30, ISA_NUM_VEC_OPS, 0, 0, 0, 1}, 1, "unknown vector operation"},
      {0, {0x30, 0, 0, 0, 0, 0}, 6, "vector op of zero rows"},
      {0, {0x30, 0, V - 1, 0, 0, 2}, 3, "vector operand past VMEM"},
      {0, {0x30, 3, 0, V - 1, 0, 2}, 3, "vector operand b of a binary op (MAX) past VMEM"},
      {0, {0x30, 0, 0, 0, V - 1, 2}, 3, "vector destination past VMEM"},
      {1, {0x30, 0, 0, 0, 0, 1}, 2, "vector op in the DMA queue"},
      {0, {0x40 | 255u << 8, 0, 0, 0, 0, 1, 255}, 2, "remote DMA in the compute queue"},
      {1, {0x40 | 255u << 8, 0, 1, 0, 0, 1, 255}, 8, "remote DMA to a chip outside a lone chip's pod"},
      {1, {0x40 | 255u << 8, 0, 1u << 18, 0, 0, 1, 255}, 8, "remote DMA with reserved bits of word 2 set"},
      {1, {0x40 | 255u << 8, 0, 0, 0, 0, 0, 255}, 6, "remote DMA of zero lines"},
      {1, {0x40 | 255u << 8, 0, 0, V - 1, 0, 2, 255}, 3, "remote DMA past the destination's VMEM"},
      {1, {0x40 | 40u << 8, 0, 0, 0, 0, 1, 255}, 7, "remote semaphore out of range"},
      {1, {0x10 | 40u << 8, 1, 0, 0, 16, 0, 1, 16}, 7, "DMA completion semaphore out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char report[512];
    unsigned code = run_error(cases[i].queue, cases[i].w, report, sizeof report);
    cr_expect_eq(code, cases[i].code, "%s: error %u, expected %u (%s)", cases[i].what, code, cases[i].code, report);
    cr_expect(strstr(report, "stopped with error"), "%s: %s", cases[i].what, report);
  }
}

/* Every opcode of the table can be refused, and the report names it: word 0's bits 31:16
 * are reserved in every command, so setting one makes any command illegal (error 1). An
 * unknown opcode is reported as such. */
Test(chip_rtl, an_error_on_every_opcode_names_it) {
  chip_t *c = make_chip(4, 16, 5);
  static const struct {
    uint32_t op;
    const char *name;
  } ops[] = {{0x01, "HALT"}, {0x02, "FENCE"}, {0x03, "SEM_WAIT"}, {0x04, "SEM_SIGNAL"}, {0x10, "DMA"},
             {0x20, "MXU_LOAD"}, {0x21, "MXU_MATMUL"}, {0x22, "MXU_STORE"}, {0x30, "VEC"}, {0x40, "RDMA"}};
  unsigned named = 0;
  for (uint32_t op = 0; op < 256; op++) {
    if (!isa_opcode_name(op)) continue;
    named++;
    const int queue = isa_op_allowed(op, ISA_QUEUE_COMPUTE) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
    uint32_t w[ISA_CMD_WORDS] = {op | 1u << 31};
    char report[512], want[64];
    cr_expect_eq(run_error_on(c, queue, w, report, sizeof report), ISA_ERR_OPCODE, "0x%02x: %s", op, report);
    snprintf(want, sizeof want, "at command 0 (%s)", isa_opcode_name(op));
    cr_expect(strstr(report, want), "opcode 0x%02x: the report does not say '%s': %s", op, want, report);
  }
  /* the table's names are the documented ones (docs/isa.md) */
  cr_assert_eq(named, sizeof ops / sizeof ops[0], "%u opcodes in the table", named);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    cr_expect_str_eq(isa_opcode_name(ops[i].op), ops[i].name);
  char report[512];
  const uint32_t bad[ISA_CMD_WORDS] = {0x77};
  cr_expect_eq(run_error_on(c, ISA_QUEUE_COMPUTE, bad, report, sizeof report), ISA_ERR_OPCODE);
  cr_expect(strstr(report, "error 1 (illegal command") && strstr(report, "(not an opcode)"), "%s", report);
  chip_free(c);
}

/* The command processor refuses a command with any reserved bit set (every bit its fields do
 * not name, per fw/isa.def), and accepts the same command with the bit clear. Every reserved
 * bit of every command, one at a time. */
Test(chip_rtl, every_reserved_bit_is_refused) {
  chip_t *c = make_chip(4, 16, 5);
  /* a valid command of each opcode (HALT and FENCE have no operands) */
  fw_prog_t valid;
  fw_prog_init(&valid);
  fw_sem_wait(&valid, 3, 0);
  fw_sem_signal(&valid, 3, 0);
  fw_dma_hbm_to_vmem(&valid, ISA_SEM_NONE, 0, 0, 16, 0, 1, 16);
  fw_mxu_load(&valid, 0);
  fw_mxu_matmul(&valid, 0, 1, 0, false);
  fw_mxu_store(&valid, 0, 1, 8);
  fw_vec(&valid, ISA_VEC_ADD, 0, 1, 2, 1, 0);
  fw_rdma(&valid, 0, 0, 0, 8, 1, ISA_SEM_NONE, 0, ISA_SEM_NONE, 0);
  fw_halt(&valid);
  fw_fence(&valid);
  cr_assert(fw_prog_ok(&valid));
  unsigned checked = 0;
  for (size_t i = 0; i < valid.count; i++) {
    const uint32_t *cmd = valid.words + i * ISA_CMD_WORDS, op = isa_opcode(cmd);
    const int queue = isa_op_allowed(op, ISA_QUEUE_COMPUTE) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
    char report[512];
    if (op != ISA_OP_HALT)  /* HALT stops the program itself: nothing to report */
      cr_assert_eq(run_error_on(c, queue, cmd, report, sizeof report), 0, "%s as built: %s", isa_opcode_name(op), report);
    for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
      for (unsigned bit = 0; bit < 32; bit++) {
        if (isa_defined_bits(op, w) >> bit & 1) continue;
        uint32_t bad[ISA_CMD_WORDS];
        memcpy(bad, cmd, sizeof bad);
        bad[w] |= 1u << bit;
        cr_expect_eq(run_error_on(c, queue, bad, report, sizeof report), ISA_ERR_OPCODE,
                     "%s with reserved bit %u of word %u set: %s", isa_opcode_name(op), bit, w, report);
        checked++;
      }
  }
  cr_assert_geq(checked, 1490, "reserved bits tried: %u", checked);  /* 1494 since the MXU fields */
  fw_prog_free(&valid);
  chip_free(c);
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
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 100000, &st), -1);
  cr_assert_eq(st.error[1], ISA_ERR_END, "ran off the end of the command memory: %s", st.report);
  cr_assert_eq(chip_sem(c, 1), g->queue_depth, "every command ran once");
  fw_sem_signal(&p, 1, 1);
  cr_assert_eq(chip_load_program(c, 1, p.words, p.count, err, sizeof err), -1);
  cr_assert(strstr(err, "does not fit"), "%s", err);
  fw_prog_free(&p);
  chip_free(c);
}

/* ------------------------------------------------------------------ vector unit */

static uint32_t random_lane(rng_t *rng) {
  static const uint32_t specials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                      0xFFFFFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
                                      0x3F808000, 0x3F818000, 0xBF800000};
  uint64_t x = rng_next(rng);
  if ((x & 7) == 0) return specials[(x >> 8) % (sizeof specials / sizeof specials[0])];
  if ((x & 7) == 1) return (uint32_t)(x >> 32);
  return (uint32_t)((x >> 32) & 0x81FFFFFFu) | (uint32_t)(100 + (x >> 16) % 56) << 23;
}

/* Loads rows of random lanes into VMEM lines a and b, runs one VEC, writes dst back. */
static void check_vec(unsigned size, isa_vec_op_t op, uint32_t rows, rng_t *rng) {
  chip_t *c = make_chip(size, 64, 9);
  const unsigned lanes = chip_geometry(c)->cols, line = 4 * lanes;
  uint32_t *a = malloc(rows * line), *b = malloc(rows * line), *out = malloc(rows * line);
  for (uint32_t i = 0; i < rows * lanes; i++) a[i] = random_lane(rng), b[i] = random_lane(rng);
  uint32_t scalar = random_lane(rng);
  cr_assert_eq(chip_hbm_write(c, 0, a, rows * line), 0);
  cr_assert_eq(chip_hbm_write(c, 1u << 20, b, rows * line), 0);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 0, line, 100, rows, line);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 3u << 20, line, 2000, rows, line);  /* zero the destination */
  fw_dma_hbm_to_vmem(&dq, 1, 1, 1u << 20, line, 1000, rows, line);
  fw_sem_wait(&dq, 2, 1);
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, 2000, 2u << 20, line, rows, line);
  fw_fence(&dq);
  fw_halt(&dq);
  fw_sem_wait(&cq, 1, 1);
  /* a unary operation neither reads nor checks operand b: give it one far outside VMEM (it
   * used to stop with a VMEM range error) */
  fw_vec(&cq, op, 100, isa_vec_operands(op) == 2 ? 1000 : UINT32_MAX, 2000, rows, scalar);
  fw_sem_signal(&cq, 2, 1);
  fw_halt(&cq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
  cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 100000, &st), 0, "%s", st.report);
  cr_assert_eq(chip_hbm_read(c, 2u << 20, out, rows * line), 0);
  uint32_t *want = malloc(rows * line);
  const unsigned written = vec_golden_lines(op, lanes, rows, a, b, scalar, want);
  /* every line the command writes, and (a line reduction) none after its one line */
  for (uint32_t i = 0; i < rows * lanes; i++) {
    const uint32_t w = i < written * lanes ? want[i] : 0, r = i / lanes, l = i % lanes;
    cr_assert_eq(out[i], w, "%ux%u %s row %u lane %u: a 0x%08x b 0x%08x s 0x%08x: chip 0x%08x golden 0x%08x", size, size,
                 isa_vec_op_name(op), r, l, a[i], b[i], scalar, out[i], w);
  }
  free(a), free(b), free(out), free(want);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

Test(chip_rtl, every_vector_op_against_the_golden_model) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 11 + 4);
  for (int op = 0; op < ISA_NUM_VEC_OPS; op++) {
    check_vec(4, (isa_vec_op_t)op, 37, &rng);
    check_vec(16, (isa_vec_op_t)op, 9, &rng);
    if (op == ISA_VEC_SUM_LANES || op == ISA_VEC_MAX_LANES || op == ISA_VEC_SUM_LINES)
      check_vec(128, (isa_vec_op_t)op, 3, &rng);  /* the deepest lane tree */
  }
}

/* A line reduction names one destination line: it may end VMEM, whatever rows is. */
Test(chip_rtl, line_reduction_writes_one_line) {
  chip_t *c = make_chip(4, 16, 5);
  const uint32_t V = chip_geometry(c)->vmem_lines;
  fw_prog_t p;
  fw_prog_init(&p);
  fw_vec(&p, ISA_VEC_SUM_LINES, 0, 0, V - 1, 8, 0);
  fw_vec(&p, ISA_VEC_MAX_LINES, 0, 0, V - 1, 8, 0);
  fw_vec(&p, ISA_VEC_SUM_LANES, 0, 0, V - 1, 2, 0);  /* not a line reduction: two lines past the end */
  fw_halt(&p);
  char err[256];
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, p.words, p.count, err, sizeof err), 0, "%s", err);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 10000, &st), -1);
  cr_assert_eq(st.error[0], ISA_ERR_VMEM, "%s", st.report);
  cr_assert_eq(st.pc[0], 2, "the line reductions ran; SUM_LANES over two lines at the end did not: %s", st.report);
  fw_prog_free(&p);
  chip_free(c);
}

Test(chip_rtl, vector_op_follows_store_without_a_fence) {
  /* GEMM rows stored from the accumulator, then ReLU in place, then written back: the
   * vector unit must see the stored lines (program order within the compute queue). */
  chip_t *c = make_chip(4, 64, 9);
  rng_t rng;
  rng_seed(&rng, test_seed() + 77);
  uint16_t a[6 * 4], w[4 * 4];
  for (int i = 0; i < 24; i++) a[i] = rng_bf16(&rng, -2, 2);
  for (int i = 0; i < 16; i++) w[i] = rng_bf16(&rng, -2, 2);
  uint32_t want[6 * 4];
  mxu_golden_gemm(4, 6, 4, 4, a, w, want);
  /* lay out: activations as 6 lines of 4 bf16, weights as 4 lines of 4 bf16 */
  for (int r = 0; r < 6; r++) cr_assert_eq(chip_hbm_write(c, 16 * r, a + 4 * r, 8), 0);
  for (int r = 0; r < 4; r++) cr_assert_eq(chip_hbm_write(c, 4096 + 16 * r, w + 4 * r, 8), 0);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 0, 16, 0, 6, 8);
  fw_dma_hbm_to_vmem(&dq, 1, 1, 4096, 16, 10, 4, 8);
  fw_sem_wait(&dq, 2, 1);
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, 20, 8192, 16, 6, 16);
  fw_fence(&dq);
  fw_halt(&dq);
  fw_sem_wait(&cq, 1, 1);
  fw_mxu_load(&cq, 10);
  fw_mxu_matmul(&cq, 0, 6, 0, false);
  fw_mxu_store(&cq, 0, 6, 20);
  fw_vec(&cq, ISA_VEC_RELU, 20, 20, 20, 6, 0);
  fw_sem_signal(&cq, 2, 1);
  fw_halt(&cq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
  cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 100000, &st), 0, "%s", st.report);
  uint32_t out[24];
  cr_assert_eq(chip_hbm_read(c, 8192, out, sizeof out), 0);
  for (int i = 0; i < 24; i++)
    cr_assert_eq(out[i], vec_golden_lane(ISA_VEC_RELU, want[i], 0, 0), "element %d: 0x%08x vs relu(0x%08x)", i, out[i],
                 want[i]);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

/* One tile through the MXU from VMEM weights laid out plainly (line r = weight row r) or
 * transposed (line j = weight column j, MXU_LOAD transpose); the cycles of the run. */
static uint64_t run_one_tile(chip_t *c, const uint16_t *a, size_t m, const uint16_t *w_lines, bool transposed,
                             uint32_t *out) {
  const unsigned size = chip_geometry(c)->rows, line = 4 * size;
  for (size_t r = 0; r < m; r++) cr_assert_eq(chip_hbm_write(c, line * r, a + size * r, 2 * size), 0);
  for (unsigned r = 0; r < size; r++) cr_assert_eq(chip_hbm_write(c, (1u << 20) + line * r, w_lines + size * r, 2 * size), 0);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_dma_hbm_to_vmem(&dq, ISA_SEM_NONE, 0, 0, line, 0, (uint32_t)m, 2 * size);
  fw_dma_hbm_to_vmem(&dq, 1, 1, 1u << 20, line, 1000, size, 2 * size);
  fw_sem_wait(&dq, 2, 1);
  fw_dma_vmem_to_hbm(&dq, ISA_SEM_NONE, 0, 2000, 2u << 20, line, (uint32_t)m, line);
  fw_fence(&dq);
  fw_halt(&dq);
  fw_sem_wait(&cq, 1, 1);
  if (transposed) fw_mxu_load_transposed(&cq, 1000);
  else fw_mxu_load(&cq, 1000);
  fw_mxu_matmul(&cq, 0, (uint32_t)m, 0, false);
  fw_mxu_store(&cq, 0, (uint32_t)m, 2000);
  fw_sem_signal(&cq, 2, 1);
  fw_halt(&cq);
  char err[256];
  cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0, "%s", err);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 100000, &st), 0, "%s", st.report);
  cr_assert_eq(chip_hbm_read(c, 2u << 20, out, m * line), 0);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  return st.cycles;
}

/* A*B^T without a transposed copy: B^T's lines loaded transposed give the weights B's lines
 * give, bit for bit and in the same cycles (docs/mxu.md, "Transposed loads"). */
Test(chip_rtl, transposed_weight_load_is_exact_and_as_fast) {
  static const unsigned sizes[] = {4, 16};
  rng_t rng;
  rng_seed(&rng, test_seed() * 31 + 5);
  for (unsigned z = 0; z < 2; z++) {
    const unsigned size = sizes[z];
    const size_t m = 2 * size + 3;
    chip_t *c = make_chip(size, 64, 9);
    uint16_t *a = malloc(m * size * 2), *w = malloc(size * size * 2), *wt = malloc(size * size * 2);
    uint32_t *plain = malloc(m * size * 4), *trans = malloc(m * size * 4), *want = malloc(m * size * 4);
    for (size_t i = 0; i < m * size; i++) a[i] = rng_bf16(&rng, -4, 3);
    for (unsigned r = 0; r < size; r++)
      for (unsigned j = 0; j < size; j++) w[r * size + j] = wt[j * size + r] = rng_bf16(&rng, -4, 3);
    mxu_golden_gemm(size, m, size, size, a, w, want);
    const uint64_t t_plain = run_one_tile(c, a, m, w, false, plain);
    const uint64_t t_trans = run_one_tile(c, a, m, wt, true, trans);
    for (size_t i = 0; i < m * size; i++) {
      cr_assert_eq(plain[i], want[i], "%ux%u plain C[%zu][%zu]: 0x%08x golden 0x%08x", size, size, i / size, i % size,
                   plain[i], want[i]);
      cr_assert_eq(trans[i], want[i], "%ux%u transposed C[%zu][%zu]: 0x%08x golden 0x%08x", size, size, i / size,
                   i % size, trans[i], want[i]);
    }
    cr_assert_eq(t_trans, t_plain, "%ux%u: a transposed load takes %llu cycles, a plain one %llu", size, size,
                 (unsigned long long)t_trans, (unsigned long long)t_plain);
    free(a), free(w), free(wt), free(plain), free(trans), free(want);
    chip_free(c);
  }
}

Test(chip_rtl, elementwise_kernel_through_hbm) {
  chip_t *c = make_chip(4, 16, 20);
  const chip_geometry_t *g = chip_geometry(c);
  rng_t rng;
  rng_seed(&rng, test_seed() + 21);
  const uint32_t count = 4 * 700 + 3;  /* several chunks and a partial line */
  static uint32_t a[4 * 700 + 3], b[4 * 700 + 3], out[4 * 700 + 3];
  const isa_vec_op_t ops[] = {ISA_VEC_ADD, ISA_VEC_MUL, ISA_VEC_RELU, ISA_VEC_SCALE};
  for (int o = 0; o < 4; o++) {
    for (uint32_t i = 0; i < count; i++) a[i] = random_lane(&rng), b[i] = random_lane(&rng);
    uint32_t scalar = random_lane(&rng);
    cr_assert_eq(chip_hbm_write(c, 0, a, 4 * count), 0);
    cr_assert_eq(chip_hbm_write(c, 1u << 20, b, 4 * count), 0);
    fw_prog_t cq, dq;
    fw_prog_init(&cq);
    fw_prog_init(&dq);
    char err[256];
    cr_assert_eq(fw_elementwise(g, ops[o], 0, 1u << 20, 2u << 20, count, scalar, &cq, &dq, err, sizeof err), 0, "%s", err);
    cr_assert_eq(chip_load_program(c, 0, cq.words, cq.count, err, sizeof err), 0);
    cr_assert_eq(chip_load_program(c, 1, dq.words, dq.count, err, sizeof err), 0);
    chip_status_t st;
    cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 1000000, &st), 0, "%s", st.report);
    cr_assert_eq(chip_hbm_read(c, 2u << 20, out, 4 * count), 0);
    for (uint32_t i = 0; i < count; i++)
      cr_assert_eq(out[i], vec_golden_lane(ops[o], a[i], b[i], scalar), "op %d element %u", ops[o], i);
    for (unsigned s = 0; s < 32; s++) cr_assert_eq(chip_sem(c, s), 0, "semaphore %u", s);
    fw_prog_free(&cq);
    fw_prog_free(&dq);
  }
  chip_free(c);
}

/* ------------------------------------------------------------------ the host between runs */

/* Defect found by a hostile tester: after a run, the HBM port's inputs stayed as the last cycle
 * left them, and loading the next program (which clocks the chip) fed the DMA unit phantom
 * responses: after 17 runs of [DMA one row, signal; HALT] the semaphore read 19 and the 17th
 * run timed out. Every run must succeed, count once, and leave the other VMEM lines alone. */
Test(chip_rtl, runs_back_to_back_stay_exact) {
  chip_t *c = make_chip(4, 16, 5);
  const unsigned line = 16;
  uint8_t row[16], back[16];
  for (unsigned i = 0; i < 16; i++) row[i] = (uint8_t)(0xA0 + i);
  cr_assert_eq(chip_hbm_write(c, 0, row, sizeof row), 0);
  /* a sentinel line that no program touches */
  uint8_t sentinel[16] = {0};
  for (unsigned i = 0; i < 16; i++) sentinel[i] = (uint8_t)(0x5A ^ i);
  cr_assert_eq(chip_hbm_write(c, 4096, sentinel, line), 0);
  fw_prog_t s;
  fw_prog_init(&s);
  fw_dma_hbm_to_vmem(&s, ISA_SEM_NONE, 0, 4096, line, 50, 1, line);
  fw_fence(&s);
  fw_halt(&s);
  char err[256];
  chip_status_t st;
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, s.words, s.count, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), 0, "%s", st.report);
  fw_prog_free(&s);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_dma_hbm_to_vmem(&p, 1, 1, 0, line, 7, 1, line);
  fw_halt(&p);
  for (unsigned run = 1; run <= 20; run++) {
    cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, sizeof err), 0, "%s", err);
    cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), 0, "run %u: %s", run, st.report);
    cr_assert_eq(chip_sem(c, 1), run, "run %u: semaphore 1 holds %u", run, chip_sem(c, 1));
  }
  /* the sentinel line is still the sentinel: copy it back out and compare */
  fw_prog_t q;
  fw_prog_init(&q);
  fw_dma_vmem_to_hbm(&q, ISA_SEM_NONE, 0, 50, 8192, line, 1, line);
  fw_dma_vmem_to_hbm(&q, ISA_SEM_NONE, 0, 7, 8192 + line, line, 1, line);
  fw_fence(&q);
  fw_halt(&q);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, q.words, q.count, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), 0, "%s", st.report);
  cr_assert_eq(chip_hbm_read(c, 8192, back, line), 0);
  cr_assert_eq(memcmp(back, sentinel, line), 0, "VMEM line 50 changed between runs");
  cr_assert_eq(chip_hbm_read(c, 8192 + line, back, line), 0);
  cr_assert_eq(memcmp(back, row, line), 0, "VMEM line 7 holds the row");
  fw_prog_free(&p);
  fw_prog_free(&q);
  chip_free(c);
}

/* Defect found by a hostile tester: a program without a final HALT ran on into whatever the
 * command memory held past it (stale commands, or random bits after reset). The queue knows
 * the program's length: running past it is error END at the command after the last. */
Test(chip_rtl, running_past_the_program_is_an_error) {
  chip_t *c = make_chip(4, 16, 5);
  char err[256];
  chip_status_t st;
  /* a longer program first, so stale commands lie past the short one */
  fw_prog_t longer;
  fw_prog_init(&longer);
  for (int i = 0; i < 10; i++) fw_sem_signal(&longer, 2, 1);
  fw_halt(&longer);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, longer.words, longer.count, err, sizeof err), 0);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 1000, &st), 0, "%s", st.report);
  cr_assert_eq(chip_sem(c, 2), 10);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_sem_signal(&p, 3, 1);
  fw_sem_signal(&p, 3, 1);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, p.words, p.count, err, sizeof err), 0);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_END, "%s", st.report);
  cr_assert_eq(st.pc[ISA_QUEUE_COMPUTE], 2, "stopped at the command after the last");
  cr_assert(strstr(st.report, "ran past the end of the program"), "%s", st.report);
  cr_assert_eq(chip_sem(c, 3), 2, "the program ran once");
  cr_assert_eq(chip_sem(c, 2), 10, "none of the stale commands ran");
  /* a queue never loaded: error END at once */
  chip_t *fresh = make_chip(4, 16, 5);
  cr_assert_eq(chip_run(fresh, ISA_QMASK_DMA, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_DMA], ISA_ERR_END, "%s", st.report);
  /* an empty program, given as NULL (the copy of it passed NULL to memcpy: found by fuzzing
   * under UBSan), is loaded and stops at once too */
  cr_assert_eq(chip_load_program(fresh, ISA_QUEUE_COMPUTE, NULL, 0, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_run(fresh, ISA_QMASK_COMPUTE, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_END, "%s", st.report);
  chip_free(fresh);
  fw_prog_free(&p);
  fw_prog_free(&longer);
  chip_free(c);
}

/* Defect found by a hostile tester: a queue left running by a timeout went on running, and
 * the next program loaded over it ran twice ([SEM_SIGNAL s26 +6; HALT] left s26 at 12). A
 * timeout now aborts the queues (the report says so), and loading into a running queue is
 * refused. */
Test(chip_rtl, a_timeout_leaves_the_chip_ready_for_the_next_program) {
  chip_t *c = make_chip(4, 16, 5);
  char err[256];
  chip_status_t st;
  fw_prog_t stuck, next;
  fw_prog_init(&stuck);
  fw_prog_init(&next);
  fw_sem_wait(&stuck, 26, 1);  /* nobody signals 26 */
  fw_halt(&stuck);
  fw_sem_signal(&next, 26, 6);
  fw_halt(&next);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, stuck.words, stuck.count, err, sizeof err), 0);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 500, &st), -1);
  cr_assert(st.timed_out);
  cr_assert(strstr(st.report, "SEM_WAIT on semaphore 26 for 1") && strstr(st.report, "aborted"), "%s", st.report);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, next.words, next.count, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 500, &st), 0, "%s", st.report);
  cr_assert_eq(chip_sem(c, 26), 6, "the second program ran once, the first not at all");
  /* a queue running outside chip_run cannot be loaded over; chip_abort stops it */
  fw_prog_t waits;
  fw_prog_init(&waits);
  fw_sem_wait(&waits, 25, 1);
  fw_halt(&waits);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, waits.words, waits.count, err, sizeof err), 0);
  fw_prog_free(&waits);
  chip_begin(c, ISA_QMASK_COMPUTE);
  for (int i = 0; i < 10; i++) chip_tick(c);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, next.words, next.count, err, sizeof err), -1);
  cr_assert(strstr(err, "still running"), "%s", err);
  /* a run of the other queue that times out names both (it used to name only its own) */
  fw_prog_t dma_waits;
  fw_prog_init(&dma_waits);
  fw_sem_wait(&dma_waits, 24, 1);
  fw_halt(&dma_waits);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_DMA, dma_waits.words, dma_waits.count, err, sizeof err), 0, "%s", err);
  fw_prog_free(&dma_waits);
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 200, &st), -1);
  cr_assert(strstr(st.report, "compute queue still at command 0 (SEM_WAIT on semaphore 25") &&
                strstr(st.report, "DMA queue still at command 0 (SEM_WAIT on semaphore 24"),
            "%s", st.report);
  cr_assert_eq(chip_abort(c, ISA_QMASK_COMPUTE, 1000), 0);
  cr_assert_eq(chip_finish(c, false, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_ABORTED, "%s", st.report);
  cr_assert(strstr(st.report, "stopped by the host"), "%s", st.report);
  /* and a reset leaves the memories alone */
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, next.words, next.count, err, sizeof err), 0, "%s", err);
  chip_reset(c);
  cr_assert_eq(chip_sem(c, 26), 0, "reset clears the semaphores");
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 500, &st), 0, "%s", st.report);
  cr_assert_eq(chip_sem(c, 26), 6, "the program loaded before the reset is still there");
  fw_prog_free(&stuck);
  fw_prog_free(&next);
  chip_free(c);
}
