/*
 * The firmware GEMM on one chip (fw/gemm.c through csim/runtime/chip_gemm.c; docs/gemm.md):
 * many shapes through HBM on 4x4 and 16x16 chips, bit-exact against the golden model
 * (csim/golden/gemm_golden.c) with one compute cycle per activation row per tile; K panels of
 * every size; the ReLU and bf16 epilogues; B^T and A^T in HBM, the same bits as plain (B^T in
 * the same cycles, A^T within 1% at scale); a narrow, slow HBM; and the transposed weight load
 * (MXU_LOAD's transpose bit, docs/mxu.md) that B^T relies on, exact and as fast as a plain one.
 * Run per reset seed on the RTL and under every model of MODELS (Makefile).
 */
#include <stdlib.h>
#include <string.h>

#include "chip_test.h"
#include "golden/gemm_golden.h"
#include "golden/mxu_golden.h"
#include "runtime/chip_gemm.h"
#include "util/rng.h"

TestSuite(gemm, .timeout = 300);

static void check_gemm_opts(chip_t *c, size_t m, size_t k, size_t n, rng_t *rng, const chip_gemm_opts_t *opts) {
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4);
  for (size_t i = 0; i < m * k; i++) a[i] = rng_bf16(rng, -5, 3);
  for (size_t i = 0; i < k * n; i++) b[i] = rng_bf16(rng, -5, 3);
  chip_gemm_stats_t st;
  test_chip_gemm(c, m, k, n, a, b, out, opts, &st);
  test_gemm_matches_golden(chip_geometry(c)->rows, m, k, n, a, b, opts, out);
  cr_assert_gt(st.hbm_bytes, 0);
  cr_assert_lt(st.cycles, chip_cycle_bound(c), "the run's bound (its timeout is twice that) is an upper bound");
  test_sems_zero(c, "after the GEMM");
  cr_assert_eq(st.compute, ((k + chip_geometry(c)->rows - 1) / chip_geometry(c)->rows) *
                               ((n + chip_geometry(c)->cols - 1) / chip_geometry(c)->cols) * m,
               "one compute cycle per activation row per tile");
  free(a), free(b), free(out);
}

static void check_gemm(chip_t *c, size_t m, size_t k, size_t n, rng_t *rng) {
  check_gemm_opts(c, m, k, n, rng, NULL);
}

/* The firmware GEMM with B^T in HBM (b_transposed: a layer's weights seen from the backward
 * pass): the same bits as with B; and with whole tiles (K, N multiples of the MXU) the same
 * cycles. Ragged edge tiles move other DMA shapes (N rows of K bytes, not K of N), so their
 * cycles may differ by what those DMAs cost. */
Test(gemm, gemm_with_b_transposed_matches_plain_to_the_cycle) {
  static const unsigned sizes[] = {4, 16};
  const size_t shapes[][3] = {{1, 1, 1}, {13, 23, 10}, {40, 64, 48}, {7, 5, 33}, {64, 64, 64}, {33, 100, 17},
                              {5, 32, 16}, {70, 48, 32}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 19 + 3);
  for (unsigned z = 0; z < 2; z++) {
    chip_t *c = test_chip(sizes[z], 16, 7);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      const size_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
      uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
      uint32_t *plain = malloc(m * n * 4), *trans = malloc(m * n * 4), *want = malloc(m * n * 4);
      for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -5, 3);
      for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -5, 3);
      const chip_gemm_opts_t po = {.b_transposed = false}, to = {.b_transposed = true};
      chip_gemm_stats_t ps, ts;
      test_chip_gemm(c, m, k, n, a, b, plain, &po, &ps);
      test_chip_gemm(c, m, k, n, a, b, trans, &to, &ts);
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
  test_chip_gemm(c, m, k, n, a, b, plain, &po, &ps);
  test_chip_gemm(c, m, k, n, a, b, trans, &to, &ts);
  test_sems_zero(c, "after the GEMMs");
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
Test(gemm, gemm_with_a_transposed_matches_plain) {
  static const struct { unsigned size; size_t m, k, n; unsigned kp; } cases[] = {
      {4, 1, 1, 1, 0},     {4, 13, 23, 10, 0},  {4, 7, 5, 33, 0},    {4, 33, 100, 17, 0}, {4, 40, 64, 48, 0},
      {4, 70, 48, 32, 0},  {4, 700, 20, 40, 0}, {4, 301, 40, 64, 1}, {4, 301, 40, 64, 3}, {16, 1, 1, 1, 0},
      {16, 13, 23, 10, 0}, {16, 33, 100, 17, 0}, {16, 70, 48, 32, 0}, {16, 100, 70, 130, 0}, {16, 1100, 40, 200, 0},
      {16, 300, 100, 90, 2}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 23 + 7);
  chip_t *chips[2] = {test_chip(4, 16, 7), test_chip(16, 64, 20)};
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
Test(gemm, gemm_with_a_transposed_keeps_99_percent_of_plain) {
  const unsigned hbm[][2] = {{957, 100}, {64, 20}};
  rng_t rng;
  rng_seed(&rng, test_seed() * 29 + 1);
  const size_t m = 256, k = 256, n = 256;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *plain = malloc(m * n * 4), *trans = malloc(m * n * 4);
  for (size_t j = 0; j < m * k; j++) a[j] = rng_bf16(&rng, -5, 3);
  for (size_t j = 0; j < k * n; j++) b[j] = rng_bf16(&rng, -5, 3);
  for (int h = 0; h < 2; h++) {
    chip_t *c = test_chip(16, hbm[h][0], hbm[h][1]);
    const chip_gemm_opts_t po = {0}, to = {.a_transposed = true};
    chip_gemm_stats_t ps, ts;
    test_chip_gemm(c, m, k, n, a, b, plain, &po, &ps);
    test_chip_gemm(c, m, k, n, a, b, trans, &to, &ts);
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

Test(gemm, gemm_epilogue_relu_and_bf16) {
  chip_t *c = test_chip(4, 16, 7);
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

/* check_gemm of every M x K x N shape in turn on chip c, the operands drawn from rng; frees c. */
static void check_gemm_shapes(chip_t *c, const size_t (*shapes)[3], size_t count, rng_t *rng) {
  for (size_t i = 0; i < count; i++) check_gemm(c, shapes[i][0], shapes[i][1], shapes[i][2], rng);
  chip_free(c);
}

Test(gemm, gemm_shapes_through_hbm_4x4) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 3 + 1);
  static const size_t shapes[][3] = {{1, 1, 1}, {4, 4, 4}, {3, 5, 7}, {7, 9, 5}, {1, 17, 2}, {16, 16, 16},
                                     {9, 8, 31}, {33, 3, 4}, {5, 40, 9}, {2, 2, 64}};
  check_gemm_shapes(test_chip(4, 16, 7), shapes, sizeof shapes / sizeof shapes[0], &rng);
}

Test(gemm, gemm_shapes_through_hbm_16x16) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 5 + 2);
  static const size_t shapes[][3] = {{16, 16, 16}, {100, 70, 130}, {1, 300, 17}, {64, 33, 64}, {300, 16, 40}};
  check_gemm_shapes(test_chip(16, 64, 20), shapes, sizeof shapes / sizeof shapes[0], &rng);
}

/* The three tilings (docs/gemm.md): one K tile per panel, panels of several K tiles with
 * a short last panel, and one panel over all of K; shapes with partial tiles everywhere. */
Test(gemm, gemm_k_panels_of_every_size) {
  chip_t *c = test_chip(4, 16, 9);
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

Test(gemm, gemm_with_narrow_slow_hbm) {
  chip_t *c = test_chip(4, 4, 50);
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 3);
  check_gemm(c, 13, 11, 10, &rng);
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
  const uint64_t cycles = test_run_programs(c, &cq, &dq, 100000, NULL);
  cr_assert_eq(chip_hbm_read(c, 2u << 20, out, m * line), 0);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  return cycles;
}

/* A*B^T without a transposed copy: B^T's lines loaded transposed give the weights B's lines
 * give, bit for bit and in the same cycles (docs/mxu.md, "Transposed loads"). */
Test(gemm, transposed_weight_load_is_exact_and_as_fast) {
  static const unsigned sizes[] = {4, 16};
  rng_t rng;
  rng_seed(&rng, test_seed() * 31 + 5);
  for (unsigned z = 0; z < 2; z++) {
    const unsigned size = sizes[z];
    const size_t m = 2 * size + 3;
    chip_t *c = test_chip(size, 64, 9);
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
