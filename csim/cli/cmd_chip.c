/*
 * cmd_chip: `tpusim chip`, the host cost of simulating a chip, on the model asked for: host
 * time per simulated cycle for an idle chip, a chip running a GEMM, the same GEMM on one chip
 * of a 4x4 pod whose other chips wait (what an idle chip costs among busy ones, against the
 * GEMM on a 1x1 pod: next to nothing with the fast model's event-driven time), and chips
 * moving data through their routers (a 3x1 pod: one sending, one forwarding, one receiving). With --profile or --op-profile, the
 * GEMM runs once more on a fresh chip with the profile attached, after the timed runs: the
 * host-speed figures are never a profiled run's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "fw/hal.h"
#include "runtime/chip_gemm.h"
#include "chip/chip.h"
#include "pod/pod.h"
#include "util/cli.h"
#include "util/report.h"
#include "util/rng.h"
#include "util/stopwatch.h"

typedef struct {
  uint64_t cycles;
  bool json;
  cmd_machine_t mach;  /* the chip: mach.machine.pod.chip */
  cmd_profile_t prof;  /* --profile, --op-profile, --profile-chips, --quiet */
} chip_opts_t;

static void chip_help(void) {
  printf("usage: tpusim chip [--mxu RxC | --chip small|v2|v3 | --machine FILE] [--mxus X] [--cores K] [--cycles N]\n"
         "                   [--print-machine] [machine options]\n"
         "                   [--model rtl|fast|check] [--json] [--profile FILE.json] [--op-profile] [--quiet]\n\n"
         "Measures the host time per simulated cycle of one chip (MXU RxC, default 16x16): idle,\n"
         "running a GEMM from HBM, the same GEMM on one chip of a 4x4 pod whose 15 other chips\n"
         "wait (each waiting chip: what the pod's run takes over a 1x1 pod's, over 15; timing noise\n"
         "below zero reads 0), and moving data through routers (a 3x1 pod, chip 0 sending to\n"
         "chip 2 through chip 1; reported per chip). --cycles sets the\n"
         "idle run (default 200000). --model: the chips' model (default rtl). Sizes built: %s\n"
         "With --profile or --op-profile the GEMM runs once more, on a fresh chip (chip 0 of a 1x1\n"
         "pod), profiled: the trace and op profile are that run's, and its host time is reported\n"
         "apart (profiling's own cost); every other figure comes from the un-profiled runs.\n"
         CMD_MACHINE_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP,
         chip_top_sizes());
}

static int parse(int argc, char **argv, chip_opts_t *o) {
  *o = (chip_opts_t){.cycles = 200000};
  cmd_machine_init(&o->mach, 1, 1, 16, 16);
  const cli_opt_t opts[] = {
      CMD_MACHINE_OPTS(&o->mach),
      CLI_OPT("cycles", CLI_U64, &o->cycles, .min = 1, .max = 1000000000),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("chip", argc, argv, opts, chip_help);
  cli_set_quiet(o->prof.quiet);
  if (rc != CLI_EXIT_OK) return rc;
  return cmd_machine_resolve("chip", &o->mach, CMD_LONE_CHIP, -1);
}

/* The benchmark's GEMM, 4R x 4R x 4C, its inputs from seed 1 and room for its output (a, b,
 * out: the caller frees them). */
static int gemm_inputs(const chip_config_t *cfg, size_t *m, size_t *k, size_t *n, uint16_t **a, uint16_t **b,
                       uint32_t **out, char *err, size_t errlen) {
  *m = 4 * cfg->rows, *k = 4 * cfg->rows, *n = 4 * cfg->cols;
  *a = malloc(*m * *k * 2), *b = malloc(*k * *n * 2), *out = malloc(*m * *n * 4);
  if (!*a || !*b || !*out) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  rng_t rng;
  rng_seed(&rng, 1);
  for (size_t i = 0; i < *m * *k; i++) (*a)[i] = rng_bf16(&rng, -2, 1);
  for (size_t i = 0; i < *k * *n; i++) (*b)[i] = rng_bf16(&rng, -2, 1);
  return 0;
}

/* ns per cycle of an idle chip over `cycles` cycles, then of a 4R x 4R x 4C GEMM on it. */
static int measure_chip(const chip_config_t *cfg, uint64_t cycles, double *idle_ns, double *gemm_ns,
                        uint64_t *gemm_cycles, char *err, size_t errlen) {
  size_t m, k, n;
  uint16_t *a = NULL, *b = NULL;
  uint32_t *out = NULL;
  chip_t *chip = chip_new(cfg, err, errlen);
  int rc = -1;
  if (!chip || gemm_inputs(cfg, &m, &k, &n, &a, &b, &out, err, errlen)) goto out;
  cli_note("chip: %llu idle cycles, then a %zux%zux%zu GEMM...", (unsigned long long)cycles, m, k, n);
  stopwatch_t w;
  stopwatch_start(&w);
  for (uint64_t i = 0; i < cycles;) { /* event-driven: a fast chip with nothing to do is skipped */
    const uint64_t q = chip_quiet_for(chip);
    if (q) {
      chip_skip(chip, q < cycles - i ? q : cycles - i);
      i += q < cycles - i ? q : cycles - i;
    } else {
      chip_tick(chip);
      i++;
    }
  }
  *idle_ns = 1e9 * stopwatch_seconds(&w) / (double)cycles;
  chip_gemm_stats_t st;
  stopwatch_start(&w);
  if (chip_gemm(chip, m, k, n, a, b, out, NULL, &st, err, errlen)) goto out;
  *gemm_ns = 1e9 * stopwatch_seconds(&w) / (double)st.cycles;
  *gemm_cycles = st.cycles;
  rc = 0;
out:
  chip_free(chip);
  free(a), free(b), free(out);
  return rc;
}

/* The same GEMM once more on a fresh chip, profiled (phase "gemm" and the kernel's phases):
 * its ns per cycle, profiling's cost included. */
static int profile_gemm(const chip_config_t *cfg, profile_t *prof, double *ns, char *err, size_t errlen) {
  cli_note("chip: the GEMM once more, profiled...");
  size_t m, k, n;
  uint16_t *a = NULL, *b = NULL;
  uint32_t *out = NULL;
  chip_t *chip = chip_new(cfg, err, errlen);
  int rc = -1;
  if (!chip || gemm_inputs(cfg, &m, &k, &n, &a, &b, &out, err, errlen)) goto out;
  profile_attach(prof, 0, chip);
  profile_phase(prof, "gemm", chip_cycle(chip));
  const chip_gemm_opts_t opts = {.profile = prof};
  chip_gemm_stats_t st;
  stopwatch_t w;
  stopwatch_start(&w);
  if (chip_gemm(chip, m, k, n, a, b, out, &opts, &st, err, errlen)) goto out;
  *ns = 1e9 * stopwatch_seconds(&w) / (double)st.cycles;
  profile_run_end(prof);
  rc = 0;
out:
  profile_forget_chips(prof);
  chip_free(chip);
  free(a), free(b), free(out);
  return rc;
}

/* ns per cycle of a w x h pod in which chip 0 runs a 4R x 4R x 4C GEMM and the others have
 * halted (nothing to do): the pod's run alone, its inputs loaded before the clock starts. */
static int measure_gemm_pod(const chip_config_t *cfg, unsigned w_chips, unsigned h_chips, double *pod_ns, char *err,
                            size_t errlen) {
  const size_t m = 4 * cfg->rows, k = 4 * cfg->rows, n = 4 * cfg->cols;
  pod_config_t pc = {.size_x = w_chips, .size_y = h_chips, .link_latency = 0, .chip = *cfg, .threads = 0};
  pod_t *pod = pod_new(&pc, err, errlen);
  uint16_t *a = calloc(m * k, 2), *b = calloc(k * n, 2);  /* (zeros: the cost does not depend on the values) */
  int rc = -1;
  if (!pod || !a || !b) {
    if (pod) snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (chip_gemm_load(pod_chip(pod, 0, 0), m, k, n, a, b, NULL, NULL, err, errlen)) goto out;
  fw_prog_t halt;
  fw_prog_init(&halt);
  fw_halt(&halt);
  for (unsigned i = 1; i < w_chips * h_chips; i++)
    for (int q = 0; q < ISA_NUM_QUEUES && rc; q++)
      if (chip_load_program(pod_chip(pod, i % w_chips, i / w_chips), q, halt.words, halt.count, err, errlen)) {
        fw_prog_free(&halt);
        goto out;
      }
  fw_prog_free(&halt);
  stopwatch_t w;
  stopwatch_start(&w);
  uint64_t cycles;
  if (pod_run(pod, ISA_QMASK_ALL, 100000000, &cycles, err, errlen)) goto out;
  *pod_ns = 1e9 * stopwatch_seconds(&w) / (double)cycles;
  rc = 0;
out:
  pod_free(pod);
  free(a), free(b);
  return rc;
}

/* The GEMM on one chip of a 4x4 pod whose 15 other chips have halted, and on a lone chip's 1x1
 * pod timed the same way: the pod's ns per cycle, and what each waiting chip adds to it (the
 * difference over 15 chips). That difference of two host timings is noise when the waiting
 * chips cost next to nothing (the fast model's sleeping chips: a comparison a cycle), and
 * noise can make it negative; a waiting chip cannot make the pod faster, so below zero it
 * reads 0 (docs/scale.md). */
static int measure_waiting_chips(const chip_config_t *cfg, double *pod_ns, double *waiting_ns, char *err,
                                 size_t errlen) {
  cli_note("chip: the GEMM on one chip of a 4x4 pod, and on a 1x1 pod...");
  double lone_ns;
  if (measure_gemm_pod(cfg, 4, 4, pod_ns, err, errlen) || measure_gemm_pod(cfg, 1, 1, &lone_ns, err, errlen)) return -1;
  *waiting_ns = *pod_ns > lone_ns ? (*pod_ns - lone_ns) / 15 : 0;
  return 0;
}

/* ns per cycle and chip of a 3x1 pod in which chip 0 streams lines to chip 2. */
static int measure_routers(const chip_config_t *cfg, double *router_ns, uint64_t *pod_cycles, char *err,
                           size_t errlen) {
  cli_note("chip: data through the routers of a 3x1 pod...");
  pod_config_t pc = {.size_x = 3, .size_y = 1, .link_latency = 0, .chip = *cfg, .threads = 0};
  pod_t *pod = pod_new(&pc, err, errlen);
  if (!pod) return -1;
  const unsigned lines = 2000;
  int rc = 0;
  for (unsigned x = 0; x < 3 && rc == 0; x++) {
    fw_prog_t p;
    fw_prog_init(&p);
    if (x == 0)
      for (unsigned i = 0; i < 8; i++) fw_rdma(&p, 2, 0, 0, 0, lines, 1, 1, ISA_SEM_NONE, 0);
    else if (x == 2)
      fw_sem_wait(&p, 1, 8 * lines);
    fw_halt(&p);
    rc = chip_load_program(pod_chip(pod, x, 0), ISA_QUEUE_DMA, p.words, p.count, err, errlen);
    fw_prog_free(&p);
  }
  stopwatch_t w;
  stopwatch_start(&w);
  if (rc == 0) rc = pod_run(pod, ISA_QMASK_DMA, 100000000, pod_cycles, err, errlen);
  if (rc == 0) *router_ns = 1e9 * stopwatch_seconds(&w) / (double)*pod_cycles / 3.0;
  pod_free(pod);
  return rc;
}

int cmd_chip(int argc, char **argv) {
  chip_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  /* (before anything runs: a --profile-chips outside the one chip is bad usage) */
  chip_config_t cfg = o.mach.machine.pod.chip;
  if ((rc = cmd_profile_begin("chip", &o.prof, 1, 1, cfg.clock_mhz, cfg.rows, cfg.cols)) != CLI_EXIT_OK) return rc;
  if (cli_check_only()) {
    cmd_profile_free(&o.prof);
    return cli_checked("chip");
  }
  if (!cfg.hbm_bytes) cfg.hbm_bytes = 1u << 24; /* (the machine leaves it to the run) */
  double idle_ns = 0, gemm_ns = 0, router_ns = 0, pod_ns = 0, waiting_ns = 0, profiled_ns = 0;
  uint64_t gemm_cycles = 0, pod_cycles = 0;
  char err[1024];
  if (measure_chip(&cfg, o.cycles, &idle_ns, &gemm_ns, &gemm_cycles, err, sizeof err) ||
      measure_waiting_chips(&cfg, &pod_ns, &waiting_ns, err, sizeof err) ||
      measure_routers(&cfg, &router_ns, &pod_cycles, err, sizeof err) ||
      (o.prof.prof && profile_gemm(&cfg, o.prof.prof, &profiled_ns, err, sizeof err))) {
    cmd_profile_free(&o.prof);
    return cli_fail("chip", "%s", err);
  }

  report_t r;
  report_init(&r);
  report_u64(&r, "mxu_rows", cfg.rows);
  report_u64(&r, "mxu_cols", cfg.cols);
  report_f64(&r, "idle_ns_per_cycle", idle_ns);
  report_f64(&r, "gemm_ns_per_cycle", gemm_ns);
  report_u64(&r, "gemm_cycles", gemm_cycles);
  report_f64(&r, "gemm_in_pod_ns_per_cycle", pod_ns);
  report_f64(&r, "idle_chip_in_pod_ns_per_cycle", waiting_ns);
  report_str(&r, "model", chip_model_name(cfg.model));
  report_f64(&r, "router_ns_per_cycle", router_ns);
  report_u64(&r, "router_cycles", pod_cycles);
  char shape[64];
  snprintf(shape, sizeof shape, "%ux%ux%u", 4 * cfg.rows, 4 * cfg.rows, 4 * cfg.cols);
  report_text_str(&r, "shape", shape);
  report_line(&r, "host time per simulated cycle, chip with a {mxu_rows}x{mxu_cols} MXU ({model} model)");
  report_line(&r, "  idle                     {idle_ns_per_cycle:%8.0f} ns");
  report_line(&r, "  running a GEMM {shape}  {gemm_ns_per_cycle:%8.0f} ns  ({gemm_cycles} cycles)");
  report_line(&r, "  the GEMM in a 4x4 pod     {gemm_in_pod_ns_per_cycle:%8.0f} ns  (each waiting chip: "
                  "{idle_chip_in_pod_ns_per_cycle:%.0f} ns)");
  report_line(&r, "  moving data (3x1 pod)    {router_ns_per_cycle:%8.0f} ns per chip  ({router_cycles} cycles)");
  if (o.prof.prof) { /* a figure of its own: profiling slows the host */
    report_f64(&r, "profiled_gemm_ns_per_cycle", profiled_ns);
    report_line(&r, "  the GEMM profiled        {profiled_gemm_ns_per_cycle:%8.0f} ns  (profiling's cost included; "
                    "not a host-speed figure)");
  }
  rc = cmd_profile_end("chip", &o.prof, &r);
  if (rc == CLI_EXIT_OK && report_print(&r, o.json, stdout)) rc = cli_fail("chip", "cannot write the report");
  cmd_profile_free(&o.prof);
  return rc;
}
