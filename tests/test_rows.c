/*
 * The row kernels (fw/rows.c: Softmax, LayerNorm, GELU, Add, Mul, Div, Relu over the rows of a
 * matrix) on chips of this run's model, bit-exact against their golden model
 * (csim/golden/rows_golden.c): rows of K = 1, 3, C - 1, C, C + 1, 3C + 5 (and 768 on 16x16),
 * M = 1, 7, 64, one core and two; Softmax on large values of both signs (the max subtracted
 * keeps EXP finite) and with a pre-scale; LayerNorm with and without a residual; both GELUs.
 * Every run leaves the output's padding channel and the bytes round the output as they were,
 * and every semaphore at zero. Bad shapes are refused with their messages. The BERT-base
 * figures of docs/timing.md ("Row kernels") are measured on a v3 chip (fast model).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "chip_test.h"
#include "fw/act.h"
#include "fw/gemm.h"
#include "fw/hal.h"
#include "fw/rows.h"
#include "golden/rows_golden.h"
#include "golden/vec_golden.h"
#include "pod/machine.h"
#include "util/bits.h"
#include "util/rng.h"

TestSuite(rows, .timeout = 900);

enum { GUARD = 256 };
static const uint8_t GUARD_BYTE = 0xA5;
static const uint32_t ONE = 0x3F800000u;

static chip_t *rows_chip(unsigned size, unsigned cores, uint64_t hbm) {
  chip_config_t cfg = test_chip_config(size, size, 64, 10);
  cfg.hbm_bytes = hbm;
  if (cores > 1) cfg.mxus = 2, cfg.cores = cores;
  return test_chip_new(&cfg);
}

/* Random bf16 of both signs over binades [2^(lo-127), 2^(hi-127)), a few zeros of either sign. */
static void random_bf16(rng_t *r, uint16_t *v, size_t n, unsigned lo, unsigned hi) {
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = rng_next(r);
    if (x % 53 == 0)
      v[i] = (x >> 8) & 1 ? 0x8000 : 0;
    else
      v[i] = (uint16_t)(((x >> 20) & 0x8000) | (uint16_t)(lo + (x >> 8) % (hi - lo)) << 7 | ((x >> 32) & 0x7F));
  }
}

static uint32_t random_f32(rng_t *r) { /* magnitudes in [0.5, 2), both signs */
  const uint64_t x = rng_next(r);
  return (uint32_t)((x >> 40) & 1) << 31 | (uint32_t)(126 + (x >> 8) % 2) << 23 | (uint32_t)(x & 0x7FFFFF);
}

/* Everything a case places in HBM. */
typedef struct {
  fw_rows_kind_t kind;
  uint32_t m, k, scale, eps, vmem;
  bool has_b;
  const uint16_t *in, *b;
  const uint32_t *gamma, *beta, *row; /* k fp32 each */
} case_t;

static uint32_t put(chip_t *c, uint32_t *at, const void *src, size_t n) {
  const uint32_t a = *at;
  cr_assert_eq(chip_hbm_write(c, a, src, n), 0);
  *at = (uint32_t)((a + n + 63) & ~63ull);
  return a;
}

/* A matrix's bytes: rows of Cp bf16, the padding channel zero. */
static uint8_t *pack(uint32_t m, uint32_t k, const uint16_t *v) {
  const uint32_t cp = (k + 1) & ~1u;
  uint8_t *b = calloc((size_t)m * cp, 2);
  cr_assert_not_null(b);
  for (uint32_t i = 0; i < m; i++) memcpy(b + (size_t)i * cp * 2, v + (size_t)i * k, 2ull * k);
  return b;
}

/* fp32 values padded with zeros to whole lines of `lanes`. */
static uint32_t put_vec(chip_t *c, uint32_t *at, const uint32_t *v, uint32_t k, unsigned lanes) {
  const uint32_t n = (k + lanes - 1) / lanes * lanes;
  uint32_t *p = calloc(n, 4);
  memcpy(p, v, 4ull * k);
  const uint32_t a = put(c, at, p, 4ull * n);
  free(p);
  return a;
}

static int build(const chip_geometry_t *g, const fw_rows_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                 size_t errlen) {
  if (a->op == FW_ROWS_SOFTMAX) return fw_softmax_rows(g, a, cq, dq, err, errlen);
  if (a->op == FW_ROWS_LAYERNORM) return fw_layernorm_rows(g, a, cq, dq, err, errlen);
  return fw_map_rows(g, a, cq, dq, err, errlen);
}

/* Places the case in HBM, runs it, reads the output (m x k) into got. Returns the cycles. */
static uint64_t run_case(chip_t *c, const case_t *t, uint16_t *got) {
  const chip_geometry_t *g = chip_geometry(c);
  const uint32_t cp = (t->k + 1) & ~1u;
  const size_t bytes = (size_t)t->m * cp * 2;
  fw_rows_args_t a = {.op = t->kind, .scale = t->scale, .epsilon = t->eps, .has_b = t->has_b, .vmem_lines = t->vmem};
  a.in = (fw_act_t){.n = t->m, .c = t->k, .h = 1, .w = 1};
  a.out = a.b = a.in;
  uint32_t at = 0x1000;
  uint8_t *p = pack(t->m, t->k, t->in);
  a.in.addr = put(c, &at, p, bytes);
  free(p);
  if (t->b) {
    p = pack(t->m, t->k, t->b);
    a.b.addr = put(c, &at, p, bytes);
    free(p);
  }
  uint32_t consts[2 * VEC_GOLDEN_MAX_LANES];
  const uint32_t nc = fw_rows_consts(g, t->kind, t->k, consts);
  if (nc) a.consts = put(c, &at, consts, 4ull * nc * g->cols);
  if (t->gamma) a.gamma = put_vec(c, &at, t->gamma, t->k, g->cols);
  if (t->beta) a.beta = put_vec(c, &at, t->beta, t->k, g->cols);
  if (t->row) a.row = put_vec(c, &at, t->row, t->k, g->cols);
  a.out.addr = at + GUARD;
  const size_t span = bytes + 2 * GUARD;
  uint8_t *out = malloc(span);
  memset(out, GUARD_BYTE, span);
  memset(out + GUARD, 0, bytes);
  cr_assert_eq(chip_hbm_write(c, a.out.addr - GUARD, out, span), 0);
  fw_prog_t cq[2], dq[2];
  for (int k = 0; k < 2; k++) fw_prog_init(&cq[k]), fw_prog_init(&dq[k]);
  char err[256];
  cr_assert_eq(build(g, &a, cq, dq, err, sizeof err), 0, "%s", err);
  const uint64_t cycles = test_run_cores(c, cq, dq, 200000000);
  cr_assert_eq(chip_hbm_read(c, a.out.addr - GUARD, out, span), 0);
  for (size_t i = 0; i < GUARD; i++) {
    cr_assert_eq(out[i], GUARD_BYTE, "byte %zu before the output was written", GUARD - i);
    cr_assert_eq(out[span - 1 - i], GUARD_BYTE, "byte %zu after the output was written", i);
  }
  for (uint32_t i = 0; i < t->m; i++) {
    memcpy(got + (size_t)i * t->k, out + GUARD + (size_t)i * cp * 2, 2ull * t->k);
    if (t->k % 2) {
      uint16_t pad;
      memcpy(&pad, out + GUARD + (size_t)i * cp * 2 + 2ull * t->k, 2);
      cr_assert_eq(pad, 0, "row %u: the padding channel is 0x%04x, not 0", i, pad);
    }
  }
  free(out);
  return cycles;
}

static const char *kind_name(fw_rows_kind_t k) {
  static const char *const n[] = {"softmax", "layernorm", "gelu_erf", "gelu_tanh", "add", "add_row", "mul", "div", "relu"};
  return n[k];
}

static void golden(const case_t *t, unsigned lanes, uint16_t *want) {
  int rc;
  switch (t->kind) {
  case FW_ROWS_SOFTMAX: rc = rows_golden_softmax(lanes, t->m, t->k, t->scale, t->in, want); break;
  case FW_ROWS_LAYERNORM:
    rc = rows_golden_layernorm(lanes, t->m, t->k, t->in, t->has_b ? t->b : NULL, t->gamma, t->beta, t->eps, want);
    break;
  default: {
    static const rows_golden_map_t map[] = {[FW_ROWS_GELU_ERF] = ROWS_GOLDEN_GELU_ERF,
                                            [FW_ROWS_GELU_TANH] = ROWS_GOLDEN_GELU_TANH,
                                            [FW_ROWS_ADD] = ROWS_GOLDEN_ADD,
                                            [FW_ROWS_ADD_ROW] = ROWS_GOLDEN_ADD_ROW,
                                            [FW_ROWS_MUL] = ROWS_GOLDEN_MUL,
                                            [FW_ROWS_DIV] = ROWS_GOLDEN_DIV,
                                            [FW_ROWS_RELU] = ROWS_GOLDEN_RELU};
    rc = rows_golden_map(map[t->kind], lanes, t->m, t->k, t->in, t->b, t->row, t->scale, want);
  }
  }
  cr_assert_eq(rc, 0);
}

/* Kernel `kind` on m x k random rows (exponents [lo, hi)) on chip c, against the golden model. */
static void check_in(chip_t *c, fw_rows_kind_t kind, uint32_t m, uint32_t k, unsigned lo, unsigned hi,
                     uint32_t scale, bool has_b, uint32_t vmem) {
  const unsigned lanes = chip_geometry(c)->cols;
  const size_t n = (size_t)m * k;
  uint16_t *in = malloc(2 * n), *b = malloc(2 * n), *got = malloc(2 * n), *want = malloc(2 * n);
  uint32_t *gamma = malloc(4ull * k), *beta = malloc(4ull * k);
  rng_t r;
  rng_seed(&r, test_seed() * 7919 + m * 131 + k * 17 + kind);
  random_bf16(&r, in, n, lo, hi);
  random_bf16(&r, b, n, lo, hi);
  for (uint32_t i = 0; i < k; i++) gamma[i] = random_f32(&r), beta[i] = random_f32(&r);
  case_t t = {.kind = kind, .m = m, .k = k, .scale = scale, .eps = 0x3727C5ACu /* 1e-5 */, .has_b = has_b, .in = in, .vmem = vmem};
  if (has_b) t.b = b;
  if (kind == FW_ROWS_LAYERNORM) t.gamma = gamma, t.beta = beta;
  if (kind == FW_ROWS_ADD_ROW) t.row = gamma;
  run_case(c, &t, got);
  golden(&t, lanes, want);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(got[i], want[i], "%ux%u chip, %s, %u rows of %u, scale 0x%08x%s: out[%zu] (row %zu) chip 0x%04x golden 0x%04x",
                 lanes, lanes, kind_name(kind), m, k, scale, has_b ? " with b" : "", i, i / k, got[i], want[i]);
  if (kind == FW_ROWS_SOFTMAX) /* probabilities: in [0, 1], each row's adding to one */
    for (uint32_t i = 0; i < m; i++) {
      double sum = 0;
      for (uint32_t j = 0; j < k; j++) {
        const double v = bits_bf16_value(got[(size_t)i * k + j]);
        cr_assert(v >= 0 && v <= 1, "row %u lane %u: %g is not a probability", i, j, v);
        sum += v;
      }
      cr_assert(fabs(sum - 1) < 0.01, /* each rounded to bf16: within 2^-9 of the sum */
                "%u rows of %u: row %u adds to %.6f", m, k, i, sum);
    }
  free(in), free(b), free(got), free(want), free(gamma), free(beta);
}

static void check(chip_t *c, fw_rows_kind_t kind, uint32_t m, uint32_t k, unsigned lo, unsigned hi,
                  uint32_t scale, bool has_b) {
  check_in(c, kind, m, k, lo, hi, scale, has_b, 0);
}

/* The K of the brief's list for a chip of C columns. */
static void ks_of(unsigned c, uint32_t *ks, size_t *nk, bool big) {
  const uint32_t v[] = {1, 3, c - 1, c, c + 1, 3 * c + 5};
  *nk = 0;
  for (size_t i = 0; i < 6; i++) ks[(*nk)++] = v[i];
  if (big) ks[(*nk)++] = 768;
}

static void sweep(fw_rows_kind_t kind, uint32_t scale, bool has_b, unsigned lo, unsigned hi) {
  static const uint32_t ms[] = {1, 7, 64};
  const unsigned sizes[] = {4, 16};
  for (int s = 0; s < 2; s++) {
    chip_t *c = rows_chip(sizes[s], 1, 1u << 22);
    uint32_t ks[8];
    size_t nk;
    ks_of(sizes[s], ks, &nk, sizes[s] == 16);
    for (size_t i = 0; i < nk; i++)
      for (size_t j = 0; j < 3; j++) check(c, kind, ms[j], ks[i], lo, hi, scale, has_b);
    chip_free(c);
  }
}

Test(rows, softmax_every_length) { sweep(FW_ROWS_SOFTMAX, ONE, false, 120, 130); }
/* values up to 2^30 of both signs: e^x overflows unless the row's max is subtracted */
Test(rows, softmax_of_large_and_negative_values) { sweep(FW_ROWS_SOFTMAX, ONE, false, 120, 157); }
Test(rows, softmax_with_a_pre_scale) { sweep(FW_ROWS_SOFTMAX, 0x3E000000u /* 1/8 = 1/sqrt(64) */, false, 120, 131); }
Test(rows, layernorm) { sweep(FW_ROWS_LAYERNORM, ONE, false, 118, 131); }
Test(rows, layernorm_with_a_residual) { sweep(FW_ROWS_LAYERNORM, ONE, true, 118, 131); }
Test(rows, gelu_erf) { sweep(FW_ROWS_GELU_ERF, ONE, false, 118, 131); }
Test(rows, gelu_tanh) { sweep(FW_ROWS_GELU_TANH, ONE, false, 118, 131); }
Test(rows, add_relu_mul_div) {
  sweep(FW_ROWS_ADD, ONE, true, 118, 131);
  sweep(FW_ROWS_ADD_ROW, ONE, false, 118, 131);
  sweep(FW_ROWS_RELU, ONE, false, 118, 131);
  sweep(FW_ROWS_MUL, 0x3FB504F3u /* sqrt 2 */, false, 118, 131);
  sweep(FW_ROWS_DIV, 0x41000000u /* 8: attention's sqrt(d), d = 64 */, false, 118, 131);
  sweep(FW_ROWS_DIV, 0x40400000u /* 3: a reciprocal that rounds */, false, 118, 131);
}

/* Two cores split the rows; 61 rows: an odd split, and tiles of unequal length. */
Test(rows, two_cores) {
  chip_t *c = rows_chip(4, 2, 1u << 22);
  const fw_rows_kind_t kinds[] = {FW_ROWS_SOFTMAX, FW_ROWS_LAYERNORM, FW_ROWS_GELU_ERF, FW_ROWS_GELU_TANH, FW_ROWS_ADD};
  for (size_t i = 0; i < 5; i++)
    for (uint32_t k = 3; k <= 17; k += 14) check(c, kinds[i], 61, k, 118, 131, ONE, kinds[i] == FW_ROWS_ADD || kinds[i] == FW_ROWS_LAYERNORM);
  check(c, FW_ROWS_SOFTMAX, 1, 5, 118, 131, ONE, false); /* one row: core 1 has none */
  chip_free(c);
}

/* A small VMEM budget: many tiles of few rows, each slot reloaded. */
Test(rows, many_small_tiles) {
  chip_t *c = rows_chip(4, 1, 1u << 22);
  /* rows of 4 blocks: 16 lines of slots and 5 of work a row, 2 of constants and 8 of gamma
   * and beta: 96 lines take tiles of 4 rows */
  check_in(c, FW_ROWS_LAYERNORM, 64, 13, 118, 131, ONE, true, 96);
  check_in(c, FW_ROWS_SOFTMAX, 64, 13, 118, 131, ONE, false, 40);
  chip_free(c);
}

/* The planted error the masks guard against: without -Inf past K, a softmax row's padding
 * lanes would take part in its sum (e^(0 - max) > 0). Golden and chip must both differ from a
 * softmax over the padded length. */
Test(rows, softmax_padding_lanes_take_no_part) {
  chip_t *c = rows_chip(4, 1, 1u << 22);
  const uint16_t in[3] = {0xC000, 0xC040, 0xBF80}; /* -2, -3, -1: all below the padding's 0 */
  uint16_t got[3], want[3], padded[4];
  case_t t = {.kind = FW_ROWS_SOFTMAX, .m = 1, .k = 3, .scale = ONE, .in = in};
  run_case(c, &t, got);
  golden(&t, 4, want);
  const uint16_t in4[4] = {0xC000, 0xC040, 0xBF80, 0};
  cr_assert_eq(rows_golden_softmax(4, 1, 4, ONE, in4, padded), 0);
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(got[i], want[i]);
    cr_assert_neq(got[i], padded[i], "lane %d: the padding lane took part", i);
  }
  /* the three probabilities add to about one */
  double s = 0;
  for (int i = 0; i < 3; i++) s += bits_bf16_value(got[i]);
  cr_assert(s > 0.99 && s < 1.01, "sum %g", s);
  chip_free(c);
}

static void expect_refused(const chip_geometry_t *g, const fw_rows_args_t *a, const char *needle) {
  fw_prog_t cq[2], dq[2];
  for (int k = 0; k < 2; k++) fw_prog_init(&cq[k]), fw_prog_init(&dq[k]);
  char err[256] = "";
  cr_assert_eq(build(g, a, cq, dq, err, sizeof err), -1, "accepted (%s expected)", needle);
  cr_assert(strstr(err, needle), "message '%s' does not say '%s'", err, needle);
  for (int k = 0; k < 2; k++) fw_prog_free(&cq[k]), fw_prog_free(&dq[k]);
}

Test(rows, bad_shapes_are_refused) {
  chip_t *c = rows_chip(4, 1, 1u << 22);
  const chip_geometry_t *g = chip_geometry(c);
  fw_rows_args_t ok = {.op = FW_ROWS_SOFTMAX, .scale = ONE, .epsilon = 0x3727C5ACu, .consts = 0x100};
  ok.in = (fw_act_t){.addr = 0x1000, .n = 8, .c = 5, .h = 1, .w = 1};
  ok.out = ok.in, ok.out.addr = 0x2000;
  ok.b = ok.in, ok.b.addr = 0x3000;
  fw_rows_args_t a = ok;
  a.in.n = 0, a.out.n = 0;
  expect_refused(g, &a, "zero dimension");
  a = ok, a.in.h = 2;
  expect_refused(g, &a, "not a matrix");
  a = ok, a.in.bw = 1;
  expect_refused(g, &a, "not a matrix");
  a = ok, a.out.c = 6;
  expect_refused(g, &a, "the output is 8 rows of 6");
  a = ok, a.out.addr = 0x1008;
  expect_refused(g, &a, "overlap");
  a = ok, a.scale = 0x7F800000u;
  expect_refused(g, &a, "scale");
  a = ok, a.op = FW_ROWS_LAYERNORM, a.epsilon = 0;
  expect_refused(g, &a, "epsilon");
  a = ok, a.op = FW_ROWS_LAYERNORM, a.epsilon = 0xB727C5ACu;
  expect_refused(g, &a, "epsilon");
  a = ok, a.op = FW_ROWS_LAYERNORM, a.has_b = true, a.b.c = 4;
  expect_refused(g, &a, "the residual is 8 rows of 4");
  a = ok, a.op = FW_ROWS_ADD;
  expect_refused(g, &a, "no second operand");
  a = ok, a.op = FW_ROWS_DIV, a.scale = 0;
  expect_refused(g, &a, "divisor");
  a = ok, a.op = FW_ROWS_DIV, a.scale = 0x7F000000u; /* 2^127: 1/x is subnormal */
  expect_refused(g, &a, "divisor");
  a = ok, a.op = FW_ROWS_MUL, a.scale = 0x7FC00000u;
  expect_refused(g, &a, "not finite");
  a = ok, a.op = FW_ROWS_LAYERNORM; /* rows of 5 on 4 lanes: a padded last block needs consts */
  a.consts = 0xFFFFFFF0u;
  expect_refused(g, &a, "the constants");
  a = ok, a.op = FW_ROWS_SOFTMAX;
  expect_refused(g, &(fw_rows_args_t){.op = FW_ROWS_SOFTMAX}, "zero dimension");
  a = ok, a.vmem_lines = 3; /* a row of two blocks: 4 lines of slots and 2 of work */
  expect_refused(g, &a, "VMEM lines");
  a = ok, a.op = FW_ROWS_SOFTMAX + 100;
  expect_refused(g, &a, "not a map");
  chip_free(c);
}

/* Sums the VEC lines and counts the commands of core 0's compute program. */
static uint64_t vec_lines(const fw_prog_t *cq, uint32_t *vecs) {
  uint64_t lines = 0;
  *vecs = 0;
  for (size_t i = 0; i < cq->count; i++) {
    const uint32_t *w = cq->words + i * ISA_CMD_WORDS;
    if (isa_opcode(w) == ISA_OP_VEC) lines += ISA_GET(w, VEC, rows), ++*vecs;
  }
  return lines;
}

/* BERT-base's LayerNorm ([1024, 768], a residual) and attention Softmax ([12 x 128 x 8 rows,
 * 128], scale 1/8) on a v3 chip, fast model: the cycles beside the formula of docs/timing.md,
 * the vector unit's lines plus a cycle a command. */
Test(rows, bert_base_layer_norm_and_softmax_on_a_v3_chip) {
  machine_t mach = machine_default();
  char err[256];
  cr_assert_eq(machine_preset(2, &mach, err, sizeof err), 0, "%s", err);
  chip_config_t cfg = mach.pod.chip;
  cfg.model = CHIP_MODEL_FAST, cfg.hbm_bytes = 1u << 26, cfg.seed = test_seed();
  chip_t *c = test_chip_new(&cfg);
  const chip_geometry_t *g = chip_geometry(c);
  cr_assert_eq(g->cols, 128);
  struct {
    fw_rows_kind_t kind;
    uint32_t m, k, scale;
    bool res;
  } cases[] = {{FW_ROWS_LAYERNORM, 1024, 768, ONE, true}, {FW_ROWS_SOFTMAX, 12 * 128 * 8, 128, 0x3E000000u, false}};
  for (int i = 0; i < 2; i++) {
    const uint32_t m = cases[i].m, k = cases[i].k;
    const size_t n = (size_t)m * k;
    uint16_t *in = malloc(2 * n), *b = malloc(2 * n), *got = malloc(2 * n), *want = malloc(2 * n);
    uint32_t *gamma = malloc(4ull * k), *beta = malloc(4ull * k);
    rng_t r;
    rng_seed(&r, 5 + i);
    random_bf16(&r, in, n, 118, 131);
    random_bf16(&r, b, n, 118, 131);
    for (uint32_t j = 0; j < k; j++) gamma[j] = random_f32(&r), beta[j] = random_f32(&r);
    case_t t = {.kind = cases[i].kind, .m = m, .k = k, .scale = cases[i].scale, .eps = 0x3727C5ACu,
                .has_b = cases[i].res, .in = in, .b = cases[i].res ? b : NULL};
    if (t.kind == FW_ROWS_LAYERNORM) t.gamma = gamma, t.beta = beta;
    /* the programs' size, from a build of their own */
    fw_rows_args_t a = {.op = t.kind, .scale = t.scale, .epsilon = t.eps, .has_b = t.has_b};
    a.in = (fw_act_t){.addr = 0x1000, .n = m, .c = k, .h = 1, .w = 1};
    a.out = a.b = a.in, a.out.addr = 0x1000000, a.b.addr = 0x2000000;
    fw_prog_t cq[2], dq[2];
    for (int q = 0; q < 2; q++) fw_prog_init(&cq[q]), fw_prog_init(&dq[q]);
    cr_assert_eq(build(g, &a, cq, dq, err, sizeof err), 0, "%s", err);
    uint32_t vecs;
    const uint64_t lines = vec_lines(&cq[0], &vecs);
    const uint32_t tile = fw_rows_tile(g, t.kind, &a, 0, err, sizeof err);
    for (int q = 0; q < 2; q++) fw_prog_free(&cq[q]), fw_prog_free(&dq[q]);
    const uint64_t cycles = run_case(c, &t, got);
    golden(&t, 128, want);
    for (size_t j = 0; j < n; j++) cr_assert_eq(got[j], want[j], "%s out[%zu]", kind_name(t.kind), j);
    printf("rows: %s [%u, %u] on a v3 chip: %llu cycles (%.1f us at 940 MHz); core 0: %llu VEC lines in %u VECs, "
           "tiles of %u rows\n",
           kind_name(t.kind), m, k, (unsigned long long)cycles, cycles / 940.0, (unsigned long long)lines, vecs, tile);
    /* docs/timing.md: the vector unit's lines, the first tile's loads and the last tile's
     * stores (a DMA row a cycle), an HBM latency each, within a few cycles of the commands */
    uint32_t lo, hi;
    fw_gemm_core_rows(m, 2, 0, &lo, &hi);
    const uint32_t rows0 = hi - lo, first = tile < rows0 ? tile : rows0, last = rows0 - (rows0 - 1) / tile * tile;
    const uint32_t nb = (k + 127) / 128, ins = t.has_b ? 2 : 1;
    const uint64_t formula = lines + (uint64_t)ins * nb * first + (uint64_t)nb * last + 2ull * cfg.hbm_latency;
    printf("rows: formula %llu cycles, measured %llu\n", (unsigned long long)formula, (unsigned long long)cycles);
    cr_assert_geq(cycles, formula, "%llu cycles below the formula's %llu", (unsigned long long)cycles,
                  (unsigned long long)formula);
    cr_assert_leq(cycles, formula + 64, "%llu cycles, the formula %llu", (unsigned long long)cycles,
                  (unsigned long long)formula);
    free(in), free(b), free(got), free(want), free(gamma), free(beta);
  }
  chip_free(c);
}

/* The golden model is what the kernels are held to; this holds it to the mathematics: each
 * kernel against float64 (bf16 inputs exact, so the difference is the fp32 steps and the
 * output's round to bf16: within 2^-7 relative plus 2^-12 absolute; GELU tanh against its
 * tanh formula, softmax rows of 768 whose probabilities are small). */
Test(rows, golden_is_near_float64) {
  enum { M = 8, K = 37 };
  rng_t r;
  rng_seed(&r, 99);
  uint16_t in[M * K], res[M * K], out[M * K];
  uint32_t gamma[K], beta[K];
  random_bf16(&r, in, M * K, 120, 130);
  random_bf16(&r, res, M * K, 120, 130);
  for (int j = 0; j < K; j++) gamma[j] = random_f32(&r), beta[j] = random_f32(&r);
  double ref[M * K];
  for (int kind = 0; kind < 4; kind++) {
    for (int i = 0; i < M; i++) {
      double x[K], mx = -1e300, s = 0, mean = 0, var = 0;
      for (int j = 0; j < K; j++) x[j] = bits_bf16_value(in[i * K + j]) + (kind == 1 ? bits_bf16_value(res[i * K + j]) : 0);
      for (int j = 0; j < K; j++) mx = x[j] > mx ? x[j] : mx, mean += x[j] / K;
      for (int j = 0; j < K; j++) s += exp(x[j] - mx), var += (x[j] - mean) * (x[j] - mean) / K;
      for (int j = 0; j < K; j++) {
        double y;
        if (kind == 0) y = exp(x[j] - mx) / s;
        else if (kind == 1) y = (x[j] - mean) / sqrt(var + 1e-5) * bits_fp32_value(gamma[j]) + bits_fp32_value(beta[j]);
        else if (kind == 2) y = 0.5 * x[j] * (1 + erf(x[j] / sqrt(2.0)));
        else y = 0.5 * x[j] * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x[j] + 0.044715 * x[j] * x[j] * x[j])));
        ref[i * K + j] = y;
      }
    }
    int rc;
    if (kind == 0) rc = rows_golden_softmax(4, M, K, ONE, in, out);
    else if (kind == 1) rc = rows_golden_layernorm(4, M, K, in, res, gamma, beta, 0x3727C5ACu, out);
    else rc = rows_golden_map(kind == 2 ? ROWS_GOLDEN_GELU_ERF : ROWS_GOLDEN_GELU_TANH, 4, M, K, in, NULL, NULL, 0, out);
    cr_assert_eq(rc, 0);
    for (int i = 0; i < M * K; i++) {
      const double got = bits_bf16_value(out[i]), d = fabs(got - ref[i]);
      cr_assert(d <= fabs(ref[i]) / 128 + 1.0 / 4096, "kind %d out[%d] = %.9g, float64 %.9g", kind, i, got, ref[i]);
    }
  }
}
