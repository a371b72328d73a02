/*
 * Tests of the fast vector unit (csim/fast/vec_fast.c) against the golden model
 * (csim/golden/vec_golden.c), which shares no code with it: every VEC operation on more than a
 * million lanes of random fp32 values, bit for bit, the values drawn to hit every special case
 * of docs/numerics.md (signed zeros, subnormals, Inf, NaNs of every sign and payload, values
 * around the smallest normal and around EXP's and RECIP's range limits), for 4, 16 and 128
 * lanes and line reductions of 1 to 9 lines.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "bf16_operands.h"
#include "fast/vec_fast.h"
#include "golden/vec_golden.h"
#include "test_util.h"
#include "util/rng.h"

TestSuite(vec_fast, .timeout = 300);

Test(vec_fast, every_operation_agrees_on_every_bit) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 1);
  const isa_vec_op_t ops[] = {ISA_VEC_ADD,       ISA_VEC_SUB,       ISA_VEC_MUL,       ISA_VEC_MAX,      ISA_VEC_RELU,
                              ISA_VEC_SCALE,     ISA_VEC_TO_BF16,   ISA_VEC_TO_FP32,   ISA_VEC_COPY,     ISA_VEC_RELU_GRAD,
                              ISA_VEC_AXPY,      ISA_VEC_SUM_LANES, ISA_VEC_MAX_LANES, ISA_VEC_SUM_LINES, ISA_VEC_MAX_LINES,
                              ISA_VEC_EXP,       ISA_VEC_RECIP,     ISA_VEC_RSQRT,     ISA_VEC_ERF};
  const unsigned lane_counts[] = {4, 16, 128};
  uint32_t *a = malloc(9 * 128 * 4), *b = malloc(9 * 128 * 4), *got = malloc(9 * 128 * 4), *want = malloc(9 * 128 * 4);
  uint64_t lanes_checked = 0;
  for (unsigned round = 0; lanes_checked < 1200000; round++) {
    const isa_vec_op_t op = ops[round % (sizeof ops / sizeof ops[0])];
    const unsigned lanes = lane_counts[rng_below(&r, 3)], rows = 1 + (unsigned)rng_below(&r, 9);
    for (unsigned i = 0; i < rows * lanes; i++) a[i] = fp32_operand(&r), b[i] = fp32_operand(&r);
    const uint32_t scalar = fp32_operand(&r);
    const unsigned n = vec_fast_lines(op, lanes, rows, a, b, scalar, got);
    const unsigned w = vec_golden_lines(op, lanes, rows, a, b, scalar, want);
    cr_assert_eq(n, w, "op %d: %u lines written, golden %u", op, n, w);
    for (unsigned i = 0; i < n * lanes; i++)
      cr_assert_eq(got[i], want[i], "op %d, %u lanes, %u rows, lane %u: a 0x%08x b 0x%08x scalar 0x%08x: fast 0x%08x, "
                   "golden 0x%08x", op, lanes, rows, i, a[i], b[i], scalar, got[i], want[i]);
    lanes_checked += (uint64_t)n * lanes;
  }
  free(a), free(b), free(got), free(want);
}

/* b_repeat: the binary operations with one line of b for every row, against the golden model's
 * vec_golden_lines_repeat_b; and a planted mistake (b's rows read as usual) is seen to differ. */
Test(vec_fast, b_repeat_reads_one_line_of_b_for_every_row) {
  rng_t r;
  rng_seed(&r, test_seed() * 104729 + 3);
  const isa_vec_op_t ops[] = {ISA_VEC_ADD, ISA_VEC_SUB, ISA_VEC_MUL, ISA_VEC_MAX, ISA_VEC_RELU_GRAD, ISA_VEC_AXPY};
  uint32_t a[9 * 128], b[9 * 128], got[9 * 128], want[9 * 128], plain[9 * 128];
  unsigned differs = 0;
  for (unsigned round = 0; round < 3000; round++) {
    const isa_vec_op_t op = ops[round % 6];
    const unsigned lanes = 4u << (2 * rng_below(&r, 3)), rows = 2 + (unsigned)rng_below(&r, 8);
    for (unsigned i = 0; i < rows * lanes; i++) a[i] = fp32_operand(&r), b[i] = fp32_operand(&r);
    const uint32_t scalar = fp32_operand(&r);
    cr_assert_eq(vec_fast_lines_b(op, lanes, rows, a, b, true, scalar, got), rows);
    cr_assert_eq(vec_golden_lines_repeat_b(op, lanes, rows, a, b, scalar, want), rows);
    vec_fast_lines_b(op, lanes, rows, a, b, false, scalar, plain);
    for (unsigned i = 0; i < rows * lanes; i++) {
      cr_assert_eq(got[i], want[i], "%s, %u lanes, row %u lane %u: fast 0x%08x, golden 0x%08x", isa_vec_op_name(op),
                   lanes, i / lanes, i % lanes, got[i], want[i]);
      differs += got[i] != plain[i];
    }
  }
  cr_assert_gt(differs, 100000, "b_repeat and b's own rows gave the same lanes %u times too often", differs);
}

/* EXP, RECIP, RSQRT and ERF on a sweep of every 2,053rd fp32 pattern (about 2 million, both
 * signs, every piece of ERF's and every exponent of RSQRT's range, which random operands reach
 * only now and then), as one-line commands of 128 lanes, bit for bit against the golden model. */
Test(vec_fast, the_function_ops_agree_on_a_sweep_of_every_exponent) {
  const isa_vec_op_t ops[] = {ISA_VEC_EXP, ISA_VEC_RECIP, ISA_VEC_RSQRT, ISA_VEC_ERF};
  uint32_t a[128], got[128], want[128];
  for (unsigned o = 0; o < 4; o++) {
    uint64_t u = o;
    while (u < 0x100000000ull) {
      for (unsigned l = 0; l < 128; l++, u += 2053) a[l] = (uint32_t)u;
      vec_fast_lines(ops[o], 128, 1, a, a, 0, got);
      vec_golden_lines(ops[o], 128, 1, a, a, 0, want);
      for (unsigned l = 0; l < 128; l++)
        if (got[l] != want[l])
          cr_assert_fail("%s(0x%08x): fast 0x%08x, golden 0x%08x", isa_vec_op_name(ops[o]), a[l], got[l], want[l]);
    }
  }
}
