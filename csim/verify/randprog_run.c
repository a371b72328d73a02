/* randprog_run: see randprog_run.h. */
#include "verify/randprog_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/cmd_golden.h"
#include "chip/chip.h"
#include "pod/pod.h"
#include "util/rng.h"

enum { BODY_COMMANDS = 40, HBM_BYTES_PER_CYCLE = 32, HBM_LATENCY = 7, LINK_LATENCY = 1 };
static const char *const qname[2] = {"compute", "DMA"};

struct randprog_bench {
  randprog_target_t t;
  randprog_layout_t l;
  pod_t *dut, *ref;
  uint8_t *buf, *buf2;   /* out_bytes each */
};

static pod_t *make_pod(const randprog_target_t *t, unsigned rows, unsigned cols, uint64_t seed, chip_model_t model,
                       unsigned threads, char *err, size_t errlen) {
  pod_config_t pc = {t->pod_x, t->pod_y, LINK_LATENCY, chip_config_default(rows, cols), NULL, NULL, NULL, threads, 0};
  pc.chip.model = model;
  pc.chip.mxus = t->geo.mxus;
  pc.chip.cores = t->geo.cores;  /* (the programs are core 0's; another core idles beside it) */
  pc.chip.hbm_bytes = t->hbm_bytes;
  pc.chip.hbm_bytes_per_cycle = HBM_BYTES_PER_CYCLE;
  pc.chip.hbm_latency = HBM_LATENCY;
  pc.chip.seed = seed;
  return pod_new(&pc, err, errlen);
}

randprog_bench_t *randprog_bench_new(unsigned pod_x, unsigned pod_y, unsigned rows, unsigned cols, unsigned mxus,
                                     unsigned cores, uint64_t seed,
                                     chip_model_t model, unsigned threads, char *err, size_t errlen) {
  randprog_bench_t *b = calloc(1, sizeof *b);
  if (!b) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  b->t.pod_x = pod_x, b->t.pod_y = pod_y;
  const pod_config_t shape = {.size_x = pod_x, .size_y = pod_y,
                              .chip = {.rows = rows, .cols = cols, .mxus = mxus, .cores = cores, .model = model}};
  if (pod_check(&shape, &b->t.geo, err, errlen)) goto fail;
  b->t.hbm_bytes = (randprog_hbm_bytes(&b->t.geo) + 0xFFFFF) & ~0xFFFFFull;
  b->t.hbm_latency = HBM_LATENCY;
  b->t.body_commands = BODY_COMMANDS;
  b->l = randprog_layout(&b->t.geo);
  b->buf = malloc(b->l.out_bytes + b->l.in_bytes);
  b->buf2 = malloc(b->l.out_bytes);
  if (!b->buf || !b->buf2) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (!(b->dut = make_pod(&b->t, rows, cols, seed, model, threads, err, errlen)) ||
      !(b->ref = make_pod(&b->t, rows, cols, seed * 0x9E3779B97F4A7C15ull + 1,
                          model == CHIP_MODEL_CHECK ? CHIP_MODEL_FAST : model, 1, err, errlen)))
    goto fail;
  return b;
fail:
  randprog_bench_free(b);
  return NULL;
}

void randprog_bench_free(randprog_bench_t *b) {
  if (!b) return;
  pod_free(b->dut);
  pod_free(b->ref);
  free(b->buf), free(b->buf2);
  free(b);
}

const randprog_target_t *randprog_bench_target(const randprog_bench_t *b) { return &b->t; }

void randprog_bench_profile(randprog_bench_t *b, profile_t *prof) { pod_set_profile(b->dut, prof); }

void randprog_bench_phase(randprog_bench_t *b, const char *name) { pod_phase(b->dut, name); }

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
  return -1;
}

static chip_t *chip_at(pod_t *pod, const randprog_bench_t *b, unsigned i) {
  return pod_chip(pod, i % b->t.pod_x, i / b->t.pod_x);
}

/* The input each chip's programs read (from the set's seed), and a zeroed output area. */
static int prepare(randprog_bench_t *b, pod_t *pod, const randprog_t *p) {
  for (unsigned i = 0; i < p->chips; i++) {
    rng_t r;
    rng_seed(&r, p->seed * 131 + i);
    uint8_t *in = b->buf;
    for (uint64_t k = 0; k < b->l.in_bytes; k += 8) {
      uint64_t v = rng_next(&r);
      memcpy(in + k, &v, b->l.in_bytes - k < 8 ? b->l.in_bytes - k : 8);
    }
    chip_t *c = chip_at(pod, b, i);
    memset(b->buf2, 0, b->l.out_bytes);
    if (chip_hbm_write(c, 0, in, b->l.in_bytes) || chip_hbm_write(c, b->l.out_addr, b->buf2, b->l.out_bytes)) return -1;
  }
  return 0;
}

/* Semaphores a failed set left behind are the host's to clear before the next set (a
 * SEM_WAIT for each one's value): else the next set's hand-overs would pass early. */
static int drain_semaphores(randprog_bench_t *b, randprog_stats_t *st, char *why, size_t len) {
  const unsigned chips = b->t.pod_x * b->t.pod_y;
  bool any = false;
  for (unsigned i = 0; i < chips && !any; i++)
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++) any |= chip_sem(chip_at(b->dut, b, i), s) != 0;
  if (!any) return 0;
  st->drains++;
  char err[256];
  for (unsigned i = 0; i < chips; i++) {
    chip_t *c = chip_at(b->dut, b, i);
    fw_prog_t p;
    fw_prog_init(&p);
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
      if (chip_sem(c, s)) fw_sem_wait(&p, s, chip_sem(c, s));
    fw_halt(&p);
    int rc = chip_load_program(c, ISA_QUEUE_COMPUTE, p.words, p.count, err, sizeof err);
    fw_prog_free(&p);
    if (rc) return fail(why, len, "chip %u: the semaphore drain cannot be loaded: %s", i, err);
  }
  uint64_t cycles;
  char report[1024];
  if (pod_run(b->dut, ISA_QMASK_COMPUTE, 10000, &cycles, report, sizeof report))
    return fail(why, len, "the semaphore drain failed: %s", report);
  for (unsigned i = 0; i < chips; i++)
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
      if (chip_sem(chip_at(b->dut, b, i), s))
        return fail(why, len, "chip %u semaphore %u is %u after the drain", i, s, chip_sem(chip_at(b->dut, b, i), s));
  return 0;
}

static int load(randprog_bench_t *b, pod_t *pod, const randprog_t *p, randprog_stats_t *st, char *why, size_t len) {
  char err[256];
  for (unsigned i = 0; i < p->chips; i++)
    for (unsigned q = 0; q < 2; q++) {
      const fw_prog_t *prog = &p->prog[i][q];
      if (chip_load_program(chip_at(pod, b, i), (int)q, prog->words, prog->count, err, sizeof err))
        return fail(why, len, "chip %u %s queue: the program cannot be loaded: %s", i, qname[q], err);
      if (st) {
        st->commands += prog->count;
        for (size_t k = 0; k < prog->count; k++) st->opcodes[isa_opcode(prog->words + k * ISA_CMD_WORDS) & 0xFF]++;
      }
    }
  return 0;
}

static cmd_golden_chip_t golden_chip(const randprog_bench_t *b) {
  return (cmd_golden_chip_t){b->t.geo, b->t.hbm_bytes, b->t.pod_x, b->t.pod_y};
}

/* The first command of prog the golden checker refuses, and its error (len if none). */
static uint32_t first_illegal(const cmd_golden_chip_t *g, unsigned q, const fw_prog_t *prog, uint32_t upto,
                              unsigned *error) {
  static const uint32_t past_end[ISA_CMD_WORDS];  /* not read: past the end the error is END */
  for (uint32_t pc = 0; pc <= upto && pc <= prog->count; pc++) {  /* at count: the end of the program */
    const uint32_t *cmd = pc < prog->count ? prog->words + (size_t)pc * ISA_CMD_WORDS : past_end;
    unsigned e = cmd_golden_error(g, q, cmd, pc, (uint32_t)prog->count);
    if (e != ISA_ERR_NONE) {
      *error = e;
      return pc;
    }
  }
  *error = ISA_ERR_NONE;
  return UINT32_MAX;
}

/* A queue the recovery stopped after a timeout: the report must name it where it waited. */
static int check_named(const randprog_bench_t *b, unsigned i, unsigned q, const chip_status_t *st,
                       const fw_prog_t *prog, const char *report, char *why, size_t len) {
  /* the chip's part of the report: from "chip (x,y): " to the next chip's */
  char chip[32], want[160];
  snprintf(chip, sizeof chip, "chip (%u,%u): ", i % b->t.pod_x, i / b->t.pod_x);
  const char *from = strstr(report, chip), *to = from ? strstr(from + 1, "; chip (") : NULL;
  int n = snprintf(want, sizeof want, "%s queue still at command %u (", qname[q], st->pc[q]);
  if (st->pc[q] < prog->count && isa_opcode(prog->words + (size_t)st->pc[q] * ISA_CMD_WORDS) == ISA_OP_SEM_WAIT)
    snprintf(want + n, sizeof want - (size_t)n, "SEM_WAIT on semaphore %u for",
             ISA_GET(prog->words + (size_t)st->pc[q] * ISA_CMD_WORDS, SEM_WAIT, sem));
  const char *at = from ? strstr(from, want) : NULL;
  if (!at || (to && at > to)) return fail(why, len, "the timeout report does not say '%s%s': %s", chip, want, report);
  return 0;
}

/* Any RDMA in the set: then packets pass through the routers. */
static bool uses_network(const randprog_t *p) {
  for (unsigned i = 0; i < p->chips; i++)
    for (unsigned q = 0; q < 2; q++)
      for (size_t k = 0; k < p->prog[i][q].count; k++)
        if (isa_opcode(p->prog[i][q].words + k * ISA_CMD_WORDS) == ISA_OP_RDMA) return true;
  return false;
}

static int judge_valid(randprog_bench_t *b, const randprog_t *p, uint64_t cycles, randprog_stats_t *stats, char *why,
                       size_t len) {
  for (unsigned i = 0; i < p->chips; i++)
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
      if (chip_sem(chip_at(b->dut, b, i), s))
        return fail(why, len, "chip %u semaphore %u ends at %u, not 0", i, s, chip_sem(chip_at(b->dut, b, i), s));
  /* the reference: reset, other reset values, the same set */
  pod_reset(b->ref);
  char report[4096];
  uint64_t ref_cycles;
  if (prepare(b, b->ref, p) || load(b, b->ref, p, NULL, why, len)) return -1;
  if (pod_run(b->ref, ISA_QMASK_ALL, p->max_cycles, &ref_cycles, report, sizeof report))
    return fail(why, len, "the reference pod failed the valid set: %s", report);
  /* Cycles are compared only when no RDMA ran: the router's arbiters keep their round-robin
   * state from the traffic before (as in hardware, nothing resets them between programs), so
   * contending packets may be granted in another order than on a reset pod. */
  if (!uses_network(p)) {
    stats->cycle_checked++;
    if (ref_cycles != cycles)
      return fail(why, len, "the set took %llu cycles, %llu on the freshly reset reference",
                  (unsigned long long)cycles, (unsigned long long)ref_cycles);
  }
  for (unsigned i = 0; i < p->chips; i++) {
    if (chip_hbm_read(chip_at(b->dut, b, i), b->l.out_addr, b->buf, b->l.out_bytes) ||
        chip_hbm_read(chip_at(b->ref, b, i), b->l.out_addr, b->buf2, b->l.out_bytes))
      return fail(why, len, "chip %u: HBM unreadable", i);
    for (uint64_t k = 0; k < b->l.out_bytes; k++)
      if (b->buf[k] != b->buf2[k])
        return fail(why, len, "chip %u result byte %llu (HBM 0x%llx) is 0x%02x, 0x%02x on the reference", i,
                    (unsigned long long)k, (unsigned long long)(b->l.out_addr + k), b->buf[k], b->buf2[k]);
  }
  return 0;
}

/* INVALID and MUTATED: each queue ended where the golden checker allows. */
static int judge_queues(randprog_bench_t *b, const randprog_t *p, const char *report, randprog_stats_t *stats,
                        char *why, size_t len) {
  const cmd_golden_chip_t g = golden_chip(b);
  for (unsigned i = 0; i < p->chips; i++) {
    chip_t *c = chip_at(b->dut, b, i);
    chip_status_t st;
    chip_finish(c, false, &st);
    if (!chip_idle(c)) return fail(why, len, "chip %u is still busy after the run", i);
    for (unsigned q = 0; q < 2; q++) {
      const fw_prog_t *prog = &p->prog[i][q];
      const uint32_t pc = st.pc[q];
      unsigned gerr;
      if (st.error[q]) stats->errors[st.error[q] & 15]++;
      if (p->kind == RANDPROG_INVALID && i == p->bad_chip && q == p->bad_queue) {
        if (st.error[q] != p->bad_error || pc != p->bad_pc)
          return fail(why, len, "chip %u %s queue: error %u at command %u, expected error %u at %u", i, qname[q],
                      st.error[q], pc, p->bad_error, p->bad_pc);
        continue;
      }
      if (st.halted[q]) {
        uint32_t bad = first_illegal(&g, q, prog, pc, &gerr);
        if (bad != UINT32_MAX || pc >= prog->count || isa_opcode(prog->words + (size_t)pc * ISA_CMD_WORDS) != ISA_OP_HALT)
          return fail(why, len, "chip %u %s queue halted at command %u, but the checker refuses command %u (error %u)",
                      i, qname[q], pc, bad, gerr);
      } else if (st.error[q] == ISA_ERR_ABORTED) {
        /* it was still running when the run timed out: every command up to it is legal */
        uint32_t bad = first_illegal(&g, q, prog, pc, &gerr);
        if (p->kind == RANDPROG_INVALID &&
            (pc >= prog->count || isa_opcode(prog->words + (size_t)pc * ISA_CMD_WORDS) != ISA_OP_SEM_WAIT))
          return fail(why, len, "chip %u %s queue timed out at command %u, not at a SEM_WAIT", i, qname[q], pc);
        if (bad != UINT32_MAX)
          return fail(why, len, "chip %u %s queue ran to command %u past command %u, which the checker refuses "
                      "(error %u)", i, qname[q], pc, bad, gerr);
        if (check_named(b, i, q, &st, prog, report, why, len)) return -1;
      } else if (st.error[q]) {
        uint32_t bad = first_illegal(&g, q, prog, pc, &gerr);
        if (p->kind == RANDPROG_INVALID)
          return fail(why, len, "chip %u %s queue stopped with error %u at command %u in a valid program", i,
                      qname[q], st.error[q], pc);
        if (bad != pc || gerr != st.error[q])
          return fail(why, len, "chip %u %s queue stopped with error %u at command %u; the checker says error %u at "
                      "command %u", i, qname[q], st.error[q], pc, gerr, bad);
      } else {
        return fail(why, len, "chip %u %s queue neither halted nor stopped (pc %u)", i, qname[q], pc);
      }
    }
  }
  return 0;
}

int randprog_bench_run(randprog_bench_t *b, const randprog_t *p, randprog_stats_t *stats, char *why, size_t len) {
  if (p->chips != b->t.pod_x * b->t.pod_y) return fail(why, len, "the set is for %u chips, the bench has %u",
                                                        p->chips, b->t.pod_x * b->t.pod_y);
  if (drain_semaphores(b, stats, why, len)) return -1;
  if (prepare(b, b->dut, p)) return fail(why, len, "HBM unwritable");
  if (load(b, b->dut, p, stats, why, len)) return -1;
  char report[4096];
  uint64_t cycles;
  int rc = pod_run(b->dut, ISA_QMASK_ALL, p->max_cycles, &cycles, report, sizeof report);
  stats->sets[p->kind]++;
  if (pod_divergence(b->dut)) return fail(why, len, "%s", pod_divergence(b->dut));  /* the lockstep's finding first */
  stats->cycles += cycles;
  const bool timed_out = rc && !strncmp(report, "timed out", 9);
  stats->outcomes[rc == 0 ? RANDPROG_HALTED : timed_out ? RANDPROG_TIMED_OUT : RANDPROG_STOPPED]++;
  switch (p->kind) {
    case RANDPROG_VALID:
      if (rc) return fail(why, len, "the valid set failed: %s", report);
      return judge_valid(b, p, cycles, stats, why, len);
    case RANDPROG_INVALID:
      if (rc == 0) return fail(why, len, "the invalid set (%s) ran without an error", p->what);
      return judge_queues(b, p, report, stats, why, len);
    default:
      return judge_queues(b, p, rc ? report : "", stats, why, len);
  }
}
