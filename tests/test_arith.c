/*
 * RTL-vs-golden tests of the arithmetic units (rtl/arith_*.sv through rtl/arith_top.sv):
 * the special set (every pair of special-class operands) and a million random operand
 * pairs per operation, streamed one per cycle, every result compared bit for bit with
 * csim/golden/arith_golden.c. Run once per reset seed (TPU_SEED) by `make test`.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/arith_golden.h"
#include "test_util.h"
#include "util/rng.h"
#include "vmodel/arith_top.h"

#define RANDOM_PAIRS 1000000u

static vmodel_t *model;
static rng_t rng;
static int p_mul_valid, p_mul_a, p_mul_b, p_mul_valid_o, p_mul_product;
static int p_add_valid, p_add_a, p_add_b, p_add_valid_o, p_add_sum;
static int p_cvt_valid, p_cvt_a, p_cvt_valid_o, p_cvt_result;

static void setup(void) {
  model = arith_top_new(test_seed());
  cr_assert_not_null(model);
  rng_seed(&rng, test_seed() * 0x9E3779B97F4A7C15ull + 17);
  const char *names[] = {"mul_valid_i", "mul_a_i", "mul_b_i", "mul_valid_o", "mul_product_o",
                         "add_valid_i", "add_a_i", "add_b_i", "add_valid_o", "add_sum_o",
                         "cvt_valid_i", "cvt_a_i", "cvt_valid_o", "cvt_result_o"};
  int *ports[] = {&p_mul_valid, &p_mul_a, &p_mul_b, &p_mul_valid_o, &p_mul_product,
                  &p_add_valid, &p_add_a, &p_add_b, &p_add_valid_o, &p_add_sum,
                  &p_cvt_valid, &p_cvt_a, &p_cvt_valid_o, &p_cvt_result};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    *ports[i] = vmodel_port(model, names[i]);
    cr_assert_geq(*ports[i], 0, "port %s missing", names[i]);
  }
  vmodel_poke(model, p_mul_valid, 0);
  vmodel_poke(model, p_add_valid, 0);
  vmodel_poke(model, p_cvt_valid, 0);
  vmodel_reset(model, 3);
}

static void teardown(void) { vmodel_free(model); }

TestSuite(arith, .init = setup, .fini = teardown, .timeout = 300);

/* ------------------------------------------------------------------ operand sources */

static const uint32_t fp32_specials[] = {
    0x00000000, 0x80000000,                          /* signed zeros */
    0x7F800000, 0xFF800000,                          /* infinities */
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,  /* quiet and signalling NaNs */
    0x7FFFFFFF, 0x7FA00000,
    0x00000001, 0x807FFFFF, 0x00400000, 0x80000001,  /* subnormals */
    0x00800000, 0x80800000, 0x00800001, 0x00FFFFFF,  /* smallest normals */
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  /* largest normals */
    0x3F800000, 0xBF800000, 0x3F800001, 0xBF7FFFFF,  /* around one */
    0x3FFFFFFF, 0x40000000, 0x33800000, 0xB3800000,  /* carries, half-ulp of one */
    0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001,  /* bf16 ties and near-ties */
    0x4B800000, 0xCB7FFFFF, 0x01000000, 0x81000001,  /* cancellation partners */
    0x7E800000, 0x7F000000, 0x00C00000, 0x80C00000,
};
#define N_FP32_SPECIALS (sizeof fp32_specials / sizeof fp32_specials[0])

static const uint16_t bf16_specials[] = {
    0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x0001, 0x807F,
    0x0040, 0x0080, 0x8080, 0x0081, 0x00FF, 0x7F7F, 0xFF7F, 0x7F00, 0x3F80, 0xBF80,
    0x3FFF, 0x4000, 0x3F81, 0x1F80, 0x2000, 0x5F80, 0x6000, 0x2080, 0x1F00, 0x60FF,
};
#define N_BF16_SPECIALS (sizeof bf16_specials / sizeof bf16_specials[0])

/* fp32 operands that exercise all paths: raw bits (every class, mostly huge exponent gaps),
 * a partner near the first operand's exponent (alignment, cancellation, carries), values at
 * the ends of the range (overflow, flush), and specials. */
static uint32_t random_fp32(uint64_t x) {
  switch (x & 7) {
    case 0:
    case 1:
    case 2: return (uint32_t)(x >> 32);
    case 3: return (uint32_t)((x >> 32) & 0x80FFFFFF) | (0x7Eu << 24) | ((uint32_t)(x >> 8) & 0x00800000u);
    case 4: return (uint32_t)((x >> 32) & 0x81FFFFFF);
    case 5: return fp32_specials[(x >> 8) % N_FP32_SPECIALS];
    default: return 0x3F000000u ^ (uint32_t)((x >> 32) & 0x83FFFFFF);
  }
}

static uint32_t near_partner(uint32_t a, uint64_t x) {
  int exp = (int)((a >> 23) & 0xFF) - (int)((x >> 8) % 28);
  if (exp < 0) exp = 0;
  uint32_t sign = (uint32_t)(x & 1) << 31;
  uint32_t frac = (x & 2) ? (a & 0x7FFFFF) ^ (uint32_t)((x >> 40) & 0xFF) : (uint32_t)(x >> 41) & 0x7FFFFF;
  return sign | ((uint32_t)exp << 23) | frac;
}

static uint16_t random_bf16(uint64_t x) {
  switch (x & 3) {
    case 0: return (uint16_t)(x >> 48);
    case 1: return bf16_specials[(x >> 8) % N_BF16_SPECIALS];
    default: return (uint16_t)(((x >> 48) & 0x803F) | (((x >> 16) % 200 + 27) << 7)); /* mid range */
  }
}

/* ------------------------------------------------------------------ checks */

/* Streams n operations per unit, one per cycle; every cycle also checks the previous
 * cycle's results, so the pipeline registers are exercised back to back. */
typedef struct {
  uint16_t mul_a, mul_b;
  uint32_t add_a, add_b, cvt_a;
  bool mul_on, add_on, cvt_on;
} arith_ops_t;

static uint64_t mismatches;

static void check_outputs(const arith_ops_t *prev) {
  cr_assert_eq(vmodel_peek(model, p_mul_valid_o), prev->mul_on);
  cr_assert_eq(vmodel_peek(model, p_add_valid_o), prev->add_on);
  cr_assert_eq(vmodel_peek(model, p_cvt_valid_o), prev->cvt_on);
  if (prev->mul_on) {
    uint32_t got = (uint32_t)vmodel_peek(model, p_mul_product);
    uint32_t want = arith_golden_bf16_mul(prev->mul_a, prev->mul_b);
    if (got != want && mismatches++ < 10)
      cr_log_error("mul 0x%04x * 0x%04x: RTL 0x%08x, golden 0x%08x", prev->mul_a, prev->mul_b, got, want);
  }
  if (prev->add_on) {
    uint32_t got = (uint32_t)vmodel_peek(model, p_add_sum);
    uint32_t want = arith_golden_fp32_add(prev->add_a, prev->add_b);
    if (got != want && mismatches++ < 10)
      cr_log_error("add 0x%08x + 0x%08x: RTL 0x%08x, golden 0x%08x", prev->add_a, prev->add_b, got, want);
  }
  if (prev->cvt_on) {
    uint16_t got = (uint16_t)vmodel_peek(model, p_cvt_result);
    uint16_t want = arith_golden_fp32_to_bf16(prev->cvt_a);
    if (got != want && mismatches++ < 10)
      cr_log_error("cvt 0x%08x: RTL 0x%04x, golden 0x%04x", prev->cvt_a, got, want);
  }
}

static void drive(const arith_ops_t *op) {
  vmodel_poke(model, p_mul_valid, op->mul_on);
  vmodel_poke(model, p_mul_a, op->mul_a);
  vmodel_poke(model, p_mul_b, op->mul_b);
  vmodel_poke(model, p_add_valid, op->add_on);
  vmodel_poke(model, p_add_a, op->add_a);
  vmodel_poke(model, p_add_b, op->add_b);
  vmodel_poke(model, p_cvt_valid, op->cvt_on);
  vmodel_poke(model, p_cvt_a, op->cvt_a);
  vmodel_step(model, 1);
  check_outputs(op);
}

Test(arith, special_set_all_pairs) {
  mismatches = 0;
  uint64_t count = 0;
  /* Every ordered pair of fp32 specials for add; bf16 pairs for mul (more of them than
   * fp32 pairs, so the index wraps); every fp32 special for convert. */
  for (size_t i = 0; i < N_FP32_SPECIALS; i++) {
    for (size_t k = 0; k < N_FP32_SPECIALS; k++, count++) {
      size_t m = count % (N_BF16_SPECIALS * N_BF16_SPECIALS);
      arith_ops_t op = {.mul_a = bf16_specials[m / N_BF16_SPECIALS],
                        .mul_b = bf16_specials[m % N_BF16_SPECIALS],
                        .add_a = fp32_specials[i], .add_b = fp32_specials[k],
                        .cvt_a = fp32_specials[(i + k) % N_FP32_SPECIALS] ^ (uint32_t)(k & 1) << 15,
                        .mul_on = true, .add_on = true, .cvt_on = true};
      drive(&op);
    }
  }
  cr_assert_geq(count, N_BF16_SPECIALS * N_BF16_SPECIALS, "the special set must cover all bf16 pairs");
  cr_assert_eq(mismatches, 0, "%llu mismatches against the golden model", (unsigned long long)mismatches);
}

Test(arith, random_million_pairs_per_operation) {
  mismatches = 0;
  for (uint32_t i = 0; i < RANDOM_PAIRS; i++) {
    uint64_t x = rng_next(&rng), y = rng_next(&rng), z = rng_next(&rng);
    arith_ops_t op;
    op.mul_a = random_bf16(x);
    op.mul_b = random_bf16(y);
    op.add_a = random_fp32(z);
    op.add_b = (y & 0x100) ? near_partner(op.add_a, x) : random_fp32(rng_next(&rng));
    op.cvt_a = random_fp32(x ^ (y << 1));
    op.mul_on = op.add_on = op.cvt_on = true;
    drive(&op);
  }
  cr_assert_eq(mismatches, 0, "%llu mismatches against the golden model", (unsigned long long)mismatches);
}

Test(arith, valid_follows_input_with_unit_latency_and_gaps) {
  /* Random valid patterns: an output is valid exactly ARITH_UNIT_LATENCY cycle after its
   * input, and data registers hold their last value (never a later operand) in gaps. */
  mismatches = 0;
  cr_assert_eq(ARITH_UNIT_LATENCY, 1);
  cr_assert_eq(vmodel_peek(model, p_mul_valid_o), 0, "reset must clear valid");
  cr_assert_eq(vmodel_peek(model, p_add_valid_o), 0, "reset must clear valid");
  cr_assert_eq(vmodel_peek(model, p_cvt_valid_o), 0, "reset must clear valid");
  arith_ops_t last = {0};
  for (int i = 0; i < 20000; i++) {
    uint64_t x = rng_next(&rng);
    arith_ops_t op = {.mul_a = random_bf16(x), .mul_b = random_bf16(x >> 7),
                      .add_a = random_fp32(x), .add_b = random_fp32(x >> 3),
                      .cvt_a = random_fp32(x >> 5),
                      .mul_on = (x >> 61) & 1, .add_on = (x >> 62) & 1, .cvt_on = (x >> 63) & 1};
    drive(&op);
    if (op.mul_on) last.mul_a = op.mul_a, last.mul_b = op.mul_b, last.mul_on = true;
    if (op.add_on) last.add_a = op.add_a, last.add_b = op.add_b, last.add_on = true;
    if (op.cvt_on) last.cvt_a = op.cvt_a, last.cvt_on = true;
    if (last.mul_on && !op.mul_on)
      cr_assert_eq(vmodel_peek(model, p_mul_product), arith_golden_bf16_mul(last.mul_a, last.mul_b));
    if (last.add_on && !op.add_on)
      cr_assert_eq(vmodel_peek(model, p_add_sum), arith_golden_fp32_add(last.add_a, last.add_b));
    if (last.cvt_on && !op.cvt_on)
      cr_assert_eq(vmodel_peek(model, p_cvt_result), arith_golden_fp32_to_bf16(last.cvt_a));
  }
  cr_assert_eq(mismatches, 0);
}

Test(arith, reset_mid_stream_clears_valid) {
  arith_ops_t op = {.mul_a = 0x3F80, .mul_b = 0x4000, .add_a = 0x3F800000, .add_b = 0x3F800000,
                    .cvt_a = 0x3F800000, .mul_on = true, .add_on = true, .cvt_on = true};
  drive(&op);
  vmodel_reset(model, 1);
  cr_assert_eq(vmodel_peek(model, p_mul_valid_o), 0);
  cr_assert_eq(vmodel_peek(model, p_add_valid_o), 0);
  cr_assert_eq(vmodel_peek(model, p_cvt_valid_o), 0);
}

Test(arith, trace_writes_an_fst) {
  char path[] = "/tmp/arith_trace_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  char err[256] = "";
  cr_assert_eq(vmodel_trace_open(model, path, err, sizeof err), 0, "%s", err);
  arith_ops_t op = {.mul_a = 0x3F80, .mul_b = 0x4000, .mul_on = true};
  for (int i = 0; i < 10; i++) drive(&op);
  vmodel_trace_close(model);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_gt(st.st_size, 100, "trace is only %lld bytes", (long long)st.st_size);
  FILE *f = fopen(path, "rb");
  unsigned char head = 0xFF;
  cr_assert_eq(fread(&head, 1, 1, f), 1);
  fclose(f);
  cr_assert_eq(head, 0, "an FST file starts with a header block (type 0)");
  unlink(path);
}

Test(arith, trace_to_unwritable_path_reports_error) {
  char err[256] = "";
  cr_assert_eq(vmodel_trace_open(model, "/nonexistent-dir/x.fst", err, sizeof err), -1);
  cr_assert(strstr(err, "/nonexistent-dir/x.fst") != NULL, "message names the file: %s", err);
  cr_assert_eq(access("/nonexistent-dir/x.fst", F_OK), -1);
  vmodel_step(model, 2); /* the model still runs */
}

Test(arith, model_port_table) {
  cr_assert_eq(vmodel_port(model, "no_such_port"), -1);
  cr_assert_eq(vmodel_port_width(model, p_mul_product), 32);
  cr_assert_eq(vmodel_port_width(model, p_cvt_result), 16);
  cr_assert_str_eq(vmodel_name(model), "arith_top");
}
