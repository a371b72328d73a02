/*
 * The chip's vector unit (rtl/chip_vec.sv; docs/isa.md, "VEC"; docs/numerics.md): every VEC
 * operation against the golden model (csim/golden/vec_golden.c) on 4x4, 16x16 and, for the
 * lane reductions, 128x128 chips, on lanes rich in special values; a line reduction's one
 * destination line; a VEC after MXU stores without a fence; the elementwise kernel
 * (fw/kernels.c) through HBM. Run per reset seed on the RTL and under every model of MODELS.
 */
#include <stdlib.h>

#include "chip_test.h"
#include "fw/kernels.h"
#include "golden/mxu_golden.h"
#include "golden/vec_golden.h"
#include "util/rng.h"

TestSuite(vec, .timeout = 300);

static uint32_t random_lane(rng_t *rng) {
  static const uint32_t specials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                      0xFFFFFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
                                      0x3F808000, 0x3F818000, 0xBF800000};
  uint64_t x = rng_next(rng);
  if ((x & 7) == 0) return specials[(x >> 8) % (sizeof specials / sizeof specials[0])];
  if ((x & 7) == 1) return (uint32_t)(x >> 32);
  return (uint32_t)((x >> 32) & 0x81FFFFFFu) | (uint32_t)(100 + (x >> 16) % 56) << 23;
}

/* Loads rows of random lanes into VMEM lines a and b, runs one VEC (with b_repeat: b's first
 * line for every row), writes dst back. */
static void check_vec_b(unsigned size, isa_vec_op_t op, uint32_t rows, bool b_repeat, rng_t *rng) {
  chip_t *c = test_chip(size, 64, 9);
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
  if (b_repeat) fw_vec_bcast(&cq, op, 100, 1000, 2000, rows, scalar);
  else fw_vec(&cq, op, 100, isa_vec_operands(op) == 2 ? 1000 : UINT32_MAX, 2000, rows, scalar);
  fw_sem_signal(&cq, 2, 1);
  fw_halt(&cq);
  test_run_programs(c, &cq, &dq, 100000, NULL);
  cr_assert_eq(chip_hbm_read(c, 2u << 20, out, rows * line), 0);
  uint32_t *want = malloc(rows * line);
  const unsigned written = b_repeat ? vec_golden_lines_repeat_b(op, lanes, rows, a, b, scalar, want)
                                    : vec_golden_lines(op, lanes, rows, a, b, scalar, want);
  /* every line the command writes, and (a line reduction) none after its one line */
  for (uint32_t i = 0; i < rows * lanes; i++) {
    const uint32_t w = i < written * lanes ? want[i] : 0, r = i / lanes, l = i % lanes;
    cr_assert_eq(out[i], w, "%ux%u %s%s row %u lane %u: a 0x%08x b 0x%08x s 0x%08x: chip 0x%08x golden 0x%08x", size,
                 size, isa_vec_op_name(op), b_repeat ? " b_repeat" : "", r, l, a[i], b_repeat ? b[l] : b[i], scalar,
                 out[i], w);
  }
  free(a), free(b), free(out), free(want);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

static void check_vec(unsigned size, isa_vec_op_t op, uint32_t rows, rng_t *rng) {
  check_vec_b(size, op, rows, false, rng);
}

Test(vec, every_vector_op_against_the_golden_model) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 11 + 4);
  for (int op = 0; op < ISA_NUM_VEC_OPS; op++) {
    check_vec(4, (isa_vec_op_t)op, 37, &rng);
    check_vec(16, (isa_vec_op_t)op, 9, &rng);
    if (op == ISA_VEC_SUM_LANES || op == ISA_VEC_MAX_LANES || op == ISA_VEC_SUM_LINES)
      check_vec(128, (isa_vec_op_t)op, 3, &rng);  /* the deepest lane tree */
    if (op == ISA_VEC_RSQRT || op == ISA_VEC_ERF) check_vec(128, (isa_vec_op_t)op, 3, &rng);  /* 384 lanes more */
  }
}

/* b_repeat: every binary operation with one line of b for every row (a bias, LayerNorm's gamma
 * and beta), on 4x4 and 16x16 chips, against the golden model. */
Test(vec, b_repeat_broadcasts_one_line_of_b) {
  rng_t rng;
  rng_seed(&rng, test_seed() * 13 + 5);
  for (int op = 0; op < ISA_NUM_VEC_OPS; op++) {
    if (isa_vec_operands(op) != 2) continue;
    check_vec_b(4, (isa_vec_op_t)op, 21, true, &rng);
    check_vec_b(16, (isa_vec_op_t)op, 6, true, &rng);
  }
  check_vec_b(128, ISA_VEC_MUL, 3, true, &rng);  /* the widest line of b */
}

/* b_repeat's checks (docs/isa.md, VEC): b is range-checked as one line, so it may be VMEM's last
 * line whatever rows is, but not one past it; on an operation that does not read b it is error
 * 1, as a reserved bit would be. */
Test(vec, b_repeat_checks_one_line_and_only_binary_operations) {
  chip_t *c = test_chip(4, 16, 5);
  const uint32_t V = chip_geometry(c)->vmem_lines;
  static const struct {
    isa_vec_op_t op;
    uint32_t b;
    unsigned err;
  } cases[] = {{ISA_VEC_ADD, 0, ISA_ERR_NONE},          {ISA_VEC_MUL, 0, ISA_ERR_NONE},
               {ISA_VEC_AXPY, 0, ISA_ERR_NONE},         {ISA_VEC_ADD, 1, ISA_ERR_VMEM},
               {ISA_VEC_RELU, 0, ISA_ERR_OPCODE},       {ISA_VEC_RSQRT, 0, ISA_ERR_OPCODE},
               {ISA_VEC_SUM_LINES, 0, ISA_ERR_OPCODE},  {ISA_VEC_COPY, 1, ISA_ERR_OPCODE}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fw_prog_t p;
    fw_prog_init(&p);
    fw_vec_bcast(&p, cases[i].op, 0, V - 1 + cases[i].b, 16, 8, 0);  /* b: the last line, or one past it */
    fw_halt(&p);
    test_load_once(c, ISA_QUEUE_COMPUTE, &p);
    chip_status_t st;
    const int rc = chip_run(c, ISA_QMASK_COMPUTE, 10000, &st);
    cr_assert_eq(st.error[0], cases[i].err, "%s b_repeat, b %u: error %u, not %u: %s", isa_vec_op_name(cases[i].op),
                 V - 1 + cases[i].b, st.error[0], cases[i].err, st.report);
    cr_assert_eq(rc, cases[i].err == ISA_ERR_NONE ? 0 : -1, "%s", st.report);
    if (cases[i].err) cr_assert_eq(st.pc[0], 0, "stopped at the VEC: %s", st.report);
  }
  chip_free(c);
}

/* The vector unit's timing contract (docs/isa.md, "Vector unit timing"): every operation takes
 * one cycle a line, so the compute program [VEC of rows lines; FENCE; HALT] runs rows + VEC_FIXED
 * cycles from the start, and back-to-back VECs follow each other without a bubble (the next
 * starts in the cycle after the last line of the one before) once the first has two lines or
 * more (one command waits behind the running one, and the queue hands the next over the cycle
 * after the first started): [VEC r1; VEC r2; FENCE; HALT] runs r1 + r2 + VEC_FIXED, one more
 * when r1 is 1. Every operation, the new RSQRT and ERF and b_repeat included. */
enum { VEC_FIXED = 5 };
static uint64_t vec_cycles(chip_t *c, isa_vec_op_t op, bool b_repeat, uint32_t r1, uint32_t r2) {
  fw_prog_t p;
  fw_prog_init(&p);
  if (b_repeat) fw_vec_bcast(&p, op, 0, 500, 1000, r1, 0x3F800000u);
  else fw_vec(&p, op, 0, 500, 1000, r1, 0x3F800000u);
  if (r2) fw_vec(&p, op, 2000, 2500, 3000, r2, 0x3F800000u);
  fw_fence(&p);
  fw_halt(&p);
  test_load_once(c, ISA_QUEUE_COMPUTE, &p);
  chip_status_t st;
  return test_run(c, ISA_QMASK_COMPUTE, 100000, &st);
}

Test(vec, every_operation_meets_the_timing_contract) {
  static const uint32_t rows_l[] = {1, 2, 7, 64, 300};
  for (unsigned size = 4; size <= 16; size *= 4) {
    chip_t *c = test_chip(size, 16, 5);
    for (int op = 0; op < ISA_NUM_VEC_OPS; op++)
      for (size_t r = 0; r < sizeof rows_l / sizeof rows_l[0]; r++) {
        const uint32_t rows = rows_l[r];
        const uint64_t one = vec_cycles(c, (isa_vec_op_t)op, false, rows, 0);
        cr_assert_eq(one, rows + VEC_FIXED, "%ux%u %s over %u lines: %llu cycles, contract %u", size, size,
                     isa_vec_op_name(op), rows, (unsigned long long)one, rows + VEC_FIXED);
        const uint64_t two = vec_cycles(c, (isa_vec_op_t)op, false, rows, 3);
        cr_assert_eq(two, rows + 3 + VEC_FIXED + (rows == 1), "%ux%u %s over %u then 3 lines: %llu cycles", size, size,
                     isa_vec_op_name(op), rows, (unsigned long long)two);
        if (isa_vec_operands(op) == 2) {
          const uint64_t rep = vec_cycles(c, (isa_vec_op_t)op, true, rows, 0);
          cr_assert_eq(rep, rows + VEC_FIXED, "%ux%u %s b_repeat over %u lines: %llu cycles", size, size,
                       isa_vec_op_name(op), rows, (unsigned long long)rep);
        }
      }
    chip_free(c);
  }
}

/* A line reduction names one destination line: it may end VMEM, whatever rows is. */
Test(vec, line_reduction_writes_one_line) {
  chip_t *c = test_chip(4, 16, 5);
  const uint32_t V = chip_geometry(c)->vmem_lines;
  fw_prog_t p;
  fw_prog_init(&p);
  fw_vec(&p, ISA_VEC_SUM_LINES, 0, 0, V - 1, 8, 0);
  fw_vec(&p, ISA_VEC_MAX_LINES, 0, 0, V - 1, 8, 0);
  fw_vec(&p, ISA_VEC_SUM_LANES, 0, 0, V - 1, 2, 0);  /* not a line reduction: two lines past the end */
  fw_halt(&p);
  test_load_once(c, ISA_QUEUE_COMPUTE, &p);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 10000, &st), -1);
  cr_assert_eq(st.error[0], ISA_ERR_VMEM, "%s", st.report);
  cr_assert_eq(st.pc[0], 2, "the line reductions ran; SUM_LANES over two lines at the end did not: %s", st.report);
  chip_free(c);
}

Test(vec, vector_op_follows_store_without_a_fence) {
  /* GEMM rows stored from the accumulator, then ReLU in place, then written back: the
   * vector unit must see the stored lines (program order within the compute queue). */
  chip_t *c = test_chip(4, 64, 9);
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
  test_run_programs(c, &cq, &dq, 100000, NULL);
  uint32_t out[24];
  cr_assert_eq(chip_hbm_read(c, 8192, out, sizeof out), 0);
  for (int i = 0; i < 24; i++)
    cr_assert_eq(out[i], vec_golden_lane(ISA_VEC_RELU, want[i], 0, 0), "element %d: 0x%08x vs relu(0x%08x)", i, out[i],
                 want[i]);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

Test(vec, elementwise_kernel_through_hbm) {
  chip_t *c = test_chip(4, 16, 20);
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
    test_run_programs(c, &cq, &dq, 1000000, NULL);
    cr_assert_eq(chip_hbm_read(c, 2u << 20, out, 4 * count), 0);
    for (uint32_t i = 0; i < count; i++)
      cr_assert_eq(out[i], vec_golden_lane(ops[o], a[i], b[i], scalar), "op %d element %u", ops[o], i);
    test_sems_zero(c, "after the elementwise kernel");
    fw_prog_free(&cq);
    fw_prog_free(&dq);
  }
  chip_free(c);
}
