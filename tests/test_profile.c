/*
 * test_profile: the profile (csim/profile/profile.h; docs/profiling.md) against what the chips
 * count. Every queue's slices lie within the run and do not overlap; each unit's busy
 * intervals add up to its busy counter; the MXU's idle causes add up to its idle cycles; the
 * trace file is valid JSON with the fields Chrome and Perfetto need (scripts/check_trace.py);
 * a semaphore signalled late is named as the bottleneck; a pod's profile is the same on one
 * thread as on two; a GEMM's cycles all land in its kernel phases; every host phase is on the
 * trace's host-phase track. Runs on every model (MODEL_SUITES: RTL, fast, lockstep, threads).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fw/hal.h"
#include "golden/coll_golden.h"
#include "runtime/chip_gemm.h"
#include "runtime/pod_collective.h"
#include "chip/chip.h"
#include "profile/profile.h"
#include "chip_test.h"
#include "util/rng.h"

#define CLOCK_MHZ 940.0

static profile_t *new_profile_writers(unsigned w, unsigned h, unsigned rows, unsigned cols, uint64_t max_events,
                                      unsigned writers, const char *stream_to) {
  const profile_config_t pc = {.pod_w = w, .pod_h = h, .clock_mhz = CLOCK_MHZ, .rows = rows, .cols = cols,
                               .max_events = max_events, .writers = writers, .trace_path = stream_to};
  char err[256];
  profile_t *p = profile_new(&pc, err, sizeof err);
  cr_assert_not_null(p, "%s", err);
  return p;
}

static profile_t *new_profile_capped(unsigned w, unsigned h, unsigned rows, unsigned cols, uint64_t max_events) {
  return new_profile_writers(w, h, rows, cols, max_events, 0, NULL);
}

static profile_t *new_profile(unsigned w, unsigned h, unsigned rows, unsigned cols) {
  return new_profile_capped(w, h, rows, cols, 0);
}

/* Chip `index`'s records: within [first, end), per queue in order without overlap; returns
 * the busy cycles of its DMA engines and MXUs, and counts its RDMA sends and landings. */
typedef struct {
  uint64_t dma, mxu, sends, lands, slices;
} sums_t;
static sums_t check_records(const profile_t *p, unsigned index) {
  size_t n;
  const profile_ev_t *ev = profile_events(p, index, &n);
  uint64_t first, end;
  profile_span(p, index, &first, &end);
  cr_assert_gt(end, first, "chip %u was never watched", index);
  sums_t s = {0};
  uint64_t last_end[CHIP_MAX_QUEUES] = {0};
  for (size_t i = 0; i < n; i++) {
    const profile_ev_t *e = &ev[i];
    cr_assert(e->t0 >= first && e->t1 <= end && e->t0 < e->t1,
              "chip %u record %zu [%llu, %llu) outside the run [%llu, %llu)", index, i, (unsigned long long)e->t0,
              (unsigned long long)e->t1, (unsigned long long)first, (unsigned long long)end);
    switch (e->kind) {
      case PROFILE_EV_QUEUE: {
        const unsigned q = e->core * ISA_NUM_QUEUES + e->unit;
        cr_assert(e->t0 >= last_end[q], "chip %u queue %u: slice at %llu overlaps the one before (ends %llu)", index, q,
                  (unsigned long long)e->t0, (unsigned long long)last_end[q]);
        last_end[q] = e->t1;
        cr_assert_eq(isa_opcode(e->cmd), e->b, "the slice keeps its command");
        s.slices++;
        break;
      }
      case PROFILE_EV_UNIT:
        if (e->unit == PROFILE_UNIT_DMA) s.dma += e->t1 - e->t0;
        if (e->unit == PROFILE_UNIT_MXU) s.mxu += e->t1 - e->t0;
        break;
      case PROFILE_EV_SEND: s.sends++; break;
      case PROFILE_EV_SEM: s.lands++; break;
      default: cr_assert_fail("unknown record kind %u", e->kind);
    }
  }
  return s;
}

/* The op profile's idle causes add up to the MXU-cycles not computing. */
static void check_causes(const profile_phase_stats_t *t) {
  uint64_t sum = 0;
  for (int c = 0; c < PROFILE_IDLE_CAUSES; c++) sum += t->idle[c];
  cr_assert_eq(sum, t->mxu_cycles - t->compute, "idle causes add up to %llu, the MXUs idled %llu MXU-cycles",
               (unsigned long long)sum, (unsigned long long)(t->mxu_cycles - t->compute));
}

/* scripts/check_trace.py on the trace, with every event inside [0, end_cycle). */
static void check_file(const char *path, uint64_t end_cycle) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/check_trace.py %s 0 %.6f >/dev/null", path,
           (double)end_cycle / CLOCK_MHZ);
  cr_assert_eq(system(cmd), 0, "%s found a problem", cmd);
}

static void temp_path(char *buf, size_t len, const char *what) {
  snprintf(buf, len, "/tmp/test_profile_%s_%ld_%llu.json", what, (long)getpid(), (unsigned long long)test_seed());
}

/* A 4x4 chip of `model`, seeded with the test's seed (hbm_latency 0: the default). */
static chip_t *model_chip(chip_model_t model, unsigned hbm_latency) {
  chip_config_t cfg = chip_config_default(4, 4);
  cfg.seed = test_seed();
  cfg.model = model;
  if (hbm_latency) cfg.hbm_latency = hbm_latency;
  return test_chip_new(&cfg);
}

/* A 24x12x20 GEMM's inputs from the test's seed. */
enum { TG_M = 24, TG_K = 12, TG_N = 20 };
static void gemm_inputs(uint16_t a[TG_M * TG_K], uint16_t b[TG_K * TG_N]) {
  rng_t r;
  rng_seed(&r, test_seed());
  for (size_t i = 0; i < TG_M * TG_K; i++) a[i] = rng_bf16(&r, -3, 3);
  for (size_t i = 0; i < TG_K * TG_N; i++) b[i] = rng_bf16(&r, -3, 3);
}

/* A test chip, the GEMM's inputs and a profile watching the chip, the phase "gemm" begun: what
 * the GEMM tests share. */
static profile_t *gemm_setup(chip_model_t model, chip_t **chip, uint16_t a[TG_M * TG_K], uint16_t b[TG_K * TG_N]) {
  chip_t *c = model_chip(model, 0);
  gemm_inputs(a, b);
  profile_t *p = new_profile(1, 1, 4, 4);
  profile_attach(p, 0, c);
  profile_phase(p, "gemm", chip_cycle(c));
  *chip = c;
  return p;
}

Test(profile, gemm_intervals_add_up_to_the_counters, .timeout = 300) {
  uint16_t a[TG_M * TG_K], b[TG_K * TG_N];
  uint32_t out[TG_M * TG_N];
  chip_t *c;
  profile_t *p = gemm_setup(test_model(), &c, a, b);
  char err[1024];
  chip_gemm_stats_t st;
  test_chip_gemm(c, TG_M, TG_K, TG_N, a, b, out, NULL, &st);
  profile_run_end(p);
  const sums_t s = check_records(p, 0);
  uint64_t first, end;
  profile_span(p, 0, &first, &end);
  cr_assert_eq(end - first, st.cycles, "watched %llu cycles, the run took %llu", (unsigned long long)(end - first),
               (unsigned long long)st.cycles);
  cr_assert_eq(s.dma, st.dma_busy_cycles, "DMA busy intervals %llu, counter %llu", (unsigned long long)s.dma,
               (unsigned long long)st.dma_busy_cycles);
  cr_assert_eq(s.mxu, st.mxu_busy_cycles, "MXU busy intervals %llu, counter %llu", (unsigned long long)s.mxu,
               (unsigned long long)st.mxu_busy_cycles);
  cr_assert_gt(s.slices, 0);
  profile_summary_t sum;
  profile_summary(p, &sum);
  cr_assert_eq(sum.total.chip_cycles, st.cycles);
  cr_assert_eq(sum.total.compute, st.compute);
  cr_assert_eq(sum.total.mxu_busy, st.mxu_busy_cycles);
  cr_assert_eq(sum.total.mxu_cycles, st.cycles);  /* one MXU */
  check_causes(&sum.total);
  char path[256];
  temp_path(path, sizeof path, "gemm");
  cr_assert_eq(profile_write(p, path, err, sizeof err), 0, "%s", err);
  check_file(path, end);
  remove(path);
  profile_free(p);
  chip_free(c);
}

/* A chip whose compute queue waits on semaphore 3, which its DMA queue signals after `delay`
 * rounds of signalling and waiting on semaphore 5 (no unit busy meanwhile); then the compute
 * queue runs a vector operation over 200 lines. The op profile's bottleneck. */
static profile_summary_t late_semaphore_capped(unsigned delay, uint64_t max_events, const char *trace) {
  chip_t *c = model_chip(test_model(), 0);
  char err[1024];
  fw_prog_t cq, dq;
  fw_prog_init(&cq), fw_prog_init(&dq);
  fw_sem_wait(&cq, 3, 1);
  fw_vec(&cq, ISA_VEC_ADD, 0, 200, 400, 200, 0);
  fw_halt(&cq);
  for (unsigned i = 0; i < delay; i++) fw_sem_signal(&dq, 5, 1), fw_sem_wait(&dq, 5, 1);
  fw_sem_signal(&dq, 3, 1);
  fw_halt(&dq);
  cr_assert(fw_prog_ok(&cq) && fw_prog_ok(&dq));
  test_load(c, ISA_QUEUE_COMPUTE, &cq);
  test_load(c, ISA_QUEUE_DMA, &dq);
  fw_prog_free(&cq), fw_prog_free(&dq);
  profile_t *p = new_profile_capped(1, 1, 4, 4, max_events);
  profile_attach(p, 0, c);
  profile_phase(p, "planted", chip_cycle(c));
  chip_status_t st;
  test_run(c, ISA_QMASK_ALL, 1000000, &st);
  profile_run_end(p);
  check_records(p, 0);
  profile_summary_t s;
  profile_summary(p, &s);
  cr_assert_eq(s.total.chip_cycles, st.cycles);
  check_causes(&s.total);
  if (trace) {
    uint64_t first, end;
    profile_span(p, 0, &first, &end);
    cr_assert_eq(profile_write(p, trace, err, sizeof err), 0, "%s", err);
    check_file(trace, end);
  }
  profile_free(p);
  chip_free(c);
  return s;
}

static profile_summary_t late_semaphore(unsigned delay) { return late_semaphore_capped(delay, 0, NULL); }

/* Past the cap on records the later intervals are dropped (and counted), the op profile still
 * counts every cycle, and the trace stays valid. */
Test(profile, the_record_cap_drops_intervals_not_cycles, .timeout = 300) {
  char path[256];
  temp_path(path, sizeof path, "cap");
  const profile_summary_t full = late_semaphore_capped(400, 0, NULL);
  const profile_summary_t capped = late_semaphore_capped(400, 100, path);
  remove(path);
  cr_assert_eq(full.events_dropped, 0);
  cr_assert_gt(capped.events_dropped, 0, "nothing dropped under a cap of 100 records");
  cr_assert_eq(capped.events, 100, "%llu records kept", (unsigned long long)capped.events);
  cr_assert_eq(capped.events + capped.events_dropped, full.events);
  cr_assert(!memcmp(&capped.total, &full.total, sizeof full.total), "the op profile changed under the cap");
  cr_assert_eq(capped.bottleneck, full.bottleneck);
}

Test(profile, a_late_semaphore_is_the_named_bottleneck, .timeout = 300) {
  const profile_summary_t late = late_semaphore(400);
  cr_assert_eq(late.bottleneck, PROFILE_IDLE_SEMAPHORE, "bottleneck: %s", late.bottleneck_line);
  cr_assert_eq(late.wait_sem, 3, "the longest wait was on semaphore %u", late.wait_sem);
  cr_assert(strstr(late.bottleneck_line, "semaphore 3") != NULL, "%s", late.bottleneck_line);
  /* the same work with the semaphore signalled at once: not a semaphore's fault */
  const profile_summary_t prompt = late_semaphore(0);
  cr_assert_neq(prompt.bottleneck, PROFILE_IDLE_SEMAPHORE, "bottleneck: %s", prompt.bottleneck_line);
}

/* An all-reduce on a 2x2 pod profiled: every chip's records, RDMA flows, the trace file; on
 * `threads` threads. Returns the trace's path (the caller removes it). */
static void pod_allreduce(unsigned threads, unsigned writers, bool stream, const char *path) {
  pod_coll_config_t cfg = {.machine = test_machine(1, 1, 4, 4)};
  cfg.machine.size_x = 2, cfg.machine.size_y = 2, cfg.slice = (fw_slice_t){0, 0, 2, 2, 0, 0};
  cfg.machine.threads = threads;
  cfg.args.op = FW_COLL_ALLREDUCE;
  cfg.args.algo = FW_COLL_RING;
  cfg.elems = 4 * 40, cfg.machine.chip.rows = 4, cfg.machine.chip.cols = 4, cfg.machine.link_latency = 1, cfg.machine.chip.seed = test_seed();
  profile_t *p = new_profile_writers(2, 2, 4, 4, 0, writers, stream ? path : NULL);
  cfg.profile = p;
  uint32_t *in = calloc(4 * cfg.elems, 4), *out = calloc(4 * cfg.elems, 4);
  for (uint64_t i = 0; i < 4 * cfg.elems; i++) in[i] = 0x3F800000u + (uint32_t)(i % 97) * 0x1000u;
  pod_coll_stats_t st;
  char err[2048];
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), 0, "%s", err);
  uint64_t sends = 0, lands = 0, end = 0;
  for (unsigned i = 0; i < 4; i++) {
    const sums_t s = check_records(p, i);
    sends += s.sends, lands += s.lands;
    uint64_t f, e;
    profile_span(p, i, &f, &e);
    if (e > end) end = e;
  }
  cr_assert_gt(sends, 0, "no RDMA sends recorded");
  cr_assert_gt(lands, 0, "no semaphore raised by them recorded");
  profile_summary_t s;
  profile_summary(p, &s);
  cr_assert_eq(s.chips, 4);
  check_causes(&s.total);
  cr_assert_gt(s.total.link_flits[0] + s.total.link_flits[1] + s.total.link_flits[2] + s.total.link_flits[3], 0);
  /* the kernel's phases (fw_prog_mark): a ring all-reduce's reduce-scatter, then its all-gather,
   * each with cycles of its own, and every chip cycle of the run in the host's phase or in them */
  uint64_t rs = 0, ag = 0, whole = 0, host = 0;
  for (unsigned f = 0; f < s.phases; f++) {
    if (!strncmp(s.phase[f].name, "allreduce: reduce-scatter", 25)) rs += s.phase[f].chip_cycles; /* (one a dim) */
    if (!strncmp(s.phase[f].name, "allreduce: all-gather", 21)) ag += s.phase[f].chip_cycles;
    if (!strcmp(s.phase[f].name, "allreduce")) host = s.phase[f].chip_cycles;
    if (!strncmp(s.phase[f].name, "allreduce", 9)) whole += s.phase[f].chip_cycles;
  }
  cr_assert_gt(rs, 0, "no cycles in the reduce-scatter");
  cr_assert_gt(ag, 0, "no cycles in the all-gather");
  cr_assert_eq(whole, rs + ag + host);
  cr_assert_eq(profile_write(p, path, err, sizeof err), 0, "%s", err);
  check_file(path, end);
  profile_free(p);
  free(in), free(out);
}

/* The same trace from a pod on one thread or two, written at the end by one thread or three
 * (each formatting its chips' flows and counters, numbered by the flows before them), or
 * streamed run by run while the pod runs (the collective's copies in and out are runs of their
 * own). */
Test(profile, pod_allreduce_trace_is_valid_and_the_same_on_threads, .timeout = 600) {
  char one[256], two[256], three[256], stream[256];
  temp_path(one, sizeof one, "pod1");
  temp_path(two, sizeof two, "pod2");
  temp_path(three, sizeof three, "pod3");
  temp_path(stream, sizeof stream, "pod4");
  pod_allreduce(1, 1, false, one);
  pod_allreduce(2, 1, false, two);
  pod_allreduce(1, 3, false, three);
  pod_allreduce(2, 2, true, stream);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cmp -s %s %s", one, two);
  cr_assert_eq(system(cmd), 0, "the trace on two threads differs from one thread's");
  snprintf(cmd, sizeof cmd, "cmp -s %s %s", one, three);
  cr_assert_eq(system(cmd), 0, "the trace written by three threads differs from one's");
  snprintf(cmd, sizeof cmd, "cmp -s %s %s", one, stream);
  cr_assert_eq(system(cmd), 0, "the trace streamed run by run differs from the one written at the end");
  remove(one), remove(two), remove(three), remove(stream);
}

/* A profile streaming its trace (trace_path) that is freed without profile_write (a command
 * that failed after its runs) removes the file it was writing (the commands give it a
 * temporary, util/outfile.h, so a user's file is never the one written). */
Test(profile, a_streamed_trace_not_finished_leaves_no_file, .timeout = 300) {
  char path[256];
  temp_path(path, sizeof path, "unfinished");
  uint16_t a[TG_M * TG_K], b[TG_K * TG_N];
  uint32_t out[TG_M * TG_N];
  chip_t *c = model_chip(test_model(), 0);
  gemm_inputs(a, b);
  profile_t *p = new_profile_writers(1, 1, 4, 4, 0, 0, path);
  profile_attach(p, 0, c);
  chip_gemm_stats_t st;
  test_chip_gemm(c, TG_M, TG_K, TG_N, a, b, out, NULL, &st);
  profile_run_end(p); /* (the run's slices are being written to the path) */
  cr_assert_eq(access(path, F_OK), 0, "%s is not being written", path);
  profile_free(p);
  chip_free(c);
  cr_assert_neq(access(path, F_OK), 0, "the unfinished %s was left behind", path);
}

Test(profile, chips_left_out_are_named, .timeout = 30) {
  const profile_config_t pc = {.pod_w = 16, .pod_h = 16, .max_chips = 64, .clock_mhz = CLOCK_MHZ, .rows = 4, .cols = 4};
  char err[256];
  profile_t *p = profile_new(&pc, err, sizeof err);
  cr_assert_not_null(p, "%s", err);
  cr_assert_eq(profile_chips(p), 64);
  cr_assert(strstr(profile_left_out(p), "chips 64-255 left out") != NULL, "%s", profile_left_out(p));
  profile_free(p);
  bool pick[4] = {false, true, false, true};
  const profile_config_t pl = {.pod_w = 2, .pod_h = 2, .chips = pick, .clock_mhz = CLOCK_MHZ, .rows = 4, .cols = 4};
  p = profile_new(&pl, err, sizeof err);
  cr_assert_eq(profile_chips(p), 2);
  cr_assert_str_empty(profile_left_out(p));
  profile_free(p);
}

/* The fast chip jumps over cycles in which nothing happens (chip_skip); its profile is still
 * the RTL's, record for record and cycle for cycle. */
static profile_t *gemm_profile(chip_model_t model, chip_t **chip) {
  chip_t *c = model_chip(model, 300); /* long waits for HBM: stretches the fast model skips */
  const size_t m = 20, k = 16, n = 12;
  uint16_t a[20 * 16], b[16 * 12];
  uint32_t out[20 * 12];
  for (size_t i = 0; i < m * k; i++) a[i] = (uint16_t)(0x3F80 + i % 64);
  for (size_t i = 0; i < k * n; i++) b[i] = (uint16_t)(0xBF80 + i % 32);
  profile_t *p = new_profile(1, 1, 4, 4);
  profile_attach(p, 0, c);
  chip_gemm_stats_t st;
  test_chip_gemm(c, m, k, n, a, b, out, NULL, &st);
  profile_run_end(p);
  *chip = c;
  return p;
}

Test(profile, the_fast_models_profile_is_the_rtls, .timeout = 300) {
  chip_t *rc, *fc;
  profile_t *r = gemm_profile(CHIP_MODEL_RTL, &rc), *f = gemm_profile(CHIP_MODEL_FAST, &fc);
  size_t nr, nf;
  const profile_ev_t *er = profile_events(r, 0, &nr), *ef = profile_events(f, 0, &nf);
  cr_assert_eq(nr, nf, "RTL %zu records, fast %zu", nr, nf);
  for (size_t i = 0; i < nr; i++)
    cr_assert(!memcmp(&er[i], &ef[i], sizeof er[i]), "record %zu: RTL [%llu, %llu) kind %u, fast [%llu, %llu) kind %u", i,
              (unsigned long long)er[i].t0, (unsigned long long)er[i].t1, er[i].kind, (unsigned long long)ef[i].t0,
              (unsigned long long)ef[i].t1, ef[i].kind);
  profile_summary_t sr, sf;
  profile_summary(r, &sr), profile_summary(f, &sf);
  cr_assert(!memcmp(&sr.total, &sf.total, sizeof sr.total), "the op profiles differ");
  profile_free(r), profile_free(f);
  chip_free(rc), chip_free(fc);
}

/* The firmware GEMM's kernel phases (fw/gemm.c: fill, steady state, drain): every cycle of the
 * run lands in one of them (the mark at command 0 leaves the host's phase none), each has
 * cycles of its own, and the RTL and the fast model split the run alike. Plain A, and A^T (its
 * first pass takes several column tiles side by side, the fill's other shape). */
static void gemm_phases(chip_model_t model, bool a_transposed, uint64_t out_cycles[4]) {
  uint16_t a[TG_M * TG_K], b[TG_K * TG_N];
  uint32_t out[TG_M * TG_N];
  chip_t *c;
  profile_t *p = gemm_setup(model, &c, a, b);
  const chip_gemm_opts_t opts = {.a_transposed = a_transposed, .profile = p};
  chip_gemm_stats_t st;
  test_chip_gemm(c, TG_M, TG_K, TG_N, a, b, out, &opts, &st);
  profile_run_end(p);
  profile_summary_t s;
  profile_summary(p, &s);
  static const char *const names[4] = {"gemm", "gemm: fill", "gemm: steady state", "gemm: drain"};
  uint64_t sum = 0;
  for (unsigned i = 0; i < 4; i++) {
    out_cycles[i] = 0;
    for (unsigned f = 0; f < s.phases; f++)
      if (!strcmp(s.phase[f].name, names[i])) out_cycles[i] = s.phase[f].chip_cycles;
    sum += out_cycles[i];
    if (i) cr_assert_gt(out_cycles[i], 0, "%s model%s: no cycles in '%s'", chip_model_name(model),
                        a_transposed ? ", A^T" : "", names[i]);
  }
  cr_assert_eq(out_cycles[0], 0, "%llu cycles before the first mark", (unsigned long long)out_cycles[0]);
  cr_assert_eq(sum, st.cycles, "the phases add up to %llu cycles, the run took %llu", (unsigned long long)sum,
               (unsigned long long)st.cycles);
  cr_assert_eq(s.total.chip_cycles, st.cycles);
  check_causes(&s.total);
  profile_free(p);
  chip_free(c);
}

Test(profile, a_gemms_cycles_all_land_in_its_kernel_phases, .timeout = 300) {
  for (int t = 0; t < 2; t++) {
    uint64_t rtl[4], fast[4];
    gemm_phases(CHIP_MODEL_RTL, t, rtl);
    gemm_phases(CHIP_MODEL_FAST, t, fast);
    for (unsigned i = 0; i < 4; i++)
      cr_assert_eq(rtl[i], fast[i], "phase %u%s: RTL %llu cycles, fast %llu", i, t ? " (A^T)" : "",
                   (unsigned long long)rtl[i], (unsigned long long)fast[i]);
  }
}

/* More host phases than the op profile holds: the last of its phases, named "later phases",
 * takes the rest, and the trace's host-phase track still shows every one (randprog's sets). */
Test(profile, every_host_phase_is_on_the_trace_and_the_rest_are_later_phases, .timeout = 120) {
  chip_t *c = model_chip(test_model(), 0);
  char err[1024];
  profile_t *p = new_profile(1, 1, 4, 4);
  profile_attach(p, 0, c);
  enum { RUNS = PROFILE_MAX_PHASES + 8 };
  uint64_t cycles = 0;
  for (unsigned i = 0; i < RUNS; i++) {
    char name[32];
    snprintf(name, sizeof name, "run %u", i);
    profile_phase(p, name, chip_cycle(c));
    fw_prog_t cq;
    fw_prog_init(&cq);
    fw_vec(&cq, ISA_VEC_ADD, 0, 8, 16, 8, 0);
    fw_halt(&cq);
    test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
    chip_status_t st;
    test_run(c, ISA_QMASK_COMPUTE, 100000, &st);
    cycles += st.cycles;
    profile_run_end(p);
  }
  profile_summary_t s;
  profile_summary(p, &s);
  cr_assert_eq(s.phases, PROFILE_MAX_PHASES);
  cr_assert_str_eq(s.phase[PROFILE_MAX_PHASES - 1].name, "later phases");
  cr_assert_eq(s.total.chip_cycles, cycles, "the op profile counts %llu cycles, the runs took %llu",
               (unsigned long long)s.total.chip_cycles, (unsigned long long)cycles);
  char path[256];
  temp_path(path, sizeof path, "phases");
  cr_assert_eq(profile_write(p, path, err, sizeof err), 0, "%s", err);
  uint64_t first, end;
  profile_span(p, 0, &first, &end);
  check_file(path, end);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test \"$(grep -c '\"cat\":\"phase\"' %s)\" = %u && grep -q '\"name\":\"run %u\",\"cat\":\"phase\"' %s",
           path, RUNS, RUNS - 1, path);
  cr_assert_eq(system(cmd), 0, "the trace does not have a slice for each of the %u host phases", RUNS);
  remove(path);
  profile_free(p);
  chip_free(c);
}
