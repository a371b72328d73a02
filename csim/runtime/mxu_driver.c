/* mxu_driver: see mxu_driver.h. */
#include "runtime/mxu_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "vmodel/mxu_top.h"

static const char *const counter_ports[5] = {"cnt_compute_o", "cnt_weight_load_o",
                                             "cnt_weight_stall_o", "cnt_input_stall_o",
                                             "cnt_idle_o"};

int mxu_dev_open(mxu_dev_t *d, unsigned rows, unsigned cols, uint64_t seed, char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  d->acc_depth = mxu_top_acc_depth(rows, cols);
  d->model = d->acc_depth ? mxu_top_new(rows, cols, seed) : NULL;
  if (!d->model) {
    snprintf(err, errlen, "no %ux%u MXU in this build (built sizes: %s)", rows, cols, mxu_top_sizes());
    return -1;
  }
  d->rows = rows;
  d->cols = cols;
  vmodel_t *m = d->model;
  d->p_cmd_valid = vmodel_port(m, "cmd_valid_i");
  d->p_cmd_ready = vmodel_port(m, "cmd_ready_o");
  d->p_cmd_op = vmodel_port(m, "cmd_op_i");
  d->p_cmd_addr = vmodel_port(m, "cmd_acc_addr_i");
  d->p_cmd_rows = vmodel_port(m, "cmd_rows_i");
  d->p_cmd_accum = vmodel_port(m, "cmd_accumulate_i");
  d->p_w_valid = vmodel_port(m, "w_valid_i");
  d->p_w_ready = vmodel_port(m, "w_ready_o");
  d->p_w_row = vmodel_port(m, "w_row_i");
  d->p_a_valid = vmodel_port(m, "a_valid_i");
  d->p_a_ready = vmodel_port(m, "a_ready_o");
  d->p_a_row = vmodel_port(m, "a_row_i");
  d->p_rd_en = vmodel_port(m, "rd_en_i");
  d->p_rd_addr = vmodel_port(m, "rd_addr_i");
  d->p_rd_data = vmodel_port(m, "rd_data_o");
  d->p_busy = vmodel_port(m, "busy_o");
  d->p_error = vmodel_port(m, "error_o");
  for (int i = 0; i < 5; i++) d->p_cnt[i] = vmodel_port(m, counter_ports[i]);
  vmodel_poke(m, d->p_cmd_valid, 0);
  vmodel_poke(m, d->p_w_valid, 0);
  d->p_w_transpose = vmodel_port(m, "w_transpose_i");
  vmodel_poke(m, d->p_w_transpose, 0);
  vmodel_poke(m, d->p_a_valid, 0);
  vmodel_poke(m, d->p_rd_en, 0);
  vmodel_reset(m, 2);
  return 0;
}

void mxu_dev_close(mxu_dev_t *d) {
  vmodel_free(d->model);
  d->model = NULL;
}

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

int mxu_gemm_check(unsigned rows, unsigned cols, size_t m, size_t k, size_t n, char *err, size_t errlen) {
  const unsigned acc_depth = mxu_top_acc_depth(rows, cols);
  if (!acc_depth) {
    snprintf(err, errlen, "no %ux%u MXU in this build (built sizes: %s)", rows, cols, mxu_top_sizes());
    return -1;
  }
  if (m == 0 || k == 0 || n == 0) {
    snprintf(err, errlen, "matrix sizes must be at least 1 (M=%zu K=%zu N=%zu)", m, k, n);
    return -1;
  }
  size_t col_tiles = ceil_div(n, cols);
  if (m > acc_depth || col_tiles > acc_depth / m) {
    snprintf(err, errlen,
             "M x ceil(N/%u) = %zu x %zu accumulator rows exceed the %ux%u MXU's accumulator "
             "depth of %u rows",
             cols, m, col_tiles, rows, cols, acc_depth);
    return -1;
  }
  return 0;
}

int mxu_gemm_check_shape(const mxu_dev_t *d, size_t m, size_t k, size_t n, char *err, size_t errlen) {
  return mxu_gemm_check(d->rows, d->cols, m, k, n, err, errlen);
}

uint64_t mxu_contract_cycles(unsigned rows, unsigned cols, size_t m, size_t k, size_t n) {
  uint64_t f = (uint64_t)ceil_div(k, rows) * ceil_div(n, cols);
  uint64_t period = m > rows ? m : rows;
  return rows + (f - 1) * period + m + (rows + cols - 2) + MXU_PIPELINE_CYCLES;
}

/* Packs `count` 16-bit values into little-endian 32-bit words (element i at bits 16i). */
static void pack16(uint32_t *words, const uint16_t *vals, unsigned count) {
  memset(words, 0, ((count + 1) / 2) * sizeof *words);
  for (unsigned i = 0; i < count; i++) words[i / 2] |= (uint32_t)vals[i] << (16 * (i % 2));
}

typedef struct {
  uint8_t op, accumulate;
  uint32_t acc_addr, rows;
} mxu_cmd_t;

/* Weight row w_i of the program (tile w_i / R, its row w_i % R) onto the weight port: B's row
 * of the K tile, or with B transposed its column (MXU_LOAD's transpose), zero past the edges. */
static void drive_weight_row(mxu_dev_t *d, size_t w_i, size_t kt, size_t k, size_t n, const uint16_t *b,
                             uint16_t *row, uint32_t *words) {
  const unsigned R = d->rows, C = d->cols;
  const size_t t = w_i / R, r = w_i % R, ntile = t / kt, ktile = t % kt, kk = ktile * R + r;
  if (d->b_transposed) {
    /* load row r is weight column r: element e is B[ktile R + e][ntile C + r] */
    const size_t col = ntile * C + r;
    for (unsigned e = 0; e < R; e++) {
      const size_t ke = ktile * R + e;
      row[e] = (ke < k && col < n) ? b[ke * n + col] : 0;
    }
  } else {
    for (unsigned j = 0; j < C; j++) {
      const size_t col = ntile * C + j;
      row[j] = (kk < k && col < n) ? b[kk * n + col] : 0;
    }
  }
  pack16(words, row, C);
  vmodel_poke_words(d->model, d->p_w_row, words);
}

/* Activation row a_i (tile a_i / m, A's row a_i % m) onto the activation port: the K tile's
 * slice of the row, zero past K. */
static void drive_activation_row(mxu_dev_t *d, size_t a_i, size_t m, size_t kt, size_t k, const uint16_t *a,
                                 uint16_t *row, uint32_t *words) {
  const unsigned R = d->rows;
  const size_t t = a_i / m, i = a_i % m, ktile = t % kt;
  for (unsigned r = 0; r < R; r++) {
    const size_t kk = ktile * R + r;
    row[r] = kk < k ? a[i * k + kk] : 0;
  }
  pack16(words, row, R);
  vmodel_poke_words(d->model, d->p_a_row, words);
}

/* Read back: one accumulator row per cycle, data a cycle after the address, into C. */
static int read_back(mxu_dev_t *d, size_t m, size_t n, size_t nt, uint32_t *c, char *err, size_t errlen) {
  const unsigned C = d->cols;
  vmodel_t *mdl = d->model;
  uint32_t *acc_row = calloc(C, sizeof *acc_row);
  if (!acc_row) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t ntile = 0; ntile < nt; ntile++) {
    for (size_t i = 0; i < m; i++) {
      vmodel_poke(mdl, d->p_rd_en, 1);
      vmodel_poke(mdl, d->p_rd_addr, ntile * m + i);
      vmodel_step(mdl, 1);
      vmodel_peek_words(mdl, d->p_rd_data, acc_row);
      for (unsigned j = 0; j < C && ntile * C + j < n; j++) c[i * n + ntile * C + j] = acc_row[j];
    }
  }
  vmodel_poke(mdl, d->p_rd_en, 0);
  free(acc_row);
  return 0;
}

int mxu_gemm(mxu_dev_t *d, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
             uint32_t *c, mxu_gemm_stats_t *stats, char *err, size_t errlen) {
  if (mxu_gemm_check_shape(d, m, k, n, err, errlen)) return -1;
  const unsigned R = d->rows, C = d->cols;
  if (d->b_transposed && R != C) {
    snprintf(err, errlen, "a transposed B needs a square MXU, not %ux%u", R, C);
    return -1;
  }
  vmodel_poke(d->model, d->p_w_transpose, d->b_transposed);
  const size_t kt = ceil_div(k, R), nt = ceil_div(n, C), tiles = kt * nt;
  vmodel_t *mdl = d->model;

  /* Program: for each column tile, for each K tile: LOAD_WEIGHTS, MATMUL. */
  mxu_cmd_t *cmds = calloc(2 * tiles, sizeof *cmds);
  uint16_t *row = calloc(R > C ? R : C, sizeof *row);
  uint32_t *words = calloc(C * 2 + 2, sizeof *words);
  if (!cmds || !row || !words) {
    free(cmds), free(row), free(words);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t t = 0; t < tiles; t++) {
    size_t ntile = t / kt, ktile = t % kt;
    cmds[2 * t] = (mxu_cmd_t){MXU_OP_LOAD_WEIGHTS, 0, 0, 0};
    cmds[2 * t + 1] = (mxu_cmd_t){MXU_OP_MATMUL, ktile > 0, (uint32_t)(ntile * m), (uint32_t)m};
  }

  uint64_t cnt0[5];
  for (int i = 0; i < 5; i++) cnt0[i] = vmodel_peek(mdl, d->p_cnt[i]);

  size_t cmd_i = 0, w_i = 0, a_i = 0;  /* next command, weight row, activation row */
  const size_t w_total = tiles * R, a_total = tiles * m;
  uint64_t cycles = 0;
  /* Watchdog: generous multiple of the contract; a stuck MXU becomes an error, not a hang. */
  const uint64_t limit = (d->stall_seed ? 16 : 4) * mxu_contract_cycles(R, C, m, k, n) + 1000;
  bool started = false;
  int rc = 0;
  rng_t stall_rng;
  rng_seed(&stall_rng, d->stall_seed);
  for (;;) {
    bool cmd_v = cmd_i < 2 * tiles, w_v = w_i < w_total, a_v = a_i < a_total;
    if (d->stall_seed) {
      uint64_t x = rng_next(&stall_rng);
      cmd_v &= (x % 3) != 0, w_v &= ((x >> 8) % 3) != 0, a_v &= ((x >> 16) % 3) != 0;
    }
    vmodel_poke(mdl, d->p_cmd_valid, cmd_v);
    if (cmd_v) {
      vmodel_poke(mdl, d->p_cmd_op, cmds[cmd_i].op);
      vmodel_poke(mdl, d->p_cmd_addr, cmds[cmd_i].acc_addr);
      vmodel_poke(mdl, d->p_cmd_rows, cmds[cmd_i].rows);
      vmodel_poke(mdl, d->p_cmd_accum, cmds[cmd_i].accumulate);
    }
    vmodel_poke(mdl, d->p_w_valid, w_v);
    if (w_v) drive_weight_row(d, w_i, kt, k, n, b, row, words);
    vmodel_poke(mdl, d->p_a_valid, a_v);
    if (a_v) drive_activation_row(d, a_i, m, kt, k, a, row, words);
    bool cmd_fire = cmd_v && vmodel_peek(mdl, d->p_cmd_ready);
    bool w_fire = w_v && vmodel_peek(mdl, d->p_w_ready);
    bool a_fire = a_v && vmodel_peek(mdl, d->p_a_ready);
    vmodel_step(mdl, 1);
    started |= cmd_fire;
    if (started) cycles++;
    if (d->progress && (cycles & 1023) == 0 && started) d->progress(d->progress_ctx, cycles, limit / 4);
    cmd_i += cmd_fire;
    w_i += w_fire;
    a_i += a_fire;
    if (cmd_i == 2 * tiles && w_i == w_total && a_i == a_total && !vmodel_peek(mdl, d->p_busy)) break;
    if (cycles > limit) {
      snprintf(err, errlen, "MXU watchdog: no completion after %llu cycles (commands %zu/%zu, "
               "weight rows %zu/%zu, activation rows %zu/%zu)", (unsigned long long)cycles,
               cmd_i, 2 * tiles, w_i, w_total, a_i, a_total);
      rc = -1;
      break;
    }
  }
  vmodel_poke(mdl, d->p_cmd_valid, 0);
  vmodel_poke(mdl, d->p_w_valid, 0);
  vmodel_poke(mdl, d->p_a_valid, 0);
  vmodel_poke(mdl, d->p_w_transpose, 0);
  if (rc == 0 && vmodel_peek(mdl, d->p_error)) {
    snprintf(err, errlen, "the MXU flagged a malformed command");
    rc = -1;
  }
  if (stats) {
    uint64_t *dst[5] = {&stats->counters.compute, &stats->counters.weight_load,
                        &stats->counters.weight_stall, &stats->counters.input_stall,
                        &stats->counters.idle};
    for (int i = 0; i < 5; i++) *dst[i] = vmodel_peek(mdl, d->p_cnt[i]) - cnt0[i];
    stats->cycles = cycles;
    stats->tiles = tiles;
    stats->readout_cycles = 0;
  }
  if (rc == 0) {
    rc = read_back(d, m, n, nt, c, err, errlen);
    if (rc == 0 && stats) stats->readout_cycles = (uint64_t)nt * m;
  }
  free(cmds), free(row), free(words);
  return rc;
}
