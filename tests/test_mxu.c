/*
 * RTL tests of the MXU (rtl/mxu_*.sv through rtl/mxu_top.sv, driven by csim/runtime/mxu_driver.c):
 * every GEMM bit-exact against csim/golden/mxu_golden.c and, with data offered every cycle, exactly
 * as many cycles as the timing contract of docs/mxu.md, over a table of shapes on every
 * array size in `make test` (4x4, 8x8, 16x16, 32x32, 4x8, 8x4). Also: back-pressure, special
 * values, accumulator reuse, counters, and malformed commands. Run once per reset seed. The
 * fast MXU model (csim/fast/mxu_fast.c) is held to the RTL's bits, cycles and counters on
 * every shape run without back-pressure.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/mxu_fast.h"
#include "golden/mxu_golden.h"
#include "runtime/mxu_driver.h"
#include "test_util.h"
#include "util/rng.h"
#include "vmodel/mxu_top.h"

typedef struct {
  unsigned rows, cols;
} mxu_size_t;

typedef struct {
  uint16_t *a, *b;
  uint32_t *c, *golden;
} gemm_bufs_t;

static gemm_bufs_t bufs_new(size_t m, size_t k, size_t n, rng_t *rng) {
  gemm_bufs_t g = {malloc(m * k * 2), malloc(k * n * 2), calloc(m * n, 4), calloc(m * n, 4)};
  cr_assert(g.a && g.b && g.c && g.golden);
  for (size_t i = 0; i < m * k; i++) g.a[i] = rng_bf16(rng, -6, 3);
  for (size_t i = 0; i < k * n; i++) g.b[i] = rng_bf16(rng, -6, 3);
  return g;
}

static void bufs_free(gemm_bufs_t *g) { free(g->a), free(g->b), free(g->c), free(g->golden); }

/* Runs one GEMM, checks every bit and (unless stalling) the cycle contract. */
static void check_gemm(mxu_dev_t *d, size_t m, size_t k, size_t n, rng_t *rng) {
  gemm_bufs_t g = bufs_new(m, k, n, rng);
  mxu_gemm_stats_t st;
  char err[256];
  int rc = mxu_gemm(d, m, k, n, g.a, g.b, g.c, &st, err, sizeof err);
  cr_assert_eq(rc, 0, "%ux%u M=%zu K=%zu N=%zu%s: %s", d->rows, d->cols, m, k, n, d->b_transposed ? " (B^T)" : "",
               err);
  mxu_golden_gemm(d->rows, m, k, n, g.a, g.b, g.golden);
  size_t bad = 0;
  for (size_t i = 0; i < m * n; i++) {
    if (g.c[i] != g.golden[i] && bad++ < 5)
      cr_log_error("%ux%u M=%zu K=%zu N=%zu: C[%zu][%zu] RTL 0x%08x golden 0x%08x", d->rows,
                   d->cols, m, k, n, i / n, i % n, g.c[i], g.golden[i]);
  }
  cr_assert_eq(bad, 0, "%zu mismatches", bad);
  uint64_t tiles = ((k + d->rows - 1) / d->rows) * ((n + d->cols - 1) / d->cols);
  cr_assert_eq(st.tiles, tiles);
  cr_assert_eq(st.counters.compute, tiles * m, "one compute cycle per activation row");
  cr_assert_eq(st.counters.weight_load, tiles * d->rows, "R weight rows per tile");
  if (!d->stall_seed) {
    uint64_t want = mxu_contract_cycles(d->rows, d->cols, m, k, n);
    cr_assert_eq(st.cycles, want, "%ux%u M=%zu K=%zu N=%zu: %llu cycles, contract %llu", d->rows,
                 d->cols, m, k, n, (unsigned long long)st.cycles, (unsigned long long)want);
    cr_assert_eq(st.counters.input_stall, 0);
    /* the fast model (csim/fast/mxu_fast.c) gives the RTL's bits, cycles and counters */
    uint32_t *fc = malloc(m * n * 4);
    mxu_fast_stats_t fs;
    mxu_fast_run(d->rows, d->cols, m, k, n, g.a, g.b, fc, &fs);
    cr_assert_eq(memcmp(fc, g.c, m * n * 4), 0, "%ux%u M=%zu K=%zu N=%zu: the fast model's bits differ", d->rows,
                 d->cols, m, k, n);
    const uint64_t rtl[8] = {st.cycles, st.readout_cycles, st.tiles, st.counters.compute, st.counters.weight_load,
                             st.counters.weight_stall, st.counters.input_stall, st.counters.idle};
    const uint64_t fast[8] = {fs.cycles, fs.readout_cycles, fs.tiles, fs.compute, fs.weight_load, fs.weight_stall,
                              fs.input_stall, fs.idle};
    static const char *const names[8] = {"cycles", "readout", "tiles", "compute", "weight_load", "weight_stall",
                                         "input_stall", "idle"};
    for (int i = 0; i < 8; i++)
      cr_assert_eq(fast[i], rtl[i], "%ux%u M=%zu K=%zu N=%zu: %s: fast %llu, RTL %llu", d->rows, d->cols, m, k, n,
                   names[i], (unsigned long long)fast[i], (unsigned long long)rtl[i]);
    free(fc);
  }
  bufs_free(&g);
}

static void open_dev(mxu_dev_t *d, unsigned rows, unsigned cols) {
  char err[256];
  cr_assert_eq(mxu_dev_open(d, rows, cols, test_seed(), err, sizeof err), 0, "%s", err);
}

/* The shape table: M < R, M = 1, one tile, K and N not multiples of the array, many
 * tiles, accumulate (many K tiles) and overwrite (many N tiles). */
static void shape_table(mxu_dev_t *d, rng_t *rng) {
  const size_t R = d->rows, C = d->cols;
  const size_t shapes[][3] = {
      {1, 1, 1},         {1, R, C},           {R, R, C},          {R - 1, R, C},
      {3, 2 * R + 1, C + 3}, {2 * R, 3 * R, 2 * C}, {5, 5 * R, 1},     {R + 3, R, 3 * C},
      {2 * R + 1, R - 1, C - 1}, {1, 4 * R, 2 * C}, {3 * R, 2, 2},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    check_gemm(d, shapes[i][0], shapes[i][1], shapes[i][2], rng);
}

ParameterizedTestParameters(mxu, shapes_bit_exact_and_cycle_exact) {
  static mxu_size_t sizes[] = {{4, 4}, {8, 8}, {16, 16}, {32, 32}, {4, 8}, {8, 4}};
  return cr_make_param_array(mxu_size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(mxu_size_t *s, mxu, shapes_bit_exact_and_cycle_exact, .timeout = 600) {
  mxu_dev_t d;
  open_dev(&d, s->rows, s->cols);
  rng_t rng;
  rng_seed(&rng, test_seed() * 1000 + s->rows * 10 + s->cols);
  shape_table(&d, &rng);
  mxu_dev_close(&d);
}

/* A x B from B^T, each tile loaded transposed: the same bits and, to the cycle, the same
 * timing contract as from B (docs/mxu.md, "Transposed loads"); also under back-pressure. */
ParameterizedTestParameters(mxu, transposed_b_is_bit_exact_and_cycle_exact) {
  static mxu_size_t sizes[] = {{4, 4}, {8, 8}, {16, 16}, {32, 32}};
  return cr_make_param_array(mxu_size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(mxu_size_t *s, mxu, transposed_b_is_bit_exact_and_cycle_exact, .timeout = 600) {
  mxu_dev_t d;
  open_dev(&d, s->rows, s->cols);
  d.b_transposed = true;
  rng_t rng;
  rng_seed(&rng, test_seed() * 1000 + s->rows * 10 + s->cols + 7);
  shape_table(&d, &rng);
  d.stall_seed = test_seed() * 17 + 3;
  check_gemm(&d, 2 * s->rows + 1, 3 * s->rows, 2 * s->cols + 1, &rng);
  mxu_dev_close(&d);
}

Test(mxu, transposed_b_needs_a_square_mxu, .timeout = 30) {
  mxu_dev_t d;
  open_dev(&d, 4, 8);
  d.b_transposed = true;
  uint16_t a[16] = {0}, b[32] = {0};
  uint32_t c[32];
  char err[256];
  cr_assert_eq(mxu_gemm(&d, 2, 4, 8, a, b, c, NULL, err, sizeof err), -1);
  cr_assert(strstr(err, "square"), "%s", err);
  mxu_dev_close(&d);
}

Test(mxu, random_shapes_under_backpressure, .timeout = 300) {
  rng_t rng;
  rng_seed(&rng, test_seed() + 99);
  const mxu_size_t sizes[] = {{4, 4}, {8, 4}, {4, 8}, {8, 8}};
  for (size_t s = 0; s < 4; s++) {
    mxu_dev_t d;
    open_dev(&d, sizes[s].rows, sizes[s].cols);
    d.stall_seed = test_seed() * 31 + s + 1;
    for (int i = 0; i < 6; i++)
      check_gemm(&d, 1 + rng_below(&rng, 20), 1 + rng_below(&rng, 30), 1 + rng_below(&rng, 30), &rng);
    mxu_dev_close(&d);
  }
}

Test(mxu, special_values_bit_exact, .timeout = 120) {
  static const uint16_t specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x807F,
                                      0x7F7F, 0xFF7F, 0x0080, 0x3F80, 0xBF80, 0x4000, 0x5F00};
  const size_t ns = sizeof specials / sizeof specials[0];
  mxu_dev_t d;
  open_dev(&d, 8, 8);
  rng_t rng;
  rng_seed(&rng, test_seed());
  const size_t m = 12, k = 19, n = 13;
  gemm_bufs_t g = bufs_new(m, k, n, &rng);
  for (size_t i = 0; i < m * k; i++)
    if (rng_below(&rng, 4) == 0) g.a[i] = specials[rng_below(&rng, ns)];
  for (size_t i = 0; i < k * n; i++)
    if (rng_below(&rng, 4) == 0) g.b[i] = specials[rng_below(&rng, ns)];
  char err[256];
  cr_assert_eq(mxu_gemm(&d, m, k, n, g.a, g.b, g.c, NULL, err, sizeof err), 0, "%s", err);
  mxu_golden_gemm(8, m, k, n, g.a, g.b, g.golden);
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(g.c[i], g.golden[i], "C[%zu]: RTL 0x%08x golden 0x%08x", i, g.c[i], g.golden[i]);
  bufs_free(&g);
  mxu_dev_close(&d);
}

Test(mxu, back_to_back_gemms_overwrite_the_accumulator, .timeout = 120) {
  mxu_dev_t d;
  open_dev(&d, 4, 4);
  rng_t rng;
  rng_seed(&rng, test_seed() + 5);
  for (int i = 0; i < 4; i++) check_gemm(&d, 6, 9, 7, &rng);
  mxu_dev_close(&d);
}

Test(mxu, shape_limits_are_checked, .timeout = 30) {
  mxu_dev_t d;
  open_dev(&d, 4, 4);
  char err[256] = "";
  cr_assert_eq(mxu_gemm_check_shape(&d, 0, 4, 4, err, sizeof err), -1);
  cr_assert_eq(mxu_gemm_check_shape(&d, 4096, 4, 4, err, sizeof err), 0);
  cr_assert_eq(mxu_gemm_check_shape(&d, 4096, 4, 5, err, sizeof err), -1, "two column tiles of 4096 rows");
  cr_assert(strstr(err, "accumulator depth"), "%s", err);
  mxu_dev_close(&d);
}

/* Drives one raw command and returns error_o after it settles. */
static int raw_command(mxu_dev_t *d, int op, unsigned addr, unsigned rows) {
  vmodel_t *m = d->model;
  vmodel_poke(m, d->p_cmd_valid, 1);
  vmodel_poke(m, d->p_cmd_op, op);
  vmodel_poke(m, d->p_cmd_addr, addr);
  vmodel_poke(m, d->p_cmd_rows, rows);
  vmodel_poke(m, d->p_cmd_accum, 0);
  cr_assert_eq(vmodel_peek(m, d->p_cmd_ready), 1);
  vmodel_step(m, 1);
  vmodel_poke(m, d->p_cmd_valid, 0);
  vmodel_step(m, 3);
  return (int)vmodel_peek(m, d->p_error);
}

Test(mxu, malformed_matmul_sets_error_and_is_dropped, .timeout = 30) {
  mxu_dev_t d;
  open_dev(&d, 4, 4);
  cr_assert_eq(vmodel_peek(d.model, d.p_error), 0, "reset clears the error flag");
  cr_assert_eq(raw_command(&d, MXU_OP_MATMUL, 0, 0), 1, "zero rows is malformed");
  cr_assert_eq(vmodel_peek(d.model, d.p_busy), 0, "a dropped command leaves the MXU idle");
  mxu_dev_close(&d);
  open_dev(&d, 4, 4);
  cr_assert_eq(raw_command(&d, MXU_OP_MATMUL, 4090, 7), 1, "rows past the accumulator end");
  cr_assert_eq(vmodel_peek(d.model, d.p_busy), 0);
  mxu_dev_close(&d);
  open_dev(&d, 4, 4);
  cr_assert_eq(raw_command(&d, MXU_OP_MATMUL, 4095, 4097), 1, "a sum that would wrap the check");
  mxu_dev_close(&d);
  open_dev(&d, 4, 4);
  cr_assert_eq(raw_command(&d, MXU_OP_MATMUL, 100, 8100), 1, "rows far past the end");
  mxu_dev_close(&d);
  open_dev(&d, 4, 4);
  cr_assert_eq(raw_command(&d, MXU_OP_MATMUL, 4089, 7), 0, "exactly up to the end is fine");
  cr_assert_eq(vmodel_peek(d.model, d.p_busy), 1, "it waits for its activations");
  mxu_dev_close(&d);
}

Test(mxu, idle_mxu_counts_idle_cycles_only, .timeout = 30) {
  mxu_dev_t d;
  open_dev(&d, 8, 8);
  uint64_t before[5];
  for (int i = 0; i < 5; i++) before[i] = vmodel_peek(d.model, d.p_cnt[i]);
  vmodel_step(d.model, 1000);
  cr_assert_eq(vmodel_peek(d.model, d.p_cnt[4]) - before[4], 1000, "idle");
  for (int i = 0; i < 4; i++) cr_assert_eq(vmodel_peek(d.model, d.p_cnt[i]), before[i]);
  cr_assert_eq(vmodel_peek(d.model, d.p_busy), 0);
  mxu_dev_close(&d);
}

Test(mxu, unknown_size_is_reported, .timeout = 10) {
  mxu_dev_t d;
  char err[256] = "";
  cr_assert_eq(mxu_dev_open(&d, 3, 5, 1, err, sizeof err), -1);
  cr_assert(strstr(err, "no 3x5 MXU"), "%s", err);
}
