/*
 * Random command programs (csim/verify/randprog.h) on RTL chips and pods, judged by
 * randprog_run.h: a short run of every kind here (`make soak` runs 100,000 sets); and the
 * golden command checker (golden/cmd_golden.h) against the command processor, one random
 * command at a time. Reproduce a failure with its seed: `tpusim randprog --seed S --count 1`.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fw/hal.h"
#include "golden/cmd_golden.h"
#include "chip/chip.h"
#include "chip_test.h"
#include "util/rng.h"
#include "verify/randprog.h"
#include "verify/randprog_run.h"

TestSuite(randprog, .timeout = 600);

/* Runs `count` sets of each kind on a pod_x x pod_y bench; every one must end as its kind says. */
static void run_sets(unsigned pod_x, unsigned pod_y, unsigned size, unsigned count) {
  char err[512], why[1024];
  randprog_bench_t *b = randprog_bench_new(pod_x, pod_y, size, size, 1, 1, test_seed(), test_model(), test_threads(pod_y), err, sizeof err);
  cr_assert_not_null(b, "%s", err);
  randprog_stats_t st = {0};
  for (unsigned n = 0; n < count * RANDPROG_KINDS; n++) {
    const randprog_kind_t kind = (randprog_kind_t)(n % RANDPROG_KINDS);
    const uint64_t seed = test_seed() * 1000003u + n;
    randprog_t p;
    cr_assert_eq(randprog_generate(randprog_bench_target(b), kind, seed, &p, err, sizeof err), 0, "%s", err);
    int rc = randprog_bench_run(b, &p, &st, why, sizeof why);
    cr_assert_eq(rc, 0, "%ux%u pod, %s set, seed %llu (%s): %s", pod_x, pod_y, randprog_kind_name(kind),
                 (unsigned long long)seed, p.what, why);
    randprog_free(&p);
  }
  /* the sets did what they are for: every opcode ran, every kind of end happened */
  static const unsigned ops[] = {ISA_OP_HALT, ISA_OP_FENCE, ISA_OP_SEM_WAIT, ISA_OP_SEM_SIGNAL, ISA_OP_DMA,
                                 ISA_OP_MXU_LOAD, ISA_OP_MXU_MATMUL, ISA_OP_MXU_STORE, ISA_OP_VEC, ISA_OP_RDMA};
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
    cr_expect_gt(st.opcodes[ops[i]], 0, "no %s command in %u sets", isa_opcode_name(ops[i]), count * 3);
  cr_expect_gt(st.outcomes[RANDPROG_HALTED], 0);
  cr_expect_gt(st.cycle_checked, 0, "no valid set was held to the reference's cycles");
  cr_expect_gt(st.outcomes[RANDPROG_STOPPED] + st.outcomes[RANDPROG_TIMED_OUT], 0);
  randprog_bench_free(b);
}

Test(randprog, sets_on_a_lone_chip_end_as_their_kind_says) { run_sets(1, 1, 4, 60); }

Test(randprog, sets_on_a_2x2_pod_end_as_their_kind_says) { run_sets(2, 2, 4, 12); }

Test(randprog, sets_on_a_4x4_pod_end_as_their_kind_says) { run_sets(4, 4, 4, 6); }

Test(randprog, sets_on_a_16x16_chip_end_as_their_kind_says) { run_sets(1, 1, 16, 8); }

/* Every error code comes up among the invalid sets, each at its command. */
Test(randprog, invalid_sets_provoke_every_error_code) {
  char err[512], why[1024];
  randprog_bench_t *b = randprog_bench_new(1, 1, 4, 4, 1, 1, test_seed(), test_model(), 1, err, sizeof err);
  cr_assert_not_null(b, "%s", err);
  randprog_stats_t st = {0};
  for (uint64_t seed = 0; seed < 18; seed++) {
    randprog_t p;
    cr_assert_eq(randprog_generate(randprog_bench_target(b), RANDPROG_INVALID, seed, &p, err, sizeof err), 0);
    cr_assert_eq(randprog_bench_run(b, &p, &st, why, sizeof why), 0, "seed %llu (%s): %s", (unsigned long long)seed,
                 p.what, why);
    randprog_free(&p);
  }
  for (unsigned e = ISA_ERR_OPCODE; e <= ISA_ERR_END; e++)
    cr_expect_gt(st.errors[e], 0, "no queue stopped with error %u (%s)", e, isa_error_name(e));
  randprog_bench_free(b);
}

/* A random command alone, [cmd; HALT], on a chip: the queue stops at it with exactly the
 * error the golden checker names, or (a legal command) does not stop there with an error. */
Test(randprog, golden_command_checker_agrees_with_the_command_processor) {
  chip_config_t cfg = chip_config_default(4, 4);
  cfg.hbm_bytes = 1u << 20, cfg.hbm_latency = 3, cfg.seed = test_seed();
  cfg.model = test_model();
  chip_t *c = test_chip_new(&cfg);
  const chip_geometry_t *g = chip_geometry(c);
  const cmd_golden_chip_t gc = {*g, cfg.hbm_bytes, 1, 1};
  static const uint32_t ops[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x10, 0x20, 0x21, 0x22, 0x30, 0x40, 0x41, 0xFF};
  const uint32_t edges[] = {0, 1, 2, 3, 4, 8, 16, 20, 31, 32, 255, 256, g->vmem_lines - 2, g->vmem_lines - 1,
                            g->vmem_lines, g->acc_depth - 1, g->acc_depth, (1u << 20) - 16, 1u << 20, 0x80000000u,
                            UINT32_MAX};
  rng_t r;
  rng_seed(&r, test_seed() * 7919);
  unsigned agreed[16] = {0};
  /* at least 3,000 commands, and on until every error code came up (some are rare) */
  bool every_error = false;
  for (unsigned n = 0; n < 30000 && (n < 3000 || !every_error); n++) {
    uint32_t w[ISA_CMD_WORDS] = {0};
    const uint32_t op = ops[rng_below(&r, sizeof ops / sizeof ops[0])];
    w[0] = op;
    /* each field of the opcode: small values (often legal), edges, or any bits */
#define ISA_FIELD(o, name, word, lsb, width, doc)                                                        \
  if (op == ISA_OP_##o)                                                                                  \
    isa_put(w, word, lsb, width,                                                                         \
            rng_below(&r, 2) ? (uint32_t)rng_below(&r, 8)                                                \
            : rng_below(&r, 5) ? edges[rng_below(&r, sizeof edges / sizeof edges[0])] : (uint32_t)rng_next(&r));
#include "fw/isa.def"
    if (op == ISA_OP_DMA && rng_below(&r, 2)) ISA_PUT(w, DMA, bytes, 4 * (uint32_t)rng_below(&r, 6));
    if (op == ISA_OP_RDMA && rng_below(&r, 2)) ISA_PUT(w, RDMA, dest_reserved, 0);
    if (rng_below(&r, 10) == 0) w[rng_below(&r, ISA_CMD_WORDS)] ^= 1u << rng_below(&r, 32);
    const unsigned q = (unsigned)rng_below(&r, 2);
    const unsigned want = cmd_golden_error(&gc, q, w, 0, 2);
    fw_prog_t p;
    fw_prog_init(&p);
    fw_raw(&p, w);
    fw_halt(&p);
    test_load_once(c, (int)q, &p);
    chip_status_t st;
    chip_run(c, ISA_QMASK(q), 3000, &st);
    const bool stopped_here = st.error[q] && st.error[q] != ISA_ERR_ABORTED && st.pc[q] == 0;
    if (want != ISA_ERR_NONE)
      cr_assert(stopped_here && st.error[q] == want, "%s queue, command %08x %08x %08x %08x %08x %08x %08x %08x: "
                "the checker says error %u, the chip: %s", q ? "DMA" : "compute", w[0], w[1], w[2], w[3], w[4], w[5],
                w[6], w[7], want, st.report);
    else
      cr_assert(!stopped_here, "%s queue, command %08x %08x %08x %08x %08x %08x %08x %08x is legal to the checker; "
                "the chip: %s", q ? "DMA" : "compute", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], st.report);
    agreed[want]++;
    every_error = true;
    for (unsigned e = ISA_ERR_NONE; e <= ISA_ERR_REMOTE; e++) every_error &= agreed[e] > 0;
    /* whatever it did, leave no semaphore for the next one */
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
      if (chip_sem(c, s)) {
        fw_prog_init(&p);
        fw_sem_wait(&p, s, chip_sem(c, s));
        fw_halt(&p);
        test_load_once(c, ISA_QUEUE_COMPUTE, &p);
        test_run(c, ISA_QMASK_COMPUTE, 100, &st);
      }
  }
  for (unsigned e = ISA_ERR_NONE; e <= ISA_ERR_REMOTE; e++)
    cr_expect_gt(agreed[e], 0, "no random command with error %u (%s)", e, isa_error_name(e));
  chip_free(c);
}
