/*
 * The pod on threads (pod_config_t.threads, docs/scale.md "Threads"): the same program sets,
 * collectives and slices give the same results and the same cycles, every set, whatever the
 * number of threads, the link latency (the quantum) or the mix of fast and RTL chips; the
 * refusals. The pod suites also run whole on three threads in `make test` (TPU_THREADS).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod_scenarios.h"
#include "runtime/pod_collective.h"
#include "pod/pod.h"
#include "test_util.h"
#include "util/rng.h"
#include "verify/randprog.h"
#include "verify/randprog_run.h"

TestSuite(pod_threads, .timeout = 600);

/* The same random program sets (every kind: valid, invalid, mutated; remote DMA, errors,
 * time-outs) on benches of 1 and of `threads` threads: after every set the pod under test has
 * run the same cycles and ended the same way. */
static void same_sets(unsigned pod_x, unsigned pod_y, unsigned threads, chip_model_t model, unsigned sets) {
  char err[512], why[1024];
  randprog_bench_t *one = randprog_bench_new(pod_x, pod_y, 4, 4, 1, 1, 7, model, 1, err, sizeof err);
  cr_assert_not_null(one, "%s", err);
  randprog_bench_t *many = randprog_bench_new(pod_x, pod_y, 4, 4, 1, 1, 7, model, threads, err, sizeof err);
  cr_assert_not_null(many, "%s", err);
  randprog_stats_t a = {0}, b = {0};
  for (unsigned n = 0; n < sets; n++) {
    const randprog_kind_t kind = (randprog_kind_t)(n % RANDPROG_KINDS);
    randprog_t p;
    cr_assert_eq(randprog_generate(randprog_bench_target(one), kind, 5000 + n, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(randprog_bench_run(one, &p, &a, why, sizeof why), 0, "set %u, one thread: %s", n, why);
    cr_assert_eq(randprog_bench_run(many, &p, &b, why, sizeof why), 0, "set %u, %u threads: %s", n, threads, why);
    cr_assert_eq(b.cycles, a.cycles, "%ux%u pod, set %u (%s): %llu cycles so far on %u threads, %llu on one", pod_x,
                 pod_y, n, randprog_kind_name(kind), (unsigned long long)b.cycles, threads,
                 (unsigned long long)a.cycles);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "%ux%u pod, set %u (%s): the sets ended differently on %u threads",
                 pod_x, pod_y, n, randprog_kind_name(kind), threads);
    randprog_free(&p);
  }
  cr_expect_gt(a.outcomes[RANDPROG_TIMED_OUT] + a.outcomes[RANDPROG_STOPPED], 0);
  randprog_bench_free(one);
  randprog_bench_free(many);
}

Test(pod_threads, random_sets_on_a_4x4_pod_same_on_2_3_and_4_threads) {
  same_sets(4, 4, 2, CHIP_MODEL_FAST, 90);
  same_sets(4, 4, 3, CHIP_MODEL_FAST, 45);
  same_sets(4, 4, 4, CHIP_MODEL_FAST, 45);
}

Test(pod_threads, random_sets_on_rtl_and_lockstep_pods_same_on_2_threads) {
  same_sets(2, 2, 2, CHIP_MODEL_RTL, 24);
  same_sets(3, 2, 2, CHIP_MODEL_CHECK, 12);
}

/* A collective (op, slice, link latency, mixed chips) on 1 thread and on `threads`: the same
 * values on every chip and the same statistics. */
static void same_collective(unsigned pw, unsigned ph, fw_slice_t s, fw_coll_op_t op, fw_coll_algo_t algo,
                            unsigned latency, const bool *rtl_chips, unsigned threads) {
  const uint64_t elems = 384; /* divides into the all-to-all's 12 blocks */
  const unsigned chips = s.w * s.h;
  uint32_t *in = calloc((size_t)chips * elems, 4), *out[2] = {calloc((size_t)chips * elems, 4),
                                                              calloc((size_t)chips * elems, 4)};
  cr_assert(in && out[0] && out[1]);
  rng_t r;
  rng_seed(&r, 99);
  for (uint64_t i = 0; i < chips * elems; i++) in[i] = 0x3F800000u | (uint32_t)(rng_next(&r) & 0x7FFFFF);
  pod_coll_stats_t st[2];
  for (int k = 0; k < 2; k++) {
    pod_config_t machine = test_machine(pw, ph, 4, 4);
    machine.chip.model = CHIP_MODEL_FAST, machine.chip.seed = 3;
    machine.link_latency = latency, machine.rtl_chips = rtl_chips, machine.threads = k ? threads : 1;
    pod_coll_config_t cfg = {.machine = machine, .slice = s, .elems = elems};
    cfg.args.op = op, cfg.args.algo = algo;
    char err[2048];
    cr_assert_eq(pod_collective(&cfg, in, out[k], &st[k], err, sizeof err), 0, "%u threads: %s", cfg.machine.threads,
                 err);
  }
  cr_assert_eq(st[1].cycles, st[0].cycles, "%ux%u pod, latency %u: %llu cycles on %u threads, %llu on one", pw, ph,
               latency, (unsigned long long)st[1].cycles, threads, (unsigned long long)st[0].cycles);
  cr_assert_eq(memcmp(&st[0], &st[1], sizeof st[0]), 0, "statistics differ on %u threads", threads);
  cr_assert_eq(memcmp(out[0], out[1], (size_t)chips * elems * 4), 0, "results differ on %u threads", threads);
  free(in), free(out[0]), free(out[1]);
}

static fw_slice_t slice(unsigned x0, unsigned y0, unsigned w, unsigned h) {
  return (fw_slice_t){.x0 = x0, .y0 = y0, .w = w, .h = h};
}

Test(pod_threads, collectives_same_on_every_thread_count_and_quantum) {
  for (unsigned latency = 0; latency <= 3; latency++) /* quanta of 1 to 4 cycles */
    for (unsigned t = 2; t <= 4; t++)
      same_collective(4, 4, slice(0, 0, 4, 4), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, latency, NULL, t);
  same_collective(4, 5, slice(1, 1, 3, 4), FW_COLL_REDUCE_SCATTER, FW_COLL_RING, 1, NULL, 5);
  same_collective(3, 4, slice(0, 0, 3, 4), FW_COLL_ALL_TO_ALL, FW_COLL_RING, 2, NULL, 3);
}

Test(pod_threads, mixed_pod_same_on_threads) {
  bool rtl[16] = {false};
  rtl[5] = rtl[10] = true; /* one RTL chip in each band of two */
  same_collective(4, 4, slice(0, 0, 4, 4), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 1, rtl, 2);
}

/* One scenario's pod_run (tests/pod_scenarios.h), its outcome and every chip's clock and
 * last busy cycle after it. */
typedef struct {
  int rc;
  uint64_t cycles;
  char report[1024];
  uint64_t clock[16], busy_until[16];
} run_outcome_t;

static void run_scenario(pod_t *p, const pod_scenario_t *s, run_outcome_t *o) {
  char err[256];
  cr_assert_eq(pod_scenario_load(p, s, err, sizeof err), 0, "%s", err);
  memset(o, 0, sizeof *o);
  o->rc = pod_run(p, ISA_QMASK_DMA, 100000, &o->cycles, o->report, sizeof o->report);
  cr_assert_eq(o->rc, s->rc, "%s: %s", s->name, o->report);
  for (unsigned i = 0; i < 16; i++) {
    o->clock[i] = chip_cycle(pod_chip(p, i % 4, i / 4));
    o->busy_until[i] = pod_busy_until(p, i % 4, i / 4);
  }
}

/* The runs where a split pod could differ: the run's end falls where a chip of one band still
 * wakes by itself with nothing on any link, and a chip sleeps while credits come back from
 * another band. The pod stops in the same cycle on every thread count and every chip's clock
 * says so. */
Test(pod_threads, scenarios_end_in_the_same_cycle_on_every_thread_count) {
  run_outcome_t want[POD_SCENARIOS];
  for (unsigned threads = 1; threads <= 4; threads++) {
    pod_config_t pc = {.size_x = 4, .size_y = 4, .link_latency = 1, .chip = chip_config_default(4, 4), .threads = threads};
    pc.chip.model = CHIP_MODEL_FAST;
    char err[256];
    pod_t *p = pod_new(&pc, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(pod_scenario_slices(p), 0);
    run_outcome_t got[POD_SCENARIOS];
    for (unsigned k = 0; k < POD_SCENARIOS; k++) run_scenario(p, &pod_scenarios[k], &got[k]);
    if (threads == 1) memcpy(want, got, sizeof want);
    for (unsigned k = 0; k < POD_SCENARIOS; k++) {
      const char *name = pod_scenarios[k].name;
      cr_assert_eq(got[k].cycles, want[k].cycles, "%s: %llu cycles on %u threads, %llu on one", name,
                   (unsigned long long)got[k].cycles, threads, (unsigned long long)want[k].cycles);
      cr_assert_str_eq(got[k].report, want[k].report, "%s on %u threads", name, threads);
      for (unsigned i = 0; i < 16; i++) {
        cr_assert_eq(got[k].clock[i], want[k].clock[i], "%s, chip %u: clock %llu on %u threads, %llu on one", name,
                     i, (unsigned long long)got[k].clock[i], threads, (unsigned long long)want[k].clock[i]);
        cr_assert_eq(got[k].busy_until[i], want[k].busy_until[i], "%s, chip %u: busy until %llu on %u threads, "
                     "%llu on one", name, i, (unsigned long long)got[k].busy_until[i], threads,
                     (unsigned long long)want[k].busy_until[i]);
      }
    }
    pod_free(p);
  }
}

Test(pod_threads, more_threads_than_rows_is_refused) {
  pod_config_t pc = {.size_x = 4, .size_y = 3, .link_latency = 1, .chip = chip_config_default(4, 4), .threads = 4};
  pc.chip.model = CHIP_MODEL_FAST;
  char err[256] = "";
  cr_assert_null(pod_new(&pc, err, sizeof err));
  cr_assert(strstr(err, "4 threads for a pod of 3 rows"), "%s", err);
  pc.threads = 3;
  pod_t *p = pod_new(&pc, err, sizeof err);
  cr_assert_not_null(p, "%s", err);
  pod_free(p);
}
